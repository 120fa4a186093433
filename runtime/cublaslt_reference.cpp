// cuBLASLt is column-major and takes FP8 only in the "TN" form (op(A) = A^T, op(B) = B). Our
// row-major D[M,N] is its column-major D^T (N x M, ld N) = B * A^T: its A is our B[N,K] seen as a
// K x N column-major matrix (ld K) with op T, its B our A[M,K] seen as K x M (ld K) with op N. So its
// A carries the 128 x 128 scales (BLK128x128_32F) and its B the 1 x 128 ones (VEC128_32F).
//
// NVIDIA's sample (CUDALibrarySamples, cuBLASLt/LtBlk128x128Fp8Matmul/main.cpp) runs the other
// assignment, A VEC128 and B BLK128x128, with the same T/N ops; ours is the one PyTorch's DeepSeek
// recipe hands cuBLASLt for a row-major output (its mat2, 128 x 128, as cuBLASLt's A): both are
// accepted on sm_90.
//
// The scale tensors, from cuBLASLt's view of each operand as stored (K the inner dimension):
//  - VEC128_32F on a K x M operand: [ceil(K/128)][M], M contiguous, ld M. PyTorch checks scale
//    (M, ceil(K/128)) with strides (1, M) (aten/src/ATen/native/cuda/Blas.cpp,
//    is_blockwise_1x128_scaling: https://github.com/pytorch/pytorch); NVIDIA's sample sizes it
//    ceil(K/128) * M (cuBLASLt/Common/helpers.h, getScaleTensorSize:
//    https://github.com/NVIDIA/CUDALibrarySamples); TransformerEngine pads M to 4
//    (transformer_engine/pytorch/tensor/float8_blockwise_tensor.py, get_scale_shape). They agree:
//    cuBLASLt (13.1, H100) has no block-scaled algorithm unless M is a multiple of 4.
//  - BLK128x128_32F on a K x N operand: [ceil(N/128)][ceil(K/128) rounded up to 4], K blocks
//    contiguous: PyTorch's is_blockwise_128x128_scaling (strides (round_up(ceil(K/128), 4), 1)),
//    TransformerEngine's 2-D scale shape and NVIDIA's size roundoff(ceil(K/128), 4) * ceil(N/128)
//    agree. Unpadded rows (the DeepGEMM K-major layout when ceil(K/128) % 4 != 0) are read with the
//    wrong pitch: silently wrong results, hence the repacking here.
// Both are documented at https://docs.nvidia.com/cuda/cublas/#cublasltmatmulmatrixscale-t.
#include "runtime/cublaslt_reference.h"

#include <stdexcept>
#include <string>

#include "runtime/cuda_error.h"
#include "runtime/cuda_libraries.h"

namespace gg::rt {
namespace {

void check_lt(cublasStatus_t status, const std::string& what, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaError(what + ": " + call + " failed: " + cublaslt_api().status_name(status));
}

cudaDataType_t cuda_type(ElemType type) {
  switch (type) {
    case ElemType::F16:
      return CUDA_R_16F;
    case ElemType::BF16:
      return CUDA_R_16BF;
    case ElemType::F32:
      return CUDA_R_32F;
    case ElemType::E4M3:
      return CUDA_R_8F_E4M3;
    case ElemType::E5M2:
      return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value,
                   const std::string& what) {
  check_lt(cublaslt_api().matmul_desc_set_attribute(desc, attribute, &value, sizeof(value)), what,
           "cublasLtMatmulDescSetAttribute");
}

cublasLtMatrixLayout_t make_layout(ElemType type, int64_t rows, int64_t cols, int64_t ld, const std::string& what) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_lt(cublaslt_api().matrix_layout_create(&layout, cuda_type(type), static_cast<uint64_t>(rows),
                                               static_cast<uint64_t>(cols), ld),
           what, "cublasLtMatrixLayoutCreate");
  return layout;
}

void check_operands(const Fp8GemmOperands& o, const std::string& what) {
  if (o.m <= 0 || o.n <= 0 || o.k <= 0) throw std::invalid_argument(what + ": M, N and K must be positive");
  if (o.a == nullptr || o.b == nullptr || o.d == nullptr || o.a_scales == nullptr || o.b_scales == nullptr)
    throw std::invalid_argument(what + ": A, B, D and both scale pointers are required");
  if (!elem_is_fp8(o.a_type) || !elem_is_fp8(o.b_type))
    throw std::invalid_argument(what + ": A and B must be e4m3 or e5m2, not " + elem_name(o.a_type) + " and " +
                                elem_name(o.b_type));
  if (elem_is_fp8(o.out_type)) throw std::invalid_argument(what + ": D must be bf16, f16 or f32");
}

std::vector<float> download_floats(const float* device, int64_t count, const std::string& what) {
  std::vector<float> host(static_cast<size_t>(count));
  check_cuda(cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
             what + ": copying the scales down");
  return host;
}

DeviceBuffer upload_floats(const std::vector<float>& values) {
  DeviceBuffer buffer(ElemType::F32, values.size());
  buffer.upload(values);
  return buffer;
}

void check_scale_count(std::span<const float> scales, int64_t expected, const char* what) {
  if (scales.size() != static_cast<size_t>(expected))
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(scales.size()) + " scales, expected " +
                                std::to_string(expected));
}

}  // namespace

