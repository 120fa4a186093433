// FP8 operands with DeepGEMM's scale factors (A per 1 x 128, MN-major, staged by TMA beside A; B per
// 128 x 128 block, read by the consumers) and the promotion of each k tile's MMAs into the fp32
// accumulator: the simulator runs the kernels on small integers and power-of-two factors, exactly.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "schedules/auto_schedule.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;

namespace {

Definition fp8(int64_t m, int64_t n, int64_t k, bool scale_a = true, bool scale_b = true, DType in = DType::E4M3) {
  ProblemLayout l;
  if (scale_a) l.scale_a = ScaleGranularity::Block1x128;
  if (scale_b) l.scale_b = ScaleGranularity::Block128x128;
  return make_definition(m, n, k, in, DType::BF16, {}, l);
}

}  // namespace

TEST_CASE("fp8: the tutorial's TMA steps and ping-pong simulate exactly with both operands' scale factors") {
  for (int step = 4; step <= 11; ++step) {  // 11: ping-pong
    CAPTURE(step);
    const Definition def = fp8(200, 264, 384);
    const Schedule s = step == 11 ? ping_pong_schedule(def) : tutorial_schedule(step, def);
    const SimulationReport r = simulate(s);
    INFO(r.to_string());
    CHECK(r.passed);
  }
}

namespace {

// v10 on FP8 with a bug planted in its lowered IR: the simulator's verdict.
SimulationReport planted(const gg::testing::Plant::Fn& bug, int* count = nullptr) {
  const Schedule s = tutorial_schedule(10, fp8(200, 264, 384));
  Kernel k = lower(s);
  gg::testing::Plant plant(bug);
  k.body = plant.mutate(k.body);
  if (count) *count = plant.planted;
  return simulate_kernel(k, s.definition());
}


}  // namespace

