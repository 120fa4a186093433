#include "codegen/gemm_check.h"

#include "runtime/unfused_epilogue.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <ctime>
#include <span>
#include <tuple>
#include <utility>
#include <sstream>
#include <vector>

#include "codegen/fp8_check.h"
#include "codegen/pointer_array_check.h"
#include "codegen/work_units.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/cublas_reference.h"
#include "runtime/cuda_error.h"
#include "runtime/device_buffer.h"
#include "runtime/device_info.h"
#include "runtime/error_metrics.h"
#include "runtime/gpu_telemetry.h"
#include "runtime/host_dtype.h"
#include "runtime/host_reference.h"
#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/parallel_chunks.h"
#include "runtime/timing.h"

namespace gg {

double error_bound(DType out, DType in) {
  if (dtype_is_fp8(in) && out == DType::F32) return 5e-4;
  switch (out) {
    case DType::F16: return 1e-3;
    case DType::BF16: return 4e-3;
    case DType::F32: return 1e-5;
    default: GG_INTERNAL_CHECK(false, "no error bound for " + std::string(dtype_name(out)));
  }
}

namespace {

// A tensor's logical values (row-major over its shape, matrix after matrix of a batch) on the
// host and the matrices as they are stored on the device: transposed for an MN-major operand,
// rows `leading_dim` apart and matrices `batch_stride` apart with NaN between them, so a kernel
// reading past a row's end shows up in the result.
struct Operands {
  rt::DeviceBuffer buffer;
  std::vector<float> host;
  std::vector<float> stored;  // what `buffer` holds
  int64_t matrices = 1;       // one when broadcast to every batch (and for a bias)
  // The host values of batch b's matrix (the one matrix when broadcast).
  std::span<const float> matrix(int64_t b) const {
    if (host.empty()) return {};
    const size_t size = host.size() / static_cast<size_t>(matrices);
    return std::span<const float>(host).subspan(static_cast<size_t>(matrices > 1 ? b : 0) * size, size);
  }
};

// Where logical element (r, c) of matrix b of `n` lies in memory.
int64_t stored_index(const Definition& def, const Node& n, int64_t r, int64_t c, int64_t b = 0) {
  const int64_t matrix = stored_matrices(def, n) > 1 ? b * batch_stride(def, n) : 0;
  return matrix + (stored_transposed(def, n) ? c * leading_dim(def, n) + r : r * leading_dim(def, n) + c);
}

size_t stored_count(const Definition& def, const Node& n) {
  return static_cast<size_t>(n.shape.size() < 2 ? n.shape[0] : stored_span(def, n));
}

// body(b, r) for row r of matrix b, every row of every matrix: a large operand's rows split over
// the cores (256 rows per thread, at least).
template <class Body>
void for_each_matrix_row(int64_t matrices, int64_t rows, const Body& body) {
  rt::for_each_chunk(static_cast<size_t>(matrices * rows), 256, [&](size_t first, size_t last) {
    for (size_t row = first; row < last; ++row)
      body(static_cast<int64_t>(row) / rows, static_cast<int64_t>(row) % rows);
  });
}

Operands make_input(const Definition& def, const Node& n, bool exact, uint64_t seed) {
  const int64_t rows = n.shape[0], cols = n.shape.size() == 2 ? n.shape[1] : 1, matrices = stored_matrices(def, n);
  const rt::ElemType type = runtime_elem(n.dtype);
  const size_t count = static_cast<size_t>(matrices * rows * cols);
  Operands o{rt::DeviceBuffer(type, stored_count(def, n)), {}, {}, matrices};
  o.host = exact ? rt::small_integer_values(count, seed) : rt::random_uniform_values(type, count, seed);
  if (n.shape.size() < 2) {
    o.stored = o.host;
  } else {
    o.stored.assign(stored_count(def, n), std::nanf(""));
    for_each_matrix_row(matrices, rows, [&](int64_t b, int64_t r) {
      for (int64_t c = 0; c < cols; ++c)
        o.stored[static_cast<size_t>(stored_index(def, n, r, c, b))] = o.host[static_cast<size_t>((b * rows + r) * cols + c)];
    });
  }
  o.buffer.upload(o.stored);
  return o;
}

}  // namespace

namespace {
rt::Activation activation_of(OpKind k) {
  return k == OpKind::Relu ? rt::Activation::Relu : k == OpKind::Gelu ? rt::Activation::GeluTanh : rt::Activation::Silu;
}

// The kernel's epilogue plan (its ops and saved output) as the kernel a cuBLAS caller runs after
// the GEMM, on D as stored (a column-major D's stored rows are its columns: a bias along them runs
// along the other side).
rt::UnfusedEpilogue unfused_epilogue(const KernelPlan& p) {
  using K = rt::UnfusedOp::Kind;
  using Op = kir::EpilogueOp::Kind;
  const auto activation = [](Op k) {
    return k == Op::Relu ? rt::Activation::Relu : k == Op::Gelu ? rt::Activation::GeluTanh : rt::Activation::Silu;
  };
  const auto elem = [](const std::string& type) { return runtime_elem(parse_dtype(type)); };
  const bool transposed = p.layouts.d_column_major;
  rt::UnfusedEpilogue e;
  e.d = runtime_elem(p.out);
  e.save_after = p.epilogue.saved_after;
  for (const kir::EpilogueReduction& r : p.epilogue.reductions) {
    const bool rows = (r.along == kir::EpilogueReduction::Along::Rows) != transposed;  // D's stored rows
    (rows ? e.rows : e.cols) = {r.after, r.squares};
  }
  for (const kir::EpilogueOp& op : p.epilogue.ops) {
    switch (op.kind) {
      case Op::Scale: e.ops.push_back({K::Scale, op.scalar}); break;
      case Op::AddScaled: e.ops.push_back({K::AddC, op.scalar}); break;
      case Op::AddBiasRows: e.ops.push_back({transposed ? K::BiasCols : K::BiasRows}); break;
      case Op::AddBiasCols: e.ops.push_back({transposed ? K::BiasRows : K::BiasCols}); break;
      case Op::Relu:
      case Op::Gelu:
      case Op::Silu: e.ops.push_back({K::Activation, 0.0, activation(op.kind)}); break;
      case Op::ActGrad: e.ops.push_back({K::ActivationGrad, 0.0, activation(op.activation)}); break;
    }
    if (op.reads_c()) e.c = elem(op.operand_type);
    if (op.kind == Op::AddBiasRows || op.kind == Op::AddBiasCols) e.bias = elem(op.operand_type);
  }
  return e;
}
}  // namespace

double apply_epilogue(const Definition& def, double acc, int64_t row, int64_t col, const std::vector<float>& c,
                      const std::vector<float>& bias, int until) {
  double v = acc;
  if (until == def.matmul_node().id) return v;
  for (int id : def.epilogue()) {
    const Node& n = def.node(id);
    switch (n.kind) {
      case OpKind::Scale: v *= n.scalar; break;
      case OpKind::AddScaled: v += n.scalar * c[static_cast<size_t>(row * def.n() + col)]; break;
      case OpKind::AddBias: v += bias[static_cast<size_t>(n.bias_along == BiasAlong::Rows ? row : col)]; break;
      case OpKind::Relu:
      case OpKind::Gelu:
      case OpKind::Silu: v = rt::apply_activation(activation_of(n.kind), v); break;
      case OpKind::ActGrad:
        v *= rt::apply_activation_grad(activation_of(n.activation), c[static_cast<size_t>(row * def.n() + col)]);
        break;
      case OpKind::Cast: break;  // the rounding to the output dtype is the comparison's concern
      default: break;
    }
    if (id == until) break;
  }
  return v;
}

namespace {

bool plain_product(const Definition& def) {
  for (int id : def.epilogue())
    if (def.node(id).kind != OpKind::Cast) return false;
  return true;
}

// The checked build: a hang becomes a trap naming the barrier.
rt::JitOptions watchdog_build() {
  rt::JitOptions jit;
  jit.extra_options.push_back("-DGG_WATCHDOG");
  return jit;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

LowerOptions lowering_of(const CheckOptions& o) {
  LowerOptions lowering;
  if (o.limits) lowering.limits = *o.limits;
  return lowering;
}

// What a first use of this kernel costs a JIT user, and what a later process pays with the kernel
// in the disk cache: codegen (lower + print), NVRTC with the cache bypassed, and loading the module;
// then codegen, a cache hit and loading again. Returns the loaded build the timing runs.
rt::LoadedKernel time_first_use(const Schedule& s, const LowerOptions& lowering, const std::string& arch, CheckReport& r) {
  const JitCompileTiming first = time_jit_compile(s, {}, lowering);
  const EmittedKernel& fresh = first.kernel;
  r.jit_codegen_ms = first.codegen_ms;
  r.jit_compile_ms = first.nvrtc_ms;
  Clock::time_point start = Clock::now();
  rt::LoadedKernel loaded(first.compiled, fresh.launch);
  r.jit_load_ms = ms_since(start);

  rt::compile_kernel(fresh.source, fresh.kernel_name, arch, rt::JitOptions{});  // stores the entry
  start = Clock::now();
  const EmittedKernel again = emit_cuda(s, lowering);
  const rt::CompiledKernel cached = rt::compile_kernel(again.source, again.kernel_name, arch, rt::JitOptions{});
  const rt::LoadedKernel reloaded(cached, again.launch);
  r.jit_cached_ms = cached.from_cache ? ms_since(start) : 0;  // 0: no writable cache directory
  return loaded;
}

// Host time of one launch of a loaded kernel (tensor maps encoded, arguments packed, enqueued), as
// gg::gemm pays it on every call once the kernel is in its in-process cache.
void time_cached_launch(const rt::LoadedKernel& kernel, const rt::GemmProblem& problem, CheckReport& r) {
  constexpr int kLaunches = 20;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kLaunches; ++i) kernel.launch(problem);
  r.launch_host_us = ms_since(start) * 1e3 / kLaunches;
  rt::check_cuda(cudaDeviceSynchronize(), "synchronizing after the launch timing");
}

}  // namespace

JitCompileTiming time_jit_compile(const Schedule& s, rt::JitOptions options, const LowerOptions& lowering) {
  JitCompileTiming t;
  Clock::time_point start = Clock::now();
  t.kernel = emit_cuda(s, lowering);
  t.codegen_ms = ms_since(start);
  options.use_cache = false;
  options.nvrtc_cache = false;  // on a GPU machine NVRTC would answer every repeat from its own cache
  start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  t.compiled = rt::compile_kernel(t.kernel.source, t.kernel.kernel_name, std::string(target_name(t.kernel.plan.target)),
                                  options);
  t.nvrtc_cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  t.nvrtc_ms = ms_since(start);
  return t;
}

void compile_check_builds(const EmittedKernel& e) {
  const std::string arch(target_name(e.plan.target));
  rt::compile_kernel(e.source, e.kernel_name, arch, watchdog_build());
  rt::compile_kernel(e.source, e.kernel_name, arch, rt::JitOptions{});
}

std::string judge_errors(CheckReport& r, const std::vector<double>& mine, const std::vector<double>& ref,
                         const std::vector<double>& theirs, DType out, bool exact, DType in) {
  r.error_vs_host = rt::relative_frobenius_error(mine, ref);
  r.cublas_error_vs_host = rt::relative_frobenius_error(theirs, ref);
  r.error_vs_cublas = rt::relative_frobenius_error(mine, theirs);
  r.bound = error_bound(out, in);
  std::ostringstream why;
  if (!(r.error_vs_host <= r.bound)) why << "error vs fp64 reference " << r.error_vs_host << " > bound " << r.bound << "; ";
  if (!(r.error_vs_host <= 2 * r.cublas_error_vs_host + 1e-7))
    why << "error vs fp64 reference " << r.error_vs_host << " > 2x cuBLAS's own " << r.cublas_error_vs_host << "; ";
  // Exact mode: small integers make every fp32 sum exact, so a kernel rounding once gives the fp64
  // value rounded to the output type. cuBLAS does too, mostly: at 1530 x 1500 x 2040 (bf16 out) it
  // differed from that value where v10 and auto matched it (H100, 2026-11-27).
  if (exact && !(r.error_vs_cublas == 0.0) && !equals_rounded(mine, ref, out))
    why << "exact mode: result differs from cuBLAS and from the fp64 reference rounded to " << dtype_name(out)
        << "; ";
  return why.str();
}

std::string unpromoted_f32_hint(const KernelPlan& plan, const Definition& def) {
  if (def.output_dtype() != DType::F32 || dtype_is_fp8(def.input_dtype()) || plan.promotion.on) return "";
  std::ostringstream os;
  os << "(an f32 output of one fp32 chain errs about 1e-9 K, here about " << std::setprecision(2) << 1e-9 * double(def.k())
     << ", since the tensor cores' accumulation truncates; `promote 256` bounds it, as `auto` does); ";
  return os.str();
}

bool equals_rounded(const std::vector<double>& mine, const std::vector<double>& ref, DType out) {
  if (mine.size() != ref.size()) return false;
  const rt::ElemType type = runtime_elem(out);
  for (size_t i = 0; i < mine.size(); ++i)
    if (!(mine[i] == rt::round_to(type, ref[i]))) return false;
  return true;
}

CheckReport launch_report(const EmittedKernel& e, const rt::LoadedKernel& kernel, const Definition& def) {
  CheckReport r;
  r.kernel_name = e.kernel_name;
  r.launch = kernel.describe();
  const auto planned = rt::launch_grid(e.launch, def.m(), def.n());
  const auto grid = rt::launch_grid(e.launch, def.m(), def.n(), kernel.resident_clusters());
  r.planned_grid_ctas = planned[0] * planned[1] * planned[2];
  r.grid_ctas = grid[0] * grid[1] * grid[2];
  r.resident_ctas = kernel.max_resident_ctas();
  r.device = rt::device_info().name;
  r.m = def.m();
  r.n = def.n();
  r.k = def.k();
  r.batch = def.batch();
  return r;
}

namespace {

// One launch of a loaded kernel on the problem `def` (the kernel's own definition, or the same
// GEMM at other sizes the kernel reads at run time), judged and optionally timed.
CheckReport check_launch(const Schedule& s, const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                         const CheckOptions& o) {
  if (def.problem_source() == ProblemSource::PointerArray) return check_pointer_array(e, kernel, def, o);
  if (dtype_is_fp8(def.input_dtype())) return check_fp8(e, kernel, def, o);
  const std::string arch(target_name(e.plan.target));
  CheckReport r = launch_report(e, kernel, def);
  const Node& mm = def.matmul_node();
  // D = A * A^T (matmul(A, A)): one input read as both operands.
  const bool one_operand = mm.operands[0] == mm.operands[1];
  Operands a = make_input(def, def.node(mm.operands[0]), o.exact, o.seed);
  Operands b_own = one_operand ? Operands{} : make_input(def, def.node(mm.operands[1]), o.exact, o.seed + 1);
  const Operands& b = one_operand ? a : b_own;
  Operands c, bias;
  const Node* c_node = nullptr;
  for (int id : def.epilogue()) {
    const Node& n = def.node(id);
    if (reads_c(n)) c_node = &def.node(n.operands[1]), c = make_input(def, *c_node, o.exact, o.seed + 2);
    if (n.kind == OpKind::AddBias) bias = make_input(def, def.node(n.operands[1]), o.exact, o.seed + 3);
  }
  rt::ElemType out_type = runtime_elem(def.output_dtype());
  const Node& out_node = def.node(def.output());
  const size_t d_count = stored_count(def, out_node);
  rt::DeviceBuffer d(out_type, d_count);
  rt::fill_poison(d);

  // Masked groups: each matrix's rows in use, in device memory for the kernel; a group's last
  // tile is stored whole (rows past its rows in use there are not checked), the tiles past it
  // must stay untouched.
  const bool masked = def.problem_source() == ProblemSource::Masked;
  std::vector<int> rows_in_use;
  for (int64_t bt = 0; bt < def.batch(); ++bt)
    rows_in_use.push_back(static_cast<int>(
        masked && bt < static_cast<int64_t>(o.group_rows.size()) ? o.group_rows[static_cast<size_t>(bt)] : r.m));
  const auto used = [&](int64_t bt) { return int64_t(rows_in_use[static_cast<size_t>(bt)]); };
  const auto stored_rows_of = [&](int64_t bt) {
    return masked ? std::min(r.m, (used(bt) + e.plan.tile_m - 1) / e.plan.tile_m * e.plan.tile_m) : r.m;
  };
  rt::DeviceInts group_rows(rows_in_use);
  // Contiguous groups: batch + 1 row offsets (M split evenly unless given); each group is a
  // slice of A's and D's rows times its own B. The slices below say, for every kind of problem,
  // which rows of which matrix are checked against which operands.
  // Variable-K groups: batch + 1 offsets of K (K split evenly unless given); group g is D's matrix
  // g, the product of its range of A's and B's rows of K.
  const bool contiguous = def.problem_source() == ProblemSource::Contiguous;
  const bool varlen_k = def.problem_source() == ProblemSource::VarlenK;
  const int64_t grouped_extent = contiguous ? r.m : r.k;  // what the offsets cut
  const std::vector<int64_t> offsets = contiguous || varlen_k
                                           ? group_offsets_or_even(o.group_offsets, def.batch(), grouped_extent)
                                           : std::vector<int64_t>{};
  rt::DeviceInts group_offsets(offsets.empty() ? std::vector<int>{0} : std::vector<int>(offsets.begin(), offsets.end()));
  struct Slice {
    int64_t matrix, group, row0, rows;  // D's matrix and first row, B's matrix, the rows checked
    int64_t k0, k1;                     // the range of K
  };
  std::vector<Slice> slices;
  for (int64_t bt = 0; bt < def.batch(); ++bt) {
    const auto [start, end] = offsets.empty() ? std::pair<int64_t, int64_t>{0, 0} : group_span(offsets, bt, grouped_extent);
    if (contiguous) slices.push_back({0, bt, start, end - start, 0, r.k});
    else if (varlen_k) slices.push_back({bt, bt, 0, r.m, start, end});
    else slices.push_back({bt, bt, 0, used(bt), 0, r.k});
  }

  rt::GemmProblem problem;
  problem.group_rows = masked ? group_rows.data() : nullptr;
  problem.group_offsets = offsets.empty() ? nullptr : group_offsets.data();
  problem.a = a.buffer.data();
  problem.b = b.buffer.data();
  problem.c = c.buffer.data();
  problem.bias = bias.buffer.data();
  problem.d = d.data();
  // A saved output (the pre-activation) lies as D does, poisoned as D is.
  const bool saves = def.saved_output() >= 0;
  rt::DeviceBuffer aux(out_type, saves ? d_count : 1);
  rt::fill_poison(aux);
  problem.aux = saves ? aux.data() : nullptr;
  // Reductions' vectors (the kernel's orientation; a swapped launch exchanges them), poisoned.
  const bool reduces_rows = e.launch.reduces_rows, reduces_cols = e.launch.reduces_cols;
  rt::DeviceBuffer row_sums(rt::ElemType::F32, reduces_rows ? size_t(def.batch() * r.m) : 1);
  rt::DeviceBuffer col_sums(rt::ElemType::F32, reduces_cols ? size_t(def.batch() * r.n) : 1);
  rt::fill_poison(row_sums);
  rt::fill_poison(col_sums);
  problem.row_reduction = reduces_rows ? static_cast<float*>(row_sums.data()) : nullptr;
  problem.col_reduction = reduces_cols ? static_cast<float*>(col_sums.data()) : nullptr;
  problem.m = r.m;
  problem.n = r.n;
  problem.k = r.k;
  problem.in_type = runtime_elem(def.input_dtype());
  problem.out_type = out_type;
  problem.layouts = rt::resolve_layouts(e.launch.layouts, r.m, r.n, r.k);
  // What a caller of gg::gemm passes: a swapped kernel's launch exchanges the operands back.
  const rt::GemmProblem caller = rt::swap_orientation(e.launch, problem);
  r.swapped = e.launch.swapped;
  kernel.launch_and_wait(caller);
  std::vector<float> ours = d.download();
  const std::vector<float> ours_aux = saves ? aux.download() : std::vector<float>{};
  const std::vector<float> ours_row_sums = reduces_rows ? row_sums.download() : std::vector<float>{};
  const std::vector<float> ours_col_sums = reduces_cols ? col_sums.download() : std::vector<float>{};
  // Unwritten: D's elements still poison; written out of bounds: padding between its rows that is not.
  const int64_t batches = def.batch();
  // 1: an element the kernel must write; 2: one it may write (a masked group's last tile past its
  // rows in use); 0: padding or a masked group's tiles past its rows, which it must not touch.
  std::vector<char> is_element(d_count, 0);
  if (contiguous) {  // a group's rows only: the rows between and around the groups stay untouched
    for (const Slice& sl : slices)
      for (int64_t i = sl.row0; i < sl.row0 + sl.rows; ++i)
        for (int64_t j = 0; j < r.n; ++j) is_element[static_cast<size_t>(stored_index(def, out_node, i, j))] = 1;
  } else {
    for_each_matrix_row(batches, r.m, [&](int64_t bt, int64_t i) {
      if (i >= stored_rows_of(bt)) return;
      for (int64_t j = 0; j < r.n; ++j)
        is_element[static_cast<size_t>(stored_index(def, out_node, i, j, bt))] = i < used(bt) ? 1 : 2;
    });
  }
  size_t padding = 0, poisoned_padding = 0;
  r.unwritten = 0;
  for (size_t i = 0; i < d_count; ++i) {
    if (is_element[i] == 1) r.unwritten += std::isnan(ours[i]);
    if (is_element[i] == 0) {
      ++padding;
      poisoned_padding += std::isnan(ours[i]);
    }
  }
  const size_t padding_written = padding - poisoned_padding;

  // cuBLAS on the same layouts: the product rounded to the output dtype, or in fp32 with the
  // epilogue applied on the host.
  rt::CublasReference cublas;
  // A reduction is judged against sums of cuBLAS's fp32 values (the check) too.
  const bool plain = plain_product(def) && def.reductions().empty();
  const rt::ElemType cublas_type = plain ? out_type : rt::ElemType::F32;
  rt::DeviceBuffer cublas_d(cublas_type, d_count);
  rt::fill_poison(cublas_d);  // defined contents for compute-sanitizer's initcheck, which misses TMA stores
  // Contiguous and variable-K groups: one cuBLAS call per group on its slice (its rows of A and D,
  // its range of K, its B), the loop of calls a caller without grouping runs (timed below); a
  // slice with no K is zeros.
  const auto cublas_all = [&](const void* a_ptr, const void* b_ptr) {
    if (!contiguous && !varlen_k) {
      cublas.gemm(a_ptr, b_ptr, cublas_d.data(), problem.in_type, cublas_d.type(), r.m, r.n, r.k, problem.layouts);
      return;
    }
    rt::MatrixLayouts one = problem.layouts;
    one.batch = 1;
    const int in_bytes = rt::elem_bytes(problem.in_type), out_bytes = rt::elem_bytes(cublas_d.type());
    const Node &a_node = def.node(mm.operands[0]), &b_node = def.node(mm.operands[1]);
    for (const Slice& sl : slices) {
      if (sl.rows == 0) continue;
      const int64_t d_first = stored_index(def, out_node, sl.row0, 0, sl.matrix);
      char* d_at = static_cast<char*>(cublas_d.data()) + d_first * out_bytes;
      if (sl.k1 == sl.k0) {
        const int64_t d_last = stored_index(def, out_node, sl.row0 + sl.rows - 1, r.n - 1, sl.matrix);
        rt::check_cuda(cudaMemset(d_at, 0, size_t((d_last - d_first + 1) * out_bytes)), "zeroing a group with no K");
        continue;
      }
      cublas.gemm(static_cast<const char*>(a_ptr) + stored_index(def, a_node, sl.row0, sl.k0, sl.matrix) * in_bytes,
                  static_cast<const char*>(b_ptr) + stored_index(def, b_node, 0, sl.k0, sl.group) * in_bytes, d_at,
                  problem.in_type, cublas_d.type(), sl.rows, r.n, sl.k1 - sl.k0, one);
    }
  };
  cublas_all(a.buffer.data(), b.buffer.data());
  std::vector<float> cublas_values = cublas_d.download();

  std::vector<double> ref, mine, theirs;
  std::vector<double> ref_aux, mine_aux, theirs_aux;  // the saved output's
  r.checked_rows = 0;
  for (const Slice& sl : slices) {  // every matrix of a batch (group), each against its own operands
    if (sl.rows == 0) continue;
    // The slice's rows of A and its range of K (of A and B)
    const int64_t k_count = sl.k1 - sl.k0;
    const auto columns = [&](std::span<const float> m, int64_t first_row, int64_t rows) {
      std::vector<float> out;
      out.reserve(size_t(rows * k_count));
      for (int64_t i = first_row; i < first_row + rows; ++i)
        out.insert(out.end(), m.begin() + (i * r.k + sl.k0), m.begin() + (i * r.k + sl.k1));
      return out;
    };
    const std::vector<float> a_part = columns(a.matrix(sl.matrix), sl.row0, sl.rows);
    const std::vector<float> b_part = columns(b.matrix(sl.group), 0, r.n);
    rt::HostReference host = rt::host_gemm_reference(a_part, b_part, sl.rows, r.n, k_count, rt::EpilogueRef{});
    r.checked_rows += host.rows.size();
    const auto c_span = c.matrix(sl.matrix);
    const std::vector<float> c_b(c_span.begin(), c_span.end());
    for (size_t i = 0; i < host.rows.size(); ++i) {
      const int64_t row = sl.row0 + host.rows[i];
      for (int64_t col = 0; col < r.n; ++col) {
        const size_t at = static_cast<size_t>(stored_index(def, out_node, row, col, sl.matrix));
        ref.push_back(apply_epilogue(def, host.values[i * static_cast<size_t>(r.n) + static_cast<size_t>(col)], row,
                                     col, c_b, bias.host));
        mine.push_back(ours[at]);
        double cb = plain ? cublas_values[at]
                          : rt::round_to(out_type, apply_epilogue(def, cublas_values[at], row, col, c_b, bias.host));
        theirs.push_back(cb);
        if (!saves) continue;
        const int until = def.saved_output();
        ref_aux.push_back(apply_epilogue(def, host.values[i * static_cast<size_t>(r.n) + static_cast<size_t>(col)], row,
                                         col, c_b, bias.host, until));
        mine_aux.push_back(ours_aux[at]);
        theirs_aux.push_back(plain ? cublas_values[at]
                                   : rt::round_to(out_type, apply_epilogue(def, cublas_values[at], row, col, c_b,
                                                                           bias.host, until)));
      }
    }
  }
  std::ostringstream why;
  if (r.unwritten) why << r.unwritten << " output elements never written; ";
  if (padding_written)
    why << padding_written << (masked       ? " elements between D's rows or past a masked group's tiles overwritten; "
                               : contiguous ? " elements of D's rows in no group or between its rows overwritten; "
                                            : " elements between D's rows (leading dimension) overwritten; ");
  const std::string error_why = judge_errors(r, mine, ref, theirs, def.output_dtype(), o.exact);
  why << error_why << (error_why.empty() ? "" : unpromoted_f32_hint(e.plan, def));
  if (saves) {  // the saved output: every element D has, within the same bounds
    size_t unwritten_aux = 0;
    for (size_t i = 0; i < d_count; ++i) unwritten_aux += is_element[i] == 1 && std::isnan(ours_aux[i]);
    CheckReport saved = r;
    const std::string saved_why = judge_errors(saved, mine_aux, ref_aux, theirs_aux, def.output_dtype(), o.exact);
    if (unwritten_aux) why << unwritten_aux << " elements of " << def.saved_name() << " never written; ";
    if (!saved_why.empty()) why << def.saved_name() << ": " << saved_why;
  }
  if (!def.reductions().empty()) {  // each vector against fp64 and cuBLAS's sums
    std::vector<std::vector<float>> c_of(size_t(def.batch()));
    for (int64_t bt = 0; bt < def.batch() && c_node; ++bt) c_of[size_t(bt)].assign(c.matrix(bt).begin(), c.matrix(bt).end());
    const ProductAt exact = [&](int64_t bt, int64_t i, int64_t j) {
      const auto a_m = a.matrix(bt), b_m = b.matrix(bt);
      double acc = 0;
      for (int64_t kk = 0; kk < r.k; ++kk) acc += double(a_m[size_t(i * r.k + kk)]) * b_m[size_t(j * r.k + kk)];
      return acc;
    };
    const ProductAt theirs_at = [&](int64_t bt, int64_t i, int64_t j) {
      return double(cublas_values[static_cast<size_t>(stored_index(def, out_node, i, j, bt))]);
    };
    for (const Reduction& red : def.reductions()) {
      const ValueAt value = [&](int64_t bt, int64_t i, int64_t j, double product) {
        return apply_epilogue(def, product, i, j, c_of[size_t(bt)], bias.host, red.node);
      };
      ReductionReport report;
      why << check_reduction(red, def.batch(), r.m, r.n, red.along == ReduceAlong::Rows ? ours_row_sums : ours_col_sums,
                             exact, theirs_at, value, o.exact, report);
      r.reductions.push_back(report);
    }
  }
  // The same inputs must give the same bits every time: a race shows up as a launch that differs.
  for (int i = 0; i < o.repeat; ++i) {
    rt::fill_poison(d);
    rt::fill_poison(aux);
    rt::fill_poison(row_sums);
    rt::fill_poison(col_sums);
    kernel.launch_and_wait(caller);
    ++r.repeats;
    r.repeats_differing += !rt::same_bits(d.download(), ours) || (saves && !rt::same_bits(aux.download(), ours_aux)) ||
                           (reduces_rows && !rt::same_bits(row_sums.download(), ours_row_sums)) ||
                           (reduces_cols && !rt::same_bits(col_sums.download(), ours_col_sums));
  }
  if (r.repeats_differing)
    why << r.repeats_differing << " of " << r.repeats << " repeated launches differ from the first; ";
  r.verdict = why.str().empty() ? "ok" : why.str();
  r.passed = r.verdict == "ok";

  if (o.bench && r.passed) {
    // Timed: the build users get, without the watchdog's timer reads; it must write exactly
    // what the checked build wrote.
    rt::LoadedKernel timed =
        o.measure_jit ? time_first_use(s, lowering_of(o), arch, r)
                      : rt::LoadedKernel(rt::compile_kernel(e.source, e.kernel_name, arch, rt::JitOptions{}), e.launch);
    rt::fill_poison(d);
    timed.launch_and_wait(caller);
    if (!rt::same_bits(d.download(), ours)) {
      r.passed = false;
      r.verdict = "the build without GG_WATCHDOG wrote a different result than the checked build";
      return r;
    }
    // A small problem would be timed out of L2 (50 MB on an H100) after its first run: the two
    // kernels share one rotation through copies of A and B that together exceed 128 MB, so each
    // launch reads the copy least recently read by either. (Separate rotations in step had cuBLAS
    // read, from L2, the copy our kernel had just streamed in.)
    constexpr size_t kRotateBytes = size_t(128) << 20;
    const size_t operand_bytes = a.buffer.bytes() + b.buffer.bytes();
    r.input_copies = static_cast<int>(std::min<size_t>(16, (kRotateBytes + operand_bytes - 1) / operand_bytes));
    std::vector<rt::DeviceBuffer> a_copies, b_copies;
    for (int i = 1; i < r.input_copies; ++i) {
      a_copies.emplace_back(a.buffer.type(), a.buffer.count());
      a_copies.back().upload(a.stored);
      if (one_operand) continue;  // each copy of A is its B too
      b_copies.emplace_back(b.buffer.type(), b.buffer.count());
      b_copies.back().upload(b.stored);
    }
    int turn = 0;
    const auto next_operands = [&] {
      const int i = turn++ % r.input_copies;
      if (i == 0) return std::pair<const void*, const void*>(a.buffer.data(), b.buffer.data());
      const void* a_i = a_copies[size_t(i - 1)].data();
      return std::pair<const void*, const void*>(a_i, one_operand ? a_i : b_copies[size_t(i - 1)].data());
    };
    // With an epilogue the baseline is what a cuBLAS caller runs: the GEMM into D's type, then the
    // epilogue as a kernel of its own over D (the check above compared against fp32 cuBLAS).
    // A saved output: that kernel writes it too, in the same pass.
    std::optional<rt::DeviceBuffer> unfused_d, unfused_aux;
    const rt::UnfusedEpilogue unfused = unfused_epilogue(e.plan);
    if (!plain || saves) {
      if (contiguous || varlen_k) r.baseline = "cuBLAS in fp32 (the grouped loop has no unfused epilogue baseline)";
      else {
        unfused_d.emplace(out_type, d_count);
        rt::fill_poison(*unfused_d);
        if (saves) unfused_aux.emplace(out_type, d_count);
        std::string also;
        if (saves) also += ", writing " + def.saved_name() + " too";
        for (const Reduction& red : def.reductions()) also += ", reducing into " + red.name;
        r.baseline = "cuBLAS then the epilogue as its own kernel (one pass over D" + also + ")";
      }
    }
    // The baseline's reduction vectors, the kernel's rows' then columns' (D's stored rows are its
    // columns where D is column-major).
    rt::DeviceBuffer unfused_rows(rt::ElemType::F32, size_t(def.batch() * std::max(r.m, r.n)));
    rt::DeviceBuffer unfused_cols(rt::ElemType::F32, size_t(def.batch() * std::max(r.m, r.n)));
    const auto run_unfused = [&](const void* a_ptr, const void* b_ptr) {
      cublas.gemm(a_ptr, b_ptr, unfused_d->data(), problem.in_type, out_type, r.m, r.n, r.k, problem.layouts);
      const bool transposed = problem.layouts.d_column_major;
      for (int64_t bt = 0; bt < def.batch(); ++bt) {
        const int64_t offset = stored_index(def, out_node, 0, 0, bt) * rt::elem_bytes(out_type);
        void* aux_at = unfused_aux ? static_cast<char*>(unfused_aux->data()) + offset : nullptr;
        const char* c_at = c_node ? static_cast<const char*>(c.buffer.data()) +
                                        stored_index(def, *c_node, 0, 0, bt) * rt::elem_bytes(c.buffer.type())
                                  : nullptr;
        const int64_t stored_rows = transposed ? r.n : r.m, stored_cols = transposed ? r.m : r.n;
        rt::run_unfused_epilogue(unfused, static_cast<char*>(unfused_d->data()) + offset, c_at, bias.buffer.data(),
                                 stored_rows, stored_cols, problem.layouts.ldd, problem.layouts.ldc, aux_at, nullptr,
                                 static_cast<float*>(unfused_rows.data()) + bt * stored_rows,
                                 static_cast<float*>(unfused_cols.data()) + bt * stored_cols);
      }
    };
    auto times = rt::interleaved_median_ms(
        [&] {
          rt::GemmProblem rotated = problem;
          std::tie(rotated.a, rotated.b) = next_operands();
          timed.launch(rt::swap_orientation(e.launch, rotated));
        },
        [&] {
          const auto [a_copy, b_copy] = next_operands();
          if (unfused_d) run_unfused(a_copy, b_copy);
          else cublas_all(a_copy, b_copy);
        },
        o.warmup, o.reps);
    time_cached_launch(timed, caller, r);
    r.ms = times.ours_ms;
    r.cublas_ms = times.reference_ms;
    for (int i = 0; i < o.reps; ++i) timed.launch(caller);  // a burst to read the clock under
    const rt::GpuTelemetry under_load = rt::sample_gpu_telemetry();
    timed.launch_and_wait(caller);  // waits for the burst too (one stream)
    r.sm_clock_mhz = under_load.sm_clock_mhz.value_or(0);
    r.power_w = under_load.power_w.value_or(0);
    // The products computed: each slice's rows x N x its K (every matrix of a batch; contiguous
    // groups, the rows in them; variable-K groups, their ranges of K).
    double flop_rows_k = 0;
    // (A masked group counts M_max rows: the work the strided-batch baseline does.)
    for (const Slice& sl : slices) flop_rows_k += double(masked ? r.m : sl.rows) * double(sl.k1 - sl.k0);
    r.tflops = rt::tflops(1, r.n, 1, r.ms) * flop_rows_k;
    r.cublas_tflops = rt::tflops(1, r.n, 1, r.cublas_ms) * flop_rows_k;
  }
  return r;
}

}  // namespace

std::vector<CheckReport> check_sizes_on_gpu(const Schedule& s, const std::vector<std::pair<int64_t, int64_t>>& sizes,
                                            const CheckOptions& o) {
  const Definition& def = s.definition();
  EmittedKernel e = emit_cuda(s, lowering_of(o));
  const std::string arch(target_name(e.plan.target));
  rt::LoadedKernel kernel(rt::compile_kernel(e.source, e.kernel_name, arch, watchdog_build()), e.launch);
  if (sizes.empty()) return {check_launch(s, e, kernel, def, o)};
  std::vector<CheckReport> reports;
  CheckOptions first_use = o;
  for (const auto& [m, n] : sizes) {
    // The caller's M and N; a swapped kernel's are the other way round.
    const int64_t km = def.swapped() ? n : m, kn = def.swapped() ? m : n;
    if (const std::string why = rt::sizes_mismatch(e.launch, km, kn, def.k()); !why.empty())
      throw_user_error("runtime-size", "M=" + std::to_string(m) + " N=" + std::to_string(n) + ": " + why);
    reports.push_back(check_launch(s, e, kernel, resized_definition(def, km, kn), first_use));
    first_use.measure_jit = false;  // a first use is timed once: the later sizes reuse the kernel
  }
  return reports;
}

CheckReport check_on_gpu(const Schedule& s, const CheckOptions& o) { return check_sizes_on_gpu(s, {}, o).front(); }

std::string format_report(const CheckReport& r) {
  std::ostringstream os;
  if (!r.plan.empty()) os << "plan:              " << r.plan << "\n";
  os << "kernel:            " << r.launch << "\n"
     << "device:            " << r.device << "\n"
     << "problem:           M=" << (r.swapped ? r.n : r.m) << " N=" << (r.swapped ? r.m : r.n) << " K=" << r.k
     << (r.batch > 1 ? ", batch " + std::to_string(r.batch) : std::string()) << " (" << r.checked_rows
     << " rows checked against fp64)\n";
  if (r.swapped)
    os << "orientation:       swapped: computed as D^T = B * A^T (launched with the problem's A, B, M and N)\n";
  os
     << "error vs cuBLAS:   " << r.error_vs_cublas << "\n"
     << "error vs fp64:     " << r.error_vs_host << " (bound " << r.bound << ", cuBLAS's own " << r.cublas_error_vs_host
     << ")\n"
     << "unwritten:         " << r.unwritten << "\n";
  for (const ReductionReport& red : r.reductions)
    os << "reduction " << red.name << ": error vs fp64 " << red.error_vs_host << " (cuBLAS's sums " << red.cublas_error_vs_host
       << ", at " << red.sampled << " elements), vs cuBLAS's sums " << red.error_vs_cublas << " (every element; "
       << "errors relative to the sum of the terms' magnitudes)\n";
  if (r.repeats > 0)
    os << "repeated launches: " << r.repeats << ", " << r.repeats_differing << " differing from the first\n";
  if (r.ms > 0)
    os << "time:              " << r.ms << " ms, " << r.tflops << " TFLOP/s\n"
       << "cuBLAS:            " << r.cublas_ms << " ms, " << r.cublas_tflops << " TFLOP/s\n"
       << "ratio to cuBLAS:   " << r.tflops / r.cublas_tflops << "\n";
  if (r.ms > 0 && !r.baseline.empty()) os << "baseline:          " << r.baseline << "\n";
  if (r.jit_compile_ms > 0)
    os << "jit:               first use " << r.jit_codegen_ms + r.jit_compile_ms + r.jit_load_ms << " ms (codegen "
       << r.jit_codegen_ms << " + NVRTC " << r.jit_compile_ms << " + module load " << r.jit_load_ms
       << "); from the disk cache " << r.jit_cached_ms << " ms; a cached launch " << r.launch_host_us
       << " us of host time\n";
  if (r.input_copies > 1)
    os << "inputs:            " << r.input_copies << " copies of A and B in turn, so no run reads them from L2\n";
  if (r.ms > 0 && r.sm_clock_mhz > 0)
    os << "under load:        SM clock " << r.sm_clock_mhz << " MHz, " << r.power_w << " W\n";
  if (r.planned_grid_ctas > r.grid_ctas)
    os << "note:              the plan's " << r.planned_grid_ctas << " persistent CTAs exceed the " << r.grid_ctas
       << " this device holds at once (clusters stay inside a GPC): launched " << r.grid_ctas << "\n";
  if (r.resident_ctas > 0 && r.grid_ctas > r.resident_ctas)
    os << "note:              the grid's " << r.grid_ctas << " CTAs exceed the " << r.resident_ctas
       << " the device holds at once: the rest run as a tail wave\n";
  os << "check:             " << (r.passed ? "PASS" : "FAIL: " + r.verdict) << "\n";
  return os.str();
}

std::string format_report_json(const CheckReport& r) {
  std::ostringstream os;
  os.precision(9);
  os << "{\"plan\": \"" << r.plan << "\", \"kernel\": \"" << r.kernel_name << "\", \"device\": \"" << r.device << "\", \"m\": " << (r.swapped ? r.n : r.m)
     << ", \"n\": " << (r.swapped ? r.m : r.n) << ", \"k\": " << r.k << ", \"swapped\": " << (r.swapped ? "true" : "false") << ", \"batch\": " << r.batch << ", \"error_vs_cublas\": " << r.error_vs_cublas
     << ", \"error_vs_host\": " << r.error_vs_host << ", \"cublas_error_vs_host\": " << r.cublas_error_vs_host
     << ", \"bound\": " << r.bound << ", \"unwritten\": " << r.unwritten << ", \"checked_rows\": " << r.checked_rows
     << ", \"ms\": " << r.ms << ", \"tflops\": " << r.tflops << ", \"cublas_ms\": " << r.cublas_ms
     << ", \"cublas_tflops\": " << r.cublas_tflops << ", \"sm_clock_mhz\": " << r.sm_clock_mhz
     << ", \"power_w\": " << r.power_w << ", \"input_copies\": " << r.input_copies << ", \"grid_ctas\": " << r.grid_ctas
     << ", \"planned_grid_ctas\": " << r.planned_grid_ctas
     << ", \"resident_ctas\": " << r.resident_ctas << ", \"repeats\": " << r.repeats
     << ", \"jit_codegen_ms\": " << r.jit_codegen_ms << ", \"jit_compile_ms\": " << r.jit_compile_ms
     << ", \"jit_load_ms\": " << r.jit_load_ms << ", \"jit_cached_ms\": " << r.jit_cached_ms
     << ", \"baseline\": \"" << r.baseline << "\", \"launch_host_us\": " << r.launch_host_us << ", \"repeats_differing\": " << r.repeats_differing << ", \"ratio\": " << (r.cublas_tflops > 0 ? r.tflops / r.cublas_tflops : 0)
     << ", \"passed\": " << (r.passed ? "true" : "false") << "}";
  return os.str();
}

}  // namespace gg
