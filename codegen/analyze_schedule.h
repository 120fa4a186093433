#pragma once
// The one analysis of a schedule: what it means, computed once and read by every consumer --
// explain (the loop nests and the resources it prints), the resource report and validation,
// the index-math check (its loop nest) and lowering (the kernel plan is filled from it).
// Roles, operand and staging layouts are derived once (roles_and_layouts.h); the resource
// summary and the loop nests are built from those values, never from their own derivation.
// It is defined for any recorded schedule, finished or not (explain replays prefixes).
#include "codegen/device_limits.h"
#include "codegen/index_check.h"
#include "codegen/loop_nest.h"
#include "codegen/resources.h"
#include "codegen/roles_and_layouts.h"

namespace gg {

struct ScheduleAnalysis {
  DeviceLimits limits;
  std::vector<RoleShape> roles;    // in warpgroup order
  SmemTileLayout a, b;             // the operand stages
  std::optional<SmemTileLayout> scale_a;  // an FP8 A's scale factors per stage (scale_a_layout)
  std::optional<SmemTileLayout> scale_b;  // B's UE8M0 factors per stage (scale_b_layout)
  StagingShape staging;            // the output staging (read when the output is staged)
  ResourceSummary resources;       // shared-memory layout, barriers, threads, cluster, grid
  LoopNests nests;                 // per-role loop nests (explain)
  LoopNest index;                  // the nest the index-math check enumerates
};

// Throws CompileError `tile-size` for a tile no device could hold (the counts would overflow).
ScheduleAnalysis analyze_schedule(const Schedule& s, const DeviceLimits& limits = hopper());

}  // namespace gg
