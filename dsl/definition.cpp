#include "dsl/definition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "dsl/error.h"
#include "runtime/device/gemm_args.h"

namespace gg {

namespace {
// Problem extents stay in the int range the runtime (tensor maps, cuBLAS) and the index
// arithmetic work in; beyond it, tile counts and byte sizes would overflow.
constexpr int64_t kMaxExtent = 2147483647;
// Batch strides: a matrix may hold more than 2^31 elements, so the bound is wider, but a batch's
// offset (batch index x stride x element bytes, at most 2^16 x 2^40 x 4) stays a 64-bit byte
// offset far from overflow, and no device holds 2^40 elements.
constexpr int64_t kMaxBatchStride = int64_t(1) << 40;

}  // namespace

// The epilogue computes in fp32, and the scalar is printed into the kernel as a float literal.
void check_epilogue_scalar(std::string_view op, const char* what, double v) {
  if (!std::isfinite(v) || std::fabs(v) > double(std::numeric_limits<float>::max())) {
    std::ostringstream value;
    value << v;
    throw_user_error("epilogue-scalar", std::string(op) + ": " + what + " " + value.str() +
                     " is not a finite fp32 value; legal is a finite number of magnitude at most 3.4e38");
  }
}

std::string_view scale_granularity_name(ScaleGranularity g) {
  switch (g) {
    case ScaleGranularity::PerTensor: return "tensor";
    case ScaleGranularity::PerRow: return "row";
    case ScaleGranularity::Block1x128: return "1x128";
    case ScaleGranularity::Block128x128: return "128x128";
  }
  GG_INTERNAL_CHECK(false, "unhandled scale granularity");
}

ScaleGranularity parse_scale_granularity(std::string_view name) {
  for (auto g : {ScaleGranularity::PerTensor, ScaleGranularity::PerRow, ScaleGranularity::Block1x128,
                 ScaleGranularity::Block128x128})
    if (scale_granularity_name(g) == name) return g;
  throw_user_error("bad-scale", "unknown scale granularity '" + std::string(name) +
                   "': legal are tensor, row, 1x128 (per row and 128 of K) and 128x128 (per block)");
}

ScaleSpec parse_scale_spec(std::string_view text) {
  const size_t colon = text.find(':');
  ScaleSpec spec;
  spec.granularity = parse_scale_granularity(text.substr(0, colon));
  if (colon == std::string_view::npos) return spec;
  const std::string_view major = text.substr(colon + 1);
  if (major == "ue8m0") {
    if (spec.granularity != ScaleGranularity::Block1x128)
      throw_user_error("bad-scale", "scale factors '" + std::string(text) + "': UE8M0 factors are per 1x128 (one per "
                       "row and 128 of K, in sm_100a's block-scaled atoms); give 1x128:ue8m0");
    spec.format = ScaleFormat::Ue8m0;
    return spec;
  }
  if (spec.granularity == ScaleGranularity::PerTensor || spec.granularity == ScaleGranularity::PerRow)
    throw_user_error("bad-scale", "scale factors '" + std::string(text) + "': factors per " +
                     std::string(scale_granularity_name(spec.granularity)) + " are one-dimensional and have no major");
  if (major == "k") spec.major = Layout::KMajor;
  else if (major == "mn") spec.major = Layout::MNMajor;
  else
    throw_user_error("bad-scale", "scale factors '" + std::string(text) + "': unknown major '" + std::string(major) +
                     "'; legal are k ([rows][k blocks]), mn ([k blocks][rows rounded up to 4], DeepGEMM's) and ue8m0 "
                     "(1x128 only: UE8M0 bytes in sm_100a's block-scaled atoms)");
  return spec;
}

std::string scale_spec_text(ScaleGranularity g, Layout major, Layout default_major, ScaleFormat format) {
  if (format == ScaleFormat::Ue8m0) return std::string(scale_granularity_name(g)) + ":ue8m0";
  const bool two_d = g == ScaleGranularity::Block1x128 || g == ScaleGranularity::Block128x128;
  return std::string(scale_granularity_name(g)) +
         (two_d && major != default_major ? (major == Layout::KMajor ? ":k" : ":mn") : "");
}

std::string scale_array_text(ScaleGranularity g, Layout major, std::string_view rows, ScaleFormat format) {
  const std::string r(rows);
  if (format == ScaleFormat::Ue8m0)
    return "[ceil(" + r + "/128)][ceil(K/512)][512] UE8M0 bytes (128 rows x 4 k blocks per atom)";
  switch (g) {
    case ScaleGranularity::PerTensor: return "one fp32 for the tensor";
    case ScaleGranularity::PerRow: return "[" + r + "] fp32, one per row";
    case ScaleGranularity::Block1x128:
      return major == Layout::MNMajor ? "[ceil(K/128)][" + r + " rounded up to 4] fp32"
                                      : "[" + r + "][ceil(K/128)] fp32";
    case ScaleGranularity::Block128x128:
      return major == Layout::MNMajor ? "[ceil(K/128)][ceil(" + r + "/128) rounded up to 4] fp32"
                                      : "[ceil(" + r + "/128)][ceil(K/128)] fp32";
  }
  GG_INTERNAL_CHECK(false, "unhandled scale granularity");
}

namespace {
// A two-dimensional granularity's rows of factors (rows or 128-row blocks) and its leading dimension.
int64_t factor_rows(ScaleGranularity g, int64_t rows) {
  return g == ScaleGranularity::Block128x128 ? (rows + kScaleBlock - 1) / kScaleBlock : rows;
}
int64_t factor_ld(ScaleGranularity g, Layout major, int64_t rows, int64_t k) {
  const int64_t r = factor_rows(g, rows);
  return major == Layout::MNMajor ? (r + 3) / 4 * 4 : (k + kScaleBlock - 1) / kScaleBlock;
}
}  // namespace

int64_t scale_factor_count(ScaleGranularity g, Layout major, int64_t rows, int64_t k, ScaleFormat format) {
  if (format == ScaleFormat::Ue8m0) return rt::ue8m0_atoms_bytes(rows, k);
  const int64_t k_blocks = (k + kScaleBlock - 1) / kScaleBlock;
  switch (g) {
    case ScaleGranularity::PerTensor: return 1;
    case ScaleGranularity::PerRow: return rows;
    default: return major == Layout::MNMajor ? k_blocks * factor_ld(g, major, rows, k) : factor_rows(g, rows) * k_blocks;
  }
}

int64_t scale_factor_index(ScaleGranularity g, Layout major, int64_t rows, int64_t k, int64_t r, int64_t c,
                           ScaleFormat format) {
  if (format == ScaleFormat::Ue8m0) return rt::ue8m0_byte_index(k, r, c / kScaleBlock);
  switch (g) {
    case ScaleGranularity::PerTensor: return 0;
    case ScaleGranularity::PerRow: return r;
    default: {
      const int64_t row = g == ScaleGranularity::Block128x128 ? r / kScaleBlock : r, kb = c / kScaleBlock;
      return major == Layout::MNMajor ? kb * factor_ld(g, major, rows, k) + row : row * factor_ld(g, major, rows, k) + kb;
    }
  }
}

float ue8m0_value(uint8_t code) {
  return code == 255 ? std::nanf("") : std::ldexp(1.0f, int(code) - 127);
}

std::string_view op_name(OpKind k) {
  switch (k) {
    case OpKind::Input: return "input";
    case OpKind::Matmul: return "matmul";
    case OpKind::Scale: return "scale";
    case OpKind::AddScaled: return "add_scaled";
    case OpKind::AddBias: return "add_bias";
    case OpKind::Relu: return "relu";
    case OpKind::Gelu: return "gelu";
    case OpKind::Silu: return "silu";
    case OpKind::Cast: return "cast";
    case OpKind::ActGrad: return "activation_grad";
  }
  GG_INTERNAL_CHECK(false, "unhandled op kind");
}

bool op_is_elementwise(OpKind k) { return k != OpKind::Input && k != OpKind::Matmul; }
bool op_is_activation(OpKind k) { return k == OpKind::Relu || k == OpKind::Gelu || k == OpKind::Silu; }
bool reads_c(const Node& n) { return n.kind == OpKind::AddScaled || n.kind == OpKind::ActGrad; }

const Node& Tensor::node() const {
  GG_INTERNAL_CHECK(def_ != nullptr, "empty tensor handle");
  return def_->node(id_);
}

Definition::Definition(const Definition& other) = default;
Definition& Definition::operator=(const Definition& other) = default;

const Node& Definition::node(int id) const {
  GG_INTERNAL_CHECK(id >= 0 && id < size(), "node id " + std::to_string(id) + " out of range");
  return nodes_[static_cast<size_t>(id)];
}

const Node* Definition::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
}

