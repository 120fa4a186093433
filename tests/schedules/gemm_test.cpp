// gg::gemm's schedule choice, on the CPU: `auto` where it lowers, else the furthest tutorial step
// that does, and a clear error when none does; without a GPU the call reports that instead of
// crashing.
#include <doctest/doctest.h>

#include <iomanip>
#include <sstream>

#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "scratch_cache_dir.h"

using namespace gg;

TEST_CASE("pick_schedule takes auto, else the furthest tutorial step that lowers for the problem") {
  CHECK(pick_schedule(gemm_definition(4096, 4096, 4096)) == "auto");
  CHECK(pick_schedule(gemm_definition(1, 8, 8)) == "auto");
  GemmOptions f32;
  f32.in = DType::F16;
  f32.out = DType::F32;
  f32.alpha = 0.5;
  CHECK(pick_schedule(gemm_definition(300, 200, 136, f32)) == "auto");
  const Definition scaled = gemm_definition(64, 64, 64, f32);
  CHECK(scaled.to_string().find("0.5") != std::string::npos);
}

TEST_CASE("no-schedule: a problem no built-in schedule lowers names each step's rule") {
  try {
    pick_schedule(gemm_definition(1 << 30, 1 << 30, 64));  // more tiles than a kernel counts in 32 bits
    FAIL("expected no-schedule");
  } catch (const CompileError& e) {
    CHECK(e.rule() == "no-schedule");
    CHECK(std::string(e.message()).find("no built-in schedule lowers for M=1073741824 N=1073741824 K=64 (auto: "
                                        "no-schedule; v10: problem-too-large; v8: problem-too-large") != std::string::npos);
  }
}

TEST_CASE("ragged problems: N and K that TMA cannot take still get a schedule") {
  CHECK(pick_schedule(gemm_definition(77, 129, 72)) == "auto");   // stores from registers
  CHECK(pick_schedule(gemm_definition(255, 257, 264)) == "auto");
  CHECK(pick_schedule(gemm_definition(128, 128, 100)) == "v4");   // element copies: no ring without TMA
  CHECK(pick_schedule(gemm_definition(1, 1, 1)) == "v4");
}

TEST_CASE("gg::gemm without a GPU throws CudaError, not a crash") {
  if (rt::gpu_available()) return;  // tests/gpu runs it for real
  CHECK_THROWS_AS(gemm(nullptr, nullptr, nullptr, 256, 256, 256), rt::CudaError);
}

TEST_CASE("plan_gemm swaps A and B for skinny M: M becomes the wgmma's N, D^T lands column-major") {
  const GemmPlan decode = plan_gemm(1, 4096, 4096);
  CHECK(decode.swapped());
  CHECK(decode.def.m() == 4096);
  CHECK(decode.def.n() == 1);
  CHECK(decode.def.output_layout() == OutputLayout::ColumnMajor);
  CHECK(decode.config.rfind("swap A/B; tile 64x16x256, 1 consumer, 5 stages", 0) == 0);  // H100: 1.05x cuBLAS
  CHECK(plan_gemm(16, 4096, 4096).swapped());
  // (77x129x4096 is no skinny M, but it may swap too: both orientations split K there, and 8
  // splits of the swapped 3 x 5 tiles predict 6% faster than 4 of the straight 2 x 9.)
  for (const auto& mn : {std::pair<int64_t, int64_t>{8192, 8192}, {128, 8192}, {4096, 1}}) {
    const int64_t m = mn.first;  // clang 14 cannot capture structured bindings (CAPTURE)
    const GemmPlan p = plan_gemm(m, mn.second, 4096);
    CAPTURE(m);
    CHECK(!p.swapped());
    CHECK(p.def.output_layout() == OutputLayout::RowMajor);
  }
  // The plan keeps the config it chose: building it gives the schedule `auto` would rank again.
  for (const GemmPlan& p : {decode, plan_gemm(4096, 4096, 4096)}) {
    REQUIRE(p.params);
    CHECK(print_schedule(p.build()) == print_schedule(builtin_schedule("auto", p.def)));
  }
  GemmOptions named;
  named.schedule = "v8";
  CHECK(!plan_gemm(1, 4096, 4096, named).swapped());  // a named schedule runs as asked
}

