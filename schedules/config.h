#pragma once
// Config heuristics, kept apart from the schedules that use them: they pick numbers
// (stages, tile sizes) from the problem; the schedules only call primitives.
#include <cstdint>
#include <string>

#include "dsl/schedule.h"

namespace gg {

// Pipeline depth for a k loop of `k_trips` iterations: the desired depth, but never more
// stages than the loop can fill, and never fewer than two (the smallest pipeline).
int pipeline_stages(int64_t k_trips, int desired);

// The deepest circular buffer on `axis`, at most `desired` stages (and at most the loop's trips),
// whose shared memory (stages, epilogue staging, barriers) still fits the target's per-CTA
// limit; never fewer than two stages.
int deepest_pipeline(const Schedule& s, const std::string& axis, int desired);

// TMA where the tensor's rows allow it, else `auto` (which then falls back: element copies for an
// operand, stores from registers for the output), so a schedule takes every problem.
CopyMethod copy_method_for(const Definition& def, const std::string& tensor);

// cache_read of each operand of the matmul with copy_method_for (one for D = A * A^T).
void cache_read_operands(Schedule& s);
// The name of the matmul's second operand ("B"; "A" where A is read as both).
const std::string& second_operand(const Definition& def);

}  // namespace gg