const Node& Definition::checked(Tensor t, const char* op) const {
  if (t.definition() != this || t.id() < 0 || t.id() >= size())
    throw_user_error("foreign-tensor", std::string(op) + ": the tensor operand does not belong to this definition");
  return node(t.id());
}

// The base, else the first of base1, base2, ... that is free. Names are never removed, so the
// search resumes where the last one for this base stopped.
std::string Definition::unique_name(const std::string& base) {
  if (!find(base)) return base;
  int& i = next_suffix_.try_emplace(base, 1).first->second;
  while (find(base + std::to_string(i))) ++i;
  return base + std::to_string(i);
}

Tensor Definition::add(Node n) {
  n.id = graph_.add_node();
  GG_INTERNAL_CHECK(n.id == size(), "graph and node list out of step");
  for (int p : n.operands) graph_.add_edge(p, n.id);
  by_name_.emplace(n.name, n.id);
  nodes_.push_back(std::move(n));
  return Tensor(this, nodes_.back().id);
}

Tensor Definition::input(const std::string& name, std::vector<int64_t> shape, DType dtype, Layout layout) {
  if (name.empty() || find(name))
    throw_user_error("duplicate-name", "input '" + name + "': tensor names must be unique and non-empty");
  if (shape.empty() || shape.size() > 2)
    throw_user_error("bad-shape", "input '" + name + "': shape must have 1 or 2 extents");
  for (int64_t e : shape)
    if (e < 1 || e > kMaxExtent)
      throw_user_error("bad-shape", "input '" + name + "': extent " + std::to_string(e) + " is out of range; legal "
                       "is 1.." + std::to_string(kMaxExtent) + " (2^31-1)");
  Node n;
  n.kind = OpKind::Input;
  n.name = name;
  n.dtype = dtype;
  n.shape = std::move(shape);
  n.layout = layout;
  return add(std::move(n));
}

