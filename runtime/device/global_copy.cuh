#ifndef GG_DEV_GLOBAL_COPY_CUH
#define GG_DEV_GLOBAL_COPY_CUH
// Global loads of the synchronous operand copy where rows are not 16-byte aligned (K not a
// multiple of 8 at 16 bits): a 16-byte chunk of consecutive elements read one element at a
// time, so no access is wider than the element's own alignment.
namespace gg::dev {

// The first `valid` (0..16 / ElemBytes) elements at src, the rest of the 16 bytes zero: the
// tail of a row past K reads as zero, as TMA's out-of-bounds fill does.
template <int ElemBytes>
static __device__ __forceinline__ uint4 load16_elements(const char* src, int valid) {
  static_assert(ElemBytes == 2 || ElemBytes == 4, "16-bit or 32-bit elements");
  uint4 chunk = make_uint4(0u, 0u, 0u, 0u);
  unsigned* words = &chunk.x;
#pragma unroll
  for (int i = 0; i < 16 / ElemBytes; ++i) {
    if (i >= valid) break;
    if constexpr (ElemBytes == 4) {
      words[i] = reinterpret_cast<const unsigned*>(src)[i];
    } else {
      const unsigned half = reinterpret_cast<const unsigned short*>(src)[i];
      words[i / 2] |= half << (16 * (i % 2));
    }
  }
  return chunk;
}

}  // namespace gg::dev
#endif  // GG_DEV_GLOBAL_COPY_CUH
