#ifndef GG_DEV_SETMAXNREG_CUH
#define GG_DEV_SETMAXNREG_CUH
// Per-warpgroup register reallocation (sm_90a): producer warpgroups give registers
// back, consumer warpgroups take them. Effective only when the kernel has a register
// cap at entry (__launch_bounds__(threads, 1)) and each role is one branch.
namespace gg::dev {

template <unsigned RegisterCount>
static __device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(RegisterCount >= 24 && RegisterCount <= 256 && RegisterCount % 8 == 0,
                "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(RegisterCount));
}

template <unsigned RegisterCount>
static __device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(RegisterCount >= 24 && RegisterCount <= 256 && RegisterCount % 8 == 0,
                "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(RegisterCount));
}

}  // namespace gg::dev
#endif  // GG_DEV_SETMAXNREG_CUH