Tensor Definition::scale_input(const std::string& name, Tensor operand, ScaleGranularity granularity,
                               Layout layout, ScaleFormat format) {
  const Node& op = checked(operand, "scale_input");
  if (op.kind != OpKind::Input || op.shape.size() != 2 || !dtype_is_fp8(op.dtype))
    throw_user_error("bad-scale", "scale_input '" + name + "': '" + op.name + "' is not an FP8 (e4m3, e5m2) 2-D input; "
                     "scale factors belong to FP8 MMA operands");
  if (scale_of(op.id))
    throw_user_error("bad-scale", "scale_input '" + name + "': '" + op.name + "' already has scale factors ('" +
                     scale_of(op.id)->name + "')");
  if (format == ScaleFormat::Ue8m0 && granularity != ScaleGranularity::Block1x128)
    throw_user_error("bad-scale", "scale_input '" + name + "': UE8M0 factors are per 1x128 (sm_100a's block-scaled "
                     "atoms), not per " + std::string(scale_granularity_name(granularity)));
  if (format == ScaleFormat::Ue8m0) layout = Layout::KMajor;  // the atoms follow one another along K
  const auto blocks = [](int64_t extent) { return (extent + kScaleBlock - 1) / kScaleBlock; };
  const int64_t rows = op.shape[0], k_blocks = blocks(op.shape[1]);
  std::vector<int64_t> shape;
  switch (granularity) {
    case ScaleGranularity::PerTensor: shape = {1}; break;
    case ScaleGranularity::PerRow: shape = {rows}; break;
    case ScaleGranularity::Block1x128: shape = {rows, k_blocks}; break;
    case ScaleGranularity::Block128x128: shape = {blocks(rows), k_blocks}; break;
  }
  const int operand_id = op.id;
  Tensor t = input(name, shape, DType::F32, shape.size() == 2 ? layout : Layout::KMajor);
  Node& n = nodes_[size_t(t.id())];
  n.scales = operand_id;
  n.granularity = granularity;
  n.scale_format = format;
  // DeepGEMM's TMA-aligned MN-major layout: each k block's factors start 16 bytes apart.
  if (format == ScaleFormat::F32 && shape.size() == 2 && layout == Layout::MNMajor && shape[0] % 4 != 0) n.ld = shape[0] + 4 - shape[0] % 4;
  return t;
}

const Node* Definition::scale_of(int operand_id) const {
  for (const Node& n : nodes_)
    if (n.scales == operand_id) return &n;
  return nullptr;
}

Tensor Definition::matmul(Tensor a, Tensor b) {
  const Node& na = checked(a, "matmul");
  const Node& nb = checked(b, "matmul");
  for (const Node* x : {&na, &nb})
    if (x->kind != OpKind::Input || x->shape.size() != 2)
      throw_user_error("matmul-operand", "matmul: operand '" + x->name + "' must be a 2-D input tensor");
  if (find("acc")) throw_user_error("one-matmul", "matmul: a definition holds one matmul");
  if (na.shape[1] != nb.shape[1])
    throw_user_error("matmul-shape", "matmul: A is [" + std::to_string(na.shape[0]) + "," + std::to_string(na.shape[1]) +
                     "] and B is [" + std::to_string(nb.shape[0]) + "," + std::to_string(nb.shape[1]) +
                     "]; B must be [N,K] with the same K as A [M,K]");
  if (na.dtype != nb.dtype)
    throw_user_error("matmul-dtype", "matmul: A is " + std::string(dtype_name(na.dtype)) + " but B is " +
                     std::string(dtype_name(nb.dtype)) + "; both operands must share one dtype");
  Node n;
  n.kind = OpKind::Matmul;
  n.name = "acc";
  n.dtype = DType::F32;
  n.shape = {na.shape[0], nb.shape[0]};
  n.operands = {a.id(), b.id()};
  return add(std::move(n));
}

namespace {
Node elementwise(OpKind kind, const Node& x) {
  Node n;
  n.kind = kind;
  n.dtype = x.dtype;
  n.shape = x.shape;
  n.operands = {x.id};
  return n;
}
}  // namespace

Tensor Definition::scale(Tensor x, double alpha) {
  Node n = elementwise(OpKind::Scale, checked(x, "scale"));
  check_epilogue_scalar("scale", "alpha", alpha);
  n.name = unique_name("scale");
  n.scalar = alpha;
  return add(std::move(n));
}

Tensor Definition::add_scaled(Tensor x, Tensor c, double beta) {
  const Node& nx = checked(x, "add_scaled");
  const Node& nc = checked(c, "add_scaled");
  check_epilogue_scalar("add_scaled", "beta", beta);
  if (nc.shape != nx.shape)
    throw_user_error("epilogue-shape", "add_scaled: '" + nc.name + "' must have the output's shape [M,N]");
  Node n = elementwise(OpKind::AddScaled, nx);
  n.name = unique_name("add_c");
  n.scalar = beta;
  n.operands.push_back(c.id());
  return add(std::move(n));
}

Tensor Definition::add_bias(Tensor x, Tensor bias, BiasAlong along) {
  const Node& nx = checked(x, "add_bias");
  const Node& nb = checked(bias, "add_bias");
  if (nx.shape.size() != 2)
    throw_user_error("epilogue-shape", "add_bias: '" + nx.name + "' is 1-D; a bias is added to a 2-D [M,N] result");
  int64_t want = along == BiasAlong::Rows ? nx.shape[0] : nx.shape[1];
  if (nb.shape.size() != 1 || nb.shape[0] != want)
    throw_user_error("epilogue-shape", "add_bias: '" + nb.name + "' must be 1-D of length " + std::to_string(want) +
                     (along == BiasAlong::Rows ? " (M: one value per row)" : " (N: one value per column)"));
  Node n = elementwise(OpKind::AddBias, nx);
  n.name = unique_name("bias");
  n.bias_along = along;
  n.operands.push_back(bias.id());
  return add(std::move(n));
}

Tensor Definition::relu(Tensor x) {
  Node n = elementwise(OpKind::Relu, checked(x, "relu"));
  n.name = unique_name("relu");
  return add(std::move(n));
}

Tensor Definition::gelu(Tensor x) {
  Node n = elementwise(OpKind::Gelu, checked(x, "gelu"));
  n.name = unique_name("gelu");
  return add(std::move(n));
}

