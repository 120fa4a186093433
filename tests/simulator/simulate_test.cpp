// The CPU simulator on the tutorial kernels (every step, edge shapes, several interleavings)
// and on bugs planted one at a time into their lowered IR: each class must be caught, by a
// hazard report, a deadlock report or a wrong output, in every kernel it applies to.
#include <doctest/doctest.h>

#include <functional>
#include <iostream>
#include <optional>
#include <set>

#include "codegen/index_math.h"
#include "codegen/lower.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "grouped_testing.h"
#include "planted_bugs.h"
#include "sim_limits.h"
#include "schedules/auto_schedule.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using gg::testing::few_sms;
using namespace gg::kir;

namespace {

constexpr int kPingPong = 0;  // in lists of tutorial steps: the ping-pong schedule

struct Shape {
  int64_t m, n, k;
};

std::vector<Shape> shapes_for(int v) {
  if (v == 1) return {{128, 128, 64}, {100, 72, 40}, {1, 8, 8}};
  if (v == 2) return {{128, 128, 512}, {77, 128, 200}};
  return {{256, 256, 256}, {300, 200, 136}, {1, 8, 8}, {129, 264, 64}, {64, 8, 1024}, {384, 256, 64}};
}

using testing::copy_of;
using testing::Plant;
using testing::rewrite;
using testing::simulate_planted;

struct BugClass {
  std::string name;
  std::function<std::optional<StmtPtr>(const StmtPtr&, const KernelPlan&)> plant;
  std::function<bool(const KernelPlan&)> applies = [](const KernelPlan&) { return true; };
};

bool ws(const KernelPlan& p) { return p.warp_specialized; }
bool multicast(const KernelPlan& p) { return p.multicast_b || p.multicast_a; }

std::optional<StmtPtr> keep() { return std::nullopt; }

using Mutation = Plant::Fn;

std::vector<BugClass> bug_classes() {
  std::vector<BugClass> c;
  c.push_back({"missing wait on a full barrier", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 auto w = as<MbarrierWait>(s);
                 if (w && w->bar.array == Barrier::Full) return StmtPtr(nullptr);
                 return keep();
               }});
  c.push_back({"wrong wait parity", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto w = as<MbarrierWait>(s); w && w->bar.array == Barrier::Full) {
                   auto n = copy_of<MbarrierWait>(s);
                   n->parity = (w->parity + imm(1)) % imm(2);
                   return StmtPtr(n);
                 }
                 return keep();
               }});
  c.push_back({"phase not flipped at the wrap", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto w = as<MbarrierWait>(s); w && w->bar.array == Barrier::Full) {
                   auto n = copy_of<MbarrierWait>(s);
                   n->parity = imm(0);
                   return StmtPtr(n);
                 }
                 return keep();
               }});
  c.push_back({"expect_tx bytes mismatch", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<MbarrierArriveExpectTx>(s)) {
                   auto n = copy_of<MbarrierArriveExpectTx>(s);
                   n->bytes -= 1024;
                   return StmtPtr(n);
                 }
                 return keep();
               }});
  c.push_back({"swizzle mismatch between TMA and the wgmma descriptor",
               [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<WgmmaIssue>(s)) {
                   auto n = copy_of<WgmmaIssue>(s);
                   n->a_layout.swizzle_bytes = n->b_layout.swizzle_bytes = 64;
                   return StmtPtr(n);
                 }
                 return keep();
               }});
  c.push_back({"missing fence.proxy.async before the TMA store",
               [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<FenceProxyAsync>(s)) return StmtPtr(nullptr);
                 return keep();
               },
               [](const KernelPlan& p) { return p.tma_store; }});
  c.push_back({"missing barrier before the staging buffer is reused",
               [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<BulkWaitRead>(s)) return StmtPtr(nullptr);
                 return keep();
               },
               [](const KernelPlan& p) { return p.tma_store; }});
  c.push_back({"stage released early (wgmma wait count too small)",
               [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto w = as<WgmmaWait>(s); w && w->pending > 0) {
                   auto n = copy_of<WgmmaWait>(s);
                   n->pending += 1;
                   return StmtPtr(n);
                 }
                 return keep();
               },
               ws});
  c.push_back({"barrier init not published before use", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<SyncThreads>(s) || as<ClusterSync>(s)) return StmtPtr(nullptr);
                 return keep();
               }});
  c.push_back({"missing wgmma commit", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<WgmmaCommit>(s)) return StmtPtr(nullptr);
                 return keep();
               },
               ws});
  c.push_back({"K loop one tile short", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto f = as<For>(s); f && f->var == "k_tile") {
                   auto n = copy_of<For>(s);
                   n->end = f->end - imm(1);
                   return Mutator().mutate(n);
                 }
                 return keep();
               }});
  c.push_back({"tile scheduler skipping tiles", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto f = as<For>(s); f && f->var == "tile") {
                   auto n = copy_of<For>(s);
                   n->step = f->step * imm(2);
                   return StmtPtr(n);
                 }
                 return keep();
               },
               [](const KernelPlan& p) { return p.persistent; }});
  c.push_back({"TMA box at the wrong column", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto l = as<TmaLoad>(s); l && l->map == rt::Operand::B) {
                   auto n = copy_of<TmaLoad>(s);
                   n->col = l->col + imm(8);
                   return StmtPtr(n);
                 }
                 return keep();
               },
               [](const KernelPlan& p) { return p.tma_load; }});
  c.push_back({"epilogue fragment mapping wrong", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<EpilogueStore>(s)) {
                   auto n = copy_of<EpilogueStore>(s);
                   n->mma_m = 32;
                   n->warpgroup_rows /= 2;
                   index_epilogue_store(*n);  // the index math follows the store's (wrong) fields
                   return StmtPtr(n);
                 }
                 return keep();
               },
               // A no-op where a warpgroup stages one 64-row block in one chunk per subtile:
               // the staged rows start at 0 and the TMA store places them.
               [](const KernelPlan& p) {
                 return !p.tma_store || sm90::accumulator_shape(p).blocks > 1 ||
                        p.staging.buffer.atoms() > 1;
               }});
  // Each bulk wait leaves one more store in flight: a staging buffer is rewritten (or the CTA
  // exits) while a TMA store may still read it.
  c.push_back({"staging rewritten a store early (bulk wait <N>)",
               [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<BulkWaitRead>(s)) {
                   auto n = copy_of<BulkWaitRead>(s);
                   n->pending += 1;
                   return StmtPtr(n);
                 }
                 return keep();
               },
               [](const KernelPlan& p) { return p.tma_store; }});
  c.push_back({"shared-memory regions overlapping", [](const StmtPtr& s, const KernelPlan& p) -> std::optional<StmtPtr> {
                 if (auto l = as<TmaLoad>(s); l && l->map == rt::Operand::A) {
                   auto n = copy_of<TmaLoad>(s);
                   n->dst.offset = l->dst.offset + imm(p.operand(rt::Operand::A).smem.bytes() * p.pipeline.stages - 1024);
                   return StmtPtr(n);
                 }
                 return keep();
               },
               [](const KernelPlan& p) { return p.tma_load; }});
  c.push_back({"empty barrier arrival count off by one", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto i = as<MbarrierInit>(s); i && i->bar.array == Barrier::Empty) {
                   auto n = copy_of<MbarrierInit>(s);
                   n->arrivals += 1;
                   return StmtPtr(n);
                 }
                 return keep();
               },
               ws});
  // Without the turn, the second consumer's first wait on a stage can pass on a phase two
  // fills old (parity aliasing) and read a stage that is not its tile's.
  c.push_back({"ping-pong turn not waited for", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto b = as<NamedBarrierSync>(s); b && b->threads == 2 * kWarpgroupThreads)
                   return StmtPtr(nullptr);
                 return keep();
               },
               [](const KernelPlan& p) { return p.ping_pong; }});
  c.push_back({"ping-pong consumers staging into one buffer", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (as<EpilogueStore>(s)) {
                   auto n = copy_of<EpilogueStore>(s);
                   n->staging.offset = imm(0);
                   return StmtPtr(n);
                 }
                 if (auto t = as<TmaStore>(s)) {
                   auto n = copy_of<TmaStore>(s);
                   n->src.offset = t->src.offset % imm(16384);  // chunk offsets of one 128x128 bf16 tile
                   return StmtPtr(n);
                 }
                 return keep();
               },
               [](const KernelPlan& p) { return p.ping_pong && p.tma_store; }});
  // Each role waits at the cluster barrier before it touches a barrier: without the wait, a peer's
  // (or its own CTA's) init need not be visible to it yet.
  c.push_back({"a role's cluster wait missing", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto sync = as<ClusterSync>(s); sync && sync->part == ClusterPart::Wait) return StmtPtr(nullptr);
                 return keep();
               },
               [](const KernelPlan& p) { return p.cluster_size > 1; }});
  c.push_back({"release missing in a peer CTA", [](const StmtPtr& s, const KernelPlan&) -> std::optional<StmtPtr> {
                 if (auto a = as<MbarrierArrive>(s); a && a->cta) {
                   int64_t rank = -1;
                   if (is_const(a->cta, &rank) && rank == 1) return StmtPtr(nullptr);
                 }
                 return keep();
               },
               multicast});
  return c;
}

}  // namespace

