#pragma once
#include "codegen/kernel.h"
#include "codegen/analyze_schedule.h"

namespace gg {

// Fixes what every later pass reads: tile shape, pipeline depth, copy and store methods,
// thread count, the shared-memory layout and the launch grid. Directives this code
// generator cannot lower yet are a CompileError (`not-lowered`), never ignored.
// Reads the schedule's analysis (validate_schedule returns it) rather than deriving its own.
Kernel plan_kernel(const Schedule& s, const ScheduleAnalysis& analysis);

}  // namespace gg
