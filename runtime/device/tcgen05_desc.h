#ifndef GG_DEV_TCGEN05_DESC_H
#define GG_DEV_TCGEN05_DESC_H
// The operands of tcgen05.mma (sm_100a) as plain integer code that also compiles for the host:
// the shared-memory matrix descriptor, the instruction descriptor of .kind::f16 with an f32
// accumulator, and Tensor Memory addresses. Emitted kernels call these; the CPU simulator builds
// the same values from the same IR and decodes them with its own reading of the PTX ISA's
// tables; tests/runtime/tcgen05_desc_test.cpp checks every field. Emitted before tcgen05.cuh.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GG_TCGEN05_HD __host__ __device__ __forceinline__
#else
#define GG_TCGEN05_HD inline
#endif

namespace gg::dev {

// Shared-memory descriptor (PTX ISA 9.7.16.4.1, "Shared Memory Descriptor", Table 40):
//   bits  0-13  start address, (addr & 0x3FFFF) >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 46-48  the fixed constant 0b001 (sm_90's wgmma descriptor has no such field: 0 there)
//   bits 49-51  matrix base offset: 0 when the swizzle pattern starts at its alignment (1024 B for
//               128B swizzle), which the 1024-aligned stages guarantee
//   bit  52     leading dimension stride mode: 0, a byte offset relative to the start
//   bits 61-63  swizzling mode: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B (3, 5, 7
//               invalid). sm_90's codes (1 128B, 2 64B, 3 32B, in bits 62-63) differ.
// CUTLASS's cute/arch/mma_sm100_desc.hpp (UMMA::SmemDescriptor: version_ = 1 at bit 46,
// UMMA::LayoutType) has the same layout.
constexpr unsigned kTcgen05SwizzleNone = 0;
constexpr unsigned kTcgen05Swizzle128B = 2;
constexpr unsigned kTcgen05Swizzle64B = 4;
constexpr unsigned kTcgen05Swizzle32B = 6;

// The mode for rows swizzled in `swizzle_bytes` (128, 64, 32; anything else: none).
GG_TCGEN05_HD constexpr unsigned tcgen05_swizzle_mode(int swizzle_bytes) {
  return swizzle_bytes == 128 ? kTcgen05Swizzle128B
         : swizzle_bytes == 64 ? kTcgen05Swizzle64B
         : swizzle_bytes == 32 ? kTcgen05Swizzle32B
                               : kTcgen05SwizzleNone;
}

// K-major operands: rows of swizzle_bytes along K, the stride byte offset between 8-row groups,
// the leading byte offset unused (16 by convention). MN-major operands: the leading byte offset
// is the distance between swizzle atoms along M or N, the stride byte offset between groups of 8
// k rows (cute's canonical layouts, make_umma_desc<Major::K> and <Major::MN>).
GG_TCGEN05_HD constexpr unsigned long long make_tcgen05_smem_desc(unsigned smem_address, unsigned leading_byte_offset,
                                                                  unsigned stride_byte_offset, unsigned swizzle_mode) {
  return static_cast<unsigned long long>((smem_address & 0x3FFFFu) >> 4) |
         static_cast<unsigned long long>((leading_byte_offset & 0x3FFFFu) >> 4) << 16 |
         static_cast<unsigned long long>((stride_byte_offset & 0x3FFFFu) >> 4) << 32 |
         static_cast<unsigned long long>(1u) << 46 |
         static_cast<unsigned long long>(swizzle_mode & 0x7u) << 61;
}

// Instruction descriptor of tcgen05.mma .kind::f16 (PTX ISA 9.7.16.4.2, "Instruction
// descriptor", Table 42):
//   bits  0-2   sparsity selector and flag: 0, dense
//   bit   3     saturate: 0
//   bits  4-5   D type: 1 = F32
//   bits  7-9   A type, bits 10-12 B type: 0 = F16, 1 = BF16
//   bits 13-14  negate A, negate B: 0
//   bit  15     transpose A (1: MN-major), bit 16 transpose B (1: MN-major)
//   bits 17-22  N >> 3
//   bit  23     reserved
//   bits 24-28  M >> 4
//   bit  29     reserved; bits 30-31 maximum shift (.ws only): 0
// (CUTLASS's UMMA::InstrDescriptor: c_format_ at 4, a_format_ at 7, b_format_ at 10, a_major_ at
// 15, b_major_ at 16, n_dim_ at 17, m_dim_ at 24.)
constexpr unsigned kTcgen05TypeF16 = 0;
constexpr unsigned kTcgen05TypeBF16 = 1;

GG_TCGEN05_HD constexpr unsigned make_tcgen05_idesc_f16(unsigned ab_type, unsigned m, unsigned n, unsigned a_mn_major,
                                                        unsigned b_mn_major) {
  return (1u << 4) | (ab_type & 0x7u) << 7 | (ab_type & 0x7u) << 10 | (a_mn_major & 1u) << 15 |
         (b_mn_major & 1u) << 16 | ((n >> 3) & 0x3Fu) << 17 | ((m >> 4) & 0x1Fu) << 24;
}

// Instruction descriptor of tcgen05.mma .kind::mxf8f6f4.block_scale (PTX ISA, "Instruction
// descriptor format for .kind::mxf8f6f4"; CUTLASS's UMMA::InstrDescriptorBlockScaled):
//   bits  0-1   reserved; bit 2 sparsity: 0, dense; bit 3 reserved
//   bits  4-5   B's scale factor id: the byte of B's factors' TMEM words this MMA reads
//   bit   6     reserved
//   bits  7-9   A type, bits 10-12 B type: 0 = E4M3, 1 = E5M2
//   bits 13-14  negate A, negate B: 0
//   bit  15     transpose A (1: MN-major), bit 16 transpose B
//   bits 17-22  N >> 3
//   bit  23     scale factor type: 1 = UE8M0
//   bits 24-28  M >> 4 (the PTX ISA's M >> 7 in bits 27-28: the same bits for M 128 and 256)
//   bits 29-30  A's scale factor id; bit 31 reserved
// D is always f32 here: bits 4-5, kind::f16's D type, are B's scale factor id, so a kind::f16
// descriptor reused with D = F32 would silently read byte 1 of B's factors.
constexpr unsigned kTcgen05TypeE4M3 = 0;
constexpr unsigned kTcgen05TypeE5M2 = 1;

GG_TCGEN05_HD constexpr unsigned make_tcgen05_idesc_mxf8f6f4(unsigned ab_type, unsigned m, unsigned n,
                                                             unsigned a_mn_major, unsigned b_mn_major,
                                                             unsigned scale_id) {
  return (scale_id & 0x3u) << 4 | (ab_type & 0x7u) << 7 | (ab_type & 0x7u) << 10 | (a_mn_major & 1u) << 15 |
         (b_mn_major & 1u) << 16 | ((n >> 3) & 0x3Fu) << 17 | 1u << 23 | ((m >> 4) & 0x1Fu) << 24 |
         (scale_id & 0x3u) << 29;
}

// The shared-memory descriptor tcgen05.cp .32x128b reads 512 bytes through: 32 unswizzled rows of
// 16 bytes, 8-row groups 128 bytes apart (the stride byte offset), one column of 16 bytes (the
// leading byte offset unused: 0).
GG_TCGEN05_HD constexpr unsigned long long make_tcgen05_cp_32x128b_desc(unsigned smem_address) {
  return make_tcgen05_smem_desc(smem_address, 0, 128, kTcgen05SwizzleNone);
}

// A Tensor Memory address (PTX ISA, tcgen05 "Tensor Memory Addressing"): the lane in bits
// 16-31, the 32-bit column in bits 0-15, from the address tcgen05.alloc returned (lane 0).
GG_TCGEN05_HD constexpr unsigned tmem_address(unsigned base, unsigned lane, unsigned column) {
  return base + (lane << 16) + column;
}

// The accumulator row, within a 128-row set of `mma_m`-row tcgen05.mma blocks (.cta_group::1), that
// TMEM lane `lane` (0..127) holds. m128: row r in lane r. m64: a block's rows 16q..16q+15 in lanes
// 32q..32q+15 of each quarter q, and a second block sharing the columns in lanes 32q+16..32q+31
// (its rows 64.. of the set). PTX ISA, tcgen05 "Data path layout organization"; CUTLASS's
// tmem_frg for M_MMA = 64, TmemAllocMode::Interleaved (cute/atom/mma_traits_sm100_frag.hpp).
GG_TCGEN05_HD constexpr int tmem_lane_row(int mma_m, int lane) {
  return mma_m == 64 ? lane / 32 * 16 + lane % 16 + 64 * (lane % 32 / 16) : lane;
}

}  // namespace gg::dev

#undef GG_TCGEN05_HD
#endif  // GG_DEV_TCGEN05_DESC_H