TEST_CASE("simulate: tutorial v1..v10 match the host reference on edge shapes, several interleavings") {
  for (int v = 1; v <= 10; ++v)
    for (Shape sh : shapes_for(v))
      for (uint64_t seed : {1u, 7u}) {
        Definition def = make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16);
        SimulateOptions o;
        o.seed = seed;
        SimulationReport r = simulate(tutorial_schedule(v, def), o, few_sms(3));
        CAPTURE(v);
        CAPTURE(r.to_string());
        CHECK(r.passed);
        CHECK(r.wgmmas > 0);
      }
}

// v10 with its tile order along the Hilbert curve: as written (cluster 2, B multicast, the curve over
// pairs of m tiles) and without its cluster and multicast lines (the curve over single tiles).
Schedule v10_hilbert(const Definition& def, bool cluster) {
  std::string text = print_schedule(tutorial_schedule(10, def));
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("persist m_o n_o tile row 8", "persist m_o n_o tile hilbert");
  if (!cluster) {
    replace("cluster 2 1 1\n", "");
    replace("multicast B\n", "");
  }
  ScheduleFile file = parse_schedule_file(text);
  return apply_directives(def, file.directives, file.directive_lines);
}

TEST_CASE("simulate: v10 with the Hilbert tile order, with and without a cluster, matches the host reference") {
  // 1000 x 768: 8 x 3 tiles (4 x 3 pairs); 384 x 1280: 3 x 5 tiles, the last pair overhangs;
  // 640 x 256: 5 x 1 tiles, a curve one tile thick.
  for (bool cluster : {true, false})
    for (Shape sh : {Shape{1000, 768, 128}, Shape{384, 1280, 64}, Shape{640, 256, 72}})
      for (int sms : {1, 3}) {
        const Definition def = make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16);
        const Schedule s = v10_hilbert(def, cluster);
        REQUIRE(s.persistence().has_value());
        CHECK(s.persistence()->raster == Raster::Hilbert);
        CHECK(s.cluster_dims().has_value() == cluster);
        SimulationReport r = simulate(s, {}, few_sms(sms));
        CAPTURE(cluster);
        CAPTURE(sh.m);
        CAPTURE(sh.n);
        CAPTURE(sms);
        CAPTURE(r.to_string());
        CHECK(r.passed);
        CHECK(r.mismatches == 0);
        CHECK(r.unwritten == 0);
      }
}

