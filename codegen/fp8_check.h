#pragma once
// gemm_check for FP8 operands: A and B quantized as DeepGEMM does (random data: per 1 x 128 of A
// and 128 x 128 of B, amax / fp8 max; exact mode: small integers with power-of-two factors), an
// fp64 reference over the dequantized operands, cuBLASLt's block-scaled FP8 on the same inputs
// as the baseline (per-tensor FP8 timed beside it: the ceiling without scaling cost).
#include "codegen/emit.h"
#include "codegen/gemm_check.h"
#include "runtime/launch.h"

namespace gg {

// Needs a GPU. One launch (and the options' repeats and timing) of a loaded FP8 kernel of a dense
// problem (timed against cuBLASLt with CheckOptions::bench, in the build without the watchdog).
CheckReport check_fp8(const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                      const CheckOptions& o);

}  // namespace gg