TEST_CASE("plan_gemm reads a one-row M-major A (or one-row N-major B) as K-major: same bytes, TMA-able") {
  GemmOptions tt;
  tt.layout.a = Layout::MNMajor;
  tt.layout.b = Layout::MNMajor;
  // 1x4096x4096 TT: A's M-major rows are 2 bytes apart, which no TMA copy takes; before this
  // the plan fell back to v4 (H100: 0.036x cuBLAS).
  const GemmPlan decode = plan_gemm(1, 4096, 4096, tt);
  CHECK(decode.schedule == "auto");
  CHECK(decode.config.rfind("A read k-major (M=1); swap A/B; ", 0) == 0);
  CHECK(problem_layout(decode.def).b == Layout::KMajor);  // swapped: the user's A is B
  CHECK(problem_layout(decode.def).a == Layout::MNMajor);
  const GemmPlan gemv = plan_gemm(4096, 1, 4096, tt);
  CHECK(gemv.config.rfind("B read k-major (N=1); ", 0) == 0);
  // A strided M-major A (lda > 1) is not the same bytes as K-major: it stays as given.
  tt.layout.lda = 8;
  CHECK(problem_layout(plan_gemm(1, 4096, 4096, tt).def).b == Layout::MNMajor);
  // M > 1 is untouched.
  tt.layout.lda = 0;
  CHECK(canonical_layout(2, 4096, tt.layout) == tt.layout);
  CHECK(canonical_layout(1, 1, tt.layout).a == Layout::KMajor);
  CHECK(canonical_layout(1, 1, tt.layout).b == Layout::KMajor);
}

TEST_CASE("the swap rule lives in prefer_swapped: 3% or 5% faster by the model, or the only orientation that lowers") {
  AutoParams straight, swapped;
  straight.predicted_us = 100;
  swapped.predicted_us = 95.1;
  swapped.subtile_cols = 0;  // the swapped kernel stores from registers
  CHECK(swap_margin(straight, swapped) == 0.05);
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.predicted_us = 94.9;
  CHECK(prefer_swapped(straight, swapped));
  // Both orientations TMA-store their tiles (the swapped one transposed): 3%.
  straight.subtile_cols = 64;
  swapped.subtile_cols = 48;
  CHECK(swap_margin(straight, swapped) == 0.03);
  swapped.predicted_us = 97.1;
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.predicted_us = 96.9;
  CHECK(prefer_swapped(straight, swapped));
  // H200 (2026-11-28, two rounds): 2816^3 ran 720-723 TFLOP/s straight in 128x256 tiles, 737-738
  // swapped in 128x240; 247 x 812 x 3991, whose swapped D^T stores from registers (rows of 812),
  // lost 9% swapped and stays straight.
  CHECK(plan_gemm(2816, 2816, 2816).swapped());
  CHECK(plan_gemm(2816, 2816, 2816).config.find("store subtiles of 48") != std::string::npos);
  CHECK_FALSE(plan_gemm(247, 812, 3991).swapped());
  CHECK(prefer_swapped(std::nullopt, swapped));
  CHECK_FALSE(prefer_swapped(straight, std::nullopt));
  CHECK_FALSE(prefer_swapped(std::nullopt, std::nullopt));
  // plan_gemm applies it to the model's best of each orientation, which it keeps for explain.
  const GemmPlan decode = plan_gemm(1, 4096, 4096);
  REQUIRE(decode.straight_best);
  REQUIRE(decode.swapped_best);
  CHECK(decode.swapped() == prefer_swapped(decode.straight_best, decode.swapped_best));
  CHECK(decode.swapped() == decode.def.swapped());
}

