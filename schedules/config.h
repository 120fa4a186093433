#pragma once
// Config heuristics, kept apart from the schedules that use them: they pick numbers
// (stages, tile sizes) from the problem; the schedules only call primitives.
#include <cstdint>

namespace gg {

// Pipeline depth for a k loop of `k_trips` iterations: the desired depth, but never more
// stages than the loop can fill, and never fewer than two (the smallest pipeline).
int pipeline_stages(int64_t k_trips, int desired);

}  // namespace gg
