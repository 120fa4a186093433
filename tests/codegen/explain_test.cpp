#include <doctest/doctest.h>

#include "codegen/explain.h"
#include "codegen/analyze_schedule.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

Definition gemm(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::BF16); }

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

const NestLoop& loop(const NestNode& n) {
  REQUIRE(std::holds_alternative<NestLoop>(n.item));
  return std::get<NestLoop>(n.item);
}

}  // namespace

TEST_CASE("v5: one nest of grid loops around the pipelined k loop, the epilogue after it") {
  LoopNests nests = analyze_schedule(tutorial_schedule(5, gemm(8192, 8192, 8192))).nests;
  CHECK(nests.tile_m == 128);
  REQUIRE(nests.roles.size() == 1);
  const RoleNest& all = nests.roles[0];
  CHECK(all.shape.name == "all");
  CHECK(all.shape.threads() == 128);
  REQUIRE(all.body.size() == 1);
  const NestNode& m_o = all.body[0];
  CHECK(loop(m_o).axes == std::vector<std::string>{"m_o"});
  CHECK(loop(m_o).binding == Binding::BlockY);
  const NestNode& n_o = m_o.body.at(0);
  CHECK(loop(n_o).binding == Binding::BlockX);
  REQUIRE(n_o.body.size() == 2);
  const NestNode& k_o = n_o.body[0];
  CHECK(loop(k_o).binding == Binding::Serial);
  REQUIRE(loop(k_o).pipeline.has_value());
  CHECK(loop(k_o).pipeline->stages == 2);
  REQUIRE(k_o.body.size() == 3);
  const auto& a = std::get<LoadStmt>(k_o.body[0].item);
  CHECK(a.tensor == "A");
  CHECK(a.index == std::vector<std::string>{"m_o", "k_o"});
  CHECK(a.method == CopyMethod::Tma);
  CHECK(a.stage_index == "k_o % 2");
  const auto& mma = std::get<MmaStmt>(k_o.body[2].item);
  CHECK(mma.rep_m == 2);
  CHECK(mma.rep_n == 1);
  CHECK(mma.rep_k == 4);
  const auto& epi = std::get<EpilogueStmt>(n_o.body[1].item);
  CHECK(epi.staged);
  CHECK(epi.store == CopyMethod::Tma);
  CHECK(epi.index == std::vector<std::string>{"m_o", "n_o"});
  CHECK(print_nest_node(k_o.body[2]) == "mma m64n128k16 x (2 m x 1 n x 4 k) -> acc fp32 in registers");
  CHECK(print_nest_node(n_o.body[1]) == "epilogue cast (-> bf16): registers -> smem staging -> TMA store cast[m_o, n_o]");
}

TEST_CASE("v10: separate producer and consumer nests; the producer merges the tile and k loops") {
  LoopNests nests = analyze_schedule(tutorial_schedule(10, gemm(8192, 8192, 8192))).nests;
  REQUIRE(nests.roles.size() == 2);
  const RoleNest& producer = nests.roles[0];
  const RoleNest& consumer = nests.roles[1];
  CHECK(producer.shape.name == "producer");
  CHECK(producer.shape.declared);
  CHECK(producer.shape.regs == 40);
  REQUIRE(producer.body.size() == 1);
  const NestLoop& stream = loop(producer.body[0]);
  CHECK(stream.axes == std::vector<std::string>{"tile", "k_o"});
  CHECK(stream.extent() == 2048 * 128);  // 128x256 tiles
  CHECK(stream.pipeline->stages == 4);
  REQUIRE(producer.body[0].body.size() == 2);
  const auto& b = std::get<LoadStmt>(producer.body[0].body[1].item);
  CHECK(b.index == std::vector<std::string>{"tile.n", "k_o"});
  CHECK(b.multicast_ctas == 2);

  CHECK(consumer.shape.name == "consumer");
  CHECK(consumer.shape.warpgroups == 2);
  CHECK(consumer.shape.threads() == 256);
  const NestNode& tiles = consumer.body.at(0);
  CHECK(loop(tiles).binding == Binding::Persistent);
  REQUIRE(tiles.body.size() == 2);  // the k loop, then the epilogue: kept apart
  const NestNode& k = tiles.body[0];
  CHECK(loop(k).axes == std::vector<std::string>{"k_o"});
  REQUIRE(k.body.size() == 1);
  const auto& mma = std::get<MmaStmt>(k.body[0].item);
  CHECK(mma.warpgroups == 2);
  CHECK(mma.tile_m == 64);
  CHECK(mma.rep_m == 1);
  CHECK(std::holds_alternative<EpilogueStmt>(tiles.body[1].item));
}

