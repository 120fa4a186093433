#pragma once
// The tensor-expression IR: what to compute. Inputs A[M,K] and B[N,K], their product with
// fp32 accumulation, then elementwise epilogue ops, held as a DAG (dsl/graph).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dsl/dtype.h"
#include "runtime/ue8m0_atoms.h"
#include "dsl/graph.h"

namespace gg {

// Which dimension of an operand is contiguous in memory: K (A[m * lda + k], B[n * ldb + k]) or
// M / N (A[k * lda + m], B[k * ldb + n]; WGMMA reads 16-bit MN-major tiles with its transpose bit).
enum class Layout { KMajor, MNMajor };

// Where the problem's matrices come from. Dense: one GEMM, or a strided batch of equal GEMMs.
// Masked (grouped, DeepGEMM's m_grouped_..._masked, MoE decode): the batch's matrices are groups,
// A[G, M_max, K] and D[G, M_max, N], of which group g uses its first masked_m[g] rows, read from a
// device array at run time; a tile past them does no loads, no MMAs and no store.
// Contiguous (grouped, DeepGEMM's m_grouped_..._contiguous, MoE forward): the batch's matrices
// are groups of rows of one A[M, K] and one D[M, N] (C likewise), group g the rows
// [offsets[g], offsets[g+1]) of a device array read at run time, times its own B[g] [N, K]; a
// tile of a group stores only the group's rows.
// Variable K (grouped, QuACK's varlen_k, weight gradients): the batch's matrices are groups of
// D[G, M, N], each the product of one K range of a shared A [K_total, M] and B [K_total, N] (both
// MN-major: the tokens are their rows), group g the rows [offsets[g], offsets[g+1]) of K read from
// a device array at run time; a group with no K stores zeros.
// Pointer array (grouped, CUTLASS's ptr-array grouped GEMM, cublasGemmGroupedBatchedEx): the batch's
// matrices are groups each with its own A, B and D pointers, M, N, K and leading dimensions, all in
// device arrays read at run time; a builder kernel writes each group's tensor maps on the device.
// The definition's M, N and K are the sizes it is planned for (and the simulator's largest group).
enum class ProblemSource { Dense, Masked, Contiguous, VarlenK, PointerArray };
// "dense", "masked", "contiguous", "varlen_k", "pointer_array"
std::string_view problem_source_name(ProblemSource s);

// ActGrad: the backward of an activation at a saved pre-activation (QuACK's gemm_dact):
// x * act'(pre_activation), the pre-activation an [M,N] tensor read where beta*C reads C.
enum class OpKind { Input, Matmul, Scale, AddScaled, AddBias, Relu, Gelu, Silu, Cast, ActGrad };

// How finely an FP8 operand's scale factors vary (DeepGEMM's recipe: activations per 1 x 128,
// weights per 128 x 128): one for the tensor, one per row (of M for A, N for B), one per row and
// 128 elements of K, one per 128 x 128 block. The operand's value is its FP8 element times the
// factor of the element's row and k block.
enum class ScaleGranularity { PerTensor, PerRow, Block1x128, Block128x128 };
std::string_view scale_granularity_name(ScaleGranularity g);  // "tensor", "row", "1x128", "128x128"
ScaleGranularity parse_scale_granularity(std::string_view name);  // CompileError `bad-scale`
// How an operand's factors are stored. F32: fp32 values, laid out as their major says. Ue8m0:
// one byte per factor, the value 2^(byte - 127) (255 is NaN), in the atoms sm_100a's block-scaled
// tcgen05.mma copies into Tensor Memory whole (runtime/ue8m0_atoms.h). Per 1x128 only.
enum class ScaleFormat { F32, Ue8m0 };
using rt::kUe8m0AtomBytes;
using rt::kUe8m0AtomKBlocks;
using rt::kUe8m0AtomRows;
// An operand's factors as the CLI and the schedule text write them: a granularity, and for the
// two-dimensional ones the factors' major after a colon ("1x128:k": K-major, "128x128:mn": M- or
// N-major) or "1x128:ue8m0" (ScaleFormat::Ue8m0); without one, the operand's default (DeepGEMM's:
// A's MN-major, B's K-major, fp32).
struct ScaleSpec {
  ScaleGranularity granularity = ScaleGranularity::Block1x128;
  std::optional<Layout> major;
  ScaleFormat format = ScaleFormat::F32;
};
ScaleSpec parse_scale_spec(std::string_view text);  // CompileError `bad-scale`
std::string scale_spec_text(ScaleGranularity g, Layout major, Layout default_major,
                            ScaleFormat format = ScaleFormat::F32);  // "1x128", "1x128:k", "1x128:ue8m0"
// The array an operand's factors are, as launch errors name it: "[ceil(K/128)][M rounded up to 4] fp32".
// `rows` names the operand's rows ("M" or "N").
std::string scale_array_text(ScaleGranularity g, Layout major, std::string_view rows,
                             ScaleFormat format = ScaleFormat::F32);
// How many factors a rows x k operand matrix has, and where the factor of its element (r, c) lies
// among them (MN-major: [k blocks][row blocks rounded up to 4]; K-major: [row blocks][k blocks]).
// UE8M0 factors count bytes.
int64_t scale_factor_count(ScaleGranularity g, Layout major, int64_t rows, int64_t k,
                           ScaleFormat format = ScaleFormat::F32);
int64_t scale_factor_index(ScaleGranularity g, Layout major, int64_t rows, int64_t k, int64_t r, int64_t c,
                           ScaleFormat format = ScaleFormat::F32);
// A UE8M0 factor's value, 2^(code - 127) (NaN for 255).
float ue8m0_value(uint8_t code);
inline constexpr int64_t kScaleBlock = 128;  // elements of K (and rows, 128 x 128) one factor covers

// How the output [M,N] lies in memory: rows contiguous (D[m * N + n]) or columns contiguous
// (D[n * M + m]). A column-major output is what computing D^T = B * A^T in place of D needs.
enum class OutputLayout { RowMajor, ColumnMajor };

// A bias vector is indexed by the output row (one value per m) or column (one per n).
enum class BiasAlong { Rows, Cols };

// A reduction of an epilogue value into a side vector (QuACK's gemm_sq_reduce, the building block
// of a fused RMS norm): along rows, one fp32 per row of the output (M of them per batch matrix,
// the matrices' vectors one after the other), the sum over the row's N columns; along columns,
// one per column, over its M rows. Of the values or (SumSquares) of their squares, each value in
// fp32 as the epilogue computes it, before the output's rounding. The sums are added in a fixed
// order: the same bits every run.
enum class ReduceAlong { Rows, Cols };
enum class ReduceOp { Sum, SumSquares };
struct Reduction {
  int node = -1;
  ReduceAlong along = ReduceAlong::Rows;
  ReduceOp op = ReduceOp::Sum;
  std::string name;
};
// "RowSum", "RowSumSq", "ColSum", "ColSumSq": a reduction's default name
std::string default_reduction_name(ReduceAlong along, ReduceOp op);

std::string_view op_name(OpKind k);
// CompileError `epilogue-scalar` unless v is a finite fp32 value; `op` names the call or
// directive ("scale", "epilogue add_c"), `what` the scalar ("alpha", "beta").
void check_epilogue_scalar(std::string_view op, const char* what, double v);
bool op_is_elementwise(OpKind k);
bool op_is_activation(OpKind k);  // Relu, Gelu, Silu

struct Node {
  int id = -1;
  OpKind kind = OpKind::Input;
  std::string name;              // unique within the definition: "A", "acc", "relu", ...
  DType dtype = DType::F32;
  std::vector<int64_t> shape;    // inputs and matmul: [rows, cols]; bias: [len]
  Layout layout = Layout::KMajor;
  int64_t ld = 0;                // 2-D tensors in memory: elements from one row to the next; 0: dense
  int64_t batch_stride = -1;     // batched: elements from one matrix to the next; -1: dense, 0: broadcast
  double scalar = 0.0;           // Scale: alpha; AddScaled: beta
  BiasAlong bias_along = BiasAlong::Cols;
  OpKind activation = OpKind::Relu;  // ActGrad: the activation whose derivative it multiplies by
  std::vector<int> operands;     // node ids, in order
  // A scale input (Definition::scale_input): the FP8 operand it scales (-1: not a scale) and how
  // finely. Its shape is [rows or row blocks, k blocks]; MN-major stores the k blocks as rows
  // (DeepGEMM's TMA-aligned layout: rows padded to 4 floats), K-major stores a row's k blocks together.
  int scales = -1;
  ScaleGranularity granularity = ScaleGranularity::Block1x128;
  ScaleFormat scale_format = ScaleFormat::F32;
  // An operand the kernel reads through an aligned copy the launch makes first (its rows padded to
  // whole 32-byte sectors: staged_pitch), because TMA cannot address the caller's rows.
  bool staged = false;
};

class Definition;

// A handle to one node of a Definition.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Definition* def, int id) : def_(def), id_(id) {}
  int id() const { return id_; }
  Definition* definition() const { return def_; }
  const Node& node() const;
  const std::string& name() const { return node().name; }

