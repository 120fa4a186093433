// Block-scaled FP8 on sm_100a (DeepGEMM's SM100 1D1D recipe): e4m3/e5m2 operands with UE8M0
// factors per row and 128 of K for both A and B, staged by TMA beside the operands in their atoms,
// copied into TMEM by the issuing thread (tcgen05.cp .32x128b.warpx4) and applied by the
// block-scaled tcgen05.mma (kind::mxf8f6f4) itself: no promotion. v9 and v10 run it over the CTA
// pair (m256, cta_group::2: each CTA's TMEM gets its own rows' factors of A and all of B's). No Blackwell GPU has run these
// kernels: the simulator runs them bit-exactly against the host reference on exact data (small
// integers, power-of-two factors; the hardware's internal rounding is not modeled), check_sync
// proves their pipelines, planted bugs are caught by meaning, and nvcc compiles them for sm_100a
// without a spill.
#include <doctest/doctest.h>

#include <iostream>
#include <string>
#include <vector>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "nvcc_compile.h"
#include "planted_bugs.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "sim_limits.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::drop;
using gg::testing::on_b200;
using gg::testing::plant_into;
using gg::testing::rewrite;
using gg::testing::sync_error;
using gg::testing::Verdict;

namespace {

Definition fp8(int64_t m, int64_t n, int64_t k, int64_t batch = 1, ProblemSource source = ProblemSource::Dense,
               DType in = DType::E4M3, DType out = DType::BF16) {
  ProblemLayout l;
  l.batch = batch;
  l.source = source;
  l.scale_a = l.scale_b = ScaleGranularity::Block1x128;
  l.scale_a_format = l.scale_b_format = ScaleFormat::Ue8m0;
  return make_definition(m, n, k, in, out, {}, l);
}

SimulationReport simulated(const Kernel& k, const Definition& def, uint64_t seed = 1, SimulateOptions o = {}) {
  o.seed = seed;
  o.max_steps = 5'000'000;
  return simulate_kernel(k, def, o);
}

Schedule step(int version, const Definition& def) { return tutorial_schedule(version, def, Target::Sm100a); }
Schedule pingpong(const Definition& def) { return ping_pong_schedule(def, Target::Sm100a); }

// Ping-pong consumer c's factor columns are its own set (column0 + c x set); this plant gives
// every consumer the first set, in its copies and its MMAs alike.
gg::testing::Plant::Fn first_set_for_every_consumer() {
  const auto first = [](const ExprPtr& e) { return substitute(e, "consumer", imm(0)); };
  return gg::testing::either(rewrite<Tcgen05Copy>([=](Tcgen05Copy& c) { c.column = first(c.column); }),
                             rewrite<Tcgen05Mma>([=](Tcgen05Mma& m) {
                               m.scale_a_column = first(m.scale_a_column);
                               m.scale_b_column = first(m.scale_b_column);
                             }));
}

void check_exact(const Schedule& s, const Definition& def, int sms, SimulateOptions o = {}) {
  const Kernel k = lower(s, on_b200(sms));
  REQUIRE(k.plan.fp8.block_scaled);
  CHECK(sync_error(k).empty());
  for (uint64_t seed : {1, 2}) {
    const SimulationReport r = simulated(k, def, seed, o);
    CAPTURE(r.to_string());
    CHECK(r.passed);
    CHECK(r.tcgen05_mmas > 0);
  }
}

}  // namespace

