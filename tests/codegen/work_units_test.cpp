// The tile scheduler's work units, enumerated on the host from the expressions the kernel
// evaluates: over all CTAs of the grid, every output tile of every batch matrix is computed once
// (once per split, the splits covering K without gaps or overlap), whatever produced the units:
// a batch, a cluster's pairs, split-K, split-K on the last wave, the Hilbert order, pointer-array
// groups of ragged sizes (each group's own tile grid once).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/lower.h"
#include "codegen/work_units.h"
#include "dsl/schedule_text.h"
#include "hilbert_schedule.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

struct Case {
  std::string name;
  Schedule s;
  int sms = 132;
};

// Every unit of every CTA of the kernel's grid (its x extent; a cluster's CTAs in turn).
std::vector<WorkUnit> all_units(const Case& c, const Kernel& k) {
  std::vector<WorkUnit> units;
  const auto& g = k.launch.grid;
  for (int64_t z = 0; z < g[2]; ++z)
    for (int64_t y = 0; y < g[1]; ++y)
      for (int64_t x = 0; x < g[0]; ++x)
        for (const WorkUnit& u : cta_work_units(c.s, k.plan, {x, y, z}, {g[0], g[1], g[2]}, k.plan.k))
          units.push_back(u);
  return units;
}

void check_units_cover_the_problem(const Case& c) {
  CAPTURE(c.name);
  DeviceLimits limits = hopper();
  limits.sms = c.sms;
  LowerOptions options;
  options.limits = limits;
  const Kernel k = lower(c.s, options);
  const KernelPlan& p = k.plan;
  const int64_t tiles_m = (p.m + p.tile_m - 1) / p.tile_m, tiles_n = (p.n + p.tile_n - 1) / p.tile_n;
  const int64_t k_tiles = (p.k + p.tile_k - 1) / p.tile_k;
  // (batch, m tile, n tile) -> the k tiles each of its units ran, by first k tile
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::map<int64_t, int64_t>> runs;
  int64_t past_edge = 0;
  for (const WorkUnit& u : all_units(c, k)) {
    if (!u.in_range) continue;
    if (u.m_tile >= tiles_m || u.n_tile >= tiles_n) {  // a cluster's last pair completed past D's edge
      ++past_edge;
      continue;
    }
    auto& ks = runs[{u.batch, u.m_tile, u.n_tile}];
    CHECK_MESSAGE(ks.count(u.k_first) == 0, "two units of tile (" << u.m_tile << ", " << u.n_tile << ") start at k tile "
                                                                  << u.k_first);
    ks[u.k_first] = u.k_tiles;
    CHECK(u.handed_on == (u.k_tiles < k_tiles || (p.split_k > 1 && !p.split_k_tail)));
  }
  CHECK(runs.size() == static_cast<size_t>(tiles_m * tiles_n * p.layouts.batch));
  for (const auto& [tile, ks] : runs) {
    int64_t next = 0;  // the shares abut; the last may run past K (zero-filled)
    for (const auto& [first, count] : ks) {
      CHECK(first == next);
      next = first + count;
    }
    CHECK(next >= k_tiles);
    CHECK(next - ks.rbegin()->second < k_tiles);
  }
  if (p.cluster_size == 1) CHECK(past_edge == 0);
}

}  // namespace

TEST_CASE("work units: every tile of every matrix once, every split's share of K once, on every grid") {
  ProblemLayout batched;
  batched.batch = 3;
  const Definition three = make_definition(640, 384, 256, DType::BF16, DType::BF16, {}, batched);
  const Definition ragged = make_definition(1000, 700, 520, DType::BF16, DType::BF16);
  const Definition odd = make_definition(640, 768, 256, DType::BF16, DType::BF16);  // 5 m tiles: pairs overhang
  std::vector<Case> cases;
  cases.push_back({"v3 grid of tiles", tutorial_schedule(3, ragged)});
  cases.push_back({"v6 batch of 3 on 4 SMs", tutorial_schedule(6, three), 4});
  cases.push_back({"v10 cluster pairs over an odd tile count", tutorial_schedule(10, odd), 3});
  cases.push_back({"v8 hilbert", test::with_hilbert(8, ragged), 5});
  Schedule split = tutorial_schedule(8, ragged);
  split.split_k(3);
  cases.push_back({"v8 split_k 3 on 7 SMs", split, 7});
  Schedule tail = tutorial_schedule(8, make_definition(1408, 128, 640, DType::BF16, DType::BF16));
  tail.split_k(3, true);
  cases.push_back({"v8 split_k 3 tail on 3 SMs", tail, 3});
  Schedule batched_split = tutorial_schedule(6, three);
  batched_split.split_k(2);
  cases.push_back({"v6 batch of 3, split_k 2", batched_split, 5});
  for (int sms : {1, 3, 4, 7, 12, 40}) {
    Schedule stream = tutorial_schedule(8, make_definition(1408, 128, 640, DType::BF16, DType::BF16));
    stream.split_k(3, false, true);
    cases.push_back({"v8 split_k 3 stream on " + std::to_string(sms) + " SMs", stream, sms});
  }
  Schedule batched_stream = tutorial_schedule(6, three);
  batched_stream.split_k(2, false, true);
  cases.push_back({"v6 batch of 3, split_k 2 stream", batched_stream, 7});
  for (const Case& c : cases) check_units_cover_the_problem(c);
}

