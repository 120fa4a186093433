// quantize_on_device: one JIT-compiled kernel for both block shapes, loaded once per process.
#include <cuda.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/driver_api.h"
#include "runtime/fp8_quantize.h"

namespace gg::rt {
namespace {

// The kernel's one parameter; the device source declares the same struct.
struct QuantizeArgs {
  const uint16_t* in;  // bf16 bits
  uint8_t* out;
  float* scales;
  long long rows, cols, k_blocks, row_blocks;
  long long scale_ld;  // MN-major: the padded count of rows (1x128) or row blocks (128x128)
  int block128, mn_major, e5m2, pow2;
};
static_assert(sizeof(QuantizeArgs) == 80, "the device source's struct has this layout");

constexpr unsigned kThreads = 256;

// 1x128: one warp per (row, k block), four values a lane, the amax by warp shuffles. 128x128: one
// block of 256 threads per (row block, k block). Warps or blocks past the rows write the MN-major
// padding's zeros. x / scale is __fdiv_rn and the conversion cvt.rn.satfinite, as on the host.
constexpr const char* kSource = R"(
struct QuantizeArgs {
  const unsigned short* in;
  unsigned char* out;
  float* scales;
  long long rows, cols, k_blocks, row_blocks;
  long long scale_ld;
  int block128, mn_major, e5m2, pow2;
};

__device__ float bf16_to_float(unsigned short bits) { return __uint_as_float(static_cast<unsigned>(bits) << 16); }

__device__ float block_scale(float amax, const QuantizeArgs& a) {
  if (amax == 0.0f) return 1.0f;
  float scale = __fdiv_rn(amax, a.e5m2 ? 57344.0f : 448.0f);
  if (a.pow2) {
    unsigned bits = __float_as_uint(scale);
    if (bits & 0x7FFFFFu) bits = (bits & 0x7F800000u) + 0x00800000u;
    scale = __uint_as_float(bits);
  }
  return scale;
}

// cvt packs its first source into the high byte and its second into the low byte.
__device__ unsigned char to_fp8(float x, int e5m2) {
  unsigned short packed;
  if (e5m2) {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(packed) : "f"(0.0f), "f"(x));
  } else {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(packed) : "f"(0.0f), "f"(x));
  }
  return static_cast<unsigned char>(packed & 0xFFu);
}

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ void quantize_row_block(const QuantizeArgs& a) {
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  const long long rows = a.mn_major ? a.scale_ld : a.rows;
  if (warp >= rows * a.k_blocks) return;  // the whole warp
  const long long r = warp % rows, kb = warp / rows;
  float* slot = a.mn_major ? a.scales + kb * a.scale_ld + r : a.scales + r * a.k_blocks + kb;
  if (r >= a.rows) {
    if (lane == 0) *slot = 0.0f;
    return;
  }
  const long long first = kb * 128 + lane * 4;
  float x[4];
  float amax = 0.0f;
  for (int j = 0; j < 4; ++j) {
    x[j] = first + j < a.cols ? bf16_to_float(a.in[r * a.cols + first + j]) : 0.0f;
    amax = fmaxf(amax, fabsf(x[j]));
  }
  const float scale = block_scale(warp_max(amax), a);
  for (int j = 0; j < 4; ++j)
    if (first + j < a.cols) a.out[r * a.cols + first + j] = to_fp8(__fdiv_rn(x[j], scale), a.e5m2);
  if (lane == 0) *slot = scale;
}