TEST_CASE("simulate: f16 inputs and a fused epilogue with f32 output") {
  for (int v : {6, 8, 10}) {
    Definition def;
    Tensor a = def.input("A", {256, 136}, DType::F16);
    Tensor b = def.input("B", {256, 136}, DType::F16);
    Tensor c = def.input("C", {256, 256}, DType::F32);
    Tensor bias = def.input("bias", {256}, DType::F32);
    def.set_output(def.cast(def.relu(def.add_bias(def.add_scaled(def.scale(def.matmul(a, b), 0.5), c, 0.25), bias,
                                                  BiasAlong::Cols)),
                            DType::F32));
    SimulationReport r = simulate(tutorial_schedule(v, def), {}, few_sms(2));
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("simulate: ping-pong consumers match the host reference on edge shapes") {
  // Odd tile counts (one consumer takes one tile more), one tile in all, M=1, K shorter than
  // the pipeline, and a fused f32 epilogue with C through each consumer's staging buffer.
  for (Shape sh : {Shape{256, 256, 256}, Shape{384, 384, 192}, Shape{300, 200, 136}, Shape{1, 8, 8},
                   Shape{129, 264, 64}, Shape{640, 128, 512}})
    for (uint64_t seed : {1u, 7u}) {
      Definition def = make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16);
      SimulateOptions o;
      o.seed = seed;
      SimulationReport r = simulate(ping_pong_schedule(def), o, few_sms(1));
      CAPTURE(r.to_string());
      CHECK(r.passed);
      CHECK(r.wgmmas > 0);
    }
  const Schedule s = ping_pong_schedule(
      make_definition(384, 256, 136, DType::BF16, DType::F32, {{OpKind::AddScaled, 0.5}, {OpKind::Gelu}}));
  LowerOptions lo;
  lo.limits = few_sms(1);
  REQUIRE(lower(s, lo).plan.epilogue.staged_c);
  SimulationReport r = simulate(s, {}, few_sms(1));
  CAPTURE(r.to_string());
  CHECK(r.passed);
}

TEST_CASE("simulate: a deadlock names the barrier, role, phase and CTA") {
  Definition def = make_gemm(256, 256, 1024, DType::BF16, DType::BF16);  // more k tiles than stages
  Kernel k = lower(tutorial_schedule(8, def));
  Plant drop_release([](const StmtPtr& s) -> std::optional<StmtPtr> {
    if (auto a = as<MbarrierArrive>(s); a && a->bar.array == Barrier::Empty) return StmtPtr(nullptr);
    return std::nullopt;
  });
  k.body = drop_release.mutate(k.body);
  SimulationReport r = simulate_kernel(k, def);
  REQUIRE(!r.errors.empty());
  CHECK(r.errors[0].find("deadlock: every warp is blocked") == 0);
  CHECK(r.errors[0].find("(role producer): waits on empty_bar[") != std::string::npos);
  CHECK(r.errors[0].find("arrivals missing") != std::string::npos);
  CHECK(r.errors[0].find("CTA (0,0,0)") != std::string::npos);
}

TEST_CASE("simulate: every planted bug class is caught in every kernel it applies to") {
  std::cout << "planted bug class -> kernels where it was planted, caught\n";
  int total = 0, caught_total = 0;
  for (const BugClass& bug : bug_classes()) {
    int planted = 0, caught = 0;
    for (int v : {5, 6, 8, 9, 10, kPingPong})
      // 256x512: every kernel has several tiles per CTA (v10's 128x256 tiles too)
      for (Shape sh : {Shape{256, 512, 256}, Shape{384, 256, 320}}) {
        Definition def = make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16);
        LowerOptions lo;
        lo.limits = few_sms(1);
        Kernel k = lower(v == kPingPong ? ping_pong_schedule(def) : tutorial_schedule(v, def), lo);
        if (!bug.applies(k.plan)) continue;
        const KernelPlan plan = k.plan;
        Plant plant([&](const StmtPtr& s) { return bug.plant(s, plan); });
        k.body = plant.mutate(k.body);
        if (plant.planted == 0) continue;
        ++planted;
        SimulateOptions o;
        o.max_steps = 5'000'000;
        SimulationReport r = simulate_kernel(k, def, o);
        CAPTURE(bug.name);
        CAPTURE(v);
        CHECK_FALSE(r.passed);
        caught += !r.passed;
      }
    std::cout << "  " << bug.name << ": " << caught << " of " << planted << "\n";
    CHECK(planted > 0);
    total += planted;
    caught_total += caught;
  }
  std::cout << "caught " << caught_total << " of " << total << " planted bugs\n";
}

