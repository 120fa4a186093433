#pragma once
// What a lowered kernel needs from the runtime to be launched: filled in by codegen,
// consumed by runtime/launch and by the host entry of an emitted .cu. Knows nothing
// of schedules or IR.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gg::rt {

// E4M3 and E5M2: FP8 operands (OCP formats; e4m3 saturates at 448 and has no infinity).
enum class ElemType { F16, BF16, F32, E4M3, E5M2 };

int elem_bytes(ElemType t);
const char* elem_name(ElemType t);  // "f16", "bf16", "f32", "e4m3", "e5m2"
bool elem_is_fp8(ElemType t);

enum class Swizzle { None, B32, B64, B128 };

// Which GgGemmArgs slot (runtime/device/gemm_args.h) a tensor map or pointer belongs to. ScaleA:
// an FP8 A's fp32 scale factors per row and 128 of K, stored MN-major (k blocks as rows of M
// factors, 16-byte aligned: DeepGEMM's TMA-aligned layout).
// With UE8M0 factors (MatrixLayouts::scales_ue8m0) ScaleA and ScaleB are A's and B's atoms.
// Aux: a saved second output (the pre-activation of an activation's epilogue), laid out as D.
enum class Operand { A, B, C, D, ScaleA, Aux, ScaleB };

// A tiled tensor map over a stored matrix of `rows` x `cols` elements, `cols` contiguous, rows
// `row_stride` elements apart; with `batches` > 1 a third dimension of matrices `batch_stride`
// elements apart. `transposed`: an MN-major operand (its stored rows run along K, its columns
// along M or N) or a column-major output.
struct TensorMapSpec {
  Operand operand = Operand::A;
  ElemType elem = ElemType::BF16;
  uint64_t rows = 0, cols = 0;
  uint64_t row_stride = 0;  // 0: cols (dense)
  uint64_t batches = 1, batch_stride = 0;
  uint32_t box_rows = 0, box_cols = 0;
  Swizzle swizzle = Swizzle::B128;
  bool transposed = false;
  // Stores stop at a row the kernel names per box (contiguous groups' D): encoded with a second
  // row dimension, coordinates (col, box_rows - rows kept, first row + rows kept) over a base
  // box_rows rows before the matrix, so the box's rows past those kept fall outside the map.
  bool row_limited = false;
  // The map reads the launch's aligned copy of the operand (staged_matrix), which each launch
  // writes first from the caller's rows (`<kernel>_stage`), not the caller's memory.
  bool staged = false;
  bool operator==(const TensorMapSpec&) const = default;
};

// Pointer-array groups' device arrays, one entry per group: each group's A, B and D, its M, N and
// K (3 ints per group; a negative size reads as 0) and the leading dimensions of its A, B and D in
// elements (nullptr: dense). Pointers and leading dimensions must meet TMA's alignment (16-byte
// addresses and row pitches), and each N must make D's rows whole 16-byte pieces.
struct GroupArrays {
  const void* const* a = nullptr;
  const void* const* b = nullptr;
  void* const* d = nullptr;
  const int* sizes = nullptr;
  const long long* lda = nullptr;
  const long long* ldb = nullptr;
  const long long* ldd = nullptr;
  bool operator==(const GroupArrays&) const = default;
};

// How the problem's matrices lie in memory. Logical A is [M,K], B [N,K], C and D [M,N]; a
// K-major A lies at a[b * stride_a + m * lda + k], an MN-major one at a[b * stride_a + k * lda +
// m] (B likewise with n); a row-major D at d[b * stride_d + m * ldd + n], a column-major one at
// d[b * stride_d + n * ldd + m]; C lies as D does, with ldc and stride_c. Leading dimensions of 0
// and strides of -1 mean dense; a stride of 0 broadcasts one A, B or C to every batch.
struct MatrixLayouts {
  bool a_mn_major = false, b_mn_major = false, d_column_major = false;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch = 1;
  int64_t stride_a = -1, stride_b = -1, stride_c = -1, stride_d = -1;
  // FP8 factors as UE8M0 bytes in sm_100a's block-scaled atoms (gg::ScaleFormat::Ue8m0): 512 per
  // 128 rows and 4 k blocks, a row block's atoms along K; else fp32 as the kernel's problem says.
  bool scales_ue8m0 = false;
  bool operator==(const MatrixLayouts&) const = default;
};
// The same layouts with every dense placeholder replaced by its value for an M x N x K problem.
MatrixLayouts resolve_layouts(const MatrixLayouts& l, int64_t m, int64_t n, int64_t k);