TEST_CASE("the swap rule's tie: the same tile in one wave of a long k loop, swapped in 5% fewer tiles") {
  AutoParams straight, swapped;
  for (AutoParams* p : {&straight, &swapped}) {
    p->tile_m = 128;
    p->tile_n = 144;
    p->waves = 1;
    p->k_tiles = 95;
    p->predicted_us = 76.5;
  }
  straight.tiles = 132;
  swapped.tiles = 120;
  CHECK(fewer_tiles_swapped(straight, swapped));
  CHECK(prefer_swapped(straight, swapped));
  CHECK_FALSE(fewer_tiles_swapped(swapped, straight));
  swapped.tiles = 126;  // fewer by less than 5%: 1488 x 2304 x 14712 lost 3% so
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.tiles = 120;
  swapped.k_tiles = straight.k_tiles = 9;  // a short k loop (616 x 872 x 536 ran 4% faster in more tiles)
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.k_tiles = straight.k_tiles = 95;
  swapped.tile_n = 160;  // another tile: the ranking's own rules, not this one
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.tile_n = 144;
  swapped.waves = 2;
  CHECK_FALSE(prefer_swapped(straight, swapped));
  swapped.waves = 1;
  swapped.predicted_us = 78;  // not a tie
  CHECK_FALSE(prefer_swapped(straight, swapped));
  // H200 (2026-11-28, old and new plans alternating): 664 x 3064 x 6040 59.0 -> 51.0 us swapped in
  // 120 128x144 tiles (132 straight); 1240 x 1928 x 9448 (130 -> 128 tiles) stays straight.
  const GemmPlan ragged = plan_gemm(664, 3064, 6040);
  CHECK(ragged.swapped());
  REQUIRE(ragged.swapped_best);
  CHECK(ragged.swapped_best->tiles == 120);
  CHECK(explain_plan(ragged).find("or, as here, the same tile in one wave of fewer tiles: 120 against 132") != std::string::npos);
  CHECK_FALSE(plan_gemm(1240, 1928, 9448).swapped());
}

TEST_CASE("a plan names its source: named, auto or fallback, and describes itself in one line") {
  const GemmPlan square = plan_gemm(4096, 4096, 4096);
  CHECK(square.source == PlanSource::Auto);
  CHECK(square.describe() == "auto: " + square.config);
  GemmOptions named;
  named.schedule = "v8";
  const GemmPlan v8 = plan_gemm(4096, 4096, 4096, named);
  CHECK(v8.source == PlanSource::Named);
  CHECK(v8.describe() == "v8");
  named.schedule = "auto";  // the name `auto` is the planner's choice, as an empty name is
  CHECK(plan_gemm(1, 4096, 4096, named).describe() == plan_gemm(1, 4096, 4096).describe());
  // K not a multiple of 8: the planner stages A and B (aligned copies) and plans auto on them
  const GemmPlan staged = plan_gemm(333, 4444, 555);
  CHECK(staged.source == PlanSource::Auto);
  CHECK(staged.describe().rfind("auto: A staged; B staged; ", 0) == 0);
  // Masked groups are not staged (a group's rows lie where the groups say): no TMA, no auto
  GemmOptions masked;
  masked.layout.source = ProblemSource::Masked;
  masked.layout.batch = 2;
  const GemmPlan ragged = plan_gemm(333, 4444, 555, masked);
  CHECK(ragged.source == PlanSource::Fallback);
  CHECK(ragged.describe() == "fallback v4");
  CHECK(ragged.auto_refusal.rfind("no-schedule: ", 0) == 0);
  CHECK(explain_plan(ragged).find("source:      fallback (no `auto` config lowers: no-schedule") != std::string::npos);
  named.schedule = "v99";
  CHECK_THROWS_AS(plan_gemm(64, 64, 64, named), CompileError);  // an unknown name is refused when planning
}

TEST_CASE("explain_plan prints the orientation with the model's figures for both, then the chosen ranking") {
  const std::string text = explain_plan(plan_gemm(1, 4096, 4096));
  CAPTURE(text);
  CHECK(text.rfind("plan for M=1 N=4096 K=4096 bf16 -> bf16 on sm_90a: auto: swap A/B; tile 64x16x256", 0) == 0);
  CHECK(text.find("orientation: swapped: D^T[N,M] = B * A^T") != std::string::npos);
  CHECK(text.find("(the model's best: straight ") != std::string::npos);
  CHECK(text.find("auto: the heuristic's ranking for M=4096 N=1 K=4096") != std::string::npos);
}

