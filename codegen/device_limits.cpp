#include "codegen/device_limits.h"

namespace gg {

DeviceLimits hopper() { return DeviceLimits{}; }

DeviceLimits blackwell() {
  DeviceLimits d;
  d.name = "B200 (sm_100a)";
  d.sms = 148;
  d.target = Target::Sm100a;
  return d;
}

DeviceLimits limits_for(Target t) { return t == Target::Sm100a ? blackwell() : hopper(); }

}  // namespace gg
