#pragma once
// cuBLASLt as the FP8 reference: D[M,N] (row-major; bf16, f16 or f32) = A[M,K] * B[N,K]^T with A
// and B FP8 and K-major, either block-scaled as DeepGEMM computes (A per 1 x 128, B per 128 x 128;
// CUDA 12.9+, sm_90) or with one float scale per tensor (the ceiling without scaling cost). A
// problem is prepared once (descriptors, the heuristic's algorithm, the scales rearranged as
// cuBLASLt reads them); run() is all a timing loop calls.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/device_buffer.h"
#include "runtime/fp8_quantize.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

// Device pointers. Block-scaled: a_scales per 1 x 128 block of A in `a_layout`, b_scales per
// 128 x 128 block of B in `b_layout` (as quantize_1x128 / quantize_128x128 and quantize_on_device
// write them). Per tensor: one float each.
struct Fp8GemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  const float* a_scales = nullptr;
  const float* b_scales = nullptr;
  int64_t m = 0, n = 0, k = 0;
  ElemType a_type = ElemType::E4M3, b_type = ElemType::E4M3, out_type = ElemType::BF16;
  ScaleLayout a_layout = ScaleLayout::MNMajor;
  ScaleLayout b_layout = ScaleLayout::KMajor;
};

struct CublasLtDeleter {
  void operator()(cublasLtMatmulDesc_t desc) const;
  void operator()(cublasLtMatrixLayout_t layout) const;
};

// A prepared product (move-only). It uses its CublasLtFp8's handle and workspace: that object must
// outlive it, and runs of its problems must not overlap (one workspace).
class Fp8Problem {
 public:
  void run(cudaStream_t stream = nullptr) const;  // asynchronous; throws CudaError
  const std::string& describe() const { return what_; }

 private:
  friend class CublasLtFp8;
  Fp8Problem() = default;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::unique_ptr<cublasLtMatmulDescOpaque_t, CublasLtDeleter> desc_;
  std::unique_ptr<cublasLtMatrixLayoutOpaque_t, CublasLtDeleter> lt_a_, lt_b_, lt_d_;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer a_scales_, b_scales_;  // block-scaled: cuBLASLt's layouts
  Fp8GemmOperands operands_;
  std::string what_;
};

class CublasLtFp8 {
 public:
  explicit CublasLtFp8(size_t workspace_bytes = size_t{32} << 20);  // handle and workspace; throws CudaError
  ~CublasLtFp8();
  CublasLtFp8(const CublasLtFp8&) = delete;
  CublasLtFp8& operator=(const CublasLtFp8&) = delete;

  // Block-scaled preparation copies the scales down and up again (cudaMemcpy: the stream that
  // wrote them must be done). Throws CudaError naming cuBLASLt's status, or when the heuristic
  // finds no algorithm; std::invalid_argument on sizes and types.
  Fp8Problem prepare_blockscaled(const Fp8GemmOperands& operands) const;
  Fp8Problem prepare_per_tensor(const Fp8GemmOperands& operands) const;

  // Prepare and run, for one-off references.
  void gemm_blockscaled(const Fp8GemmOperands& operands, cudaStream_t stream = nullptr) const;
  void gemm_per_tensor(const Fp8GemmOperands& operands, cudaStream_t stream = nullptr) const;

 private:
  Fp8Problem prepare(const Fp8GemmOperands& operands, bool blockscaled) const;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// The scales as cuBLASLt reads them (host side, so they are tested without a GPU). `scales` holds
// the 1 x 128 (or 128 x 128) scales of a [rows, cols] operand in `layout`.
// VEC128_32F: [ceil(cols / 128)][rows], rows contiguous, no padding.
std::vector<float> cublaslt_vec128_scales(std::span<const float> scales, ScaleLayout layout, int64_t rows,
                                          int64_t cols);
// BLK128x128_32F: [ceil(rows / 128)][ceil(cols / 128) rounded up to 4], K blocks contiguous, padding 0.
std::vector<float> cublaslt_blk128x128_scales(std::span<const float> scales, ScaleLayout layout, int64_t rows,
                                              int64_t cols);

}  // namespace gg::rt
