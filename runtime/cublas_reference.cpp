#include "runtime/cublas_reference.h"

#include <string>
#include <utility>

#include "runtime/cuda_error.h"
#include "runtime/cuda_libraries.h"

namespace gg::rt {
namespace {

void check_cublas(cublasStatus_t status, const std::string& what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw CudaError(what + ": " + cublas_api().status_string(status));
}

cudaDataType_t cuda_type(ElemType type) {
  switch (type) {
    case ElemType::F16: return CUDA_R_16F;
    case ElemType::BF16: return CUDA_R_16BF;
    case ElemType::F32: return CUDA_R_32F;
    case ElemType::E4M3: return CUDA_R_8F_E4M3;
    case ElemType::E5M2: return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

int to_int(int64_t value, const char* what) {
  if (value <= 0 || value > INT32_MAX) throw CudaError(std::string("cuBLAS reference: bad ") + what);
  return static_cast<int>(value);
}

}  // namespace

CublasReference::CublasReference() { check_cublas(cublas_api().create(&handle_), "cublasCreate"); }

CublasReference::~CublasReference() {
  if (handle_ != nullptr) cublas_api().destroy(handle_);
}

void CublasReference::gemm(const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& d, int64_t m, int64_t n,
                           int64_t k, cudaStream_t stream) {
  if (a.type() != b.type()) throw CudaError("cuBLAS reference: A and B differ in element type");
  if (a.count() != static_cast<size_t>(m * k) || b.count() != static_cast<size_t>(n * k) ||
      d.count() != static_cast<size_t>(m * n)) {
    throw CudaError("cuBLAS reference: buffer sizes do not match " + std::to_string(m) + "x" + std::to_string(n) +
                    "x" + std::to_string(k));
  }
  gemm(a.data(), b.data(), d.data(), a.type(), d.type(), m, n, k, stream);
}

void CublasReference::gemm(const void* a, const void* b, void* d, ElemType in_type, ElemType out_type, int64_t m,
                           int64_t n, int64_t k, cudaStream_t stream) {
  const int mi = to_int(m, "M"), ni = to_int(n, "N"), ki = to_int(k, "K");
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublas_api().set_stream(handle_, stream), "cublasSetStream");
  // Column-major view: row-major D[M,N] is D^T (N x M, ld N) = B * A^T, where row-major
  // B[N,K] is a K x N column-major matrix (transposed in) and row-major A[M,K] is
  // A^T as a K x M column-major matrix (taken as is).
  check_cublas(cublas_api().gemm_ex(handle_, CUBLAS_OP_T, CUBLAS_OP_N, ni, mi, ki, &alpha, b, cuda_type(in_type), ki, a,
                            cuda_type(in_type), ki, &beta, d, cuda_type(out_type), ni, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ")");
}

void CublasReference::gemm(const void* a, const void* b, void* d, ElemType in_type, ElemType out_type, int64_t m,
                           int64_t n, int64_t k, const MatrixLayouts& layouts, cudaStream_t stream) {
  const MatrixLayouts l = resolve_layouts(layouts, m, n, k);
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublas_api().set_stream(handle_, stream), "cublasSetStream");
  // cuBLAS is column-major. A K-major A (rows of K) is a K x M column-major matrix, an M-major
  // one M x K; B likewise. A row-major D is D^T = B A^T (N x M, column-major); a column-major D
  // is D = A B^T itself (M x N).
  const void *first = b, *second = a;
  int64_t rows = n, cols = m, ld_first = l.ldb, ld_second = l.lda, s_first = l.stride_b, s_second = l.stride_a;
  cublasOperation_t op_first = l.b_mn_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  cublasOperation_t op_second = l.a_mn_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (l.d_column_major) {
    std::swap(first, second);
    std::swap(rows, cols);
    std::swap(ld_first, ld_second);
    std::swap(s_first, s_second);
    op_first = l.a_mn_major ? CUBLAS_OP_N : CUBLAS_OP_T;
    op_second = l.b_mn_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  }
  const std::string what = "cublasGemmStridedBatchedEx (" + std::to_string(m) + "x" + std::to_string(n) + "x" +
                           std::to_string(k) + ", batch " + std::to_string(l.batch) + ")";
  check_cublas(cublas_api().gemm_strided_batched_ex(handle_, op_first, op_second, to_int(rows, "rows"), to_int(cols, "cols"),
                                          to_int(k, "K"), &alpha, first, cuda_type(in_type), to_int(ld_first, "ld"),
                                          s_first, second, cuda_type(in_type), to_int(ld_second, "ld"), s_second, &beta,
                                          d, cuda_type(out_type), to_int(l.ldd, "ldd"), l.stride_d,
                                          to_int(l.batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               what);
}

void CublasReference::gemm_grouped(const std::vector<GroupedProblem>& groups, ElemType in_type, ElemType out_type,
                                   bool a_mn_major, bool b_mn_major, void** pointers, cudaStream_t stream) {
  // Column-major, as gemm() above: each row-major D is D^T = B A^T, one group of one problem each.
  std::vector<cublasOperation_t> op_b, op_a;
  std::vector<int> rows, cols, ks, ld_b, ld_a, ld_d, one;
  std::vector<const void*> firsts, seconds;
  std::vector<void*> outs;
  std::vector<float> alphas, betas;
  for (const GroupedProblem& g : groups) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0) continue;
    op_b.push_back(b_mn_major ? CUBLAS_OP_N : CUBLAS_OP_T);
    op_a.push_back(a_mn_major ? CUBLAS_OP_T : CUBLAS_OP_N);
    rows.push_back(to_int(g.n, "N"));
    cols.push_back(to_int(g.m, "M"));
    ks.push_back(to_int(g.k, "K"));
    ld_b.push_back(to_int(g.ldb, "ldb"));
    ld_a.push_back(to_int(g.lda, "lda"));
    ld_d.push_back(to_int(g.ldd, "ldd"));
    one.push_back(1);
    firsts.push_back(g.b);
    seconds.push_back(g.a);
    outs.push_back(g.d);
    alphas.push_back(1.0f);
    betas.push_back(0.0f);
  }
  const int count = static_cast<int>(one.size());
  if (count == 0) return;
  // The pointer arrays live on the device: every B, then every A, then every D.
  std::vector<const void*> all(firsts);
  all.insert(all.end(), seconds.begin(), seconds.end());
  all.insert(all.end(), outs.begin(), outs.end());
  check_cuda(cudaMemcpyAsync(pointers, all.data(), all.size() * sizeof(void*), cudaMemcpyHostToDevice, stream),
             "copying the grouped call's pointers");
  const void* const* device_b = const_cast<const void* const*>(pointers);
  check_cublas(cublas_api().set_stream(handle_, stream), "cublasSetStream");
  check_cublas(cublas_api().gemm_grouped_batched_ex(
                   handle_, op_b.data(), op_a.data(), rows.data(), cols.data(), ks.data(), alphas.data(), device_b,
                   cuda_type(in_type), ld_b.data(), device_b + count, cuda_type(in_type), ld_a.data(), betas.data(),
                   pointers + 2 * count, cuda_type(out_type), ld_d.data(), count, one.data(), CUBLAS_COMPUTE_32F),
               "cublasGemmGroupedBatchedEx (" + std::to_string(count) + " groups)");
}

}  // namespace gg::rt
