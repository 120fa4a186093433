#ifndef GG_DEV_WGMMA_CUH
#define GG_DEV_WGMMA_CUH
// Warpgroup MMA (sm_90a) synchronization and the shared-memory matrix descriptor.
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

// Swizzle mode as the descriptor encodes it (bits 62-63).
constexpr unsigned kDescSwizzleNone = 0;
constexpr unsigned kDescSwizzle128B = 1;
constexpr unsigned kDescSwizzle64B = 2;
constexpr unsigned kDescSwizzle32B = 3;

// Shared-memory matrix descriptor (PTX ISA "matrix-descriptor-format", sm_90):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  base offset (pattern start when the tile is not swizzle-atom aligned)
//   bits 62-63  swizzle mode
// For a K-major operand with 128B swizzle: rows of 128 bytes, stride byte offset 1024
// (one 8-row atom), leading byte offset unused (1 by convention); step k by adding
// the byte offset within the 128-byte row to the start address.
static __device__ __forceinline__ unsigned long long make_smem_desc(unsigned smem_address,
                                                                    unsigned leading_byte_offset,
                                                                    unsigned stride_byte_offset,
                                                                    unsigned swizzle_mode,
                                                                    unsigned base_offset = 0) {
  unsigned long long desc = 0;
  desc |= static_cast<unsigned long long>((smem_address >> 4) & 0x3FFFu);
  desc |= static_cast<unsigned long long>((leading_byte_offset >> 4) & 0x3FFFu) << 16;
  desc |= static_cast<unsigned long long>((stride_byte_offset >> 4) & 0x3FFFu) << 32;
  desc |= static_cast<unsigned long long>(base_offset & 0x7u) << 49;
  desc |= static_cast<unsigned long long>(swizzle_mode & 0x3u) << 62;
  return desc;
}

// The same descriptor with its start address moved by `byte_offset` (a multiple of 16
// that keeps the address inside the 14-bit field).
static __device__ __forceinline__ unsigned long long smem_desc_advance(unsigned long long desc,
                                                                       unsigned byte_offset) {
  return desc + static_cast<unsigned long long>(byte_offset >> 4);
}

}  // namespace gg::dev
#endif  // GG_DEV_WGMMA_CUH
