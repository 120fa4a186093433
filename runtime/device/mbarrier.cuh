#ifndef GG_DEV_MBARRIER_CUH
#define GG_DEV_MBARRIER_CUH
// mbarrier: a 64-bit shared-memory barrier that completes a phase once its expected
// arrivals have arrived and its expected transaction bytes (TMA) have landed.
// `bar` is the barrier's shared-window address (smem_addr).
namespace gg::dev {

static __device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned arrival_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrival_count) : "memory");
}

// Makes initialized barriers visible to the async proxy and to the other CTAs of the
// cluster; issue after the inits, before the barrier (or cluster barrier) that
// publishes them.
static __device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

static __device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Arrives and raises the phase's expected transaction count by `bytes` in one step:
// what a TMA producer does before issuing the loads that complete on this barrier.
static __device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// Raises the expected transaction count without arriving.
static __device__ __forceinline__ void mbarrier_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// Arrives on the barrier at the same offset in the shared memory of CTA `cta_rank`
// of this cluster. The default .release.cta semantics: the arrival only says this CTA's
// reads of a stage have retired (wgmma wait), it publishes no writes. A .release.cluster
// arrive adds a cluster-scope fence per arrival and ran a 2x1-cluster kernel 3x slower on an H100.
static __device__ __forceinline__ void mbarrier_arrive_cluster(unsigned bar, unsigned cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote_bar;\n"
      "mapa.shared::cluster.u32 remote_bar, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote_bar];\n"
      "}\n" ::"r"(bar),
      "r"(cta_rank)
      : "memory");
}

// True once the phase with parity `phase_parity` (0 or 1) has completed. try_wait
// blocks for a hardware-chosen time before answering, so a loop over it does not spin hot.
static __device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned bar, unsigned phase_parity) {
  unsigned done;
  asm volatile(
      "{\n"
      ".reg .pred complete;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(phase_parity)
      : "memory");
  return done != 0;
}

// `what` names the barrier and the waiting role. Built with GG_WATCHDOG (gemmgen's GPU
// checks do), a wait longer than about a second prints the barrier, role, parity and block,
// then traps, so a lost arrival fails the launch instead of hanging it.
static __device__ __forceinline__ void mbarrier_wait_parity(unsigned bar, unsigned phase_parity,
                                                            const char* what = "") {
#if defined(GG_WATCHDOG)
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(start));
  while (!mbarrier_try_wait_parity(bar, phase_parity)) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - start > 1000000000ull) {
      printf("gemmgen watchdog: block (%d,%d,%d) thread %d waited over 1 s on %s (parity %u)\n", blockIdx.x, blockIdx.y,
             blockIdx.z, threadIdx.x, what, phase_parity);
      __trap();
    }
  }
#else
  (void)what;
  while (!mbarrier_try_wait_parity(bar, phase_parity)) {
  }
#endif
}

}  // namespace gg::dev
#endif  // GG_DEV_MBARRIER_CUH
