#pragma once
#include "codegen/kernel.h"

namespace gg {

// Instruction selection and accumulator placement: each abstract ComputeTile becomes the target's
// MMA sequence, FinishCompute its wait for completion. sm_90a: warpgroup WGMMAs into registers
// (target/sm90). sm_100a: one thread's tcgen05.mma into TMEM, allocated around the kernel body,
// and ReleaseStage its tcgen05.commit (target/sm100).
Kernel select_mma(Kernel k);

}  // namespace gg
