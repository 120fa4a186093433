#ifndef GG_DEV_TCGEN05_CUH
#define GG_DEV_TCGEN05_CUH
// Blackwell (sm_100a) tensor-core helpers: Tensor Memory allocation, tcgen05.mma with operands in
// shared memory and the accumulator in TMEM, tcgen05.commit onto an mbarrier, the tcgen05 thread-
// sync fences and tcgen05.ld into registers. The descriptors are in tcgen05_desc.h. Every helper
// is one PTX instruction (the loads: load and wait) with the syntax of the PTX ISA's tcgen05
// section; which threads run each is the caller's business:
//   - tcgen05.alloc, .dealloc, .relinquish_alloc_permit, .ld and .wait are .sync.aligned: a whole
//     warp executes them together;
//   - tcgen05.mma and tcgen05.commit are issued by one thread (the commit tracks the MMAs that
//     thread issued).
namespace gg::dev {

// The executing warp allocates `columns` TMEM columns (a power of 2, 32..512) for its CTA;
// tcgen05 writes their address (lane 0, the first column) to shared memory at `slot`.
static __device__ __forceinline__ void tmem_alloc(unsigned slot, unsigned columns) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot), "r"(columns)
               : "memory");
}

// The CTA will allocate no more TMEM, so a CTA waiting for columns on this SM may take them.
static __device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}

// Frees the `columns` columns at `taddr` (what tcgen05.alloc returned); every TMEM allocation is
// freed before the kernel exits.
static __device__ __forceinline__ void tmem_dealloc(unsigned taddr, unsigned columns) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(columns) : "memory");
}

// The .cta_group::2 forms, for a kernel whose MMAs span a CTA pair (every tcgen05 instruction of a
// kernel takes the same .cta_group): one warp of each CTA of the pair allocates, gives up the
// permit and frees together (the first may wait for the other).
static __device__ __forceinline__ void tmem_alloc_pair(unsigned slot, unsigned columns) {
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot), "r"(columns)
               : "memory");
}
static __device__ __forceinline__ void tmem_relinquish_alloc_permit_pair() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void tmem_dealloc_pair(unsigned taddr, unsigned columns) {
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(columns) : "memory");
}

// Orders this thread's earlier tcgen05 operations before the thread synchronization that follows
// (a CTA or named barrier, an mbarrier arrive).
static __device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

// Orders this thread's later tcgen05 operations after the thread synchronization before it (a
// barrier, an mbarrier wait).
static __device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

// D[M x N] (+)= A[M x 16] * B[16 x N]: A and B from shared memory through their descriptors, D in
// TMEM at `d_tmem`, the shape and types in `idesc` (tcgen05_desc.h). `accumulate` == 0 overwrites
// D (the tile's first MMA: TMEM is not zeroed), otherwise adds to it.
static __device__ __forceinline__ void tcgen05_mma_f16(unsigned d_tmem, unsigned long long a_desc,
                                                       unsigned long long b_desc, unsigned idesc, unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, accumulate;\n"
      "}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}

// The m256 MMA over a CTA pair, issued by a thread of the even CTA: A's rows 0..127 and B's first
// n/2 rows from this CTA's shared memory, rows 128..255 and the other n/2 rows from the odd CTA's
// at the same offsets; D's rows 0..127 into this CTA's TMEM at `d_tmem`, rows 128..255 into the
// odd CTA's at the same address (PTX ISA, tcgen05.mma with .cta_group::2).
static __device__ __forceinline__ void tcgen05_mma_f16_pair(unsigned d_tmem, unsigned long long a_desc,
                                                            unsigned long long b_desc, unsigned idesc,
                                                            unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %4, 0;\n"
      "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, accumulate;\n"
      "}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}

// FP8 with UE8M0 block scaling: D[128 x N] (+)= (A[128 x 32] x A's factors) * (B[32 x N] x B's
// factors), A's and B's e4m3/e5m2 from shared memory, each row's factor from TMEM at `a_scales`
// and `b_scales` (row r: column + r / 32, lane r % 32, the byte idesc's scale ids name; a
// tcgen05.cp put them there). Spelled .scale_vec::1X (PTX ISA 8.6; one factor per row and 32 of
// K), which ptxas assembles for sm_100a as .block32 (PTX ISA, tcgen05.mma block_scale).
static __device__ __forceinline__ void tcgen05_mma_mxf8f6f4(unsigned d_tmem, unsigned long long a_desc,
                                                            unsigned long long b_desc, unsigned idesc,
                                                            unsigned a_scales, unsigned b_scales,
                                                            unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %6, 0;\n"
      "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], accumulate;\n"
      "}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(a_scales), "r"(b_scales), "r"(accumulate)
      : "memory");
}

// The m256 block-scaled MMA over a CTA pair, issued by a thread of the even CTA: A's rows and B's
// halves as tcgen05_mma_f16_pair reads them, N the pair's whole; each CTA's rows times the factors
// in its own TMEM at `a_scales` (its 128 rows) and `b_scales` (all N columns).
static __device__ __forceinline__ void tcgen05_mma_mxf8f6f4_pair(unsigned d_tmem, unsigned long long a_desc,
                                                                 unsigned long long b_desc, unsigned idesc,
                                                                 unsigned a_scales, unsigned b_scales,
                                                                 unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %6, 0;\n"
      "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], accumulate;\n"
      "}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(a_scales), "r"(b_scales), "r"(accumulate)
      : "memory");
}