 private:
  Definition* def_ = nullptr;
  int id_ = -1;
};

class Definition {
 public:
  Definition() = default;
  Definition(const Definition& other);
  Definition& operator=(const Definition& other);

  Tensor input(const std::string& name, std::vector<int64_t> shape, DType dtype, Layout layout = Layout::KMajor);
  Tensor matmul(Tensor a, Tensor b);  // a: [M,K], b: [N,K] -> fp32 [M,N] named "acc"
  Tensor scale(Tensor x, double alpha);
  Tensor add_scaled(Tensor x, Tensor c, double beta);  // x + beta * c, c: [M,N]
  Tensor add_bias(Tensor x, Tensor bias, BiasAlong along);
  Tensor relu(Tensor x);
  Tensor gelu(Tensor x);  // tanh form
  Tensor silu(Tensor x);
  // x * act'(pre_activation) for `activation` Relu, Gelu (tanh form) or Silu: the gradient through
  // the activation a forward GEMM applied to pre_activation [M,N] (QuACK's gemm_dact). The
  // pre-activation is read as C is (one [M,N] tensor per epilogue). CompileError `epilogue-op` for
  // another kind, `epilogue-shape` for another shape.
  Tensor activation_grad(Tensor x, Tensor pre_activation, OpKind activation);
  Tensor cast(Tensor x, DType to);
  // The fp32 scale factors of FP8 input `operand` (A or B, before or after the matmul), at
  // `granularity`, laid out as `layout` says. CompileError `bad-scale` for an operand that is not
  // an FP8 2-D input or already has scales.
  // UE8M0 factors (ScaleFormat::Ue8m0) are per 1x128 in their atoms (`layout` is not read).
  Tensor scale_input(const std::string& name, Tensor operand, ScaleGranularity granularity,
                     Layout layout = Layout::MNMajor, ScaleFormat format = ScaleFormat::F32);
  // The scale input of operand `operand_id`; nullptr when it has none (its factor is 1).
  const Node* scale_of(int operand_id) const;
  void set_output(Tensor out, OutputLayout layout = OutputLayout::RowMajor);
  OutputLayout output_layout() const { return output_layout_; }
  // A second output: the value of `x` (the matmul or an op of the epilogue before the output) as
  // well, cast to the output dtype and stored to its own tensor `name`, laid out as the output is
  // (its leading dimension and batch stride). QuACK's gemm_act keeps the pre-activation so:
  // D = gelu(x) with x saved for the backward pass. One per definition; CompileError
  // `bad-saved-output` for an input, the output itself or a second call, `duplicate-name` for a taken name.
  void set_saved_output(Tensor x, const std::string& name = "PreAct");
  int saved_output() const { return saved_; }  // the node, or -1 for none
  const std::string& saved_name() const { return saved_name_; }
  // A reduction of `x` (the matmul, an op of the epilogue or the output) into the side vector
  // `name` (default_reduction_name when empty); see Reduction. At most one along rows and one
  // along columns; CompileError `bad-reduction` for an input or a second along the same
  // direction, `duplicate-name` for a taken name.
  void add_reduction(Tensor x, ReduceAlong along, ReduceOp op, const std::string& name = "");
  const std::vector<Reduction>& reductions() const { return reductions_; }
  // A strided view: `ld` elements from one stored row of `t` (an input or the output) to the
  // next, at least the row's own length (row_elems). CompileError `bad-leading-dim` otherwise.
  void set_leading_dim(Tensor t, int64_t ld);
  // Operand `t` (A or B) is read through an aligned copy: each launch first copies the caller's
  // rows into a buffer whose rows are padded to whole 16-byte pieces, and the kernel's TMA loads
  // read that. For rows TMA cannot address (a K-major operand with K % 8 != 0, an MN-major one
  // with M or N % 8 != 0, 16-bit types). CompileError `stage` for anything else: an operand whose
  // rows TMA already addresses, FP8, grouped problem sources, D = A * A^T.
  void stage_operand(Tensor t);
  // `count` matrices computed in one launch: D[b] = A[b] * B[b]^T. Each 2-D tensor's matrices lie
  // batch_stride elements apart (default: dense, one after the other); a stride of 0 broadcasts
  // one input matrix to every batch. CompileError `bad-batch` / `bad-batch-stride`, and
  // `overlapping-output` for an output stride shorter than one stored matrix (checked by whichever
  // of set_batch, set_batch_stride, set_leading_dim and set_output completes the picture).
  void set_batch(int64_t count);
  void set_batch_stride(Tensor t, int64_t stride);
  int64_t batch() const { return batch_; }
  // The planner's swapped orientation (swapped_definition): this definition computes the caller's
  // D[M,N] = A[M,K] * B[N,K]^T as D^T[N,M] = B * A^T, so its A is the caller's B, its M the
  // caller's N and its output the caller's D read transposed. The launch and the emitted host
  // entry take the caller's operands and sizes and exchange them.
  void set_swapped(bool swapped) { swapped_ = swapped; }
  bool swapped() const { return swapped_; }
  // Which sizes the kernel reads from its arguments at run time instead of having them as
  // constants (DeepGEMM's compiled_dims): one kernel then serves every value of them, and m() or
  // n() is only the size it is planned for. M and N may be read at run time; K is compiled.
  void set_runtime_sizes(bool m, bool n) {
    runtime_m_ = m;
    runtime_n_ = n;
  }
  bool runtime_m() const { return runtime_m_; }
  bool runtime_n() const { return runtime_n_; }
  // The problem source (ProblemSource): masked takes the batch's matrices as groups whose rows
  // in use the kernel reads from a device array. What lowering cannot do with it is `not-lowered`.
  void set_problem_source(ProblemSource s) { source_ = s; }
  ProblemSource problem_source() const { return source_; }

