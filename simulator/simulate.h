#pragma once
// Executes a lowered kernel's IR on the CPU: every CTA of the grid (a cluster's CTAs
// together), each warp a cooperative task, with the semantics the printed CUDA has:
// mbarriers (arrival counts, transaction bytes, phase parity), CTA, named and cluster
// barriers, TMA loads and stores (boxes, swizzle, out-of-bounds zero fill, store clipping,
// multicast), WGMMA reading shared memory through its descriptors, on sm_100a Tensor Memory
// (allocation, tcgen05.mma completing asynchronously through its decoded descriptors,
// tcgen05.commit onto mbarriers, tcgen05.ld by each warp of its own quarter of the lanes), the
// epilogue and its staging. Asynchronous copies land at seeded random moments, so a missing wait shows up.
// It reports deadlocks (every warp blocked: which barrier, role, phase, CTA), a read of a
// stage whose fill has not landed, a fill landing on a stage still being read, a generic
// shared-memory write read by the async proxy without fence.proxy.async, a staging buffer
// rewritten while a TMA store reads it, and compares the output with a host reference on
// small-integer inputs, element by element.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/resources.h"

namespace gg {

struct SimulateOptions {
  uint64_t seed = 1;                 // inputs and the interleaving of warps and copies
  int64_t max_steps = 200'000'000;   // statements executed before giving up (a livelock)
  int max_errors = 8;                // hazards reported before stopping
  // >= 0: the warps of this CTA rank of each cluster are picked 7 times in 8, so it runs ahead
  // of its peers: a CTA that may exit (or refill a stage) before a peer is done with it does.
  int lead_cta = -1;
  // The launch's M and N (in the kernel's orientation) where the kernel reads them at run time;
  // 0: the sizes it was planned for. CompileError `runtime-size` where it has them compiled.
  int64_t m = 0, n = 0;
  // Masked groups: each matrix's rows in use (the kernel's args.group_rows); empty: all M rows.
  std::vector<int64_t> group_rows;
  // Contiguous groups: batch + 1 row offsets (the kernel's args.group_offsets); empty: M split
  // evenly, group g from row g * M / batch.
  std::vector<int64_t> group_offsets;
  // Pointer-array groups: M, N, K of each group (3 per group, the kernel's args.group_sizes), each
  // at most the planned size (the simulator's tensors hold the planned sizes per group); empty:
  // every group of the planned sizes.
  std::vector<int64_t> group_sizes;
};

struct SimulationReport {
  std::string kernel;                // tile, stages, roles
  bool passed = false;
  std::vector<std::string> errors;   // deadlock and hazard reports, in the order found
  int64_t m = 0, n = 0, k = 0;
  int64_t mismatches = 0, unwritten = 0;
  std::string first_mismatch;
  int64_t ctas = 0, clusters = 0, warps = 0, steps = 0;
  int64_t tma_loads = 0, tma_stores = 0, wgmmas = 0, barrier_waits = 0;
  int64_t tcgen05_mmas = 0;          // sm_100a: tcgen05.mma issues (one thread each)
  std::string to_string() const;
};

// Lowers `s` (with `limits`: a small `sms` makes persistent CTAs loop over several tiles)
// and simulates it on small-integer inputs.
SimulationReport simulate(const Schedule& s, const SimulateOptions& options = {},
                          const DeviceLimits& limits = hopper());

// Simulates an already lowered kernel (tests mutate the IR between lowering and this).
SimulationReport simulate_kernel(const Kernel& k, const Definition& def, const SimulateOptions& options = {});

}  // namespace gg
