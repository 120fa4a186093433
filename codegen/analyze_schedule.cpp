#include "codegen/analyze_schedule.h"

#include <algorithm>

#include "dsl/error.h"

namespace gg {

namespace {

constexpr int64_t kMaxTileExtent = 65536;

// Far beyond any device, and the byte and register counts of the analysis must not overflow.
void check_tile_size(const Domain& dom) {
  const int64_t m = dom.tile_extent(Root::M), n = dom.tile_extent(Root::N), k = dom.tile_extent(Root::K);
  if (std::max({m, n, k}) > kMaxTileExtent)
    throw_user_error("tile-size", "the CTA tile is " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                     std::to_string(k) + " (m x n x k); a tile dimension above " + std::to_string(kMaxTileExtent) +
                     " cannot fit in shared memory or registers; split m, n and k with smaller factors (e.g. tile "
                     "128 128 64)");
}

}  // namespace

ScheduleAnalysis analyze_schedule(const Schedule& s, const DeviceLimits& limits) {
  check_tile_size(s.domain());
  ScheduleAnalysis an;
  an.limits = limits;
  an.roles = role_shapes(s, limits);
  an.a = operand_layout(s, 0);
  an.b = operand_layout(s, 1);
  an.scale_a = scale_a_layout(s);
  an.scale_b = scale_b_layout(s);
  an.staging = staging_shape(s);
  an.resources = summarize_resources(s, an.roles, an.a, an.b, an.staging, limits);
  an.nests = make_loop_nests(s, an.roles);
  an.index = index_loop_nest(s);
  return an;
}

ResourceSummary summarize_resources(const Schedule& s, const DeviceLimits& limits) {
  return analyze_schedule(s, limits).resources;
}

}  // namespace gg
