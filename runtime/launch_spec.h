#pragma once
// What a lowered kernel needs from the runtime to be launched: filled in by codegen,
// consumed by runtime/launch and by the host entry of an emitted .cu. Knows nothing
// of schedules or IR.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gg::rt {

enum class ElemType { F16, BF16, F32 };

int elem_bytes(ElemType t);
const char* elem_name(ElemType t);  // "f16", "bf16", "f32"

enum class Swizzle { None, B32, B64, B128 };

// Which GgGemmArgs slot (runtime/device/gemm_args.h) a tensor map or pointer belongs to.
enum class Operand { A, B, C, D };

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
};
// The same layouts with every dense placeholder replaced by its value for an M x N x K problem.
MatrixLayouts resolve_layouts(const MatrixLayouts& l, int64_t m, int64_t n, int64_t k);

// How one operand of an M x N x K problem is stored, as a tensor map describes it: rows x cols
// (cols contiguous; transposed: an MN-major A or B, a column-major C or D), rows `row_stride`
// elements apart, `batches` matrices `batch_stride` apart (one when broadcast).
struct StoredMatrix {
  bool transposed = false;
  int64_t rows = 0, cols = 0, row_stride = 0, batches = 1, batch_stride = 0;
};
StoredMatrix stored_matrix(const MatrixLayouts& l, Operand operand, int64_t m, int64_t n, int64_t k);
// "lda=72 ldb=64 ..." of the fields that differ between two resolved layouts; "" when equal.
std::string layout_differences(const MatrixLayouts& expected, const MatrixLayouts& given);

struct LaunchSpec {
  std::string kernel_name;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{128, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};  // {1,1,1}: launched without a cluster attribute
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
};

// The layouts with A and B (majors, leading dimensions, batch strides) exchanged and C's and D's
// majors flipped: the same memory seen from the other orientation. Its own inverse.
MatrixLayouts exchange_operands(const MatrixLayouts& l);
// The layouts a caller passes to a launch of the kernel: the spec's, exchanged back when swapped.
MatrixLayouts caller_layouts(const LaunchSpec& spec);

}  // namespace gg::rt