  int size() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const;
  const Node* find(const std::string& name) const;  // nullptr when absent
  Tensor tensor(int id) { return Tensor(this, id); }
  int output() const;  // CompileError `no-output` when unset
  const Node& matmul_node() const;  // CompileError `no-matmul` when absent
  int64_t m() const;
  int64_t n() const;
  int64_t k() const;
  DType input_dtype() const;   // of A (and B)
  DType output_dtype() const;  // of the output node

  // The epilogue ops between the matmul and the output, in topological order.
  std::vector<int> epilogue() const;
  std::vector<int> topological_order() const { return graph_.topological_order(); }
  std::vector<int> producers(int id) const { return graph_.producers(id); }
  std::vector<int> consumers(int id) const { return graph_.consumers(id); }
  bool depends_on(int consumer, int producer) const { return graph_.reaches(producer, consumer); }

  std::string to_string() const;

 private:
  Tensor add(Node node);
  const Node& checked(Tensor t, const char* op) const;
  std::string unique_name(const std::string& base);

  std::vector<Node> nodes_;
  Dag graph_;
  // Lookups by name and the next suffix to try per generated name, so that building a
  // definition of n ops takes linear time (a scan per lookup made 2,000 ops take 30 s).
  std::unordered_map<std::string, int> by_name_;
  std::unordered_map<std::string, int> next_suffix_;
  void check_leading_dim(const Node& n) const;
  void check_output_batch_stride(int64_t batch, int64_t stride) const;