// beta*C through the staging buffer: TMA brings C's tile, each thread reads it after the wait
// on c_bar. Each mistake there is caught by the simulator.
TEST_CASE("simulate: the staged C tile's load, wait and parity are checked") {
  const Definition def =
      make_definition(256, 512, 136, DType::BF16, DType::F32, {{OpKind::AddScaled, 1.0}, {OpKind::Gelu}});
  LowerOptions lo;
  lo.limits = few_sms(2);
  for (int v : {6, 8, 10}) {
    CAPTURE(v);
    const Kernel good = lower(tutorial_schedule(v, def), lo);
    REQUIRE(good.plan.epilogue.staged_c);
    CHECK(simulate_kernel(good, def).passed);
    auto planted = [&](Mutation bug) { return simulate_planted(good, def, std::move(bug)); };
    SimulationReport no_wait = planted([](const StmtPtr& s) -> std::optional<StmtPtr> {
      if (auto w = as<MbarrierWait>(s); w && w->bar.array == Barrier::C) return StmtPtr(nullptr);
      return std::nullopt;
    });
    CHECK_FALSE(no_wait.passed);
    CHECK(no_wait.to_string().find("the epilogue's read of C from the staging buffer") != std::string::npos);
    SimulationReport parity = planted([](const StmtPtr& s) -> std::optional<StmtPtr> {
      if (auto w = as<MbarrierWait>(s); w && w->bar.array == Barrier::C) {
        auto n = std::make_shared<MbarrierWait>(*w);
        n->parity = imm(0);
        return StmtPtr(n);
      }
      return std::nullopt;
    });
    CHECK_FALSE(parity.passed);
    SimulationReport early = planted([](const StmtPtr& s) -> std::optional<StmtPtr> {
      if (auto w = as<BulkWaitRead>(s)) {  // every bulk wait gone: the C load may land under a store
        (void)w;
        return StmtPtr(nullptr);
      }
      return std::nullopt;
    });
    CHECK_FALSE(early.passed);
  }
}

// Rows TMA cannot take (N or K not a multiple of 8): the tutorial steps fall back through `auto`
// to stores from registers (N) or element copies (K), and stay exact at every step that lowers.
TEST_CASE("simulate: ragged N and K through the auto fallbacks") {
  for (Shape sh : {Shape{77, 129, 72}, Shape{255, 257, 264}, Shape{77, 128, 71}, Shape{130, 9, 7}, Shape{1, 1, 1},
                   Shape{65, 63, 9}})
    for (int v = 3; v <= 10; ++v) {
      Definition def = make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16);
      const Schedule s = tutorial_schedule(v, def);
      try {
        lower(s);
      } catch (const CompileError&) {  // warp roles and rings need TMA loads: K % 8 != 0 stops at v4
        CHECK(sh.k % 8 != 0);
        CHECK(v >= 5);
        continue;
      }
      SimulationReport r = simulate(s, {}, few_sms(2));
      CAPTURE(v);
      CAPTURE(sh.m);
      CAPTURE(sh.n);
      CAPTURE(sh.k);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
}

// A 16-byte load on rows that are not 16-byte aligned would fault (or read past the row) on a
// GPU; the simulator refuses it.
TEST_CASE("simulate: a vector load on unaligned rows is reported") {
  Definition def = make_gemm(128, 128, 71, DType::BF16, DType::BF16);
  Kernel k = lower(tutorial_schedule(4, def));
  Plant widen([](const StmtPtr& s) -> std::optional<StmtPtr> {
    if (!as<SyncCopyTile>(s)) return std::nullopt;
    auto copy = copy_of<SyncCopyTile>(s);
    copy->load_bytes = 16;
    return StmtPtr(copy);
  });
  k.body = widen.mutate(k.body);
  REQUIRE(widen.planted == 2);
  SimulationReport r = simulate_kernel(k, def);
  REQUIRE(!r.errors.empty());
  CHECK(r.errors[0].find("a 16-byte load at element (1, 0) is not 16-byte aligned") != std::string::npos);
}

