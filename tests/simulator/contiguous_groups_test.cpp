// Contiguous groups (DeepGEMM's m_grouped_..._contiguous, MoE forward): one A[M, K] and D[M, N]
// whose rows the groups share, group g the rows [offsets[g], offsets[g+1]) read by the kernel
// from a device array, times its own B[g]. The simulator runs each persistent kernel family with
// empty groups, groups smaller than a tile, ragged and whole-tile groups and rows in no group:
// each group's rows are right, no store crosses into the next group's rows and rows in no group
// stay untouched. Planted bugs in the offsets, the row limit and the walk are caught.
#include <doctest/doctest.h>

#include <numeric>
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

Definition contiguous(int64_t groups, int64_t m, int64_t n, int64_t k, ProblemLayout l = {},
                      const std::vector<EpilogueSpec>& epilogue = {}) {
  l.batch = groups;
  l.source = ProblemSource::Contiguous;
  return make_definition(m, n, k, DType::BF16, DType::BF16, epilogue, l);
}

// Sizes 0, 1, a tile less one, a tile, a tile and one, two tiles and 3: every way a group meets
// tiles (7 groups, 5 tiles + 8 rows of 128-row tiles).
std::vector<int64_t> ragged(int64_t tile) { return {0, 1, tile - 1, tile, tile + 1, 2 * tile + 3, 3}; }

}  // namespace

TEST_CASE("contiguous groups: every persistent kernel family computes each group's rows and no others") {
  struct Case {
    std::string what;
    Schedule s;
  };
  const Definition def = contiguous(7, 1024, 256, 256);
  std::vector<Case> cases = {
      {"v7 (warp-specialized, persistent)", tutorial_schedule(7, def)},
      {"v8", tutorial_schedule(8, def)},
      {"v10 without its cluster", without_cluster(tutorial_schedule(10, def))},
      {"ping-pong without its cluster", without_cluster(ping_pong_schedule(def))},
      {"auto", plan_gemm(1024, 256, 256, [] {
         GemmOptions o;
         o.layout.batch = 7;
         o.layout.source = ProblemSource::Contiguous;
         return o;
       }()).build()},
      {"v8 split_k 2", tutorial_schedule(8, def).split_k(2)},
      {"v8 on sm_100a", tutorial_schedule(8, def, Target::Sm100a)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Kernel k = lowered_on(c.s, 3);
    REQUIRE(k.plan.contiguous);
    const int64_t tile = k.plan.tile_m;
    for (uint64_t seed : {1, 5}) {
      SimulateOptions o;
      o.seed = seed;
      o.group_offsets = offsets_of(ragged(tile), seed == 1 ? 0 : 5);  // rows before the first group stay untouched
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, r.to_string());
    }
    // every group empty; all of M in the last group
    for (const std::vector<int64_t>& offsets : {std::vector<int64_t>(8, 0), std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 1024}}) {
      SimulateOptions o;
      o.group_offsets = offsets;
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, offsets.back() << " rows: " << r.to_string());
    }
  }
}

TEST_CASE("contiguous groups: stores from registers (column-major D) and the epilogue's C and row bias follow the groups") {
  ProblemLayout column_major;
  column_major.d = OutputLayout::ColumnMajor;
  const Schedule col = tutorial_schedule(8, contiguous(5, 512, 128, 128, column_major));
  const std::vector<EpilogueSpec> c_and_bias = {{OpKind::AddScaled, 1.0, BiasAlong::Cols},
                                                 {OpKind::AddBias, 0.0, BiasAlong::Rows}};
  const Schedule epi = without_cluster(tutorial_schedule(10, contiguous(5, 512, 128, 128, {}, c_and_bias)));
  for (const Schedule* s : {&col, &epi}) {
    const Kernel k = lowered_on(*s, 2);
    REQUIRE(k.plan.contiguous);
    SimulateOptions o;
    o.group_offsets = offsets_of({70, 0, 129, 1, 200}, 3);
    const SimulationReport r = simulate_kernel(k, s->definition(), o);
    CHECK_MESSAGE(r.passed, r.to_string());
  }
}

TEST_CASE("contiguous groups: bad offsets on the device are clamped to 0..M and a group ending before it starts is empty") {
  const Schedule s = tutorial_schedule(8, contiguous(4, 256, 128, 128));
  const Kernel k = lowered_on(s, 2);
  SimulateOptions o;
  // group 0: rows 0..100 (its start -20 read as 0); group 1 empty; group 2: rows 100..256 (its
  // end 300 read as M); group 3 empty (it ends at 50, before its start).
  o.group_offsets = {-20, 100, 100, 300, 50};
  const SimulationReport r = simulate_kernel(k, s.definition(), o);
  CHECK_MESSAGE(r.passed, r.to_string());
}

TEST_CASE("contiguous groups: planted bugs in the offsets, the row limit and the walk are caught") {
  const Schedule s = tutorial_schedule(8, contiguous(4, 512, 128, 256));
  const Kernel good = lowered_on(s, 2);
  SimulateOptions o;
  o.group_offsets = offsets_of({100, 0, 130, 64}, 10);
  REQUIRE(simulate_kernel(good, s.definition(), o).passed);
  REQUIRE(sync_error(good).empty());
  // The store's row limit one tile late: a group's last tile writes the next group's first rows.
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "group_end", good.plan.tile_m), s.definition(), o).passed);
  // A group's rows read from the row before: the tile loads and stores another group's rows.
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "group_row0", -1), s.definition(), o).passed);
  CHECK_FALSE(simulate_kernel(with_producer_walk_shifted(good), s.definition(), o).passed);
}

TEST_CASE("contiguous groups: what is not lowered says so; the text form round-trips the source") {
  const Definition def = contiguous(4, 256, 256, 128);
  check_error([&] { lower(tutorial_schedule(5, def)); }, "not-lowered",
              "contiguous groups on a grid of tiles (the units' count follows the groups' offsets; persist the tile loop)");
  check_error([&] { lower(tutorial_schedule(10, def)); }, "not-lowered", "contiguous groups with B multicast");
  check_error([&] { lower(tutorial_schedule(8, def).split_k(2, true)); }, "not-lowered",
              "contiguous groups with split_k ... tail");
  ProblemLayout grouped = problem_layout(def);
  check_error([&] { lower(tutorial_schedule(8, make_definition(256, 256, 128, DType::BF16, DType::BF16, {}, grouped,
                                                                true))); },
              "not-lowered",
              "contiguous groups in the swapped orientation (the groups' rows would be the kernel's columns)");
  const std::string text = print_schedule(tutorial_schedule(7, def));
  CHECK(text.find("source=contiguous") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE(file.problem.source);
  CHECK(*file.problem.source == ProblemSource::Contiguous);
}