  int output_ = -1;
  int saved_ = -1;
  std::string saved_name_;
  std::vector<Reduction> reductions_;
  OutputLayout output_layout_ = OutputLayout::RowMajor;
  int64_t batch_ = 1;
  bool swapped_ = false;
  bool runtime_m_ = false, runtime_n_ = false;
  ProblemSource source_ = ProblemSource::Dense;
};

// A 2-D tensor's rows in memory: their length in elements (the contiguous extent: K for K-major
// operands, M or N for MN-major ones, N for a row-major output and C, M for a column-major
// output), the leading dimension (ld, or the row length when dense), and the elements one batch
// matrix takes (0 when broadcast).
int64_t row_elems(const Definition& def, const Node& n);
// Whether an epilogue op reads an [M,N] tensor, its second operand, through C's path (beta*C, or
// an activation gradient's pre-activation).
bool reads_c(const Node& n);
// Whether the stored rows run along the second extent of the shape: an MN-major operand or a
// column-major output.
bool stored_transposed(const Definition& def, const Node& n);
int64_t leading_dim(const Definition& def, const Node& n);
int64_t stored_rows(const Definition& def, const Node& n);  // rows of the stored matrix
int64_t batch_stride(const Definition& def, const Node& n);
// The matrices a tensor stores: the batch count, or 1 for a broadcast input (stride 0) or a bias.
int64_t stored_matrices(const Definition& def, const Node& n);
// Elements from a stored matrix's first element to its last: (stored rows - 1) x leading
// dimension + row length. What two matrices of a batched output must not share.
int64_t matrix_span(const Definition& def, const Node& n);
// Elements an allocation of the tensor spans: every stored matrix, batch_stride apart.
int64_t stored_span(const Definition& def, const Node& n);
// Whether a batched tensor's matrices lie a 16-byte multiple apart (as a 3-D tensor map and 16-byte
// loads from each matrix need); true for one matrix.
bool batch_stride_aligned(const Definition& def, const Node& n);
// Whether the row stride (and a batch's matrix stride) is the 16-byte multiple a TMA tensor map
// needs (its extent may be ragged: TMA zero-fills and clips at the edge), as the caller lays it out.
bool tma_rows_aligned(const Definition& def, const Node& n);
// Whether the kernel's TMA can load the operand: its rows aligned, or staged through an aligned copy.
bool tma_can_load(const Definition& def, const Node& n);
// The elements between a staged operand's rows in its aligned copy: the row length rounded up to
// a whole number of 32-byte sectors (GG_STAGE_PITCH_BYTES, the rule rt::staged_matrix applies at each launch).
int64_t staged_pitch(const Definition& def, const Node& n);
// Whether the operand's rows (the caller's, or a staged copy's) lie a multiple of 32 bytes apart, so
// every row starts on an L2 sector: TMA loads rows that start 16 bytes into one at half the rate
// (GG_STAGE_PITCH_BYTES).
bool rows_sector_aligned(const Definition& def, const Node& n);
// Why operand `n` cannot be staged (Definition::stage_operand's refusal, after the operand's
// name), or "" when it can: its rows are ones TMA cannot address and staging applies.
std::string why_not_staged(const Definition& def, const Node& n);
// Whether the stored rows run along a size the kernel reads at run time (M for an M-major A or a
// column-major output, N for an N-major B or a row-major output): their length at a launch is
// then unknown when planning (pointer-array groups state their own rule).
bool rows_follow_runtime_size(const Definition& def, const Node& n);
// Whether 16-byte vector loads cover the rows exactly: row length and stride 16-byte multiples.
bool vector_rows(const Definition& def, const Node& n);
// Whether a TMA store can write the output at every launch (what `auto` asks): row-major (a
// column-major output is stored from registers), its row stride and its row length 16-byte
// multiples, and that length not a size read at run time (a launch at another length would need
// the rows to be whole 16-byte pieces again). The length too: measured on an
// H100, a TMA store clips the row's end only to whole 16 bytes, so it would overwrite the
// elements between a ragged row and the next (a strided view's padding).
bool tma_storable_output(const Definition& def);
// Whether `auto` may TMA-store a column-major output through a transposed staging buffer
// (stmatrix.trans): 16-bit values, the same 16-byte rows (of M elements) and no row length read
// at run time.
bool tma_storable_transposed(const Definition& def);
// What `auto` asks of a tensor: TMA can load it (an operand) or store it (the output).
bool tma_can_copy(const Definition& def, const std::string& tensor);
// "a row of K=71 bf16 elements is 142 bytes"; with a leading dimension "rows of ... lie 144 elements apart"
std::string row_bytes_text(const Definition& def, const Node& n);

