#pragma once
// sm_90a instruction facts: the WGMMA accumulator fragment and the shared-memory operand
// layout (K-major, 32/64/128-byte swizzle: 8-row groups of 8 x swizzle bytes).
#include "codegen/kernel.h"

namespace gg::sm90 {

inline constexpr int kWgmmaM = 64;
inline constexpr int kWgmmaK = 16;

struct AccumulatorShape {
  int blocks = 1;  // 64-row MMA blocks per consumer warpgroup
  int regs = 0;    // f32 registers per thread per block (N / 2)
};
AccumulatorShape accumulator_shape(const KernelPlan& p);
// FP8: the accumulator the MMAs of a promotion interval go to before the promotion adds it into acc.
inline constexpr const char* kPromotedAccumulator = "acc_k";

// Replaces each abstract ComputeTile by the warpgroup's WGMMA sequence over the stage.
kir::StmtPtr select_wgmma(const KernelPlan& p, const kir::StmtPtr& body);

}  // namespace gg::sm90