TEST_CASE("fp8: planted bugs in the scale factors and the promotion are caught by the simulator") {
  using namespace gg::kir;
  using gg::testing::drop;
  using gg::testing::rewrite;
  int count = 0;
  SUBCASE("the unplanted kernel passes") { CHECK(planted([](const StmtPtr&) { return std::nullopt; }).passed); }
  SUBCASE("B's factor of the wrong k block") {
    // v10's k loop loads each step's factors a step ahead (lo_next); the index it loads moved.
    const SimulationReport r = planted(rewrite<LoadScaleFactors>([](LoadScaleFactors& n) {
                                         REQUIRE(n.lo_next != nullptr);
                                         n.lo_next = n.lo_next + imm(1);
                                       }),
                                       &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
  }
  SUBCASE("B's prefetched factors used a k step late (the refill reloads this step's)") {
    const SimulationReport r =
        planted(rewrite<LoadScaleFactors>([](LoadScaleFactors& n) { n.lo_next = n.lo; }), &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches > 0);
  }
  SUBCASE("B's factors of the k loop's first step never loaded before it") {
    const SimulationReport r = planted(drop<PrefetchScaleFactors>(), &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
    CHECK(r.to_string().find("before a PrefetchScaleFactors loaded them") != std::string::npos);
  }
  SUBCASE("the last k step's refill not clamped: it reads past the factor array") {
    const SimulationReport r = planted(rewrite<LoadScaleFactors>([](LoadScaleFactors& n) {
                                         n.lo_next = substitute(n.lo, "k_tile", var("k_tile") + imm(1));
                                       }),
                                       &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
    CHECK(r.to_string().find("outside B's") != std::string::npos);
  }
  SUBCASE("A's factors of the wrong row") {
    const SimulationReport r =
        planted(rewrite<LoadScaleFactors>([](LoadScaleFactors& n) { n.row0 = n.row0 + imm(1); }), &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
  }
  SUBCASE("the promotion skipped") {
    const SimulationReport r = planted(drop<PromoteAccumulator>(), &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches > 0);
  }
  SUBCASE("A's factors missing from the stage's transaction bytes") {
    // The full barrier then completes when A and B landed, before the factors' box: the consumers
    // read a stage whose factors may not have landed.
    const SimulationReport r = planted(drop<MbarrierArriveExpectTx>([](const MbarrierArriveExpectTx& n) {
                                         return n.bytes == 512;  // one stage of 128 rows' fp32 factors
                                       }),
                                       &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
  }
  SUBCASE("a k tile's first MMA accumulating into the previous tile's promoted values") {
    const SimulationReport r = planted(rewrite<WgmmaIssue>([](WgmmaIssue& n) { n.accumulate = nullptr; }), &count);
    CHECK(count > 0);
    CHECK_FALSE(r.passed);
  }
}

TEST_CASE("fp8: without scale factors, e5m2, and an f32 output, the kernels simulate exactly") {
  for (const Definition& def : {fp8(128, 128, 256, false, false), fp8(200, 136, 384, true, false, DType::E5M2),
                                fp8(64, 256, 128, false, true)}) {
    const SimulationReport r = simulate(tutorial_schedule(8, def));
    INFO(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("fp8: waves (two row blocks per warpgroup promoted in turn), and a wave promoted into the wrong block") {
  using namespace gg::kir;
  const Schedule s = tutorial_schedule(8, fp8(256, 192, 384));  // 128x64 tiles, one consumer: two blocks
  Kernel k = lower(s);
  const SimulationReport clean = simulate_kernel(k, s.definition());
  INFO(clean.to_string());
  CHECK(clean.passed);
  gg::testing::Plant plant(gg::testing::rewrite<PromoteAccumulator>([](PromoteAccumulator& n) {
    REQUIRE(n.block != nullptr);
    n.block = imm(0);
  }));
  k.body = plant.mutate(k.body);
  CHECK(plant.planted > 0);
  const SimulationReport r = simulate_kernel(k, s.definition());
  CHECK_FALSE(r.passed);
  CHECK(r.mismatches > 0);
}

namespace {

// The M = 4096 plan's 256x128 tile (two consumers, two promotion waves each, 3 stages) at a size
// the simulator runs: rows and columns past the tile, three k tiles.
Schedule fp8_256x128(int cluster = 1, const Definition& def = fp8(300, 264, 384)) {
  AutoParams p;
  p.tile_m = 256;
  p.tile_n = 128;
  p.tile_k = 128;
  p.stages = 3;
  p.cluster = cluster;
  p.multicast_a = true;
  return auto_schedule(def, p);
}

}  // namespace

TEST_CASE("fp8: a 256x128 tile releases each stage once its last wave's MMAs are done, before that wave's promotion") {
  using namespace gg::kir;
  for (int cluster : {1, 2}) {
    CAPTURE(cluster);
    const Schedule s = fp8_256x128(cluster);
    Kernel k = lower(s);
    const SimulationReport clean = simulate_kernel(k, s.definition());
    INFO(clean.to_string());
    CHECK(clean.passed);
    // The release sits between the last wave's wait and its promotion (kernel IR order).
    const std::string ir = dump(k.body);
    const size_t promote = ir.rfind("PromoteAccumulator"), arrive = ir.rfind("MbarrierArrive empty_bar", promote);
    CHECK(arrive != std::string::npos);
    CHECK(ir.rfind("WgmmaWait", promote) < arrive);
    // Planted: the release moved above the wave's wait, while its MMAs may still read the stage.
    int moved = 0;
    gg::testing::Plant plant([&](const StmtPtr& st) -> std::optional<StmtPtr> {
      const Block* b = as<Block>(st);
      if (!b) return std::nullopt;
      std::vector<StmtPtr> body = b->body;
      for (size_t i = 2; i < body.size(); ++i)
        if (as<If>(body[i]) && as<WgmmaWait>(body[i - 2])) {
          std::swap(body[i], body[i - 2]);
          ++moved;
          return block(body);
        }
      return std::nullopt;
    });
    k.body = plant.mutate(k.body);
    REQUIRE(moved > 0);
    const std::string error = gg::testing::sync_error(k);
    INFO(error);
    CHECK(error.find("the stage released early") != std::string::npos);
  }
}

TEST_CASE("fp8: split-K shares of uneven k tiles read B's factors inside the array") {
  // K = 640: five k tiles in two shares of three; the second share's last k tile lies past K (its
  // loads fill zeros) and reads the last k block's factor, not one past the array's end.
  for (int splits : {2, 3}) {
    CAPTURE(splits);
    const Schedule s = tutorial_schedule(10, fp8(256, 264, 640)).split_k(splits);
    const SimulationReport r = simulate(s);
    INFO(r.to_string());
    CHECK(r.passed);
  }
}

namespace {

// FP8 with DeepGEMM's factors over `groups` matrices of a source: masked (A, B, D and A's
// factors per group), contiguous (groups of A's rows sharing A and its factors, B per group) or a
// plain batch.
Definition fp8_grouped(ProblemSource source, int64_t groups, int64_t m, int64_t n, int64_t k) {
  ProblemLayout l;
  l.scale_a = ScaleGranularity::Block1x128;
  l.scale_b = ScaleGranularity::Block128x128;
  l.batch = groups;
  l.source = source;
  return make_definition(m, n, k, DType::E4M3, DType::BF16, {}, l);
}

SimulateOptions rows_of(ProblemSource source) {
  SimulateOptions o;
  if (source == ProblemSource::Masked) o.group_rows = {200, 0, 77};   // full, empty, ragged
  if (source == ProblemSource::Contiguous) o.group_offsets = {0, 0, 190, 193, 400};  // empty, ragged, 3 rows
  return o;
}

}  // namespace

TEST_CASE("fp8: masked and contiguous groups and batches read each matrix's factors") {
  using namespace gg::kir;
  const std::vector<std::pair<ProblemSource, Definition>> cases = {
      {ProblemSource::Masked, fp8_grouped(ProblemSource::Masked, 3, 200, 136, 640)},
      {ProblemSource::Contiguous, fp8_grouped(ProblemSource::Contiguous, 4, 400, 264, 384)},
      {ProblemSource::Dense, fp8_grouped(ProblemSource::Dense, 3, 130, 136, 384)},
  };
  for (const auto& [source, def_] : cases) {
    const Definition& def = def_;  // (CAPTURE's lambda cannot read a structured binding under clang 14)
    // and the M = 4096 plan's 256x128 tile (a contiguous group's factors in boxes of 32 from the
    // aligned row before its first)
    for (const Schedule& s : {tutorial_schedule(8, def), builtin_schedule("auto", def), fp8_256x128(1, def)}) {
      CAPTURE(def.batch());
      CAPTURE(print_schedule(s));
      Kernel k = lower(s);
      const SimulationReport clean = simulate_kernel(k, s.definition(), rows_of(source));
      INFO(clean.to_string());
      CHECK(clean.passed);
      // Planted: every group promoted with the first matrix's factors of B (loaded in the k step,
      // or a step ahead and before the k loop).
      Kernel wrong_b = k;
      const auto first_matrix = [](ExprPtr& e) {
        if (e) e = substitute(e, "batch", imm(0));
      };
      gg::testing::Plant first_b(gg::testing::either(gg::testing::rewrite<LoadScaleFactors>([&](LoadScaleFactors& n) {
                                                       for (ExprPtr* e : {&n.lo, &n.hi, &n.lo_next, &n.hi_next}) first_matrix(*e);
                                                     }),
                                                     gg::testing::rewrite<PrefetchScaleFactors>([&](PrefetchScaleFactors& n) {
                                                       first_matrix(n.lo);
                                                       first_matrix(n.hi);
                                                     })));
      wrong_b.body = first_b.mutate(wrong_b.body);
      REQUIRE(first_b.planted > 0);
      const SimulationReport b = simulate_kernel(wrong_b, s.definition(), rows_of(source));
      CHECK_FALSE(b.passed);
      CHECK(b.mismatches > 0);
      // Planted: A's factors of the first matrix (masked groups and batches have one per matrix).
      if (source == ProblemSource::Contiguous) continue;
      Kernel wrong_a = k;
      gg::testing::Plant first_a(gg::testing::rewrite<TmaLoad>(
          [](TmaLoad& n) { n.batch = nullptr; }, [](const TmaLoad& n) { return n.map == rt::Operand::ScaleA; }));
      wrong_a.body = first_a.mutate(wrong_a.body);
      REQUIRE(first_a.planted > 0);
      const SimulationReport a = simulate_kernel(wrong_a, s.definition(), rows_of(source));
      CHECK_FALSE(a.passed);
    }
  }
}

TEST_CASE("fp8: every granularity and major of A's and B's factors, in every pairing, simulates exactly") {
  using namespace gg::kir;
  using G = ScaleGranularity;
  struct Factors {
    std::optional<G> g;
    Layout major;
  };
  const Layout K = Layout::KMajor, MN = Layout::MNMajor;
  const std::vector<Factors> a_kinds = {{G::PerTensor, MN},    {G::PerRow, MN},       {G::Block1x128, MN},
                                        {G::Block1x128, K},    {G::Block128x128, MN}, {G::Block128x128, K},
                                        {std::nullopt, MN}};
  const std::vector<Factors> b_kinds = {{G::PerTensor, K},    {G::PerRow, K},        {G::Block1x128, K},
                                        {G::Block1x128, MN},   {G::Block128x128, K},  {G::Block128x128, MN},
                                        {std::nullopt, K}};
  for (const Factors& fa : a_kinds)
    for (const Factors& fb : b_kinds) {
      ProblemLayout l;
      l.scale_a = fa.g;
      l.scale_b = fb.g;
      l.scale_a_major = fa.major;
      l.scale_b_major = fb.major;
      CAPTURE(problem_layout_text(l));
      for (const auto& [source, groups] : {std::pair{ProblemSource::Dense, 1}, std::pair{ProblemSource::Masked, 3},
                                           std::pair{ProblemSource::Contiguous, 4}}) {
        // contiguous groups: each pairing's kernel once, the rest on the first A kinds
        if (source == ProblemSource::Contiguous && fb.g && fb.g != G::PerRow && fa.g != G::Block128x128) continue;
        ProblemLayout grouped = l;
        grouped.batch = groups;
        grouped.source = source;
        const int64_t m = source == ProblemSource::Contiguous ? 400 : 200;
        const Definition def = make_definition(m, 136, 384, DType::E4M3, DType::BF16, {}, grouped);
        const SimulationReport r = simulate(tutorial_schedule(8, def), rows_of(source));
        INFO(r.to_string());
        CHECK(r.passed);
      }
    }
  // Planted: per-row factors read one row off; per-tensor factors of the first matrix in every group.
  ProblemLayout rows;
  rows.scale_a = G::PerRow;
  rows.scale_b = G::PerTensor;
  rows.batch = 3;
  rows.source = ProblemSource::Masked;
  const Schedule s = tutorial_schedule(8, make_definition(200, 136, 384, DType::E4M3, DType::BF16, {}, rows));
  const Kernel k = lower(s);
  for (int bug = 0; bug < 2; ++bug) {
    CAPTURE(bug);
    Kernel wrong = k;
    gg::testing::Plant plant(gg::testing::rewrite<LoadScaleFactors>([&](LoadScaleFactors& n) {
      if (bug == 0) n.a_index = n.a_index + imm(1);
      else n.lo = imm(0);
    }));
    wrong.body = plant.mutate(wrong.body);
    REQUIRE(plant.planted > 0);
    const SimulationReport r = simulate_kernel(wrong, s.definition(), rows_of(ProblemSource::Masked));
    CHECK_FALSE(r.passed);
  }
}

TEST_CASE("fp8: planted bugs in the factors read from memory (K-major rows, 128-row blocks, B per row) are caught") {
  using namespace gg::kir;
  using G = ScaleGranularity;
  // Each case: A's and B's factors, and a bug in the kernel that reads them.
  struct Case {
    const char* what;
    G a, b;
    Layout a_major, b_major;
    std::function<void(Kernel&, int&)> plant;
  };
  const auto on_factors = [](std::function<void(LoadScaleFactors&)> f) {
    return [f](Kernel& k, int& count) {
      gg::testing::Plant plant(gg::testing::rewrite<LoadScaleFactors>(f));
      k.body = plant.mutate(k.body);
      count = plant.planted;
    };
  };
  const std::vector<Case> cases = {
      {"A's K-major 1x128 factors read with the MN-major stride", G::Block1x128, G::Block128x128, Layout::KMajor,
       Layout::KMajor, on_factors([](LoadScaleFactors& n) { n.a_row_stride = imm(1); })},
      {"A's 128x128 factors read per 64 rows", G::Block128x128, G::PerTensor, Layout::KMajor, Layout::KMajor,
       on_factors([](LoadScaleFactors& n) { n.a_row_block = 64; })},
      {"B's N-major 128x128 factors read K-major", G::PerTensor, G::Block128x128, Layout::MNMajor, Layout::MNMajor,
       on_factors([](LoadScaleFactors& n) {  // every k step's refill of the prefetched factors reads k block 0
         n.lo_next = substitute(n.lo, "k_tile", imm(0));
       })},
      {"B's 1x128 factors one column off", G::PerTensor, G::Block1x128, Layout::MNMajor, Layout::KMajor,
       on_factors([](LoadScaleFactors& n) { n.cols_first = n.cols_first + imm(1); })},
      {"B's N-major 1x128 factors of the k block before", G::Block1x128, G::Block1x128, Layout::MNMajor, Layout::MNMajor,
       on_factors([](LoadScaleFactors& n) { n.cols_index = substitute(n.cols_index, "k_tile", var("k_tile") - imm(1)); })},
      {"B's factors per row never applied", G::Block1x128, G::PerRow, Layout::MNMajor, Layout::KMajor,
       [](Kernel& k, int& count) {
         gg::testing::Plant plant(gg::testing::drop<ScaleAccumulatorColumns>());
         k.body = plant.mutate(k.body);
         count = plant.planted;
       }},
      {"B's factors per row one column off", G::PerRow, G::PerRow, Layout::MNMajor, Layout::KMajor,
       [](Kernel& k, int& count) {
         gg::testing::Plant plant(gg::testing::rewrite<ScaleAccumulatorColumns>(
             [](ScaleAccumulatorColumns& n) { n.first = n.first + imm(1); }));
         k.body = plant.mutate(k.body);
         count = plant.planted;
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    ProblemLayout l;
    l.scale_a = c.a;
    l.scale_b = c.b;
    l.scale_a_major = c.a_major;
    l.scale_b_major = c.b_major;
    const Schedule s = tutorial_schedule(10, make_definition(200, 264, 384, DType::E4M3, DType::BF16, {}, l));
    Kernel k = lower(s);
    CHECK(simulate_kernel(k, s.definition()).passed);
    int count = 0;
    c.plant(k, count);
    REQUIRE(count > 0);
    const SimulationReport r = simulate_kernel(k, s.definition());
    INFO(r.to_string());
    CHECK_FALSE(r.passed);  // wrong values, or a factor read outside its array
  }
}

TEST_CASE("fp8: promotion intervals past a k tile and none simulate exactly; a lost final promotion does not") {
  using namespace gg::kir;
  using G = ScaleGranularity;
  // K = 896: seven k tiles, so the last interval of 2 or 4 is partial.
  for (const auto& [ga_, gb_] : {std::pair<std::optional<G>, std::optional<G>>{G::PerTensor, G::PerTensor},
                                 {G::PerRow, G::PerTensor}, {std::nullopt, std::nullopt}})
    for (int64_t interval : {0, 256, 512}) {
      const std::optional<G> ga = ga_, gb = gb_;  // (CAPTURE's lambda cannot read a structured binding under clang 14)
      if (interval == 0 && (ga || gb)) continue;  // refused: the factors would need the epilogue
      ProblemLayout l;
      l.scale_a = ga;
      l.scale_b = gb;
      Schedule s = tutorial_schedule(10, make_definition(200, 264, 896, DType::E4M3, DType::BF16, {}, l));
      s.promote(interval);
      CAPTURE(interval);
      CAPTURE(ga ? scale_granularity_name(*ga) : "none");
      const SimulationReport r = simulate(s);
      INFO(r.to_string());
      CHECK(r.passed);
    }
  // Planted: the promotion after the unit's last k tile dropped (only every fourth is kept).
  ProblemLayout l;
  l.scale_a = G::PerTensor;
  l.scale_b = G::PerTensor;
  Schedule s = tutorial_schedule(10, make_definition(200, 264, 896, DType::E4M3, DType::BF16, {}, l));
  s.promote(512);
  Kernel k = lower(s);
  gg::testing::Plant plant(gg::testing::rewrite<If>([](If& n) {
    if (as<PromoteAccumulator>(n.then_body)) n.cond = var("k_tile") % imm(4) + imm(1) == imm(4);
  }));
  k.body = plant.mutate(k.body);
  REQUIRE(plant.planted > 0);
  const SimulationReport r = simulate_kernel(k, s.definition());
  CHECK_FALSE(r.passed);
  CHECK(r.mismatches > 0);
}