TEST_CASE("explain shows each directive's change as a diff, then resources and the check") {
  std::string text = explain(tutorial_schedule(7, gemm(8192, 8192, 8192)));
  CHECK(contains(text, "problem M=8192 N=8192 K=8192, bf16 -> bf16"));
  CHECK(contains(text, "[0] no directives"));
  CHECK(contains(text, "[4] bind k_o serial\n"));
  CHECK(contains(text, "-         k_o = 0  (unbound: only tile 0 of 128 runs)\n+         for k_o in [0, 128) serial\n"));
  CHECK(contains(text, "[12] warp_specialize 40 232\n"));
  CHECK(contains(text, "+   producer: 1 warpgroup(s), 128 threads, setmaxnreg 40"));
  CHECK(contains(text, "+   consumer: 1 warpgroup(s), 128 threads, setmaxnreg 232"));
  CHECK(contains(text, "shared memory: 99360 B of 232448"));
  CHECK(contains(text, "check: ok on H100 (sm_90a)\nlowers: yes, to kernel gg_gemm_90a_128x128x64_s"));
}

// A legal schedule can still be one the code generator refuses: explain says which, where it
// used to end at "check: ok" for a schedule that `emit` then refused.
TEST_CASE("explain says whether a legal schedule lowers, and why not") {
  Schedule s = tutorial_schedule(5, gemm(1024, 1024, 1024));
  s.cluster(1, 2, 1).multicast("B");
  std::string text = explain(s);
  CHECK(contains(text, "check: ok on H100 (sm_90a)\nlowers: no, error[not-lowered]: a cluster without warp_specialize "
                       "is recorded and checked"));
}

TEST_CASE("explain of an illegal schedule still explains, and reports the rule") {
  std::string text = explain(tutorial_schedule(1, gemm(8192, 8192, 8192)));
  CHECK(contains(text, "m_o = 0  (unbound: only tile 0 of 64 runs)"));
  CHECK(contains(text, "check: error[coverage]: m_o: the schedule covers one 128-row tile of M=8192"));
}

TEST_CASE("explain without steps prints the directives and the final nests") {
  ExplainOptions o;
  o.steps = false;
  std::string text = explain(tutorial_schedule(3, gemm(1024, 1024, 1024)), o);
  CHECK_FALSE(contains(text, "[1] "));
  CHECK(contains(text, "directives:\n  tile 128 128 64\n"));
  CHECK(contains(text, "loop nests:\n  kernel sm_90a, tile 128 x 128 x 64\n"));
  CHECK(contains(text, "parallel m_o in [0, 8) -> block.y"));
}

TEST_CASE("explain_diff names the added directives and the changed nests and resources") {
  Definition def = gemm(8192, 8192, 8192);
  std::string text = explain_diff(tutorial_schedule(4, def), tutorial_schedule(5, def));
  CHECK(contains(text, "directives (+ in b only, - in a only):\n  + circular_buffer k_o 2 1\n"));
  CHECK(contains(text, "+           load A[m_o, k_o] 128 x 64 -> smem stage k_o % 2 (TMA)"));
  CHECK(contains(text, "\n-   tile 128 x 128 x 64, 1 stage(s)\n"));
  CHECK(contains(text, "\n+   tile 128 x 128 x 64, 2 stage(s)\n"));
  CHECK(contains(text, "\n+   shared memory: 99344 B of 232448 (43%)\n"));
  std::string back = explain_diff(tutorial_schedule(5, def), tutorial_schedule(4, def));
  CHECK(contains(back, "  - circular_buffer k_o 2 1\n"));
  std::string same = explain_diff(tutorial_schedule(5, def), tutorial_schedule(5, def));
  CHECK(contains(same, "(the same directives)"));
  CHECK(contains(same, "(unchanged)"));
}

TEST_CASE("line_diff keeps common lines and marks the rest") {
  CHECK(line_diff("a\nb\nc\n", "a\nx\nc\n") == "  a\n- b\n+ x\n  c\n");
  CHECK(line_diff("", "a\n") == "+ a\n");
  CHECK(line_diff("a\n", "") == "- a\n");
}

TEST_CASE("every tutorial step explains on both targets, at any size") {
  for (Target t : {Target::Sm90a, Target::Sm100a})
    for (int v = 1; v <= kTutorialSteps; ++v) {
      CAPTURE(v);
      CHECK_FALSE(explain(tutorial_schedule(v, gemm(256, 384, 192), t)).empty());
    }
}