Tensor Definition::silu(Tensor x) {
  Node n = elementwise(OpKind::Silu, checked(x, "silu"));
  n.name = unique_name("silu");
  return add(std::move(n));
}

Tensor Definition::activation_grad(Tensor x, Tensor pre_activation, OpKind activation) {
  const Node& nx = checked(x, "activation_grad");
  const Node& np = checked(pre_activation, "activation_grad");
  if (!op_is_activation(activation))
    throw_user_error("epilogue-op", "activation_grad: '" + std::string(op_name(activation)) +
                     "' is not an activation; legal are relu, gelu and silu");
  if (np.shape != nx.shape)
    throw_user_error("epilogue-shape", "activation_grad: '" + np.name + "' must have the output's shape [M,N]");
  Node n = elementwise(OpKind::ActGrad, nx);
  n.name = unique_name("d" + std::string(op_name(activation)));
  n.activation = activation;
  n.operands.push_back(pre_activation.id());
  return add(std::move(n));
}

Tensor Definition::cast(Tensor x, DType to) {
  Node n = elementwise(OpKind::Cast, checked(x, "cast"));
  n.name = unique_name("cast");
  n.dtype = to;
  return add(std::move(n));
}

void Definition::set_output(Tensor out, OutputLayout layout) {
  output_layout_ = layout;
  const Node& n = checked(out, "set_output");
  if (n.kind == OpKind::Input) throw_user_error("bad-output", "set_output: '" + n.name + "' is an input, not a result");
  output_ = n.id;
  check_leading_dim(n);
  check_output_batch_stride(batch_, n.batch_stride);
}

void Definition::set_saved_output(Tensor x, const std::string& name) {
  const Node& n = checked(x, "set_saved_output");
  if (n.kind == OpKind::Input)
    throw_user_error("bad-saved-output", "set_saved_output: '" + n.name + "' is an input, not a result");
  if (n.id == output_)
    throw_user_error("bad-saved-output", "set_saved_output: '" + n.name + "' is the output itself");
  if (saved_ >= 0)
    throw_user_error("bad-saved-output", "set_saved_output: '" + node(saved_).name + "' is saved already (as '" +
                     saved_name_ + "'); a definition saves one value");
  if (name.empty() || find(name))
    throw_user_error("duplicate-name", "set_saved_output: '" + name + "': tensor names must be unique and non-empty");
  saved_ = n.id;
  saved_name_ = name;
}

std::string default_reduction_name(ReduceAlong along, ReduceOp op) {
  return std::string(along == ReduceAlong::Rows ? "Row" : "Col") + (op == ReduceOp::Sum ? "Sum" : "SumSq");
}

void Definition::add_reduction(Tensor x, ReduceAlong along, ReduceOp op, const std::string& name) {
  const Node& n = checked(x, "add_reduction");
  const std::string direction = along == ReduceAlong::Rows ? "rows" : "columns";
  if (n.kind == OpKind::Input)
    throw_user_error("bad-reduction", "add_reduction: '" + n.name + "' is an input, not a result");
  for (const Reduction& r : reductions_)
    if (r.along == along)
      throw_user_error("bad-reduction", "add_reduction: '" + r.name + "' reduces along " + direction +
                                            " already; a definition has one reduction along each");
  const std::string named = name.empty() ? default_reduction_name(along, op) : name;
  if (find(named) || named == saved_name_ || std::any_of(reductions_.begin(), reductions_.end(), [&](const Reduction& r) {
        return r.name == named;
      }))
    throw_user_error("duplicate-name", "add_reduction: '" + named + "': tensor names must be unique and non-empty");
  reductions_.push_back({n.id, along, op, named});
}

void Definition::check_leading_dim(const Node& n) const {
  if (n.ld == 0 || n.shape.size() != 2 || !find("acc")) return;
  const int64_t row = row_elems(*this, n);
  if (n.ld < row)
    throw_user_error("bad-leading-dim", "'" + n.name + "': a leading dimension of " + std::to_string(n.ld) +
                     " elements is shorter than its rows of " + std::to_string(row) +
                     " (the leading dimension is the distance from one stored row to the next)");
}

void Definition::set_leading_dim(Tensor t, int64_t ld) {
  const Node& n = checked(t, "set_leading_dim");
  if (n.shape.size() != 2 || (n.kind != OpKind::Input && n.id != output_))
    throw_user_error("bad-leading-dim", "set_leading_dim: '" + n.name + "' is not a 2-D input or the output");
  if (ld < 1 || ld > kMaxExtent)
    throw_user_error("bad-leading-dim", "set_leading_dim: '" + n.name + "': " + std::to_string(ld) +
                     " is out of range; legal is 1.." + std::to_string(kMaxExtent));
  nodes_[static_cast<size_t>(n.id)].ld = ld;
  check_leading_dim(nodes_[static_cast<size_t>(n.id)]);
  if (n.id == output_) check_output_batch_stride(batch_, n.batch_stride);
}

std::string why_not_staged(const Definition& def, const Node& n) {
  const Node& mm = def.matmul_node();
  const bool operand = n.kind == OpKind::Input && (mm.operands[0] == n.id || mm.operands[1] == n.id);
  if (!operand) return "is not an operand of the matmul; only A and B are staged";
  if (mm.operands[0] == mm.operands[1]) return ": D = A * A^T reads A as both operands; staging it is not lowered";
  if (dtype_bytes(n.dtype) != 2)
    return "is " + std::string(dtype_name(n.dtype)) + "; staging copies 16-bit operands (bf16, f16)";
  if (def.problem_source() != ProblemSource::Dense)
    return ": " + std::string(problem_source_name(def.problem_source())) +
           " groups read their operands where the groups say; staging is for dense problems and batches";
  if (tma_rows_aligned(def, n) && leading_dim(def, n) * dtype_bytes(n.dtype) % 32 == 0)
    return ": TMA addresses its rows as they are (" + row_bytes_text(def, n) +
           "); staging copies only rows it cannot address or loads at half rate (rows not 32-byte multiples apart)";
  return "";
}

