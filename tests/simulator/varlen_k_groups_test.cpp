// Variable-K groups (QuACK's varlen_k, MoE weight gradients): D[g] = A[k range g]^T B[k range g]
// over one A [K, M] and B [K, N] (MN-major: the tokens are their rows), the ranges read by the
// kernel from a device array. The simulator runs each kernel family with empty ranges (zeros
// stored), one-row ranges, ranges ending mid-tile and whole tiles; planted bugs in the range's
// start and end and in the running pipeline count across units with no k tiles are caught.
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

Definition varlen_k(int64_t groups, int64_t m, int64_t n, int64_t k) {
  ProblemLayout l;
  l.a = Layout::MNMajor;
  l.b = Layout::MNMajor;
  l.batch = groups;
  l.source = ProblemSource::VarlenK;
  return make_definition(m, n, k, DType::BF16, DType::BF16, {}, l);
}

}  // namespace

TEST_CASE("variable-K groups: every kernel family computes each group's range, zeros for an empty one") {
  struct Case {
    std::string what;
    Schedule s;
  };
  const Definition def = varlen_k(5, 256, 256, 512);
  std::vector<Case> cases = {
      {"v5 (a grid of tiles)", tutorial_schedule(5, def)},
      {"v7 (warp-specialized, persistent)", tutorial_schedule(7, def)},
      {"v8", tutorial_schedule(8, def)},
      {"v10 (B multicast)", tutorial_schedule(10, def)},
      {"ping-pong", ping_pong_schedule(def)},
      {"auto", plan_gemm(256, 256, 512, [] {
         GemmOptions o;
         o.layout.a = Layout::MNMajor;
         o.layout.b = Layout::MNMajor;
         o.layout.batch = 5;
         o.layout.source = ProblemSource::VarlenK;
         return o;
       }()).build()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Kernel k = lowered_on(c.s, 3);
    REQUIRE(k.plan.varlen_k);
    for (const std::vector<int64_t>& offsets :
         {offsets_of({0, 1, 63, 200, 248}), offsets_of({64, 0, 0, 129, 300}, 7), std::vector<int64_t>(6, 100)}) {
      SimulateOptions o;
      o.group_offsets = offsets;
      const SimulationReport r = simulate_kernel(k, c.s.definition(), o);
      CHECK_MESSAGE(r.passed, r.to_string());
    }
  }
}

TEST_CASE("variable-K groups: bad offsets on the device are clamped to 0..K and a range ending before it starts is empty") {
  const Schedule s = tutorial_schedule(8, varlen_k(4, 128, 128, 256));
  const Kernel k = lowered_on(s, 2);
  SimulateOptions o;
  o.group_offsets = {-10, 100, 90, 300, 20};  // 0..100, empty, 90..256, empty
  const SimulationReport r = simulate_kernel(k, s.definition(), o);
  CHECK_MESSAGE(r.passed, r.to_string());
}

TEST_CASE("variable-K groups: planted bugs in the range and the running pipeline count are caught") {
  const Schedule s = tutorial_schedule(8, varlen_k(4, 128, 256, 512));
  const Kernel good = lowered_on(s, 2);
  SimulateOptions o;
  o.group_offsets = offsets_of({100, 0, 130, 64}, 10);
  REQUIRE(simulate_kernel(good, s.definition(), o).passed);
  REQUIRE(sync_error(good).empty());
  // The range's end a row late, or its start a row early: a neighbour's row of K joins the product.
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "k_end", 1), s.definition(), o).passed);
  CHECK_FALSE(simulate_kernel(with_let_shifted(good, "k_row0", -1), s.definition(), o).passed);
  CHECK_FALSE(simulate_kernel(with_pipeline_state_skipped(good), s.definition(), o).passed);
}

TEST_CASE("variable-K groups: what is not lowered says so; the text form round-trips the source") {
  ProblemLayout k_major;
  k_major.batch = 3;
  k_major.source = ProblemSource::VarlenK;
  check_error([&] { lower(tutorial_schedule(8, make_definition(128, 128, 256, DType::BF16, DType::BF16, {}, k_major))); },
              "not-lowered", "variable-K groups with a K-major operand ('A'");
  const Definition def = varlen_k(3, 128, 128, 256);
  check_error([&] { lower(tutorial_schedule(8, def).split_k(2)); }, "not-lowered", "variable-K groups with split_k");
  {  // sm_100a lowers it: a range with no K stores zeros instead of TMEM it never wrote
    const Schedule on_sm100 = tutorial_schedule(8, varlen_k(4, 128, 128, 256), Target::Sm100a);
    SimulateOptions o;
    o.group_offsets = offsets_of({100, 0, 130, 26});
    const SimulationReport r = simulate_kernel(lowered_on(on_sm100, 2), on_sm100.definition(), o);
    CHECK_MESSAGE(r.passed, r.to_string());
  }
  check_error([&] { lower(tutorial_schedule(3, def)); }, "not-lowered", "variable-K groups with synchronous copies");
  // v5 with K in one tile and its k tile axis left unbound: no k loop for a group's range to run.
  std::vector<Directive> one_k_tile;
  const Schedule v5 = tutorial_schedule(5, varlen_k(3, 128, 128, 64));
  for (const Directive& d : v5.directives())
    if (!std::holds_alternative<BindD>(d) || std::get<BindD>(d).axis != "k_o")
      if (!std::holds_alternative<CircularBufferD>(d)) one_k_tile.push_back(d);
  check_error([&] { lower(apply_directives(varlen_k(3, 128, 128, 64), one_k_tile)); }, "not-lowered",
              "variable-K groups with K in one tile (each group runs its own k loop; split k into k tiles)");
  ProblemLayout swapped_layout_k = problem_layout(def);
  check_error([&] { lower(tutorial_schedule(8, make_definition(128, 128, 256, DType::BF16, DType::BF16, {},
                                                                swapped_layout_k, true))); },
              "not-lowered", "variable-K groups in the swapped orientation");
  const std::string text = print_schedule(tutorial_schedule(7, def));
  CHECK(text.find("source=varlen_k") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE(file.problem.source);
  CHECK(*file.problem.source == ProblemSource::VarlenK);
}
