#pragma once
#include "codegen/kernel.h"
#include "codegen/resources.h"

namespace gg {

// Fixes what every later pass reads: tile shape, pipeline depth, copy and store methods,
// thread count, the shared-memory layout and the launch grid. Directives this code
// generator cannot lower yet are a CompileError (`not-lowered`), never ignored.
Kernel plan_kernel(const Schedule& s, const DeviceLimits& limits = hopper());

}  // namespace gg
