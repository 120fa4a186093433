#pragma once
#include "codegen/kernel.h"

namespace gg {

// Instruction selection: each abstract ComputeTile becomes the target's MMA sequence
// (sm_90a: warpgroup WGMMAs; sm_100a: tcgen05, not lowered yet).
Kernel select_mma(Kernel k);

}  // namespace gg