// 512 bytes of shared memory (32 rows of 16 bytes, the descriptor's: unswizzled, 128 bytes between
// 8-row groups) into 4 TMEM columns from `taddr`, row i into lane i of each of the 4 lane quarters
// (tcgen05.cp .32x128b.warpx4). One thread issues it; its later tcgen05.mma run after it, and a
// tcgen05.commit tracks it.
static __device__ __forceinline__ void tcgen05_cp_32x128b_warpx4(unsigned taddr, unsigned long long src_desc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(src_desc) : "memory");
}

// The same for a CTA pair, issued by a thread of the even CTA: the PTX ISA says the data lands in
// both CTAs' TMEM; CUTLASS, DeepGEMM and ThunderKittens all read it as each CTA's TMEM from its own
// shared memory at the descriptor's offset (each CTA holds its own rows' factors there).
static __device__ __forceinline__ void tcgen05_cp_32x128b_warpx4_pair(unsigned taddr, unsigned long long src_desc) {
  asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(src_desc) : "memory");
}

// The mbarrier at `bar` (this CTA's) gets one arrival once every tcgen05.mma this thread issued
// before has completed: how a stage is released to its loads and how the epilogue learns the
// accumulator is final.
static __device__ __forceinline__ void tcgen05_commit(unsigned bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
               : "memory");
}

// The same arrival on the mbarrier at offset `bar` in every CTA of the cluster whose rank bit is set
// in `cta_mask` (a stage that peers multicast into is released in each of them).
static __device__ __forceinline__ void tcgen05_commit_multicast(unsigned bar, unsigned short cta_mask) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n" ::"r"(bar),
               "h"(cta_mask)
               : "memory");
}

// The pair's commit: one arrival on the mbarrier at offset `bar` in each CTA of `cta_mask` once the
// pair's MMAs this thread issued completed.
static __device__ __forceinline__ void tcgen05_commit_pair_multicast(unsigned bar, unsigned short cta_mask) {
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n" ::"r"(bar),
      "h"(cta_mask)
      : "memory");
}

// tcgen05.ld.32x32b.xN: columns [column, column + N) of the warp's 32 lanes at `taddr` into N
// registers (thread t: lane t of the 32, the lane field of `taddr` the warp's own quarter of TMEM),
// then tcgen05.wait::ld in the same asm statement, so no use of the registers can be scheduled
// before the load completed.
static __device__ __forceinline__ void tmem_load_32x32b_x8(unsigned taddr, float (&v)[8]) {
  unsigned r[8];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];\n"
               "tcgen05.wait::ld.sync.aligned;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]),
                 "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr)
               : "memory");
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = __uint_as_float(r[i]);
}

static __device__ __forceinline__ void tmem_load_32x32b_x16(unsigned taddr, float (&v)[16]) {
  unsigned r[16];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];\n"
               "tcgen05.wait::ld.sync.aligned;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]),
                 "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]),
                 "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
               : "r"(taddr)
               : "memory");
#pragma unroll
  for (int i = 0; i < 16; ++i) v[i] = __uint_as_float(r[i]);
}

static __device__ __forceinline__ void tmem_load_32x32b_x32(unsigned taddr, float (&v)[32]) {
  unsigned r[32];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
               "tcgen05.wait::ld.sync.aligned;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]),
                 "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]),
                 "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]),
                 "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]),
                 "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]),
                 "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]),
                 "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
               : "r"(taddr)
               : "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) v[i] = __uint_as_float(r[i]);
}
}  // namespace gg::dev
#endif  // GG_DEV_TCGEN05_CUH