// The stream-K deal as the host computes it (the kernel's expressions are the same arithmetic,
// checked against it by the coverage test above and by the simulator): over every small problem,
// the ranges partition the run, cta_of names the range holding each k tile, no tile has more
// pieces than the workspace holds, and no CTA touches more tiles than its units.
TEST_CASE("work units: the stream-K deal partitions the tail's k tiles into even contiguous ranges") {
  for (int64_t tiles = 1; tiles <= 9; ++tiles)
    for (int64_t k_tiles = 1; k_tiles <= 17; ++k_tiles)
      for (int splits = 2; splits <= std::min<int64_t>(6, std::max<int64_t>(2, k_tiles)); ++splits)
        for (int64_t grid = 1; grid <= 40; grid += grid < 8 ? 1 : 7) {
          if (splits > k_tiles) continue;  // split_k refuses more splits than k tiles
          const StreamKDeal d(tiles, k_tiles, grid, splits);
          CAPTURE(tiles);
          CAPTURE(k_tiles);
          CAPTURE(splits);
          CAPTURE(grid);
          REQUIRE(d.ctas == std::min<int64_t>(grid, tiles * splits));
          const int64_t shortest = d.iterations() / d.ctas;
          for (int64_t c = 0; c < d.ctas; ++c) {
            const int64_t length = d.begin(c + 1) - d.begin(c);
            REQUIRE((length == shortest || length == shortest + 1));
            for (int64_t x = d.begin(c); x < d.begin(c + 1); ++x) REQUIRE(d.cta_of(x) == c);
            const int64_t touched = length == 0 ? 0 : (d.begin(c + 1) - 1) / k_tiles - d.begin(c) / k_tiles + 1;
            REQUIRE(touched <= d.segments_per_cta());
          }
          REQUIRE(d.begin(d.ctas) == d.iterations());
          for (int64_t t = 0; t < tiles; ++t) {
            const int64_t pieces = d.cta_of((t + 1) * k_tiles - 1) - d.cta_of(t * k_tiles) + 1;
            REQUIRE(pieces >= 1);
            REQUIRE(pieces <= stream_k_max_pieces(k_tiles, splits));
          }
        }
}

TEST_CASE("work units: split_k tail gives the whole waves all of K and the last wave's tiles shares") {
  Schedule tail = tutorial_schedule(8, make_definition(1408, 128, 640, DType::BF16, DType::BF16));
  tail.split_k(3, true);
  LowerOptions options;
  options.limits.sms = 3;
  const Kernel k = lower(tail, options);
  REQUIRE(k.launch.grid[0] == 3);
  // 11 tiles on 3 CTAs: 9 whole (3 each), then 2 tiles x 3 splits = 6 shares (2 each).
  for (int64_t cta = 0; cta < 3; ++cta) {
    CAPTURE(cta);
    const std::vector<WorkUnit> units = cta_work_units(tail, k.plan, {cta, 0, 0}, {3, 1, 1}, 640);
    REQUIRE(units.size() == 5);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(units[i].k_tiles == 10);
      CHECK_FALSE(units[i].handed_on);
    }
    for (size_t i = 3; i < 5; ++i) {
      CHECK(units[i].k_tiles == 4);  // ceil(10 / 3)
      CHECK(units[i].handed_on);
      CHECK(units[i].k_first == units[i].split * 4);
    }
  }
}

TEST_CASE("work units: pointer-array groups walk every tile of each group's own grid once, with the group's k tiles") {
  ProblemLayout l;
  l.batch = 5;
  l.source = ProblemSource::PointerArray;
  const Definition def = make_definition(512, 512, 512, DType::BF16, DType::BF16, {}, l);
  // M, N, K per group: full, no rows, no columns, no K, ragged
  const std::vector<int64_t> sizes = {512, 512, 512, 0, 256, 128, 300, 0, 64, 130, 200, 0, 77, 392, 100};
  for (const Schedule& s : {tutorial_schedule(8, def), tutorial_schedule(6, def)}) {
    const Kernel k = lower(s);
    const KernelPlan& p = k.plan;
    for (int64_t ctas : {1, 3, 7, 132}) {
      CAPTURE(ctas);
      std::map<std::tuple<int64_t, int64_t, int64_t>, int> seen;
      for (int64_t x = 0; x < ctas; ++x)
        for (const WorkUnit& u : cta_work_units(s, p, {x, 0, 0}, {ctas, 1, 1}, p.k, 0, 0, sizes)) {
          const int64_t gm = sizes[size_t(3 * u.batch)], gn = sizes[size_t(3 * u.batch + 1)],
                        gk = sizes[size_t(3 * u.batch + 2)];
          CHECK(u.m_tile * p.tile_m < gm);  // inside its group's own tiles
          CHECK(u.n_tile * p.tile_n < gn);
          CHECK(u.k_tiles == (gk + p.tile_k - 1) / p.tile_k);
          ++seen[{u.batch, u.m_tile, u.n_tile}];
        }
      int64_t tiles = 0;
      for (int64_t g = 0; g < 5; ++g)
        tiles += (sizes[size_t(3 * g)] + p.tile_m - 1) / p.tile_m * ((sizes[size_t(3 * g + 1)] + p.tile_n - 1) / p.tile_n);
      CHECK(seen.size() == size_t(tiles));
      // (not a structured binding: clang 14 refuses one inside CHECK_MESSAGE's lambda)
      for (const auto& visited : seen) CHECK_MESSAGE(visited.second == 1, "tile visited " << visited.second << " times");
    }
  }
}
