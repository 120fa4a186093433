#pragma once
// cuBLAS as the reference GEMM: D[M,N] = A[M,K] * B[N,K]^T, all row-major, fp32
// accumulation, output bf16, f16 or f32 (f32 gives the product for host-side
// epilogue references).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "runtime/device_buffer.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

class CublasReference {
 public:
  CublasReference();  // creates a handle; throws CudaError
  ~CublasReference();
  CublasReference(const CublasReference&) = delete;
  CublasReference& operator=(const CublasReference&) = delete;

  // Checks sizes and types against m, n, k, then runs asynchronously on `stream`.
  void gemm(const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& d, int64_t m, int64_t n, int64_t k,
            cudaStream_t stream = nullptr);

  // Raw form, for timing loops.
  void gemm(const void* a, const void* b, void* d, ElemType in_type, ElemType out_type, int64_t m, int64_t n,
            int64_t k, cudaStream_t stream = nullptr);
  // The same product on matrices laid out as `layouts` says (majors, leading dimensions, strided
  // batches; placeholders resolved as dense).
  void gemm(const void* a, const void* b, void* d, ElemType in_type, ElemType out_type, int64_t m, int64_t n,
            int64_t k, const MatrixLayouts& layouts, cudaStream_t stream = nullptr);
  // One cublasGemmGroupedBatchedEx call over `groups` problems, each its own row-major D [M, N] =
  // A [M, K] * B [N, K]^T with its own leading dimensions (MN-major A or B as `a_mn_major`,
  // `b_mn_major` say); `pointers` is device memory of 3 * groups pointers (every A, then every B,
  // then every D) that this call fills. Groups with no rows, columns or K are skipped.
  struct GroupedProblem {
    const void* a = nullptr;
    const void* b = nullptr;
    void* d = nullptr;
    int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldd = 0;
  };
  void gemm_grouped(const std::vector<GroupedProblem>& groups, ElemType in_type, ElemType out_type, bool a_mn_major,
                    bool b_mn_major, void** pointers, cudaStream_t stream = nullptr);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace gg::rt