void Definition::stage_operand(Tensor t) {
  const Node& n = checked(t, "stage_operand");
  if (const std::string why = why_not_staged(*this, n); !why.empty())
    throw_user_error("stage", "stage_operand: '" + n.name + "'" + (why[0] == ':' ? "" : " ") + why);
  nodes_[static_cast<size_t>(n.id)].staged = true;
}

// Two matrices of a batched output must not share an element: the CTAs writing them would race,
// and the result would depend on which wrote last. (Inputs are only read: theirs may overlap.)
// `batch` and the output's `stride` are passed in, so set_batch and set_batch_stride check the
// values they are given before recording them.
void Definition::check_output_batch_stride(int64_t batch, int64_t stride) const {
  if (output_ < 0 || batch < 2 || stride < 0) return;  // stride -1: dense, one matrix after another
  const Node& out = node(output_);
  const int64_t rows = stored_rows(*this, out), row = row_elems(*this, out), ld = leading_dim(*this, out);
  const int64_t extent = matrix_span(*this, out);
  if (stride >= extent) return;
  throw_user_error("overlapping-output", "'" + out.name + "': a batch stride of " + std::to_string(stride) +
                   " elements makes the output's " + std::to_string(batch) + " matrices overlap: one spans " +
                   std::to_string(extent) + " elements (" + std::to_string(rows) + " rows of " + std::to_string(row) +
                   ", " + std::to_string(ld) + " apart); legal is a stride of at least " + std::to_string(extent));
}

void Definition::set_batch(int64_t count) {
  if (count < 1 || count > 65535)
    throw_user_error("bad-batch", "set_batch: " + std::to_string(count) + " matrices; legal is 1..65535");
  if (output_ >= 0) check_output_batch_stride(count, node(output_).batch_stride);
  batch_ = count;
}

void Definition::set_batch_stride(Tensor t, int64_t stride) {
  const Node& n = checked(t, "set_batch_stride");
  if (n.kind != OpKind::Input && n.id != output_)
    throw_user_error("bad-batch-stride", "set_batch_stride: '" + n.name + "' is not an input or the output");
  if (stride < 0 || (stride == 0 && n.kind != OpKind::Input))
    throw_user_error("bad-batch-stride", "set_batch_stride: '" + n.name + "': a stride of " + std::to_string(stride) +
                     (stride == 0 ? " would write every batch's output to one matrix" : " is negative"));
  if (stride > kMaxBatchStride)
    throw_user_error("bad-batch-stride", "set_batch_stride: '" + n.name + "': " + std::to_string(stride) +
                     " is out of range; legal is " + (n.kind == OpKind::Input ? "0" : "1") + ".." +
                     std::to_string(kMaxBatchStride) + " (2^40) elements");
  if (n.id == output_) check_output_batch_stride(batch_, stride);
  nodes_[static_cast<size_t>(n.id)].batch_stride = stride;
}

int Definition::output() const {
  if (output_ < 0) throw_user_error("no-output", "the definition has no output: call set_output(tensor)");
  return output_;
}

const Node& Definition::matmul_node() const {
  const Node* acc = find("acc");
  if (!acc) throw_user_error("no-matmul", "the definition has no matmul: call matmul(A, B)");
  return *acc;
}

int64_t Definition::m() const { return matmul_node().shape[0]; }
int64_t Definition::n() const { return matmul_node().shape[1]; }
int64_t Definition::k() const { return node(matmul_node().operands[0]).shape[1]; }
DType Definition::input_dtype() const { return node(matmul_node().operands[0]).dtype; }
DType Definition::output_dtype() const { return node(output()).dtype; }

std::vector<int> Definition::epilogue() const {
  std::vector<int> ops;
  // One sweep each way, not a search per node: a chain of n ops is linear.
  const std::vector<bool> after_acc = graph_.reached_from(matmul_node().id), before_out = graph_.reaching(output());
  for (int id : topological_order())
    if (op_is_elementwise(node(id).kind) && after_acc[size_t(id)] && before_out[size_t(id)]) ops.push_back(id);
  return ops;
}

