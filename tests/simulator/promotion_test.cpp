// 16-bit operands with an f32 output, promoted: each interval of K's MMAs accumulate apart and are
// added into the fp32 accumulator (WGMMA's own fp32 accumulation truncates, so `auto` promotes
// every 256 of K there). The simulator runs the kernels on small integers, exactly; bugs planted
// in the promotion are caught by the output.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "schedules/auto_schedule.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;

namespace {

Definition f32_out(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::F32); }

// v10's warp roles on a 128x128 tile (two consumers of 64 rows: one row block each).
Schedule two_consumers(const Definition& def, int64_t interval) {
  AutoParams p;
  p.tile_m = 128;
  p.tile_n = 128;
  p.stages = static_cast<int>(std::min<int64_t>(4, (def.k() + 63) / 64));
  p.cluster = 2;
  p.subtile_cols = 32;
  Schedule s = auto_schedule(def, p);  // promotes every 256 of K itself (K > 256)
  Schedule out(def);
  for (const Directive& d : s.directives())
    if (!std::holds_alternative<PromoteD>(d)) out.apply(d);
  out.promote(interval);
  return out;
}

}  // namespace

TEST_CASE("promotion of 16-bit operands: intervals of k tiles, waves, split-K and ping-pong simulate exactly") {
  struct Case {
    const char* what;
    Schedule s;
  };
  const Case cases[] = {
      // K = 904: 15 k tiles, the last interval three of four.
      {"every 4 k tiles, K not a multiple of the interval", two_consumers(f32_out(200, 264, 904), 256)},
      {"one interval longer than K (promoted after the unit's last k tile)", two_consumers(f32_out(130, 140, 192), 512)},
      {"every k tile", two_consumers(f32_out(200, 136, 320), 64)},
      {"v8: one consumer of two row blocks, promoted in waves", [] {
         Schedule s = tutorial_schedule(8, f32_out(200, 264, 448));
         s.promote(64);
         return s;
       }()},
      {"ping-pong: whole 128-row tiles, in waves", [] {
         Schedule s = ping_pong_schedule(f32_out(300, 200, 384));
         s.promote(64);
         return s;
       }()},
      {"split-K 3: each split's k range promoted on its own", [] {
         Schedule s = two_consumers(f32_out(130, 264, 1000), 256);
         s.split_k(3);
         return s;
       }()},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    const Kernel k = lower(c.s);
    CHECK(k.plan.promotion.on);
    const SimulationReport r = simulate(c.s);
    INFO(r.to_string());
    CHECK(r.passed);
  }
  // auto promotes an f32 output's long k loop, and nothing else.
  const auto auto_plan = [](int64_t m, int64_t n, int64_t k, DType out) {
    const Definition def = make_definition(m, n, k, DType::BF16, out);
    return lower(auto_schedule(def, choose_auto_params(def, hopper()))).plan.promotion;
  };
  CHECK(auto_plan(200, 300, 1000, DType::F32).on);
  CHECK_FALSE(auto_plan(200, 300, 256, DType::F32).on);
  CHECK_FALSE(auto_plan(200, 300, 1000, DType::BF16).on);
  // Past two waves of 128x256 tiles cuBLAS runs one chain too, and K <= 4096 keeps its error under
  // 5e-6: the wide tiles stay. Past K = 4096, or on few tiles, the promotion.
  CHECK_FALSE(auto_plan(4096, 4096, 4096, DType::F32).on);
  CHECK(auto_plan(4096, 4096, 4097 + 7, DType::F32).on);
  CHECK(auto_plan(2048, 2048, 2048, DType::F32).on);
  const Definition def = f32_out(200, 300, 1000);
  CHECK(simulate(auto_schedule(def, choose_auto_params(def, hopper()))).passed);
}

TEST_CASE("promotion of 16-bit operands: explain counts its registers and says why; the kernel adds without factors") {
  const Schedule s = two_consumers(f32_out(1024, 1024, 4096), 256);
  const std::string text = explain(s);
  CHECK(text.find("accumulator 128 fp32 regs/thread (64 of them the promotion's: every 256 of K accumulate apart, "
                  "then add in, which bounds the error of a long k loop's truncating fp32 accumulation)") !=
        std::string::npos);
  const std::string cu = emit_cuda(s).source;
  CHECK(cu.find("// promotion: acc += acc_k (rounded to nearest: the MMAs' own fp32 accumulation truncates)") !=
        std::string::npos);
  CHECK(cu.find("FP8 promotion") == std::string::npos);
  CHECK(cu.find("gg::dev::wgmma_wait_group<0>();") != std::string::npos);
}

TEST_CASE("promotion of 16-bit operands: planted bugs are caught by the simulator") {
  using namespace gg::kir;
  using gg::testing::drop;
  using gg::testing::rewrite;
  const Schedule s = two_consumers(f32_out(200, 264, 904), 256);
  const Kernel good = lower(s);
  const auto verdict = [&](const gg::testing::Plant::Fn& bug) {
    Kernel k = good;
    gg::testing::Plant plant(bug);
    k.body = plant.mutate(k.body);
    CHECK(plant.planted > 0);
    return simulate_kernel(k, s.definition());
  };
  SUBCASE("the unplanted kernel passes") { CHECK(simulate_kernel(good, s.definition()).passed); }
  SUBCASE("the promotion skipped") {
    const SimulationReport r = verdict(drop<PromoteAccumulator>());
    CHECK(r.mismatches > 0);
  }
  SUBCASE("an interval's first MMA adding to the previous interval's sums (promoted twice)") {
    const SimulationReport r = verdict(rewrite<WgmmaIssue>([](WgmmaIssue& n) { n.accumulate = nullptr; }));
    CHECK(r.mismatches > 0);
  }
  SUBCASE("the unit's last, partial interval never promoted") {
    // The promotion's guard without its `k_tile + 1 == k_tiles` half: K = 904's last three k tiles
    // stay in the promotion accumulator.
    const SimulationReport r = verdict(rewrite<If>(
        [](If& n) {
          // (k_tile % 4 + 1 == 4) + (k_tile + 1 == k_tiles) >= 1
          REQUIRE(n.cond->kind == ExprKind::Ge);
          REQUIRE(n.cond->a->kind == ExprKind::Add);
          n.cond = n.cond->a->a;
        },
        [](const If& n) { return n.then_body && n.then_body->kind == NodeKind::PromoteAccumulator; }));
    CHECK(r.mismatches > 0);
  }
}