__device__ void quantize_square_block(const QuantizeArgs& a) {
  __shared__ float partial[32];
  const long long blocks = a.mn_major ? a.scale_ld : a.row_blocks;
  const long long rb = blockIdx.x % blocks, kb = blockIdx.x / blocks;
  float* slot = a.mn_major ? a.scales + kb * a.scale_ld + rb : a.scales + rb * a.k_blocks + kb;
  if (rb >= a.row_blocks) {  // the whole block
    if (threadIdx.x == 0) *slot = 0.0f;
    return;
  }
  float amax = 0.0f;
  for (unsigned i = threadIdx.x; i < 128 * 128; i += blockDim.x) {
    const long long r = rb * 128 + i / 128, c = kb * 128 + i % 128;
    if (r < a.rows && c < a.cols) amax = fmaxf(amax, fabsf(bf16_to_float(a.in[r * a.cols + c])));
  }
  amax = warp_max(amax);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = amax;
  __syncthreads();
  if (threadIdx.x < 32) {
    amax = warp_max(threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) partial[0] = amax;
  }
  __syncthreads();
  const float scale = block_scale(partial[0], a);
  for (unsigned i = threadIdx.x; i < 128 * 128; i += blockDim.x) {
    const long long r = rb * 128 + i / 128, c = kb * 128 + i % 128;
    if (r < a.rows && c < a.cols) {
      a.out[r * a.cols + c] = to_fp8(__fdiv_rn(bf16_to_float(a.in[r * a.cols + c]), scale), a.e5m2);
    }
  }
  if (threadIdx.x == 0) *slot = scale;
}

extern "C" __global__ void __launch_bounds__(256) gg_fp8_quantize(const QuantizeArgs a) {
  if (a.block128) {
    quantize_square_block(a);
  } else {
    quantize_row_block(a);
  }
}
)";

constexpr const char* kKernelName = "gg_fp8_quantize";

std::string device_arch() {
  const DeviceInfo info = device_info();
  const int sm = info.compute_major * 10 + info.compute_minor;
  if (sm < 89)
    throw CudaError("quantize_on_device: FP8 conversion needs sm_89 or newer; " + info.name + " is sm_" +
                    std::to_string(sm));
  return "sm_" + std::to_string(sm);
}

CUfunction quantize_kernel() {
  static const CUfunction kernel = [] {
    const CompiledKernel compiled = compile_fp8_quantize_kernel(device_arch());
    return load_function(compiled.cubin, compiled.lowered_name, "quantize_on_device");
  }();
  return kernel;
}

}  // namespace

CompiledKernel compile_fp8_quantize_kernel(const std::string& arch) {
  return compile_kernel(kSource, kKernelName, arch);
}

void quantize_on_device(const void* bf16_input, int64_t rows, int64_t cols, Granularity g,
                        const Fp8QuantizeOptions& options, void* fp8_out, float* scales_out, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0)
    throw std::invalid_argument("quantize_on_device: the matrix is " + std::to_string(rows) + " x " +
                                std::to_string(cols) + "; both sizes must be positive");
  if (g == Granularity::PerTensor)
    throw std::invalid_argument("quantize_on_device: one scale per tensor is host only (quantize())");
  fp8_max(options.type);  // checks the type
  QuantizeArgs args{};
  args.in = static_cast<const uint16_t*>(bf16_input);
  args.out = static_cast<uint8_t*>(fp8_out);
  args.scales = scales_out;
  args.rows = rows;
  args.cols = cols;
  args.k_blocks = k_blocks(cols);
  args.row_blocks = (rows + 127) / 128;
  args.scale_ld = scale_ld(g, options.layout, rows, cols);
  args.block128 = g == Granularity::Block128x128 ? 1 : 0;
  args.mn_major = options.layout == ScaleLayout::MNMajor ? 1 : 0;
  args.e5m2 = options.type == ElemType::E5M2 ? 1 : 0;
  args.pow2 = options.power_of_two_scales ? 1 : 0;
  // Work items: one warp (1x128) or one block (128x128) per scale slot, padding included.
  const int64_t slots = scale_count(g, options.layout, rows, cols);
  const int64_t blocks = args.block128 != 0 ? slots : (slots * 32 + kThreads - 1) / kThreads;
  if (blocks > INT32_MAX) throw std::invalid_argument("quantize_on_device: the matrix is too large for one grid");
  launch_function(quantize_kernel(), static_cast<unsigned>(blocks), 1, kThreads, &args, stream, "quantize_on_device");
}

}  // namespace gg::rt