// How one operand of an M x N x K problem is stored, as a tensor map describes it: rows x cols
// (cols contiguous; transposed: an MN-major A or B, a column-major C or D), rows `row_stride`
// elements apart, `batches` matrices `batch_stride` apart (one when broadcast).
// ScaleA: ceil(K / 128) rows of M factors, rows M rounded up to 4 apart. With UE8M0 factors,
// ScaleA and ScaleB: one row of 128 32-bit words per atom, ceil(rows / 128) x ceil(K / 512) rows
// (atom (row block, k group) is row row block x ceil(K / 512) + k group).
struct StoredMatrix {
  bool transposed = false;
  int64_t rows = 0, cols = 0, row_stride = 0, batches = 1, batch_stride = 0;
};
StoredMatrix stored_matrix(const MatrixLayouts& l, Operand operand, int64_t m, int64_t n, int64_t k);
// The aligned copy a staged tensor map reads (TensorMapSpec::staged): the caller's stored matrix's
// rows and columns with its rows padded to whole GG_STAGE_PITCH_BYTES, its matrices one after another
// (a broadcast operand's one matrix copied once).
StoredMatrix staged_matrix(const StoredMatrix& caller, ElemType elem);
// The bytes of that copy, a 256-byte multiple (so the next copy in one buffer starts aligned).
uint64_t staged_bytes(const StoredMatrix& staged, ElemType elem);
// "lda=72 ldb=64 ..." of the fields that differ between two resolved layouts; "" when equal.
std::string layout_differences(const MatrixLayouts& expected, const MatrixLayouts& given);

// A count that follows the sizes a kernel reads at run time: constant * ceil(M / m_divisor) *
// ceil(N / n_divisor), a divisor of 0 leaving its factor out (so a plain constant has both 0).
struct SizedCount {
  uint64_t constant = 1, m_divisor = 0, n_divisor = 0;
  uint64_t at(int64_t m, int64_t n) const;
  bool sized() const { return m_divisor != 0 || n_divisor != 0; }
};

// How a kernel that reads M or N at run time (in its own orientation) is launched for a problem:
// the sizes it has as constants (checked), its grid and workspace for the problem's M and N, and
// the most rows and columns it serves.
struct RuntimeSizes {
  bool m = false, n = false;   // read at run time
  // The constants every launch must match (0 where read at run time, or not recorded).
  int64_t compiled_m = 0, compiled_n = 0, compiled_k = 0;
  // A grid of tiles: each dimension's CTAs. A persistent grid: grid.x = cluster.x * min(ceil(units
  // / cluster_ctas), max_clusters), one cluster per group of the loop's units up to a full wave.
  std::array<SizedCount, 3> grid;
  bool persistent = false;
  SizedCount units;
  uint64_t cluster_ctas = 1, max_clusters = 1;
  // Split-K: workspace bytes = slot_bytes * slots + 4 * slots (the partial sums, then a ticket per slot).
  SizedCount workspace_slots;
  uint64_t workspace_slot_bytes = 0;
  // Counts the hardware or the kernel bound, checked at each launch: a grid dimension's CTAs, the
  // Hilbert order's tiles along m and n, the persistent loop's 32-bit unit index.
  struct Bound {
    SizedCount count;
    uint64_t most = 0;
    std::string what;  // "CTAs along the grid's y dimension"
  };
  std::vector<Bound> bounds;
};

