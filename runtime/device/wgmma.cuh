#ifndef GG_DEV_WGMMA_CUH
#define GG_DEV_WGMMA_CUH
// Warpgroup MMA (sm_90a) synchronization (the descriptor is in smem_desc.h).
// The mma_async instructions themselves are in wgmma_mma.cuh (generated).
namespace gg::dev {

// Orders this warpgroup's earlier register and shared-memory accesses before the
// wgmma that follows; required before the first wgmma and whenever the accumulator
// registers were touched by other instructions.
static __device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `MaxPending` committed wgmma groups are still in flight.
template <int MaxPending>
static __device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(MaxPending) : "memory");
}

// Keeps the compiler from moving accesses to an accumulator register across the
// asynchronous wgmma window (the hardware reads and writes it behind its back).
static __device__ __forceinline__ void wgmma_fence_operand(float& accumulator) {
  asm volatile("" : "+f"(accumulator)::"memory");
}

// Descriptors: make_smem_desc and smem_desc_advance in smem_desc.h (host and device).

}  // namespace gg::dev
#endif  // GG_DEV_WGMMA_CUH