TEST_CASE("explain_plan gives the problem's roofline: every operand matrix read once beside the MMAs at peak") {
  // 16 masked groups of 128 rows at 4096 x 7168: each group's A, B and D, 985.7 MB (294 us at 3.35
  // TB/s) against 122 us of MMAs.
  GemmOptions masked;
  masked.layout.batch = 16;
  masked.layout.source = ProblemSource::Masked;
  const std::string groups = explain_plan(plan_gemm(128, 4096, 7168, masked));
  CAPTURE(groups);
  CHECK(groups.find("\n  roofline:    the MMAs at peak 122 us; every operand matrix read and D written once, 986 MB, "
                    "294 us at 3.35 TB/s: DRAM bounds it\n") != std::string::npos);
  const std::string square = explain_plan(plan_gemm(4096, 4096, 4096));
  CAPTURE(square);
  CHECK(square.find("roofline:    the MMAs at peak 139 us; every operand matrix read and D written once, 101 MB, 30 us "
                    "at 3.35 TB/s: the MMAs bound it") != std::string::npos);
}

TEST_CASE("a plan for sm_100a ranks and builds for that target") {
  GemmOptions blackwell;
  blackwell.target = Target::Sm100a;
  const GemmPlan plan = plan_gemm(4096, 4096, 4096, blackwell);
  CHECK(plan.target == Target::Sm100a);
  const Schedule s = plan.build();
  REQUIRE(s.mma_shape());
  CHECK(s.mma_shape()->target == Target::Sm100a);
}

TEST_CASE("precompile_gemm compiles gg::gemm's kernel into the disk cache: the next compile of it is a hit") {
  gg::testing::ScratchCacheDir cache("precompile");
  const uint64_t compiles = rt::nvrtc_compiles();
  const PrecompiledGemm first = precompile_gemm(333, 4444, 555);
  CHECK_FALSE(first.from_cache);
  CHECK(first.plan.describe().rfind("auto: A staged; B staged; ", 0) == 0);
  CHECK(rt::nvrtc_compiles() == compiles + 1);
  // What gg::gemm compiles on first use of the shape (cached_kernel) is now a cache hit; another M
  // whose plan makes the same kernel (M read at run time) too.
  const EmittedKernel e = emit_cuda(plan_gemm(333, 4444, 555).build());
  CHECK(e.kernel_name == first.kernel_name);
  CHECK(compile_gemm_kernel(e).from_cache);
  CHECK(precompile_gemm(333, 4444, 555).from_cache);
  CHECK(rt::nvrtc_compiles() == compiles + 1);
}

TEST_CASE("explain shows a tuned plan's measured time beside the model's prediction for the same config") {
  GemmPlan plan = plan_gemm(2000, 3000, 7000);
  REQUIRE(plan.params);
  plan.source = PlanSource::Tuned;  // as tuned_plan makes it from a record (which needs a GPU to be read)
  plan.measured_us = 172.0;
  plan.measured_cublas_us = 147.0;
  const std::string text = explain_plan(plan);
  CAPTURE(text);
  std::ostringstream predicted;
  predicted << std::fixed << std::setprecision(1) << plan.params->predicted_us;
  CHECK(text.find("  measured:    172.0 us when tuned (cuBLAS 147.0 us, ratio 0.85); the model predicts " +
                  predicted.str() + " us for this config (") != std::string::npos);
  // predict_auto_params gives a config the figures the ranking gave it
  AutoParams again = *plan.params;
  again.predicted_us = 0;
  predict_auto_params(plan.def, limits_for(Target::Sm90a), again);
  CHECK(again.predicted_us == doctest::Approx(plan.params->predicted_us));
  CHECK(again.operand_mb == doctest::Approx(plan.params->operand_mb));
}