void CublasLtDeleter::operator()(cublasLtMatmulDesc_t desc) const { cublaslt_api().matmul_desc_destroy(desc); }
void CublasLtDeleter::operator()(cublasLtMatrixLayout_t layout) const { cublaslt_api().matrix_layout_destroy(layout); }

std::vector<float> cublaslt_vec128_scales(std::span<const float> scales, ScaleLayout layout, int64_t rows,
                                          int64_t cols) {
  check_scale_count(scales, scale_count(Granularity::Row1x128, layout, rows, cols), "cublaslt_vec128_scales");
  std::vector<float> out(static_cast<size_t>(k_blocks(cols) * rows));
  for (int64_t kb = 0; kb < k_blocks(cols); ++kb)
    for (int64_t r = 0; r < rows; ++r)
      out[static_cast<size_t>(kb * rows + r)] =
          scales[static_cast<size_t>(scale_index(Granularity::Row1x128, layout, rows, cols, r, kb * 128))];
  return out;
}

std::vector<float> cublaslt_blk128x128_scales(std::span<const float> scales, ScaleLayout layout, int64_t rows,
                                              int64_t cols) {
  check_scale_count(scales, scale_count(Granularity::Block128x128, layout, rows, cols), "cublaslt_blk128x128_scales");
  const int64_t row_blocks = (rows + 127) / 128, ld = (k_blocks(cols) + 3) / 4 * 4;
  std::vector<float> out(static_cast<size_t>(row_blocks * ld), 0.0f);
  for (int64_t b = 0; b < row_blocks; ++b)
    for (int64_t kb = 0; kb < k_blocks(cols); ++kb)
      out[static_cast<size_t>(b * ld + kb)] =
          scales[static_cast<size_t>(scale_index(Granularity::Block128x128, layout, rows, cols, b * 128, kb * 128))];
  return out;
}

CublasLtFp8::CublasLtFp8(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  check_lt(cublaslt_api().create(&handle_), "cuBLASLt FP8 reference", "cublasLtCreate");
  if (cudaError_t status = cudaMalloc(&workspace_, workspace_bytes_); status != cudaSuccess) {
    cublaslt_api().destroy(handle_);
    check_cuda(status,
               "cuBLASLt FP8 reference: allocating " + std::to_string(workspace_bytes_) + " bytes of workspace");
  }
}

CublasLtFp8::~CublasLtFp8() {
  if (handle_ != nullptr) cublaslt_api().destroy(handle_);
  if (workspace_ != nullptr) cudaFree(workspace_);
}

Fp8Problem CublasLtFp8::prepare_blockscaled(const Fp8GemmOperands& operands) const { return prepare(operands, true); }
Fp8Problem CublasLtFp8::prepare_per_tensor(const Fp8GemmOperands& operands) const { return prepare(operands, false); }

void CublasLtFp8::gemm_blockscaled(const Fp8GemmOperands& operands, cudaStream_t stream) const {
  prepare(operands, true).run(stream);
  check_cuda(cudaStreamSynchronize(stream), "cuBLASLt FP8 block-scaled GEMM");  // before its scale copies go
}

void CublasLtFp8::gemm_per_tensor(const Fp8GemmOperands& operands, cudaStream_t stream) const {
  prepare(operands, false).run(stream);
  check_cuda(cudaStreamSynchronize(stream), "cuBLASLt FP8 per-tensor GEMM");
}

