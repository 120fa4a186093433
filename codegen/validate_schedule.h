#pragma once
// Whole-schedule legality, checked before lowering. The primitives check each call against
// what exists at that point; this checks what only the finished schedule can say: that the
// loops cover the problem, that the tile fits the instruction, the device's shared memory,
// registers and TMEM, that the pipeline and the cluster are consistent.
//
// Each failure is a CompileError with a stable rule id (docs/errors.md):
//   k-alignment, mn-alignment, n-alignment, coverage, no-mma, mma-tile, accumulator-place, not-inlined,
//   warp-specialize-needs-tma, multicast-without-cluster, multicast-needs-tma,
//   multicast-cluster-axis, cluster-size, cluster-grid, tma-box, circular-buffer-axis,
//   stages-exceed-k-trips, stages-too-few, register-file, smem-limit, tmem-columns
#include "codegen/analyze_schedule.h"
#include "dsl/schedule.h"

namespace gg {

// Throws the first rule broken; returns the analysis it checked when the schedule is legal on
// `limits` (lowering plans the kernel from it).
ScheduleAnalysis validate_schedule(const Schedule& s, const DeviceLimits& limits = hopper());

}  // namespace gg