// The swapped orientation gg::gemm takes for skinny M: D^T = B * A^T with a column-major output,
// stored from registers at [col * M + row] (fewer columns than one atom, or rows of M not whole
// 16 bytes) or staged transposed and TMA-stored; exact, tiles hanging over both edges.
TEST_CASE("simulate: a column-major output under the auto configs") {
  // 256x1x4096: a long K, where narrow tiles take k tiles of 2 or 4 swizzle atoms
  for (Shape sh : {Shape{256, 1, 256}, Shape{200, 16, 136}, Shape{129, 9, 72}, Shape{64, 64, 64}, Shape{256, 1, 4096},
                   Shape{200, 72, 136}, Shape{136, 264, 72}, Shape{129, 200, 72}}) {
    Definition def;
    Tensor a = def.input("A", {sh.m, sh.k}, DType::BF16), b = def.input("B", {sh.n, sh.k}, DType::BF16);
    def.set_output(def.cast(def.matmul(a, b), DType::BF16), OutputLayout::ColumnMajor);
    const Schedule s = auto_schedule(def, choose_auto_params(def, few_sms(2)));
    Kernel k = lower(s);
    CHECK(k.plan.layouts.d_column_major);
    CHECK(k.plan.tma_store == (sh.n >= 64 && sh.m % 8 == 0));
    if (sh.k == 4096) CHECK(k.plan.tile_k > 64);
    SimulationReport r = simulate(s, {}, few_sms(2));
    CAPTURE(sh.m);
    CAPTURE(sh.n);
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
}

// Every layout (NN, TN, NT, TT) with strided A and D, through the tutorial steps that load by
// element copies (v4), TMA pipelines (v6), warp roles (v8) and clusters with multicast (v10):
// bit-exact, and D's padding untouched.
TEST_CASE("simulate: MN-major operands and leading dimensions, v4 v6 v8 v10, bit-exact") {
  for (Layout a : {Layout::KMajor, Layout::MNMajor})
    for (Layout b : {Layout::KMajor, Layout::MNMajor})
      for (int step : {4, 6, 8, 10}) {
        ProblemLayout l;
        l.a = a;
        l.b = b;
        l.lda = 272;  // 16-byte aligned, past both K (136) and M (264)
        l.ldd = 264;
        const Definition def = make_definition(264, 256, 136, DType::BF16, DType::BF16, {}, l);
        const SimulationReport r = simulate(tutorial_schedule(step, def));
        CAPTURE(step);
        CAPTURE(problem_layout_text(l));
        CAPTURE(r.to_string());
        CHECK(r.passed);
        CHECK(r.mismatches == 0);
      }
}

// Split-K: three CTAs share each tile (10 k tiles: 4, 4 and 2 real ones plus 2 zero-filled), on
// one SM so that a persistent CTA takes several tiles and tickets in turn; batched too. Each
// mistake in the hand-off is caught.
TEST_CASE("simulate: split-K's partial sums, tickets and ordered reduction are checked") {
  ProblemLayout batched;
  batched.batch = 2;
  for (const ProblemLayout& layout : {ProblemLayout{}, batched})
    for (int v : {4, 6, 8, 10}) {
      CAPTURE(v);
      CAPTURE(layout.batch);
      const Definition def = make_definition(256, 256, 640, DType::BF16, DType::BF16, {}, layout);
      Schedule s = tutorial_schedule(v, def);
      s.split_k(3);
      LowerOptions lo;
      lo.limits = few_sms(1);
      const Kernel good = lower(s, lo);
      REQUIRE(good.plan.split_k == 3);
      SimulationReport ok = simulate_kernel(good, def);
      CAPTURE(ok.to_string());
      CHECK(ok.passed);
      auto planted = [&](Mutation bug) { return simulate_planted(good, def, std::move(bug)); };
      // The last split writes only its own share.
      CHECK_FALSE(planted([](const StmtPtr& n) -> std::optional<StmtPtr> {
                    if (as<PartialReduce>(n)) return StmtPtr(nullptr);
                    return std::nullopt;
                  }).passed);
      // Each split's share one k tile short: the shares leave gaps in K.
      CHECK_FALSE(planted(rewrite<Let>([](Let& l) { l.value = l.value - imm(1); },
                                       [](const Let& l) { return l.name == "k_tiles"; }))
                      .passed);
      // A split parks its sums in another split's place.
      CHECK_FALSE(planted(rewrite<PartialStore>([](PartialStore& p) { p.split = imm(0); })).passed);
      // The ticket counts to the wrong number of splits: no CTA reduces, or one reduces early.
      CHECK_FALSE(planted(rewrite<TileTicket>([](TileTicket& t) { t.arrivals = imm(2); })).passed);
    }
}

// split_k ... tail: on 3 SMs, 11 tiles (one column of 128-row tiles) run 9 whole and 2 split 3
// ways, so every CTA runs 3 whole tiles and then 2 shares; a grid of 1 SM has no tail (every tile
// whole). Each CTA's pipeline counts whole tiles' k loops, then shares'; each mistake in that
// bookkeeping, or in which tiles are shared, is caught.
TEST_CASE("simulate: split_k tail runs the whole waves unsplit and splits the last wave's tiles") {
  for (int v : {6, 7, 8})
    for (int sms : {3, 1}) {
      CAPTURE(v);
      CAPTURE(sms);
      const Definition def = make_gemm(1408, 128, 640, DType::BF16, DType::BF16);
      Schedule s = tutorial_schedule(v, def);
      s.split_k(3, true);
      LowerOptions lo;
      lo.limits = few_sms(sms);
      const Kernel good = lower(s, lo);
      REQUIRE(good.plan.split_k_tail);
      SimulationReport ok = simulate_kernel(good, def);
      CAPTURE(ok.to_string());
      CHECK(ok.passed);
      if (sms == 1) continue;
      // Batched: the work units walk both matrices' tiles (22 on 3 SMs: 21 whole, 1 split).
      ProblemLayout batched;
      batched.batch = 2;
      const Definition two = make_definition(1408, 128, 640, DType::BF16, DType::BF16, {}, batched);
      Schedule sb = tutorial_schedule(v, two);
      sb.split_k(3, true);
      SimulationReport batch_report = simulate_kernel(lower(sb, lo), two);
      CAPTURE(batch_report.to_string());
      CHECK(batch_report.passed);
      auto planted = [&](Mutation bug) { return simulate_planted(good, def, std::move(bug)); };
      // The last wave's tiles run all of K in every split: each adds K three times over.
      CHECK_FALSE(planted(rewrite<Let>([](Let& l) { l.value = var("k_tiles_all"); },
                                       [](const Let& l) { return l.name == "k_tiles"; }))
                      .passed);
      // The pipeline's running count takes every unit for a whole tile (one role, v6), or one role's
      // pipeline state skips a stage at each unit's first k tile (warp roles): stages and phases drift.
      if (good.plan.warp_specialized)
        CHECK_FALSE(simulate_kernel(gg::testing::with_pipeline_state_skipped(good), def).passed);
      else
        CHECK_FALSE(planted(rewrite<Assign>([](Assign& a) { a.value = var("k_done") + var("k_tiles_all"); },
                                            [](const Assign& a) { return a.name == "k_done"; }))
                        .passed);
      // The shares one k tile short: gaps in K.
      CHECK_FALSE(planted(rewrite<Let>([](Let& l) { l.value = l.value - imm(1); },
                                       [](const Let& l) { return l.name == "k_share"; }))
                      .passed);
      // The last wave's splits each store their own share as the tile.
      CHECK_FALSE(planted(rewrite<If>([](If& i) { i.cond = imm(0); },
                                      [](const If& i) { return i.cond && i.cond->kind == ExprKind::Var && i.cond->name == "in_tail"; }))
                      .passed);
    }
}

// split_k ... stream: the tiles past the whole waves are dealt stream-K, a CTA's k range crossing
// tile boundaries (11 tiles of 10 k tiles on 3 SMs: 9 whole, the other 2 tiles' 20 k tiles in
// ranges of 6, 7, 7 over 3 CTAs; 5 SMs: 10 whole and one tile in 5 ranges of 2 ... and so on), so
// a tile has from 1 to 5 pieces. Each mistake in the deal or the hand-off is caught.
TEST_CASE("simulate: split_k stream deals the last wave's k tiles in contiguous ranges across tiles") {
  for (int v : {6, 8})
    for (int splits : {2, 3, 4})
      for (int sms : {1, 2, 3, 5}) {
        CAPTURE(v);
        CAPTURE(splits);
        CAPTURE(sms);
        const Definition def = make_gemm(1408, 128, 640, DType::BF16, DType::BF16);
        Schedule s = tutorial_schedule(v, def);
        s.split_k(splits, false, true);
        LowerOptions lo;
        lo.limits = few_sms(sms);
        const Kernel good = lower(s, lo);
        REQUIRE(good.plan.split_k_stream);
        SimulationReport ok = simulate_kernel(good, def);
        CAPTURE(ok.to_string());
        CHECK(ok.passed);
        if (sms != 3 || splits != 3) continue;
        auto planted = [&](Mutation bug) { return simulate_planted(good, def, std::move(bug)); };
        auto let_changed = [&](const char* name, std::function<ExprPtr(const ExprPtr&)> change) {
          return planted(rewrite<Let>([change](Let& l) { l.value = change(l.value); },
                                      [name](const Let& l) { return l.name == name; }));
        };
        // Two CTAs' ranges overlap by a k tile: it is added twice.
        CHECK_FALSE(let_changed("range_end", [](const ExprPtr& e) { return e + imm(1); }).passed);
        // A range's first unit starts at its tile's first k tile, not at the range's.
        CHECK_FALSE(let_changed("seg_begin", [](const ExprPtr&) { return var("sk_tile") * var("k_tiles_all"); }).passed);
        // A piece parks its sums in the next piece's place (or past the workspace's pieces).
        CHECK_FALSE(let_changed("split", [](const ExprPtr& e) { return e + imm(1); }).passed);
        // The ticket waits for one piece more than the tile has: no CTA reduces it.
        CHECK_FALSE(let_changed("pieces", [](const ExprPtr& e) { return e + imm(1); }).passed);
        // The reduction adds the first piece only.
        CHECK_FALSE(planted(rewrite<PartialReduce>([](PartialReduce& r) { r.pieces = imm(1); })).passed);
      }
}

// The pipeline's stage and phase follow a running count of the k tiles a CTA's earlier work units
// passed through it (k_done, advanced after each unit; dealt to ping-pong consumers, each advances
// past the other's units too), and the staged C tile's barrier a count of the warpgroup's own units
// (tiles_done). On 2 SMs every CTA walks several units; each slip in that bookkeeping is caught.
TEST_CASE("simulate: the pipeline's running count over a CTA's work units") {
  const Definition def = make_gemm(640, 512, 384, DType::BF16, DType::BF16);
  LowerOptions lo;
  lo.limits = few_sms(2);
  std::vector<std::pair<std::string, Schedule>> cases = {{"v6", tutorial_schedule(6, def)},
                                                          {"v8", tutorial_schedule(8, def)},
                                                          {"v10", tutorial_schedule(10, def)},
                                                          {"pingpong", builtin_schedule("pingpong", def)}};
  for (const auto& c : cases) {
    const std::string& name = c.first;  // clang 14 cannot capture structured bindings (CAPTURE)
    CAPTURE(name);
    const Kernel good = lower(c.second, lo);
    REQUIRE(good.plan.persistent);
    SimulationReport ok = simulate_kernel(good, def);
    CAPTURE(ok.to_string());
    REQUIRE(ok.passed);
    auto planted = [&](Mutation bug) { return simulate_planted(good, def, std::move(bug)); };
    // The count never advances: every unit reuses the first unit's stages and phases.
    CHECK_FALSE(planted(gg::testing::drop<Assign>([](const Assign& a) { return a.name == "k_done"; })).passed);
    // It advances a k tile short per unit.
    CHECK_FALSE(planted(rewrite<Assign>([](Assign& a) { a.value = a.value - imm(1); },
                                        [](const Assign& a) { return a.name == "k_done"; }))
                    .passed);
    if (good.plan.ping_pong) {
      // A consumer advances past its own unit only, not the other consumer's.
      CHECK_FALSE(planted(rewrite<Assign>([](Assign& a) { a.value = var("k_done") + var("k_tiles"); },
                                          [](const Assign& a) { return a.name == "k_done"; }))
                      .passed);
      // The second consumer starts at the count of the first unit, not after it.
      CHECK_FALSE(planted(rewrite<Let>([](Let& l) { l.value = imm(0); },
                                       [](const Let& l) { return l.name == "k_done"; }))
                      .passed);
    }
  }
  // The staged C tile's barrier phase counts the warpgroup's own earlier units.
  const Definition with_c =
      make_definition(640, 512, 136, DType::BF16, DType::F32, {{OpKind::AddScaled, 1.0}, {OpKind::Gelu}});
  // v8: 128-column tiles in two 64-column subtiles over two buffers, so each tile flips the phase
  // (v10's four subtiles over two buffers pass two phases a tile, where a stale count reads alike).
  const Kernel good = lower(tutorial_schedule(8, with_c), lo);
  REQUIRE(good.plan.epilogue.staged_c);
  REQUIRE(simulate_kernel(good, with_c).passed);
  CHECK_FALSE(simulate_planted(good, with_c, gg::testing::drop<Assign>([](const Assign& a) { return a.name == "tiles_done"; })).passed);
}

// Multicast pairs a cluster's CTAs on neighbouring tiles; an odd tile count along the paired
// dimension gives the last pair a tile past D's edge, which loads zeros for its peer's multicast
// and stores nothing. Staged (TMA) and register stores, a row bias with f32 out, a batch, ping-pong
// and A multicast (pairs along n). With the loop cut back to whole pairs, tiles go unwritten.
TEST_CASE("simulate: multicast over an odd tile count pads the last cluster with a tile past the edge") {
  struct Case {
    std::string what;
    Schedule s;
  };
  const auto v10 = [](const Definition& def) { return tutorial_schedule(10, def); };
  std::vector<Case> cases;
  cases.push_back({"v10, 3 m tiles", v10(make_gemm(384, 256, 128, DType::BF16, DType::BF16))});
  cases.push_back({"v10, 3 m tiles, N=257 stores from registers", v10(make_gemm(257, 257, 72, DType::BF16, DType::BF16))});
  cases.push_back({"v10, row bias, f32 out",
                   v10(make_definition(300, 256, 136, DType::BF16, DType::F32, {{OpKind::AddBias, 0.0, BiasAlong::Rows}}))});
  {
    ProblemLayout l;
    l.batch = 3;
    cases.push_back({"v10, batch 3", v10(make_definition(264, 264, 136, DType::BF16, DType::BF16, {}, l))});
  }
  cases.push_back({"ping-pong, 1 m tile", ping_pong_schedule(make_gemm(1, 264, 64, DType::BF16, DType::BF16))});
  cases.push_back({"v8 + A multicast, 3 n tiles",
                   tutorial_schedule(8, make_gemm(256, 384, 128, DType::BF16, DType::BF16)).cluster(2, 1, 1).multicast("A")});
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const ResourceSummary res = summarize_resources(c.s, few_sms(2));
    CHECK(res.grid.overhang_tiles > 0);
    LowerOptions lo;
    lo.limits = few_sms(2);
    Kernel k = lower(c.s, lo);
    SimulationReport r = simulate_kernel(k, c.s.definition());
    CAPTURE(r.to_string());
    CHECK(r.passed);
    CHECK(r.mismatches == 0);
    // The loop before padding: whole pairs only.
    Plant whole_pairs([&](const StmtPtr& s) -> std::optional<StmtPtr> {
      auto f = as<For>(s);
      if (!f || f->kind != LoopKind::Tiles) return std::nullopt;
      auto cut = copy_of<For>(s);
      // a pair per overhanging tile (the end may be a count of args.m, simulated at the planned M)
      cut->end = f->end - imm(res.grid.overhang_tiles);
      return StmtPtr(cut);
    });
    k.body = whole_pairs.mutate(k.body);
    CHECK(whole_pairs.planted > 0);
    SimulationReport cut = simulate_kernel(k, c.s.definition());
    CHECK(cut.unwritten > 0);
  }
}

