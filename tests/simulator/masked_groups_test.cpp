// Masked groups (DeepGEMM's m_grouped_..._masked, MoE decode): A[G, M_max, K] and D[G, M_max, N],
// group g using its first group_rows[g] rows, read by the kernel from a device array. The
// simulator runs each kernel family with empty, partial, whole-tile and full groups: the rows in
// use are right and the tiles past them untouched. Planted bugs in the group bound and in the
// running pipeline count across skipped units are caught by the simulator and the sync checker.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "error_check.h"
#include "grouped_testing.h"
#include "planted_bugs.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using namespace gg::testing;

namespace {

Definition masked(int64_t groups, int64_t m_max, int64_t n, int64_t k, DType out = DType::BF16) {
  ProblemLayout l;
  l.batch = groups;
  l.source = ProblemSource::Masked;
  return make_definition(m_max, n, k, DType::BF16, out, {}, l);
}

// Rows 0, 1, a tile less one, a tile, a tile and one, all of M_max: every way a group meets tiles.
std::vector<int64_t> ragged(int64_t groups, int64_t m_max, int64_t tile) {
  const std::vector<int64_t> pattern = {0, 1, tile - 1, tile, tile + 1, m_max, 3};
  std::vector<int64_t> rows;
  for (int64_t g = 0; g < groups; ++g) rows.push_back(std::min(m_max, pattern[size_t(g) % pattern.size()]));
  return rows;
}

}  // namespace

TEST_CASE("masked groups: every kernel family computes the rows in use and leaves later tiles untouched") {
  struct Case {
    std::string what;
    Schedule s;
  };
  const Definition def = masked(7, 256, 256, 256);
  std::vector<Case> cases = {
      {"v5 (a grid of tiles)", tutorial_schedule(5, def)},
      {"v7 (warp-specialized, persistent)", tutorial_schedule(7, def)},
      {"v8", tutorial_schedule(8, def)},
      {"v10 without its cluster", without_cluster(tutorial_schedule(10, def))},
      {"ping-pong without its cluster", without_cluster(ping_pong_schedule(def))},
      {"auto", plan_gemm(256, 256, 256, [] {
         GemmOptions o;
         o.layout.batch = 7;
         o.layout.source = ProblemSource::Masked;
         return o;
       }()).build()},
      {"v8 split_k 2", tutorial_schedule(8, def).split_k(2)},
      {"v8 on sm_100a", tutorial_schedule(8, def, Target::Sm100a)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Kernel k = lowered_on(c.s, 3);
    REQUIRE(k.plan.masked);
    for (uint64_t seed : {1, 5}) {
      SimulateOptions o;
      o.seed = seed;
      o.group_rows = ragged(7, 256, k.plan.tile_m);
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, r.to_string());
    }
    // every group empty, every group full
    for (int64_t rows : {int64_t(0), int64_t(256)}) {
      SimulateOptions o;
      o.group_rows.assign(7, rows);
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, rows << " rows each: " << r.to_string());
    }
  }
}

TEST_CASE("masked groups: a bad count on the device reads as 0 (negative) or M (past M), as documented") {
  for (int v : {5, 8}) {  // a grid of tiles, and a persistent loop walking the tiles in use
    const Schedule s = tutorial_schedule(v, masked(4, 256, 128, 128));
    const Kernel k = lowered_on(s, 2);
    SimulateOptions o;
    o.group_rows = {-5, 300, 100, -300};
    const SimulationReport r = simulate_kernel(k, s.definition(), o);
    CHECK_MESSAGE(r.passed, "v" << v << ": " << r.to_string());
  }
}

TEST_CASE("masked groups: one kernel, M_max read at run time too") {
  const Schedule s = tutorial_schedule(7, masked(3, 256, 128, 128));
  const Kernel k = lowered_on(s, 2);
  SimulateOptions o;
  o.m = 384;
  o.group_rows = {384, 0, 200};
  const SimulationReport r = simulate_kernel(k, s.definition(), o);
  CHECK_MESSAGE(r.passed, r.to_string());
}

TEST_CASE("masked groups: planted bugs in the group bound and in the walk over the groups are caught") {
  SimulateOptions o;
  o.group_rows = {0, 100, 256, 128};
  {
    // A grid of tiles skips a group's tiles past its rows; off by a tile, the first of those is
    // computed and stored.
    const Schedule grid = tutorial_schedule(5, masked(4, 256, 128, 256));
    const Kernel good = lowered_on(grid, 2);
    REQUIRE(simulate_kernel(good, grid.definition(), o).passed);
    Kernel k = good;
    Plant bound(rewrite<Let>([&](Let& l) { l.value = l.value->a < (l.value->b + imm(good.plan.tile_m)); },
                             [](const Let& l) { return l.name == "in_group"; }));
    k.body = bound.mutate(k.body);
    REQUIRE(bound.planted > 0);
    const SimulationReport r = simulate_kernel(k, grid.definition(), o);
    CHECK_FALSE(r.passed);
    CHECK(r.first_mismatch.find("past group") != std::string::npos);
  }
  // A persistent loop walks the groups' tiles in use, one group after another, and maps each
  // unit's virtual m tile back to its group.
  const Schedule s = tutorial_schedule(8, masked(4, 256, 128, 256));
  const Kernel good = lowered_on(s, 2);
  REQUIRE(simulate_kernel(good, s.definition(), o).passed);
  REQUIRE(sync_error(good).empty());
  CHECK_FALSE(simulate_kernel(with_producer_walk_shifted(good), s.definition(), o).passed);
  // The search stops one group late (a group's last tile counted as the next group's first).
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "virtual_m", -1), s.definition(), o).passed);
  CHECK_FALSE(simulate_kernel(with_pipeline_state_skipped(good), s.definition(), o).passed);
}

TEST_CASE("masked groups: what is not lowered says so; the text form round-trips the source") {
  const Definition def = masked(4, 256, 256, 128);
  check_error([&] { lower(tutorial_schedule(10, def)); }, "not-lowered",
              "masked groups with B multicast (a cluster's CTAs pair m tiles, which a group's rows in use may split; "
              "multicast A pairs n tiles)");
  const std::string text = print_schedule(tutorial_schedule(7, def));
  CHECK(text.find("batch=4") != std::string::npos);
  CHECK(text.find("source=masked") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE(file.problem.source);
  CHECK(*file.problem.source == ProblemSource::Masked);
  check_error([] { parse_schedule_file("problem m=8 n=8 k=8 source=ragged\ntile 128 128 64\n"); }, "parse-error",
              "expected source=dense, source=masked (groups whose rows in use are read at run time), source=contiguous");
}
