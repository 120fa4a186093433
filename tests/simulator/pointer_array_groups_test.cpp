// Pointer-array groups (CUTLASS's ptr-array grouped GEMM): every group its own A, B and D, M, N
// and K, read by the kernel from device arrays, its boxes through its own tensor maps. The
// simulator runs each kernel family with empty groups (no rows, no columns, no K), groups
// smaller than a tile and ragged ones; planted bugs in the group a box's map comes from, the
// maps' acquire, the group's sizes and the running pipeline count are caught.
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

Definition pointer_array(int64_t groups, int64_t m, int64_t n, int64_t k, ProblemLayout l = {}) {
  l.batch = groups;
  l.source = ProblemSource::PointerArray;
  return make_definition(m, n, k, DType::BF16, DType::BF16, {}, l);
}

// M, N, K of 5 groups: full, no rows, one row and column, no K, ragged.
const std::vector<int64_t> kRagged = {256, 256, 256, 0, 128, 64, 1, 8, 1, 130, 200, 0, 77, 136, 100};

}  // namespace

TEST_CASE("pointer-array groups: every kernel family computes each group's own sizes, nothing past them") {
  struct Case {
    std::string what;
    Schedule s;
  };
  ProblemLayout mn_major;
  mn_major.a = Layout::MNMajor;
  mn_major.b = Layout::MNMajor;
  const Definition def = pointer_array(5, 256, 256, 256);
  std::vector<Case> cases = {
      {"v6", tutorial_schedule(6, def)},
      {"v8", tutorial_schedule(8, def)},
      {"v9 without its cluster", without_cluster(tutorial_schedule(9, def))},
      {"v8, A and B MN-major", tutorial_schedule(8, pointer_array(5, 256, 256, 256, mn_major))},
      {"v8 on sm_100a (TMEM: a group with no K stores zeros, not what an earlier unit left)",
       tutorial_schedule(8, def, Target::Sm100a)},
      {"auto", plan_gemm(256, 256, 256, [] {
         GemmOptions o;
         o.layout.batch = 5;
         o.layout.source = ProblemSource::PointerArray;
         return o;
       }()).build()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Kernel k = lowered_on(c.s, 3);
    REQUIRE(k.plan.pointer_array);
    for (const std::vector<int64_t>& sizes : {kRagged, std::vector<int64_t>{}}) {
      SimulateOptions o;
      o.group_sizes = sizes;
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, r.to_string());
    }
  }
}

TEST_CASE("pointer-array groups: planted bugs in the maps' group, their acquire, the sizes and the running count are caught") {
  const Schedule s = tutorial_schedule(8, pointer_array(4, 256, 256, 256));
  const Kernel good = lowered_on(s, 2);
  SimulateOptions o;
  o.group_sizes = {256, 256, 256, 100, 128, 64, 0, 64, 64, 200, 256, 0};
  REQUIRE(simulate_kernel(good, s.definition(), o).passed);
  REQUIRE(sync_error(good).empty());
  // A's boxes through the next group's map: another group's operand in the product.
  Kernel next_group = good;
  Plant shift(rewrite<TmaLoad>([](TmaLoad& l) { l.group = (l.group + imm(1)) % imm(4); },
                               [](const TmaLoad& l) { return l.group && l.map == rt::Operand::A; }));
  next_group.body = shift.mutate(next_group.body);
  REQUIRE(shift.planted > 0);
  CHECK_FALSE(simulate_kernel(next_group, s.definition(), o).passed);
  // No acquire: the maps the builder wrote may not be visible to the TMA unit.
  Kernel unfenced = good;
  Plant drop([](const StmtPtr& n) -> std::optional<StmtPtr> {
    if (as<AcquireGroupMaps>(n)) return block({});
    return std::nullopt;
  });
  unfenced.body = drop.mutate(unfenced.body);
  REQUIRE(drop.planted > 0);
  const SimulationReport r = simulate_kernel(unfenced, s.definition(), o);
  CHECK_FALSE(r.passed);
  CHECK(r.to_string().find("before the warp acquired the group's maps") != std::string::npos);
  // A group's k tiles one short: its last rows of K left out of the product.
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "k_tiles", -1), s.definition(), o).passed);
  CHECK_FALSE(simulate_kernel(with_pipeline_state_skipped(good), s.definition(), o).passed);
  // A store without its own acquire of the group's D map.
  Kernel store_unfenced = good;
  Plant drop_store([](const StmtPtr& n) -> std::optional<StmtPtr> {
    const auto* a = as<AcquireGroupMaps>(n);
    if (a && a->operand) return block({});
    return std::nullopt;
  });
  store_unfenced.body = drop_store.mutate(store_unfenced.body);
  REQUIRE(drop_store.planted > 0);
  CHECK_FALSE(simulate_kernel(store_unfenced, s.definition(), o).passed);
}