Fp8Problem CublasLtFp8::prepare(const Fp8GemmOperands& o, bool blockscaled) const {
  const CublasLtApi& api = cublaslt_api();
  Fp8Problem p;
  p.what_ = std::string("cuBLASLt FP8 ") + (blockscaled ? "block-scaled (1x128, 128x128)" : "per-tensor") + " GEMM " +
            std::to_string(o.m) + "x" + std::to_string(o.n) + "x" + std::to_string(o.k) + " " + elem_name(o.a_type) +
            " x " + elem_name(o.b_type) + " -> " + elem_name(o.out_type);
  check_operands(o, p.what_);
  p.handle_ = handle_;
  p.workspace_ = workspace_;
  p.workspace_bytes_ = workspace_bytes_;
  p.operands_ = o;
  const float* lt_a_scales = o.b_scales;  // cuBLASLt's A is our B
  const float* lt_b_scales = o.a_scales;
  if (blockscaled) {
    if (api.version() < 120900)
      throw CudaError(p.what_ +
                      ": the VEC128_32F and BLK128x128_32F scale modes need cuBLASLt 12.9 or newer; this is " +
                      std::to_string(api.version()));
    const auto a_count = scale_count(Granularity::Row1x128, o.a_layout, o.m, o.k);
    const auto b_count = scale_count(Granularity::Block128x128, o.b_layout, o.n, o.k);
    p.a_scales_ =
        upload_floats(cublaslt_vec128_scales(download_floats(o.a_scales, a_count, p.what_), o.a_layout, o.m, o.k));
    p.b_scales_ =
        upload_floats(cublaslt_blk128x128_scales(download_floats(o.b_scales, b_count, p.what_), o.b_layout, o.n, o.k));
    lt_a_scales = static_cast<const float*>(p.b_scales_.data());
    lt_b_scales = static_cast<const float*>(p.a_scales_.data());
  }
  cublasLtMatmulDesc_t desc = nullptr;
  check_lt(api.matmul_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), p.what_, "cublasLtMatmulDescCreate");
  p.desc_.reset(desc);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, p.what_);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, p.what_);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(lt_a_scales), p.what_);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(lt_b_scales), p.what_);
  if (blockscaled) {
    set_attribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F},
                  p.what_);
    set_attribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F}, p.what_);
  }
  p.lt_a_.reset(make_layout(o.b_type, o.k, o.n, o.k, p.what_));    // B[N,K]: K x N column-major
  p.lt_b_.reset(make_layout(o.a_type, o.k, o.m, o.k, p.what_));    // A[M,K]: K x M column-major
  p.lt_d_.reset(make_layout(o.out_type, o.n, o.m, o.n, p.what_));  // D[M,N]: N x M column-major, C alike

  cublasLtMatmulPreference_t preference = nullptr;
  check_lt(api.preference_create(&preference), p.what_, "cublasLtMatmulPreferenceCreate");
  const auto max_workspace = static_cast<uint64_t>(workspace_bytes_);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = api.preference_set_attribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &max_workspace, sizeof(max_workspace));
  if (status == CUBLAS_STATUS_SUCCESS)
    status = api.algo_get_heuristic(handle_, desc, p.lt_a_.get(), p.lt_b_.get(), p.lt_d_.get(), p.lt_d_.get(),
                                    preference, 1, &result, &found);
  api.preference_destroy(preference);
  if (status == CUBLAS_STATUS_SUCCESS && found == 0) status = CUBLAS_STATUS_NOT_SUPPORTED;
  if (status != CUBLAS_STATUS_SUCCESS) {
    // What cuBLASLt 13.1 on an H100 was seen to refuse, for a message that says what to change.
    const std::string hint = blockscaled && o.m % 4 != 0 ? " (block-scaled FP8 needs M a multiple of 4)"
                             : o.k % 16 != 0             ? " (FP8 needs K a multiple of 16)"
                                                         : "";
    throw CudaError(p.what_ + ": cublasLtMatmulAlgoGetHeuristic: no algorithm (" + api.status_name(status) + ")" +
                    hint);
  }
  p.algo_ = result.algo;
  return p;
}

void Fp8Problem::run(cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  check_lt(cublaslt_api().matmul(handle_, desc_.get(), &alpha, operands_.b, lt_a_.get(), operands_.a, lt_b_.get(),
                                 &beta, operands_.d, lt_d_.get(), operands_.d, lt_d_.get(), &algo_, workspace_,
                                 workspace_bytes_, stream),
           what_, "cublasLtMatmul");
}

}  // namespace gg::rt
