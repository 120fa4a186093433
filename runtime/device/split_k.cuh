#ifndef GG_DEV_SPLIT_K_CUH
#define GG_DEV_SPLIT_K_CUH
// The hand-off between CTAs that share a result: split-K's CTAs of one output tile, or a row
// reduction's tiles of one row band (a column reduction's of one column band). Each stores its fp32
// partial sums to the global workspace, then one thread per CTA takes a ticket on the shared
// counter; the CTA holding the last ticket adds every share (in a fixed order: the result does not
// depend on which CTA finished first) and writes the result.
//
// The ticket's rule compiles for the host too: the CPU simulator runs the very same function on
// its model of the counter, so a wrong rule fails the simulation as well. The rest is device code.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GG_DEV_TICKET_FN __host__ __device__ __forceinline__
#else
#define GG_DEV_TICKET_FN inline
#endif

namespace gg::dev {

// A CTA that took ticket `taken` (the counter's value before its increment) of a result shared by
// `arrivals` CTAs holds the last one: every other CTA's partial sums are stored, so it reduces and
// writes the result, and puts the counter back to 0 for the next launch.
GG_DEV_TICKET_FN bool ticket_is_last(unsigned taken, unsigned arrivals) { return taken + 1u == arrivals; }

// Claimed first (split-K in two): a CTA takes its ticket as its k loop ends, before storing anything,
// in the counter's low 16 bits; all but the last then park their sums and count them stored in the
// high 16 bits; the last keeps its own in registers and waits for the others' count. `word` is the
// counter's value before the claim's increment, or as the last one reads it.
GG_DEV_TICKET_FN bool claim_is_last(unsigned word, unsigned arrivals) { return (word & 0xffffu) + 1u == arrivals; }
GG_DEV_TICKET_FN bool others_stored(unsigned word, unsigned arrivals) { return (word >> 16) + 1u == arrivals; }
GG_DEV_TICKET_FN unsigned stored_increment() { return 1u << 16; }
#undef GG_DEV_TICKET_FN

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// Stores and loads that bypass L1: another SM wrote (or reads) these bytes, and L1 is not coherent.
static __device__ __forceinline__ void store_partial(float* at, float value) { __stcg(at, value); }
static __device__ __forceinline__ float load_partial(const float* at) { return __ldcg(at); }

// The `thread_count` threads meet at named barrier `id`; each learns whether any of them passed `mine`.
static __device__ __forceinline__ bool any_of_tile(unsigned mine, unsigned id, unsigned thread_count) {
  unsigned any = 0;
  asm volatile(
      "{\n"
      "  .reg .pred p, q;\n"
      "  setp.ne.u32 p, %1, 0;\n"
      "  bar.red.or.pred q, %2, %3, p;\n"
      "  selp.u32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(mine), "r"(id), "r"(thread_count)
      : "memory");
  return any != 0;
}

// Called by all `thread_count` threads holding the tile after they stored their partial sums and
// met at named barrier `id`: `elected` takes the ticket; every thread learns (bar.red.or) whether
// it was the last of `arrivals`. The last resets the counter to zero for the next launch and makes
// the other splits' stores visible before its loads.
static __device__ __forceinline__ bool tile_ticket(unsigned* counter, unsigned arrivals, unsigned id,
                                                      unsigned thread_count, bool elected) {
  unsigned last = 0;
  if (elected) {
    last = ticket_is_last(atomicAdd(counter, 1u), arrivals) ? 1u : 0u;
    if (last) *counter = 0u;
  }
  const bool any = any_of_tile(last, id, thread_count);
  if (any) __threadfence();  // acquire: the other splits fenced their stores before their tickets
  return any;
}

// Claimed first: `elected` takes the ticket; every one of the `thread_count` threads learns
// (bar.red.or at named barrier `id`) whether it was the last of `arrivals`. Nothing is stored yet,
// so nothing is reset or fenced here.
static __device__ __forceinline__ bool tile_claim(unsigned* counter, unsigned arrivals, unsigned id,
                                                 unsigned thread_count, bool elected) {
  unsigned last = 0;
  if (elected) last = claim_is_last(atomicAdd(counter, 1u), arrivals) ? 1u : 0u;
  return any_of_tile(last, id, thread_count);
}

// A CTA that is not the last, after its threads stored and fenced their sums and met: `elected`
// counts them stored (the fences before the barrier make them visible first).
static __device__ __forceinline__ void tile_partials_stored(unsigned* counter, bool elected) {
  if (elected) atomicAdd(counter, stored_increment());
}

// The last CTA: `elected` waits until every other CTA counted its sums stored, then puts the counter
// back to 0 for the next launch (no CTA touches it again in this one); the `thread_count` threads
// meet at named barrier `id` and acquire the other CTAs' stores. The others claimed before the last
// did, so they are running and past their k loops: the wait cannot hang on a CTA not yet scheduled.
static __device__ __forceinline__ void tile_await_partials(unsigned* counter, unsigned arrivals, unsigned id,
                                                          unsigned thread_count, bool elected) {
  if (elected) {
#if defined(GG_WATCHDOG)
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(start));
#endif
    while (!others_stored(atomicAdd(counter, 0u), arrivals)) {
#if defined(GG_WATCHDOG)
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
      if (now - start > 1000000000ull) {
        printf("gemmgen watchdog: block (%d,%d,%d) thread %d waited over 1 s for the split-K partial sums of the "
               "tile's other CTAs\n", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
        __trap();
      }
#endif
      __nanosleep(64);
    }
    *counter = 0u;
  }
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(thread_count) : "memory");
  __threadfence();  // acquire: the other CTAs fenced their stores before counting them
}

#endif  // device code

}  // namespace gg::dev
#endif  // GG_DEV_SPLIT_K_CUH
