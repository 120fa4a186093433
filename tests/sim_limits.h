#pragma once
// The device the simulator tests plan for: an H100 with fewer SMs, so that persistent CTAs loop
// over several tiles of a small problem.
#include "codegen/resources.h"

namespace gg::testing {

inline DeviceLimits few_sms(int sms) {
  DeviceLimits d = hopper();
  d.sms = sms;
  return d;
}

}  // namespace gg::testing