TEST_CASE("sm_100a FP8: the tutorial steps with UE8M0 factors, bit-exact on edge shapes") {
  struct Case {
    int64_t m, n, k;
    int sms;
  };
  // One k tile, k groups of 4 blocks and a partial one (K = 640, 1008), ragged M and N, M = 1,
  // persistent CTAs over several tiles.
  for (const Case& c : {Case{256, 256, 640, 2}, Case{200, 300, 1008, 2}, Case{1, 128, 128, 1}, Case{129, 136, 528, 1}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    const Definition def = fp8(c.m, c.n, c.k);
    for (int v : {4, 6, 8, 9, 10}) {
      CAPTURE(v);
      check_exact(step(v, def), def, c.sms);
    }
    check_exact(pingpong(def), def, c.sms);
  }
  // e5m2 and an f32 output.
  const Definition e5m2 = fp8(256, 128, 512, 1, ProblemSource::Dense, DType::E5M2, DType::F32);
  check_exact(step(8, e5m2), e5m2, 1);
}

TEST_CASE("sm_100a FP8: batches, masked groups and split-K, bit-exact") {
  SUBCASE("a batch of 2, ragged") {
    const Definition def = fp8(129, 136, 528, 2);
    check_exact(step(8, def), def, 2);
    check_exact(step(10, def), def, 2);
  }
  SUBCASE("masked groups: empty, ragged and full") {
    const Definition def = fp8(300, 256, 384, 3, ProblemSource::Masked);
    SimulateOptions o;
    o.group_rows = {100, 0, 300};
    check_exact(step(8, def), def, 2, o);
  }
  SUBCASE("split-K over 2 CTAs a tile, and on the last wave") {
    const Definition def = fp8(256, 256, 1024);
    Schedule every = step(8, def);
    every.split_k(2);
    check_exact(every, def, 2);
    Schedule tail = step(10, def);
    tail.split_k(2, true);
    check_exact(tail, def, 3);
  }
}

TEST_CASE("sm_100a FP8: the plan, explain and what is refused") {
  const Definition def = fp8(4096, 4096, 4096);
  const Kernel k = lower(step(8, def), on_b200(148));
  CHECK(k.plan.mma.m == 128);
  CHECK(k.plan.tile_n == 128);
  // 128 accumulator columns, then A's atom's 4 factor columns and B's 4.
  CHECK(k.plan.tmem_scale_column0 == 128);
  CHECK(k.plan.tmem_columns == 256);
  ExplainOptions eo;
  eo.limits = on_b200(148).limits;
  const std::string text = explain(step(8, def), eo);
  CHECK(text.find("136 fp32 columns (allocating 256)") != std::string::npos);
  CHECK(text.find("8 of them the k tile's UE8M0 scale factors (tcgen05.cp)") != std::string::npos);
  CHECK(text.find("A per 1x128 (UE8M0 atoms): staged by TMA beside A, copied into TMEM (tcgen05.cp) before each k "
                  "tile's block-scaled MMAs, which apply them") != std::string::npos);
  // v9 and v10 run the m256 block-scaled MMA over the CTA pair: each CTA its own rows' factors and
  // all of B's (v10: two 128-column accumulator buffers, then A's 4 and B's 4 factor columns).
  const Kernel pair = lower(step(10, def), on_b200(148));
  CHECK(pair.plan.cta_pair);
  CHECK(pair.plan.mma.m == 256);
  CHECK(pair.plan.tmem_scale_column0 == 256);
  CHECK(pair.plan.tmem_columns == 512);
  const std::string pair_text = explain(step(10, def), eo);
  CHECK(pair_text.find("264 fp32 columns (allocating 512)") != std::string::npos);
  // Ping-pong consumers each issue their own MMAs, so each has its own factor columns.
  const Kernel pp = lower(pingpong(def), on_b200(148));
  CHECK(pp.plan.tmem_scale_column0 == 256);
  const auto refused = [&](const Definition& d, int version, const std::string& why) {
    CAPTURE(why);
    try {
      lower(step(version, d), on_b200(148));
      FAIL("lowered");
    } catch (const CompileError& e) {
      CHECK(e.rule() == "not-lowered");
      CHECK(e.message().find(why) != std::string::npos);
    }
  };
  ProblemLayout fp32_factors;
  fp32_factors.scale_a = ScaleGranularity::Block1x128;
  fp32_factors.scale_b = ScaleGranularity::Block128x128;
  refused(make_definition(4096, 4096, 4096, DType::E4M3, DType::BF16, {}, fp32_factors), 8,
          "e4m3 operands on sm_100a with A's factors per 1x128 in fp32 (the block-scaled tcgen05.mma takes UE8M0 "
          "factors of both operands per 1x128 in their atoms: --scale-a 1x128:ue8m0 --scale-b 1x128:ue8m0)");
  refused(fp8(4096, 4096, 4096, 4, ProblemSource::Contiguous), 8,
          "e4m3 operands on sm_100a with contiguous, variable-K or pointer-array groups");
}

TEST_CASE("sm_100a FP8: planted bugs in the factors' copies are caught by meaning") {
  const Definition def = fp8(256, 256, 640);
  struct Bug {
    std::string name;
    Schedule schedule;
    gg::testing::Plant::Fn plant;
    std::string sync_says, sim_says;  // what check_sync's and the simulator's reports contain ("": passes)
  };
  const std::vector<Bug> bugs = {
      // Every k tile's MMAs read byte 0 of the factor words: the first k block's factors of the atom.
      {"the k block's factors taken from byte 0", step(8, def),
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.scale_id = imm(0); }), "", "mismatch"},
      // No copy: the MMAs read factor columns nothing wrote.
      {"no tcgen05.cp", step(8, def), drop<Tcgen05Copy>(), "", "which no tcgen05.cp wrote"},
      // B's factors read from A's columns.
      {"B's factors from A's columns", step(8, def),
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.scale_b_column = m.scale_a_column; }), "", "mismatch"},
      // The copy reads the next stage, which this thread does not hold.
      {"the factors of the next stage", step(8, def),
       rewrite<Tcgen05Copy>([](Tcgen05Copy& c) { c.src.offset = c.src.offset + imm(512); }),
       "without holding full_bar[1]", "mismatch"},
      // The pair's copies as one CTA's: the odd CTA's TMEM never gets its rows' (and B's) factors.
      {"the pair's tcgen05.cp as one CTA's", step(10, def),
       rewrite<Tcgen05Copy>([](Tcgen05Copy& c) { c.pair = false; }), "",
       "of the pair's odd CTA, which no tcgen05.cp wrote"},
      // Both ping-pong consumers' copies into one set of columns: one thread's copy overwrites the
      // factors the other's MMAs still read (two threads' tcgen05 operations run in no order).
      {"ping-pong consumers sharing factor columns", pingpong(def),
       first_set_for_every_consumer(), "", "tcgen05 operations of two threads run in no order"},
  };
  for (const Bug& bug : bugs) {
    CAPTURE(bug.name);
    const Kernel good = lower(bug.schedule, on_b200(1));
    REQUIRE(simulated(good, def).passed);
    REQUIRE(sync_error(good).empty());
    const Verdict v = plant_into(good, def, bug.plant);
    CAPTURE(v.sync);
    CAPTURE(v.sim.to_string());
    if (bug.sync_says.empty()) CHECK(v.sync.empty());
    else CHECK(v.sync.find(bug.sync_says) != std::string::npos);
    // A race shows with some interleavings: the first of three seeds that fails says what it found.
    std::string sim = v.sim.to_string();
    for (uint64_t seed = 2; seed <= 4 && sim.find(bug.sim_says) == std::string::npos; ++seed) {
      Kernel k = good;
      gg::testing::Plant p(bug.plant);
      k.body = p.mutate(k.body);
      sim = simulated(k, def, seed).to_string();
    }
    CHECK(sim.find(bug.sim_says) != std::string::npos);
    const size_t error = sim.find("error: ");
    std::cout << bug.name << "\n  simulator: " << (error == std::string::npos ? sim.substr(0, 200) : sim.substr(error, 200))
              << "\n";
  }
}