std::string Definition::to_string() const {
  std::ostringstream os;
  if (swapped_) os << "swapped: the caller's D = A * B^T computed as D^T = B * A^T (A and B exchanged)\n";
  if (batch_ > 1) os << "batch " << batch_ << "\n";
  if (source_ == ProblemSource::Masked)
    os << "masked groups: " << batch_ << " of at most " << m() << " rows each, the rows in use read at run time\n";
  if (source_ == ProblemSource::VarlenK)
    os << "variable-K groups: " << batch_ << " outputs, each the product of one range of A's and B's " << k()
       << " rows of K, the ranges read at run time\n";
  if (source_ == ProblemSource::PointerArray)
    os << "pointer-array groups: " << batch_ << ", each with its own A, B and D, M, N, K and leading dimensions read "
       << "at run time (planned for " << m() << " x " << n() << " x " << k() << ")\n";
  if (source_ == ProblemSource::Contiguous)
    os << "contiguous groups: " << batch_ << " sharing A's and D's " << m()
       << " rows, each group's first and last row read at run time, each times its own B\n";
  if ((runtime_m_ || runtime_n_) && source_ != ProblemSource::PointerArray)  // (said above for pointer arrays)
    os << "read at run time:" << (runtime_m_ ? " M" : "") << (runtime_n_ ? " N" : "") << " (planned for M=" << m()
       << " N=" << n() << ")\n";
  for (int id : topological_order()) {
    const Node& n = node(id);
    os << n.name << " = " << op_name(n.kind);
    if (n.kind == OpKind::Input) {
      const bool atoms = n.scales >= 0 && n.scale_format == ScaleFormat::Ue8m0;  // bytes, in their own layout
      os << " " << (atoms ? "ue8m0" : dtype_name(n.dtype)) << "[";
      for (size_t i = 0; i < n.shape.size(); ++i) os << (i ? "," : "") << n.shape[i];
      os << "]" << (atoms ? "" : n.shape.size() == 2 ? (n.layout == Layout::KMajor ? " k-major" : " mn-major") : "");
      if (n.ld > 0) os << " ld=" << n.ld;
      if (n.scales >= 0)
        os << " scales " << node(n.scales).name << " per " << scale_granularity_name(n.granularity)
           << (n.scale_format == ScaleFormat::Ue8m0 ? " in 128x4 atoms" : "");
      if (batch_ > 1 && n.batch_stride >= 0) os << " batch_stride=" << n.batch_stride;
      if (n.staged) os << " staged (an aligned copy, rows " << staged_pitch(*this, n) << " apart)";
    } else {
      os << "(";
      for (size_t i = 0; i < n.operands.size(); ++i) os << (i ? ", " : "") << node(n.operands[i]).name;
      if (n.kind == OpKind::Scale || n.kind == OpKind::AddScaled) os << ", " << n.scalar;
      if (n.kind == OpKind::AddBias) os << (n.bias_along == BiasAlong::Rows ? ", rows" : ", cols");
      if (n.kind == OpKind::ActGrad) os << ", " << op_name(n.activation);
      os << ") -> " << dtype_name(n.dtype);
    }
    if (id == saved_) os << "  [saved as " << saved_name_ << "]";
    for (const Reduction& r : reductions_)
      if (r.node == id)
        os << "  [" << (r.op == ReduceOp::Sum ? "sum" : "sum of squares") << " along "
           << (r.along == ReduceAlong::Rows ? "rows" : "columns") << " as " << r.name << "]";
    if (id == output_) {
      os << (output_layout_ == OutputLayout::ColumnMajor ? "  [output, column-major" : "  [output");
      if (n.ld > 0) os << ", ld=" << n.ld;
      if (batch_ > 1 && n.batch_stride >= 0) os << ", batch_stride=" << n.batch_stride;
      os << "]";
    }
    os << "\n";
  }
  return os.str();
}

ProblemLayout problem_layout(const Definition& def) {
  const auto& ops = def.matmul_node().operands;
  const Node &a = def.node(ops[0]), &b = def.node(ops[1]), &d = def.node(def.output());
  ProblemLayout l;
  l.a = a.layout;
  l.b = b.layout;
  l.d = def.output_layout();
  l.lda = a.ld;
  l.ldb = b.ld;
  l.ldd = d.ld;
  l.batch = def.batch();
  l.stride_a = a.batch_stride;
  l.stride_b = b.batch_stride;
  l.stride_d = d.batch_stride;
  l.runtime_m = def.runtime_m();
  l.runtime_n = def.runtime_n();
  l.source = def.problem_source();
  if (const Node* sa = def.scale_of(a.id)) {
    l.scale_a = sa->granularity;
    l.scale_a_format = sa->scale_format;
    if (sa->shape.size() == 2 && sa->scale_format == ScaleFormat::F32) l.scale_a_major = sa->layout;
  }
  if (const Node* sb = def.scale_of(b.id)) {
    l.scale_b = sb->granularity;
    l.scale_b_format = sb->scale_format;
    if (sb->shape.size() == 2 && sb->scale_format == ScaleFormat::F32) l.scale_b_major = sb->layout;
  }
  l.symmetric = a.id == b.id;
  if (l.symmetric) l.ldb = 0, l.stride_b = -1, l.scale_b.reset(), l.scale_b_format = ScaleFormat::F32;  // B is A: nothing of its own
  l.stage_a = a.staged;
  l.stage_b = b.staged && !l.symmetric;
  return l;
}

std::string_view problem_source_name(ProblemSource s) {
  switch (s) {
    case ProblemSource::Masked: return "masked";
    case ProblemSource::Contiguous: return "contiguous";
    case ProblemSource::VarlenK: return "varlen_k";
    case ProblemSource::PointerArray: return "pointer_array";
    case ProblemSource::Dense: break;
  }
  return "dense";
}

std::string compiled_dims_text(const ProblemLayout& l) {
  return std::string(l.runtime_m ? "" : "m") + (l.runtime_n ? "" : "n") + "k";
}

void set_compiled_dims(ProblemLayout& l, std::string_view dims) {
  for (const char* legal : {"mnk", "nk", "mk", "k"})
    if (dims == legal) {
      l.runtime_m = dims.find('m') == std::string_view::npos;
      l.runtime_n = dims.find('n') == std::string_view::npos;
      return;
    }
  throw_user_error("bad-compiled-dims", "compiled dimensions '" + std::string(dims) + "': legal are mnk (every size a "
                   "constant), nk (M read at run time), mk (N at run time) and k (M and N at run time); K is "
                   "always compiled");
}

void set_staged_operands(ProblemLayout& l, std::string_view operands) {
  if (operands != "a" && operands != "b" && operands != "ab")
    throw_user_error("stage", "staged operands '" + std::string(operands) + "': legal are a, b and ab (the operands "
                     "read through an aligned copy the launch makes first)");
  l.stage_a = operands.find('a') != std::string_view::npos;
  l.stage_b = operands.find('b') != std::string_view::npos;
}

