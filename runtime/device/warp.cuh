#ifndef GG_DEV_WARP_CUH
#define GG_DEV_WARP_CUH
// Warp and warpgroup identity, and electing one lane.
namespace gg::dev {

// True in exactly one active lane of the (fully active) warp.
static __device__ __forceinline__ bool elect_one_sync() {
  unsigned elected;
  asm volatile(
      "{\n"
      ".reg .pred is_leader;\n"
      "elect.sync _|is_leader, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, is_leader;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

static __device__ __forceinline__ unsigned lane_index() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
  return lane;
}

// Broadcast from lane 0 so the compiler knows the value is warp-uniform (role
// branches on it stay uniform).
static __device__ __forceinline__ unsigned warp_index_in_block() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 32u, 0);
}

static __device__ __forceinline__ unsigned warpgroup_index_in_block() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 128u, 0);
}

}  // namespace gg::dev
#endif  // GG_DEV_WARP_CUH
