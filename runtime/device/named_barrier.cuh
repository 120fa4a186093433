#ifndef GG_DEV_NAMED_BARRIER_CUH
#define GG_DEV_NAMED_BARRIER_CUH
// Named barriers (ids 0-15; id 0 is __syncthreads) synchronize a subset of the block,
// e.g. the warpgroups of one role. `thread_count` is a multiple of 32 and the same at
// every use of the id.
namespace gg::dev {

static __device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned thread_count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(thread_count) : "memory");
}

// Signals without waiting: producers arrive, consumers sync on the same id.
static __device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned thread_count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(thread_count) : "memory");
}

}  // namespace gg::dev
#endif  // GG_DEV_NAMED_BARRIER_CUH
