#ifndef GG_DEV_SMEM_CUH
#define GG_DEV_SMEM_CUH
// Shared-memory addressing and plain loads/stores. Every helper that names shared
// memory takes the 32-bit shared-window address that smem_addr() returns, so a
// kernel converts a pointer once and does address arithmetic on integers.
namespace gg::dev {

static __device__ __forceinline__ unsigned smem_addr(const void* generic_ptr) {
  return static_cast<unsigned>(__cvta_generic_to_shared(generic_ptr));
}

static __device__ __forceinline__ unsigned ld_shared_u32(unsigned addr) {
  unsigned value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

static __device__ __forceinline__ void st_shared_u32(unsigned addr, unsigned value) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(value) : "memory");
}

// One 16-bit element (a column of a transposed staging buffer written one value at a time).
static __device__ __forceinline__ void st_shared_u16(unsigned addr, unsigned short value) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(value) : "memory");
}

// 16-byte accesses; addr must be 16-byte aligned.
static __device__ __forceinline__ void ld_shared_v4_u32(unsigned addr, unsigned& x, unsigned& y, unsigned& z,
                                                        unsigned& w) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
               : "r"(addr)
               : "memory");
}

static __device__ __forceinline__ void st_shared_v4_u32(unsigned addr, unsigned x, unsigned y, unsigned z,
                                                        unsigned w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w)
               : "memory");
}

}  // namespace gg::dev
#endif  // GG_DEV_SMEM_CUH
