#pragma once
#include "codegen/kernel.h"

namespace gg {

// Lowers stage acquire/release. With TMA loads, each stage gets a "full" mbarrier (one
// arrival per operand load plus the transaction bytes) initialised by one thread before
// anything else, and acquiring a stage waits on its phase parity. With synchronous copies,
// acquiring is a proxy fence (the MMA reads through the async proxy) and a CTA barrier.
// Without warp specialization every thread reads every stage, so releasing one is a CTA
// barrier that keeps the next fill from overwriting data still being read.
Kernel insert_mbarriers(Kernel k);

}  // namespace gg
