#pragma once
#include "codegen/kernel.h"

namespace gg {

// Last pass, a static check of the lowered kernel's synchronization. It checks values on
// the role/pipeline structure, not just the order of nodes:
//  - per fill and per release (one loop iteration, branch or straight-line role body), the
//    expect_tx bytes equal the bytes the TMA loads land in each CTA (multicast included),
//    and the arrivals landing in each CTA of the cluster equal the barrier's init count;
//  - every waited-on barrier is arrived on; init, fence and (cluster) barrier precede the
//    role branch; a cluster barrier precedes exit when peers arrive or multicast;
//  - named barriers: ids 1..15, one id per purpose, thread count = the role's threads;
//  - writer and readers of every shared buffer agree on its swizzle (tensor maps included);
//  - each role, run on concrete values (loops iterated, k tiles capped), keeps the pipeline:
//    wait parities match phases, a stage is read only while held, released only after a
//    wgmma wait that leaves none of its readers in flight, refilled only after its release,
//    acquired and released in the order it is filled; generic-proxy writes are fenced
//    before async-proxy reads; wgmma fence/commit/wait order; the epilogue after wait<0>.
// No abstract node may be left. A violation is a gemmgen bug (InternalError) whose message
// names the barrier or buffer, the role, and the rule broken. A kernel whose plan has no
// roles (a hand-assembled fragment) gets only the checks that need neither plan nor launch.
Kernel check_sync(Kernel k);

}  // namespace gg
