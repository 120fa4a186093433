#ifndef GG_DEV_STMATRIX_CUH
#define GG_DEV_STMATRIX_CUH
// stmatrix: a warp stores four 8x8 b16 matrices to shared memory. Lane l passes the
// row address for row (l % 8) of matrix (l / 8); register j of lane l holds the two
// b16 elements at row l / 4, columns 2 * (l % 4) + {0, 1} of matrix j (the wgmma
// accumulator fragment layout once packed), or of its transpose with .trans.
namespace gg::dev {

static __device__ __forceinline__ void stmatrix_x4(unsigned row_addr, unsigned r0, unsigned r1, unsigned r2,
                                                   unsigned r3) {
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(row_addr), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

static __device__ __forceinline__ void stmatrix_x4_trans(unsigned row_addr, unsigned r0, unsigned r1, unsigned r2,
                                                         unsigned r3) {
  asm volatile("stmatrix.sync.aligned.x4.trans.m8n8.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(row_addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace gg::dev
#endif  // GG_DEV_STMATRIX_CUH