TEST_CASE("sm_100a FP8: the kernels compile for sm_100a without spills") {
  std::vector<std::string> sources;
  for (const Definition& def : {fp8(4096, 4096, 4096), fp8(4000, 3000, 1024, 1, ProblemSource::Dense, DType::E5M2,
                                                             DType::F32)})
    for (const Schedule& s : {step(8, def), step(10, def), pingpong(def)}) {
      const EmittedKernel e = emit_cuda(s, on_b200(148));
      CHECK(e.source.find("tcgen05_mma_mxf8f6f4") != std::string::npos);
      CHECK(e.source.find("tcgen05_cp_32x128b_warpx4") != std::string::npos);
      sources.push_back(e.source);
    }
  test::check_compiles_clean("100a", GEMMGEN_NVCC, sources, "fp8_block_scaled");
}

TEST_CASE("sm_100a FP8: the planner's `auto` takes the block-scaled MMA (m128), simulated exactly") {
  GemmOptions o;
  o.in = DType::E4M3;
  o.out = DType::BF16;
  o.target = Target::Sm100a;
  o.layout.scale_a = o.layout.scale_b = ScaleGranularity::Block1x128;
  o.layout.scale_a_format = o.layout.scale_b_format = ScaleFormat::Ue8m0;
  // Candidates are lowered for the target they run on, so auto's plan is one of its own configs.
  const GemmPlan big = plan_gemm(4096, 4096, 4096, o);
  CHECK(big.source == PlanSource::Auto);
  const Kernel k = lower(big.build(), on_b200(148));
  CHECK(k.plan.fp8.block_scaled);
  CHECK(k.plan.mma.m == 128);
  // A small one, simulated (persistent CTAs over several tiles).
  const GemmPlan small = plan_gemm(384, 256, 640, o);
  REQUIRE(small.source == PlanSource::Auto);
  check_exact(small.build(), small.def, 2);
}
