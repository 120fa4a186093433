#pragma once
// The device the simulator tests plan for: an H100 with fewer SMs, so that persistent CTAs loop
// over several tiles of a small problem.
#include "codegen/lower.h"
#include "codegen/resources.h"

namespace gg::testing {

inline DeviceLimits few_sms(int sms) {
  DeviceLimits d = hopper();
  d.sms = sms;
  return d;
}

// Lowering for a B200 with `sms` SMs (sm_100a kernels' persistent CTAs then walk several tiles).
inline LowerOptions on_b200(int sms) {
  LowerOptions lo;
  lo.limits = blackwell();
  lo.limits.sms = sms;
  return lo;
}

}  // namespace gg::testing