// The producer's drain keeps a CTA from exiting while its peer's consumers still release its
// stages (multicast). Without it, a CTA that runs ahead of its peer exits before the peer's last
// releases, which then arrive on the barriers of a CTA that has exited.
TEST_CASE("simulate: without the producer's drain a peer arrives on a CTA that exited") {
  for (int v : {9, 10}) {
    Definition def = make_gemm(256, 512, 256, DType::BF16, DType::BF16);
    LowerOptions lo;
    lo.limits = few_sms(1);
    const Kernel good = lower(tutorial_schedule(v, def), lo);
    REQUIRE(good.plan.pipeline.drain_at_exit);
    Kernel k = good;
    Plant no_drain([](const StmtPtr& s) -> std::optional<StmtPtr> {
      if (auto f = as<For>(s); f && f->kind == LoopKind::Drain) return StmtPtr(nullptr);
      return std::nullopt;
    });
    k.body = no_drain.mutate(k.body);
    REQUIRE(no_drain.planted > 0);
    int caught = 0, seeds = 0;
    for (uint64_t seed = 1; seed <= 6; ++seed, ++seeds) {
      SimulateOptions o;
      o.seed = seed;
      o.lead_cta = int(seed % 2);
      CHECK(simulate_kernel(good, def, o).passed);
      SimulationReport r = simulate_kernel(k, def, o);
      if (!r.passed) {
        ++caught;
        CHECK(r.to_string().find("after it exited") != std::string::npos);
      }
    }
    CAPTURE(v);
    std::cout << "v" << v << ": a missing drain caught with " << caught << " of " << seeds << " seeds\n";
    CHECK(caught == seeds);
  }
}