struct LaunchSpec {
  std::string kernel_name;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{128, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};  // {1,1,1}: launched without a cluster attribute
  // The kernel walks its work units in a loop strided by the grid (gridDim.x / cluster CTAs):
  // any number of clusters computes the whole problem, and a launch runs no more than the device
  // holds at once (`grid` plans a wave of the planner's device; a smaller GPU, or one whose GPCs
  // hold fewer clusters, would otherwise run its last clusters after the rest finish).
  bool persistent = false;
  unsigned dynamic_smem_bytes = 0;
  std::vector<TensorMapSpec> tensor_maps;
  MatrixLayouts layouts;  // what the kernel was generated for (resolved, or dense placeholders)
  // Global scratch the kernel needs (split-K's partial sums and tickets), zeroed before the first
  // launch; the kernel leaves it zeroed. Launches sharing it must not overlap (one stream).
  uint64_t workspace_bytes = 0;
  // The planner's swapped orientation: the kernel computes the caller's D = A * B^T as
  // D^T = B * A^T. Launches take the caller's problem (A, B, M, N and layouts as the caller has
  // them) and exchange them (swap_orientation); `layouts` above is the kernel's side.
  bool swapped = false;
  // Masked groups: the kernel reads each group's rows in use from GgGemmArgs::group_rows, which a
  // launch must pass (one int per matrix of the batch, each at most M).
  bool masked = false;
  // Contiguous groups: the kernel reads the groups' row offsets from GgGemmArgs::group_offsets,
  // which a launch must pass (batch + 1 ints, nondecreasing, from 0..M).
  bool contiguous = false;
  // Variable-K groups: the kernel reads the groups' K offsets from GgGemmArgs::group_offsets
  // (batch + 1 ints, nondecreasing, in 0..K) and K itself at run time.
  bool varlen_k = false;
  // Pointer-array groups: each group's A, B and D lie where device arrays of pointers say, with
  // the sizes and leading dimensions of more device arrays (GemmProblem::groups). A launch first
  // runs `<kernel_name>_group_maps`, which writes every group's tensor maps (from templates
  // encoded from `tensor_maps`) into GgGemmArgs::group_maps, then the kernel, which reads each
  // group's M, N and K from GgGemmArgs::group_sizes. Its grid is a full wave.
  bool pointer_array = false;
  // FP8: the kernel reads B's scale factors from GgGemmArgs::scale_b (A's, where it has them, go
  // through the ScaleA tensor map), which a launch must pass.
  bool reads_scale_b = false;
  // The arrays the kernel reads the factors from, as errors name them ("[ceil(N/128)][ceil(K/128)] fp32").
  std::string scale_a_array, scale_b_array;
  // FP8: the kernel reads A's factors (per tensor or row from GgGemmArgs::scale_a; per row and 128
  // of K through the ScaleA tensor map), which a launch must pass.
  bool reads_scale_a = false;
  // The kernel stores a saved second output (the pre-activation) to GgGemmArgs::aux, laid out as
  // D (through the Aux tensor map where D goes through D's), which a launch must pass.
  bool writes_aux = false;
  // D = A * A^T: the kernel reads A as both operands (a launch passes A's pointer as B's).
  bool symmetric = false;
  // The kernel reduces its values into side vectors, fp32, [batch][M] along rows and [batch][N]
  // along columns (GgGemmArgs::row_reduction, col_reduction), which a launch must pass. In the
  // kernel's orientation: a swapped kernel's row sums are the caller's column sums.
  bool reduces_rows = false, reduces_cols = false;
  // Sizes read at run time: `grid` and `workspace_bytes` above are for the planned problem, and a
  // launch sizes its own from these (launch_grid, launch_workspace_bytes).
  RuntimeSizes sizes;
};

// The grid and the workspace bytes a launch of `spec` for an M x N problem (the kernel's
// orientation) takes: the spec's own unless it reads a size at run time. A persistent kernel's
// grid runs at most `resident_clusters` clusters (0: no limit known).
std::array<unsigned, 3> launch_grid(const LaunchSpec& spec, int64_t m, int64_t n, uint64_t resident_clusters = 0);
uint64_t launch_workspace_bytes(const LaunchSpec& spec, int64_t m, int64_t n);
// "" when the spec's kernel computes an M x N x K problem (its orientation), else why not: a
// compiled size that differs ("the kernel was compiled for N=4096; the problem has N=2048"), or a
// size past RuntimeSizes' limits.
std::string sizes_mismatch(const LaunchSpec& spec, int64_t m, int64_t n, int64_t k);

// The layouts with A and B (majors, leading dimensions, batch strides) exchanged and C's and D's
// majors flipped: the same memory seen from the other orientation. Its own inverse.
MatrixLayouts exchange_operands(const MatrixLayouts& l);
// The layouts a caller passes to a launch of the kernel: the spec's, exchanged back when swapped.
MatrixLayouts caller_layouts(const LaunchSpec& spec);

}  // namespace gg::rt