std::string problem_layout_text(const ProblemLayout& l) {
  std::vector<std::string> parts;
  if (l.a == Layout::MNMajor) parts.push_back("A m-major");
  if (l.b == Layout::MNMajor) parts.push_back("B n-major");
  if (l.d == OutputLayout::ColumnMajor) parts.push_back("D column-major");
  if (l.lda) parts.push_back("lda=" + std::to_string(l.lda));
  if (l.ldb) parts.push_back("ldb=" + std::to_string(l.ldb));
  if (l.ldd) parts.push_back("ldd=" + std::to_string(l.ldd));
  if (l.batch > 1) parts.push_back("batch " + std::to_string(l.batch));
  if (l.stride_a >= 0) parts.push_back("stride_a=" + std::to_string(l.stride_a));
  if (l.stride_b >= 0) parts.push_back("stride_b=" + std::to_string(l.stride_b));
  if (l.stride_d >= 0) parts.push_back("stride_d=" + std::to_string(l.stride_d));
  if (l.source != ProblemSource::Dense) parts.push_back(std::string(problem_source_name(l.source)) + " groups");
  const ProblemLayout defaults;
  if (l.scale_a)
    parts.push_back("A scaled per " + scale_spec_text(*l.scale_a, l.scale_a_major, defaults.scale_a_major, l.scale_a_format));
  if (l.scale_b)
    parts.push_back("B scaled per " + scale_spec_text(*l.scale_b, l.scale_b_major, defaults.scale_b_major, l.scale_b_format));
  if (l.symmetric) parts.push_back("symmetric (B is A)");
  if (l.stage_a) parts.push_back("A staged");
  if (l.stage_b) parts.push_back("B staged");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

ProblemLayout canonical_layout(int64_t m, int64_t n, ProblemLayout l) {
  // lda of an M-major A is the distance between its k columns: 1 (or default) means dense
  if (m == 1 && l.a == Layout::MNMajor && l.lda <= 1) {
    l.a = Layout::KMajor;
    l.lda = 0;
  }
  if (n == 1 && l.b == Layout::MNMajor && l.ldb <= 1) {
    l.b = Layout::KMajor;
    l.ldb = 0;
  }
  return l;
}

ProblemLayout swapped_layout(const ProblemLayout& l) {
  ProblemLayout s = l;
  s.a = l.b;
  s.b = l.a;
  s.lda = l.ldb;
  s.ldb = l.lda;
  s.stride_a = l.stride_b;
  s.stride_b = l.stride_a;
  s.d = l.d == OutputLayout::RowMajor ? OutputLayout::ColumnMajor : OutputLayout::RowMajor;
  s.runtime_m = l.runtime_n;
  s.runtime_n = l.runtime_m;
  s.scale_a = l.scale_b;
  s.scale_b = l.scale_a;
  s.scale_a_major = l.scale_b_major;
  s.scale_b_major = l.scale_a_major;
  s.scale_a_format = l.scale_b_format;
  s.scale_b_format = l.scale_a_format;
  s.stage_a = l.stage_b;
  s.stage_b = l.stage_a;
  return s;
}

std::pair<Tensor, Tensor> gemm_inputs(Definition& def, int64_t m, int64_t n, int64_t k, DType in,
                                      const ProblemLayout& l) {
  Tensor a = def.input("A", {m, k}, in, l.a);
  if (l.symmetric && n != m)
    throw_user_error("symmetric", "D = A * A^T is M x M, but N=" + std::to_string(n) + " and M=" + std::to_string(m) +
                     "; give N = M");
  if (l.symmetric && (l.ldb || l.stride_b >= 0 || l.scale_b || l.b != l.a))
    throw_user_error("symmetric", "D = A * A^T reads A as both operands: B's layout, leading dimension, batch stride "
                     "and scale factors are A's; give none of B's own");
  Tensor b = l.symmetric ? a : def.input("B", {n, k}, in, l.b);
  def.set_batch(l.batch);
  if (l.stride_a >= 0) def.set_batch_stride(a, l.stride_a);
  if (l.stride_b >= 0 && !l.symmetric) def.set_batch_stride(b, l.stride_b);
  if (l.scale_a) def.scale_input("SA", a, *l.scale_a, l.scale_a_major, l.scale_a_format);
  if (l.scale_b) def.scale_input("SB", b, *l.scale_b, l.scale_b_major, l.scale_b_format);
  return {a, b};
}

void set_gemm_output(Definition& def, Tensor out, const ProblemLayout& l) {
  def.set_output(out, l.d);
  const auto& ops = def.matmul_node().operands;
  if (l.lda) def.set_leading_dim(def.tensor(ops[0]), l.lda);
  if (l.ldb && ops[1] != ops[0]) def.set_leading_dim(def.tensor(ops[1]), l.ldb);
  if (l.ldd) def.set_leading_dim(out, l.ldd);
  if (l.stride_d >= 0) def.set_batch_stride(out, l.stride_d);
  // D = A * A^T is M x M: N is read at run time where M is.
  def.set_runtime_sizes(l.runtime_m, l.symmetric ? l.runtime_m : l.runtime_n);
  def.set_problem_source(l.source);
  if (l.stage_a) def.stage_operand(def.tensor(ops[0]));
  if (l.stage_b) def.stage_operand(def.tensor(ops[1]));
}

Definition make_gemm(int64_t m, int64_t n, int64_t k, DType in, DType out) {
  Definition def;
  Tensor a = def.input("A", {m, k}, in);
  Tensor b = def.input("B", {n, k}, in);
  def.set_output(def.cast(def.matmul(a, b), out));
  return def;
}

namespace {
bool is_operand(const Definition& def, const Node& n) {
  const auto& ops = def.matmul_node().operands;
  return std::find(ops.begin(), ops.end(), n.id) != ops.end();
}
bool is_output(const Definition& def, const Node& n) { return n.id == def.output(); }
// The name of the extent a stored row runs along: "K", "M" or "N".
const char* row_extent_name(const Definition& def, const Node& n) {
  if (is_operand(def, n)) {
    if (n.layout == Layout::KMajor) return "K";
    return n.id == def.matmul_node().operands[0] ? "M" : "N";
  }
  return is_output(def, n) && def.output_layout() == OutputLayout::ColumnMajor ? "M" : "N";
}
}  // namespace

bool stored_transposed(const Definition& def, const Node& n) {
  if (n.shape.size() < 2) return false;
  return is_operand(def, n) ? n.layout == Layout::MNMajor
                            : is_output(def, n) && def.output_layout() == OutputLayout::ColumnMajor;
}

int64_t row_elems(const Definition& def, const Node& n) {
  if (n.shape.size() < 2) return n.shape.empty() ? 1 : n.shape[0];
  return stored_transposed(def, n) ? n.shape[0] : n.shape[1];
}

int64_t stored_rows(const Definition& def, const Node& n) {
  if (n.shape.size() < 2) return 1;
  return n.shape[0] * n.shape[1] / row_elems(def, n);
}

int64_t leading_dim(const Definition& def, const Node& n) { return n.ld > 0 ? n.ld : row_elems(def, n); }

int64_t batch_stride(const Definition& def, const Node& n) {
  // Contiguous groups share one A, C and D (their rows), each with its own B; variable-K groups
  // share A and B (their K ranges), each with its own D and C.
  if (def.problem_source() == ProblemSource::Contiguous && n.shape.size() == 2)
    if (const Node* acc = def.find("acc"); acc && n.id != acc->operands[1]) return 0;
  if (def.problem_source() == ProblemSource::VarlenK && n.shape.size() == 2)
    if (const Node* acc = def.find("acc"); acc && (n.id == acc->operands[0] || n.id == acc->operands[1])) return 0;
  return n.batch_stride >= 0 ? n.batch_stride : leading_dim(def, n) * stored_rows(def, n);
}

int64_t stored_matrices(const Definition& def, const Node& n) {
  return n.shape.size() == 2 && batch_stride(def, n) != 0 ? def.batch() : 1;
}

int64_t matrix_span(const Definition& def, const Node& n) {
  return (stored_rows(def, n) - 1) * leading_dim(def, n) + row_elems(def, n);
}

int64_t stored_span(const Definition& def, const Node& n) {
  const int64_t matrices = stored_matrices(def, n);
  return (matrices > 1 ? (matrices - 1) * batch_stride(def, n) : 0) + matrix_span(def, n);
}

bool batch_stride_aligned(const Definition& def, const Node& n) {
  return def.batch() == 1 || batch_stride(def, n) * dtype_bytes(n.dtype) % 16 == 0;
}

bool tma_rows_aligned(const Definition& def, const Node& n) {
  return leading_dim(def, n) * dtype_bytes(n.dtype) % 16 == 0 && batch_stride_aligned(def, n);
}

bool tma_can_load(const Definition& def, const Node& n) { return n.staged || tma_rows_aligned(def, n); }

int64_t staged_pitch(const Definition& def, const Node& n) {
  const int64_t per_piece = GG_STAGE_PITCH_BYTES / dtype_bytes(n.dtype);
  return (row_elems(def, n) + per_piece - 1) / per_piece * per_piece;
}

bool rows_sector_aligned(const Definition& def, const Node& n) {
  const int64_t pitch = n.staged ? staged_pitch(def, n) : leading_dim(def, n);
  return pitch * dtype_bytes(n.dtype) % 32 == 0;
}

bool rows_follow_runtime_size(const Definition& def, const Node& n) {
  if (n.shape.size() != 2 || def.problem_source() == ProblemSource::PointerArray) return false;
  const std::string extent = row_extent_name(def, n);
  return (extent == "M" && def.runtime_m()) || (extent == "N" && def.runtime_n());
}

bool vector_rows(const Definition& def, const Node& n) {
  return tma_rows_aligned(def, n) && row_elems(def, n) * dtype_bytes(n.dtype) % 16 == 0;
}

namespace {
// The output's stored rows, as every launch's TMA store would write them: whole 16-byte rows
// whose length is not read at run time.
bool output_rows_tma_storable(const Definition& def) {
  const Node& out = def.node(def.output());
  return vector_rows(def, out) && !rows_follow_runtime_size(def, out);
}
}  // namespace

bool tma_storable_output(const Definition& def) {
  return def.output_layout() == OutputLayout::RowMajor && output_rows_tma_storable(def);
}

bool tma_storable_transposed(const Definition& def) {
  return def.output_layout() == OutputLayout::ColumnMajor && dtype_bytes(def.node(def.output()).dtype) == 2 &&
         output_rows_tma_storable(def);
}

bool tma_can_copy(const Definition& def, const std::string& tensor) {
  return tensor == def.node(def.output()).name ? tma_storable_output(def) : tma_can_load(def, *def.find(tensor));
}

std::string row_bytes_text(const Definition& def, const Node& n) {
  const int64_t elems = row_elems(def, n), bytes = dtype_bytes(n.dtype);
  const std::string row = "a row of " + std::string(row_extent_name(def, n)) + "=" + std::to_string(elems) + " " +
                          std::string(dtype_name(n.dtype)) + " elements";
  if (n.ld <= 0 || n.ld == elems) return row + " is " + std::to_string(elems * bytes) + " bytes";
  return row + " starts " + std::to_string(n.ld) + " elements (" + std::to_string(n.ld * bytes) +
         " bytes) after the previous one";
}

}  // namespace gg