// Every swizzle width in the simulated set: K-major operand rows of 32, 64 and 128 bytes (k tiles
// of 16, 32, 64), MN-major ones (a B tile 16, 32 or 64 elements wide), and staging chunks of 32,
// 64 and 128 bytes. The TMA tensor map and the MMA descriptor each carry the width; a map whose
// swizzle differs from the layout's is caught at every width.
TEST_CASE("simulate: every swizzle width of operand rows and staging, and a map swizzle that disagrees") {
  struct Case {
    int tile_n, tile_k;
    Layout b;
  };
  std::set<std::pair<bool, int>> operand_widths;  // (MN-major, bytes)
  std::set<int> staging_widths;
  for (Case c : {Case{96, 16, Layout::KMajor}, Case{32, 32, Layout::KMajor}, Case{64, 64, Layout::KMajor},
                 Case{16, 64, Layout::MNMajor}, Case{32, 64, Layout::MNMajor}, Case{64, 64, Layout::MNMajor}}) {
    CAPTURE(c.tile_n);
    CAPTURE(c.tile_k);
    CAPTURE(c.b == Layout::MNMajor);
    ProblemLayout layout;
    layout.b = c.b;
    const Definition def = make_definition(192, 160, 160, DType::BF16, DType::BF16, {}, layout);
    Schedule s(def);
    s.tile(64, c.tile_n, c.tile_k).inline_op("cast").mma(64, c.tile_n, 16, Target::Sm90a);
    s.bind("k_o", Binding::Serial).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
    s.cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma);
    s.cache_write("cast", Place::Shared, CopyMethod::Tma).circular_buffer("k_o", 2);
    const Kernel good = lower(s);
    const int swizzle_b = good.plan.operand(rt::Operand::B).smem.swizzle_bytes;
    operand_widths.insert({c.b == Layout::MNMajor, swizzle_b});
    staging_widths.insert(good.plan.staging.buffer.swizzle_bytes);
    CAPTURE(swizzle_b);
    CAPTURE(good.plan.staging.buffer.swizzle_bytes);
    const SimulationReport ok = simulate_kernel(good, def);
    CAPTURE(ok.to_string());
    REQUIRE(ok.passed);
    Kernel wrong = good;
    for (auto& t : wrong.launch.tensor_maps)
      if (t.operand == rt::Operand::B)
        t.swizzle = swizzle_b == 128 ? rt::Swizzle::B64 : rt::Swizzle::B128;  // another width
    CHECK_FALSE(simulate_kernel(wrong, def).passed);
  }
  for (bool mn_major : {false, true})
    for (int width : {32, 64, 128}) CHECK(operand_widths.count({mn_major, width}) == 1);
  CHECK(staging_widths == std::set<int>{32, 64, 128});
}
