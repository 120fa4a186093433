#ifndef GG_DEV_SPLIT_K_TICKET_H
#define GG_DEV_SPLIT_K_TICKET_H
// Split-K's ticket rule as plain integer code that compiles for the host too: the device helper
// (split_k.cuh) decides with it which CTA sharing a tile reduces it, and the CPU simulator runs the
// very same function on its model of the counter, so a wrong rule fails the simulation as well.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GG_DEV_TICKET_FN __host__ __device__ __forceinline__
#else
#define GG_DEV_TICKET_FN inline
#endif

namespace gg::dev {

// A CTA that took ticket `taken` (the tile counter's value before its increment) of a tile shared
// by `splits` CTAs holds the last one: every other split's partial sums are stored, so it reduces
// and writes the tile, and puts the counter back to 0 for the next launch.
GG_DEV_TICKET_FN bool split_k_ticket_is_last(unsigned taken, unsigned splits) { return taken + 1u == splits; }

}  // namespace gg::dev

#undef GG_DEV_TICKET_FN
#endif  // GG_DEV_SPLIT_K_TICKET_H
