#ifndef GG_DEV_CONVERT_CUH
#define GG_DEV_CONVERT_CUH
// Packing two fp32 values into one 32-bit register of two 16-bit floats, round to
// nearest even: the form stmatrix and 16-bit stores take. `lo` lands in bits 0-15.
namespace gg::dev {

static __device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned packed;
  // cvt puts its first source in the upper half.
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

static __device__ __forceinline__ unsigned pack_f16x2(float lo, float hi) {
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

}  // namespace gg::dev
#endif  // GG_DEV_CONVERT_CUH
