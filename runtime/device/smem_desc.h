#ifndef GG_DEV_SMEM_DESC_H
#define GG_DEV_SMEM_DESC_H
// The shared-memory tile layout WGMMA and TMA agree on -- the swizzle of a byte's address and
// the WGMMA matrix descriptor -- as plain integer code that compiles for the host too: emitted
// kernels address swizzled staging and copies with swizzle_offset, the CPU simulator places TMA
// data with it, the printer takes the descriptor's swizzle-mode code from here, and host unit
// tests check both against the PTX ISA's tables. Emitted before wgmma.cuh, which uses it.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GG_HOST_DEVICE inline
#endif

namespace gg::dev {

// Where a swizzle mode puts byte `offset` of a swizzled tile (offset from a base aligned to the
// pattern: 8 x `swizzle_bytes`): the 16-byte chunk index (address bits 4 and up) is XORed with
// the address bits from 7 up, log2(swizzle_bytes / 16) of them -- 3 for 128B, 2 for 64B, 1 for
// 32B (the PTX ISA's tensor swizzling modes; CUTLASS's Swizzle<3,4,3>, <2,4,3>, <1,4,3>).
// Any other `swizzle_bytes` (0: none) leaves the offset as it is.
GG_HOST_DEVICE constexpr unsigned swizzle_offset(unsigned offset, int swizzle_bytes) {
  return swizzle_bytes == 128 || swizzle_bytes == 64 || swizzle_bytes == 32
             ? offset ^ (((offset >> 7) & static_cast<unsigned>(swizzle_bytes / 16 - 1)) << 4)
             : offset;
}

// Swizzle mode as the descriptor encodes it (bits 62-63).
constexpr unsigned kDescSwizzleNone = 0;
constexpr unsigned kDescSwizzle128B = 1;
constexpr unsigned kDescSwizzle64B = 2;
constexpr unsigned kDescSwizzle32B = 3;

// The mode for rows swizzled in `swizzle_bytes` (128, 64, 32; anything else: none).
GG_HOST_DEVICE constexpr unsigned descriptor_swizzle_mode(int swizzle_bytes) {
  return swizzle_bytes == 128 ? kDescSwizzle128B
         : swizzle_bytes == 64 ? kDescSwizzle64B
         : swizzle_bytes == 32 ? kDescSwizzle32B
                               : kDescSwizzleNone;
}

// Shared-memory matrix descriptor (PTX ISA "matrix-descriptor-format", sm_90):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  base offset (pattern start when the tile is not swizzle-atom aligned)
//   bits 62-63  swizzle mode
// For a K-major operand with 128B swizzle: rows of 128 bytes, stride byte offset 1024
// (one 8-row atom), leading byte offset unused (1 by convention); step k by adding
// the byte offset within the 128-byte row to the start address.
GG_HOST_DEVICE constexpr unsigned long long make_smem_desc(unsigned smem_address, unsigned leading_byte_offset,
                                                           unsigned stride_byte_offset, unsigned swizzle_mode,
                                                           unsigned base_offset = 0) {
  return static_cast<unsigned long long>((smem_address >> 4) & 0x3FFFu) |
         static_cast<unsigned long long>((leading_byte_offset >> 4) & 0x3FFFu) << 16 |
         static_cast<unsigned long long>((stride_byte_offset >> 4) & 0x3FFFu) << 32 |
         static_cast<unsigned long long>(base_offset & 0x7u) << 49 |
         static_cast<unsigned long long>(swizzle_mode & 0x3u) << 62;
}

// The same descriptor with its start address moved by `units` of 16 bytes, added to the low word
// alone: a start address inside shared memory (< 2^18 bytes) never carries out of its 14-bit
// field, and a 32-bit add of a loop-invariant base and a constant is one uniform instruction
// per wgmma (DeepGEMM's descriptors are built the same way), where shifting and masking each
// address costs four. Both MMA families' descriptors (sm_90's and sm_100's) keep the start address
// in bits 0-13.
GG_HOST_DEVICE constexpr unsigned long long smem_desc_add(unsigned long long desc, unsigned units) {
  return (desc & 0xFFFFFFFF00000000ull) | static_cast<unsigned>(static_cast<unsigned>(desc) + units);
}

// The same descriptor with its start address moved by `byte_offset` (a multiple of 16
// that keeps the address inside the 14-bit field).
GG_HOST_DEVICE constexpr unsigned long long smem_desc_advance(unsigned long long desc, unsigned byte_offset) {
  return smem_desc_add(desc, byte_offset >> 4);
}

}  // namespace gg::dev

#undef GG_HOST_DEVICE
#endif  // GG_DEV_SMEM_DESC_H
