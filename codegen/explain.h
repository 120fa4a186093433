#pragma once
// `gemmgen explain`: what a schedule does, step by step. The directives are replayed through
// Schedule::apply one prefix at a time; after each, the loop nests are printed as a line
// diff against the previous step (`+` added, `-` removed, two spaces unchanged), so each
// directive's effect is visible. A resource summary and the whole-schedule check follow.
#include <optional>
#include <string>
#include <vector>

#include "codegen/resources.h"
#include "dsl/schedule.h"

namespace gg {

struct ExplainOptions {
  bool steps = true;        // the nests after each directive; false: only the final nests
  bool resources = true;    // the resource summary
  bool check = true;        // run validate_schedule and print its verdict (never throws for it)
  std::optional<DeviceLimits> limits;  // default: limits_for(the schedule's mma target)
};

std::string explain(const Schedule& s, const ExplainOptions& options = {});

// What b changes relative to a: the directives b adds (+) or drops (-), then the line diff
// of the final loop nests and of the resource summaries.
std::string explain_diff(const Schedule& a, const Schedule& b, const std::optional<DeviceLimits>& limits = {});

// A line diff (longest common subsequence): every line of `after`, and each line of
// `before` that is gone, prefixed "+ ", "- " or "  ".
std::string line_diff(const std::string& before, const std::string& after);

}  // namespace gg