TEST_CASE("pointer-array groups: a negative size on the device reads as 0 (the documented behaviour of a bad array)") {
  const Schedule s = tutorial_schedule(8, pointer_array(3, 256, 256, 256));
  const Kernel k = lowered_on(s, 2);
  SimulateOptions o;
  o.group_sizes = {-5, 256, 256, 200, -1, 256, 100, 64, -300};  // no rows; no columns; no K (zeros stored)
  const SimulationReport r = simulate_kernel(k, s.definition(), o);
  CHECK_MESSAGE(r.passed, r.to_string());
}

TEST_CASE("pointer-array groups: a group whose N ends mid 16-byte piece is the simulator's error, as on the hardware") {
  const Schedule s = tutorial_schedule(8, pointer_array(2, 256, 256, 256));
  SimulateOptions o;
  o.group_sizes = {256, 256, 256, 128, 100, 64};  // 100 bf16 columns: 200-byte rows
  const SimulationReport r = simulate_kernel(lowered_on(s, 2), s.definition(), o);
  CHECK_FALSE(r.passed);
  CHECK(r.to_string().find("through a map of 100 columns, rows of 200 bytes: the hardware writes a row's last 16-byte "
                           "piece whole") != std::string::npos);
}

TEST_CASE("pointer-array and variable-K groups on sm_100a: a unit with no k tiles stores zeros, not stale TMEM") {
  const Schedule s = tutorial_schedule(8, pointer_array(4, 256, 256, 256), Target::Sm100a);
  const Kernel good = lowered_on(s, 2);
  SimulateOptions o;
  o.group_sizes = {256, 256, 256, 200, 256, 0, 128, 128, 64, 256, 256, 0};  // two groups with no K
  REQUIRE(simulate_kernel(good, s.definition(), o).passed);
  // Without the zeroing the unit reads what the CTA's earlier unit left in TMEM.
  Kernel stale = good;
  Plant keep(rewrite<TmemLoad>([](TmemLoad& l) { l.zero_when = nullptr; }, [](const TmemLoad& l) { return l.zero_when != nullptr; }));
  stale.body = keep.mutate(stale.body);
  REQUIRE(keep.planted > 0);
  CHECK_FALSE(simulate_kernel(stale, s.definition(), o).passed);
}

TEST_CASE("pointer-array groups: what is not lowered says so; the text form round-trips the source") {
  const Definition def = pointer_array(3, 128, 128, 256);
  check_error([&] { lower(tutorial_schedule(5, def)); }, "not-lowered",
              "pointer-array groups on a grid of tiles (the units' count follows the groups' sizes; persist the tile loop)");
  check_error([&] { lower(tutorial_schedule(10, def)); }, "not-lowered", "pointer-array groups in a cluster");
  check_error([&] { lower(ping_pong_schedule(def)); }, "not-lowered", "pointer-array groups with ping-pong consumers");
  check_error([&] { lower(tutorial_schedule(8, def).split_k(2)); }, "not-lowered", "pointer-array groups with split_k");
  ProblemLayout column_major = problem_layout(def);
  column_major.d = OutputLayout::ColumnMajor;
  check_error([&] { lower(tutorial_schedule(8, make_definition(128, 128, 256, DType::BF16, DType::BF16, {}, column_major))); },
              "not-lowered", "pointer-array groups with a column-major D");
  check_error([&] { lower(tutorial_schedule(8, make_definition(128, 128, 256, DType::BF16, DType::BF16, {},
                                                                problem_layout(def), true))); },
              "not-lowered", "pointer-array groups in the swapped orientation");
  const std::string text = print_schedule(tutorial_schedule(8, def));
  CHECK(text.find("source=pointer_array") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE(file.problem.source);
  CHECK(*file.problem.source == ProblemSource::PointerArray);
}