// How a GEMM's matrices lie in memory, for the definition builders (make_definition,
// gg::gemm_definition): the operands' majors, D's layout, leading dimensions (0: dense), the
// batch count and the elements between one matrix and the next (-1: dense one after another; 0
// for A or B: one matrix broadcast to every batch).
struct ProblemLayout {
  Layout a = Layout::KMajor, b = Layout::KMajor;
  OutputLayout d = OutputLayout::RowMajor;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int64_t batch = 1;
  int64_t stride_a = -1, stride_b = -1, stride_d = -1;
  // The sizes the kernel reads at run time (Definition::set_runtime_sizes); the rest are compiled.
  // By default M: a serving loop's new M at every step launches the same kernel.
  bool runtime_m = true, runtime_n = false;
  // masked: `batch` groups of at most M rows each; contiguous: `batch` groups sharing M rows
  ProblemSource source = ProblemSource::Dense;
  // FP8 operands' scale factors (nullopt: none, a factor of 1), laid out as DeepGEMM does: A's
  // ("SA") MN-major, B's ("SB") K-major.
  std::optional<ScaleGranularity> scale_a{}, scale_b{};
  // The two-dimensional factors' majors (1x128, 128x128): MN-major (DeepGEMM's TMA-aligned
  // [k blocks][rows rounded up to 4]) or K-major ([rows][k blocks]).
  Layout scale_a_major = Layout::MNMajor, scale_b_major = Layout::KMajor;
  ScaleFormat scale_a_format = ScaleFormat::F32, scale_b_format = ScaleFormat::F32;
  // D = A * A^T: one input A read as both operands (matmul(A, A)); N is M.
  bool symmetric = false;
  // A or B read through an aligned copy the launch makes first (Definition::stage_operand).
  bool stage_a = false, stage_b = false;
  bool operator==(const ProblemLayout&) const = default;
};
// The layout of a definition's A, B and output.
ProblemLayout problem_layout(const Definition& def);
// "A m-major, ldb=4104, batch 3, stride_a=0" for what differs from the default; "" when nothing does.
// (The run-time sizes are not a layout: compiled_dims_text says them.)
std::string problem_layout_text(const ProblemLayout& l);
// `l` with a one-row M-major A (M = 1) or one-row N-major B (N = 1) whose rows are dense read as
// K-major: the same bytes, in the layout TMA and wgmma read best (M-major with M = 1 has a 2-byte
// row stride no TMA copy takes).
ProblemLayout canonical_layout(int64_t m, int64_t n, ProblemLayout l);
// The layout of the swapped orientation: D^T[N,M] = B * A^T, A and B trading places (and leading
// dimensions, batch strides and which of M and N is read at run time), D's rows its columns.
ProblemLayout swapped_layout(const ProblemLayout& l);
// DeepGEMM's spelling of the compiled sizes: "mnk" (all compiled), "nk" (M at run time), "mk", "k".
std::string compiled_dims_text(const ProblemLayout& l);
// Parses compiled_dims_text's spelling into `l`'s run-time sizes; CompileError `bad-compiled-dims`.
void set_compiled_dims(ProblemLayout& l, std::string_view dims);
// Parses the staged operands, "a", "b" or "ab", into `l`; CompileError `stage` for another word.
void set_staged_operands(ProblemLayout& l, std::string_view operands);
// Creates A [M,K] and B [N,K] inputs laid out as `l` says and applies its batch.
std::pair<Tensor, Tensor> gemm_inputs(Definition& def, int64_t m, int64_t n, int64_t k, DType in, const ProblemLayout& l);
// Sets the output as `l` says (after the epilogue is built).
void set_gemm_output(Definition& def, Tensor out, const ProblemLayout& l);

// The usual definition: D[M,N] = cast(A[M,K] * B[N,K]^T) with `in` operands and `out` result.
Definition make_gemm(int64_t m, int64_t n, int64_t k, DType in, DType out);

}  // namespace gg
