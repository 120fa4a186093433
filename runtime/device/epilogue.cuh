#ifndef GG_DEV_EPILOGUE_CUH
#define GG_DEV_EPILOGUE_CUH
// Element loads and stores of the epilogue (C, bias, D) in any of the output dtypes, and the
// activation functions, all on fp32 values. No cuda_fp16/cuda_bf16 headers: conversions are
// cvt instructions, so NVRTC needs no include path.
namespace gg::dev {

static __device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}

static __device__ __forceinline__ float f16_bits_to_float(unsigned short bits) {
  float value;
  asm("cvt.f32.f16 %0, %1;\n" : "=f"(value) : "h"(bits));
  return value;
}

static __device__ __forceinline__ unsigned short float_to_bf16_bits(float value) {
  unsigned short bits;
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(bits) : "f"(value));
  return bits;
}

static __device__ __forceinline__ unsigned short float_to_f16_bits(float value) {
  unsigned short bits;
  asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(bits) : "f"(value));
  return bits;
}

static __device__ __forceinline__ float load_bf16(const void* base, long long index) {
  return bf16_bits_to_float(static_cast<const unsigned short*>(base)[index]);
}
static __device__ __forceinline__ float load_f16(const void* base, long long index) {
  return f16_bits_to_float(static_cast<const unsigned short*>(base)[index]);
}
static __device__ __forceinline__ float load_f32(const void* base, long long index) {
  return static_cast<const float*>(base)[index];
}

static __device__ __forceinline__ void store_bf16(void* base, long long index, float value) {
  static_cast<unsigned short*>(base)[index] = float_to_bf16_bits(value);
}
static __device__ __forceinline__ void store_f16(void* base, long long index, float value) {
  static_cast<unsigned short*>(base)[index] = float_to_f16_bits(value);
}
static __device__ __forceinline__ void store_f32(void* base, long long index, float value) {
  static_cast<float*>(base)[index] = value;
}

// The two values of a staged 32-bit word (a C pair the epilogue reads back from staging).
static __device__ __forceinline__ float unpack_lo_bf16(unsigned pair) { return bf16_bits_to_float(static_cast<unsigned short>(pair)); }
static __device__ __forceinline__ float unpack_hi_bf16(unsigned pair) { return bf16_bits_to_float(static_cast<unsigned short>(pair >> 16)); }
static __device__ __forceinline__ float unpack_lo_f16(unsigned pair) { return f16_bits_to_float(static_cast<unsigned short>(pair)); }
static __device__ __forceinline__ float unpack_hi_f16(unsigned pair) { return f16_bits_to_float(static_cast<unsigned short>(pair >> 16)); }

// Two adjacent values as the 32-bit word a shared-memory staging store writes (`lo` in bits 0-15).
// On sm_90a one cvt of the pair: ptxas fused the two scalar cvts and the shift-or into the same
// instruction (byte-identical CUBINs for v2..v10, pingpong, auto, f16 and fused epilogues), but
// NVVM and ptxas had three times the PTX to get there (NVRTC about 10 ms less on v10). cvt's first
// source lands in the upper half. sm_100a keeps the scalar form: there the pair form changes the
// CUBIN (v10 1240 -> 1112 instructions, v4 576 -> 672), not yet compared on a GPU.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
static __device__ __forceinline__ unsigned pack2_bf16(float lo, float hi) {
  return static_cast<unsigned>(float_to_bf16_bits(lo)) | (static_cast<unsigned>(float_to_bf16_bits(hi)) << 16);
}
static __device__ __forceinline__ unsigned pack2_f16(float lo, float hi) {
  return static_cast<unsigned>(float_to_f16_bits(lo)) | (static_cast<unsigned>(float_to_f16_bits(hi)) << 16);
}
#else
static __device__ __forceinline__ unsigned pack2_bf16(float lo, float hi) {
  unsigned pair;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(pair) : "f"(hi), "f"(lo));
  return pair;
}
static __device__ __forceinline__ unsigned pack2_f16(float lo, float hi) {
  unsigned pair;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(pair) : "f"(hi), "f"(lo));
  return pair;
}
#endif

static __device__ __forceinline__ float relu(float x) { return fmaxf(x, 0.0f); }

// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
static __device__ __forceinline__ float gelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

static __device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// The derivatives, for the backward through an activation at its saved input (relu's at 0 is 0).
static __device__ __forceinline__ float relu_grad(float x) { return x > 0.0f ? 1.0f : 0.0f; }
static __device__ __forceinline__ float gelu_tanh_grad(float x) {
  const float t = tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608028654f * (1.0f + 0.134145f * x * x);
}
// The fast exponential and division: the backward runs in the consumers' epilogue, where expf's
// range reduction and an IEEE division cost v10 2-3% at 8192^3 (0.91-0.93x plain) on an H100; their
// relative error (about 2^-21 over the range that matters) is far below a 16-bit output's.
static __device__ __forceinline__ float silu_grad(float x) {
  const float s = __fdividef(1.0f, 1.0f + __expf(-x));
  return s * (1.0f + x * (1.0f - s));
}

}  // namespace gg::dev
#endif  // GG_DEV_EPILOGUE_CUH
