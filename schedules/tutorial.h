#pragma once
// The tutorial schedules v1..v10 (docs/tutorial.md). Each step is the previous one plus
// primitive calls; nothing else changes.
#include <string>
#include <vector>

#include "dsl/schedule.h"

namespace gg {

inline constexpr int kTutorialSteps = 10;

// CompileError `unknown-schedule` for a version outside 1..10.
Schedule tutorial_schedule(int version, const Definition& def, Target target = Target::Sm90a);

// v9 with ping-pong consumers: two warpgroups each computing whole tiles, in turn.
Schedule ping_pong_schedule(const Definition& def, Target target = Target::Sm90a);

// D = A * A^T (a definition whose matmul reads one tensor as both operands) with the `symmetric`
// directive, walking the tiles on and above the diagonal first: v10's 128x256 tile without its
// cluster (Wide) or v8's 128x128 tile on ping-pong consumers (Square); without a choice, the one
// whose waves at the planned size take less time. CompileError `symmetric` for another matmul.
enum class SymmetricTile { Wide, Square };
Schedule symmetric_schedule(const Definition& def, Target target, SymmetricTile tile);
Schedule symmetric_schedule(const Definition& def, Target target = Target::Sm90a);

// Built-in schedule names ("v1".."v10", "pingpong") with a one-line summary each.
struct BuiltinSchedule {
  std::string name;
  std::string summary;
};
const std::vector<BuiltinSchedule>& builtin_schedules();

// "v7" -> the tutorial schedule, "pingpong" -> ping_pong_schedule; CompileError `unknown-schedule` listing the names otherwise.
Schedule builtin_schedule(const std::string& name, const Definition& def, Target target = Target::Sm90a);

}  // namespace gg
