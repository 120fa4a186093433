// sm_100a kernels (tcgen05.mma, the accumulator in TMEM) on the CPU simulator and under
// check_sync. No Blackwell GPU has run them: the tutorial steps v1..v10 retargeted to sm_100a (one
// role; a TMA producer and a consumer whose elected thread issues the MMAs; a 2-CTA cluster with B
// multicast; two consumer warpgroups each storing its half of the tile's rows) must match the host reference bit-exactly on small-integer inputs (edge shapes,
// interleavings, other tiles and MMA shapes, layouts, fused epilogues), and bugs planted into their
// tcgen05 code must be caught, by check_sync on the planted IR, by the simulator, or both.
#include <doctest/doctest.h>

#include <functional>
#include <iostream>
#include <optional>
#include <variant>

#include "codegen/index_math.h"
#include "codegen/lower.h"
#include "codegen/resources.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;

namespace {

struct Shape {
  int64_t m, n, k;
};

DeviceLimits b200_with_sms(int sms) {
  DeviceLimits d = blackwell();
  d.sms = sms;  // persistent CTAs then loop over several tiles
  return d;
}

Schedule sm100(int v, const Definition& def) { return tutorial_schedule(v, def, Target::Sm100a); }

// Tutorial step v on sm_100a with another tile and MMA shape (m rows per tcgen05.mma, n the
// tile's columns).
Schedule with_tile(int v, const Definition& def, int64_t tm, int64_t tn, int mma_m) {
  const Schedule base = sm100(v, def);
  Schedule s(def);
  for (Directive d : base.directives()) {
    if (auto* t = std::get_if<TileD>(&d)) *t = {tm, tn, t->k};
    if (auto* m = std::get_if<MmaD>(&d)) *m = {mma_m, static_cast<int>(tn), m->k, m->target};
    s.apply(d);
  }
  return s;
}

SimulationReport run(const Schedule& s, uint64_t seed = 1, int sms = 2) {
  SimulateOptions o;
  o.seed = seed;
  return simulate(s, o, b200_with_sms(sms));
}

using testing::drop;
using testing::Plant;
using testing::rewrite;
using testing::sync_error;

using testing::plant_into;
using testing::Verdict;

bool mentions(const Verdict& v, const std::string& text) {
  return v.sync.find(text) != std::string::npos || v.sim.to_string().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("sm_100a: tutorial v1..v10 match the host reference on edge shapes, several interleavings") {
  for (int v = 1; v <= 10; ++v) {
    std::vector<Shape> shapes = {{256, 256, 256}, {300, 200, 136}, {1, 8, 8}, {129, 264, 64}, {64, 8, 1024}, {384, 256, 64}};
    if (v == 1) shapes = {{128, 128, 64}, {100, 72, 40}, {1, 8, 8}};
    if (v == 2) shapes = {{128, 128, 512}, {77, 128, 200}};
    for (Shape sh : shapes)
      for (uint64_t seed : {1u, 7u}) {
        const SimulationReport r = run(sm100(v, make_gemm(sh.m, sh.n, sh.k, DType::BF16, DType::BF16)), seed, 1);
        CAPTURE(v);
        CAPTURE(r.to_string());
        CHECK(r.passed);
        CHECK(r.tcgen05_mmas > 0);
        CHECK(r.wgmmas == 0);
      }
  }
}

TEST_CASE("sm_100a: m64 and m128 blocks, one or two column sets of TMEM, narrow tiles, warp roles") {
  const Definition def = make_gemm(384, 256, 320, DType::BF16, DType::BF16);
  struct Tile {
    int64_t m, n;
    int mma_m;
  };
  // 64 rows: half the lanes of each warp hold rows; 192 and 256 rows: a second set of columns.
  for (Tile t : {Tile{128, 128, 128}, Tile{64, 128, 64}, Tile{256, 64, 128}, Tile{256, 128, 64}, Tile{192, 64, 64},
                 Tile{128, 256, 128}, Tile{128, 32, 64}, Tile{128, 16, 128}})
    for (int v : {3, 6, 8}) {
      if (v == 8 && t.m * t.n > 128 * 128) continue;  // v8's four stages of a larger tile: over the shared memory
      CAPTURE(t.m);
      CAPTURE(t.n);
      CAPTURE(t.mma_m);
      CAPTURE(v);
      const SimulationReport r = run(with_tile(v, def, t.m, t.n, t.mma_m), 3, 1);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
}

// Two warpgroups of one role sharing the accumulator (the row halves bound to warpgroups, no warp
// roles): warp 0's thread issues the MMAs, every warp reads its quarter of the lanes, each
// warpgroup keeps its band.
TEST_CASE("sm_100a: two warpgroups of one role share the TMEM accumulator") {
  for (int v : {3, 6}) {
    Schedule s = sm100(v, make_gemm(384, 256, 320, DType::BF16, DType::BF16));
    s.split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup);
    CAPTURE(v);
    const SimulationReport r = run(s, 5, 1);
    CAPTURE(r.to_string());
    CHECK(r.passed);
    CHECK(sync_error(lower(s)).empty());
  }
}

TEST_CASE("sm_100a: f16 inputs, fused epilogues (C staged or read from memory, bias, f32 out)") {
  for (int v : {3, 4, 5, 6, 8, 9, 10}) {
    Definition def;
    Tensor a = def.input("A", {256, 136}, DType::F16);
    Tensor b = def.input("B", {264, 136}, DType::F16);
    Tensor c = def.input("C", {256, 264}, DType::F32);
    Tensor bias = def.input("bias", {264}, DType::F32);
    def.set_output(def.cast(def.relu(def.add_bias(def.add_scaled(def.scale(def.matmul(a, b), 0.5), c, 0.25), bias,
                                                  BiasAlong::Cols)),
                            DType::F32));
    CAPTURE(v);
    const SimulationReport r = run(sm100(v, def));
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
  // C in the output's dtype beside a TMA store: C arrives in the staging buffer by TMA.
  const Definition staged_c =
      make_definition(256, 512, 136, DType::BF16, DType::F32, {{OpKind::AddScaled, 1.0}, {OpKind::Relu}});
  LowerOptions lo;
  lo.limits = b200_with_sms(1);
  for (int v : {6, 8, 10}) {
    REQUIRE(lower(sm100(v, staged_c), lo).plan.epilogue.staged_c);
    const SimulationReport r = run(sm100(v, staged_c), 1, 1);
    CAPTURE(v);
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("sm_100a: MN-major operands, leading dimensions, column-major D and batches, bit-exact") {
  for (Layout a : {Layout::KMajor, Layout::MNMajor})
    for (Layout b : {Layout::KMajor, Layout::MNMajor})
      for (int step : {4, 6, 8, 9, 10}) {
        ProblemLayout l;
        l.a = a;
        l.b = b;
        l.lda = 272;
        l.ldd = 264;
        const SimulationReport r = run(sm100(step, make_definition(264, 256, 136, DType::BF16, DType::BF16, {}, l)));
        CAPTURE(step);
        CAPTURE(problem_layout_text(l));
        CAPTURE(r.to_string());
        CHECK(r.passed);
      }
  ProblemLayout column_major;
  column_major.d = OutputLayout::ColumnMajor;
  ProblemLayout batched;
  batched.batch = 3;
  batched.stride_b = 0;  // one B for every matrix
  for (const ProblemLayout& l : {column_major, batched})
    for (int step : {3, 6, 8}) {
      const SimulationReport r = run(sm100(step, make_definition(200, 136, 72, DType::BF16, DType::BF16, {}, l)), 2, 1);
      CAPTURE(step);
      CAPTURE(problem_layout_text(l));
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
}

TEST_CASE("sm_100a: check_sync passes the lowered kernels; the IR has the tcgen05 nodes, not wgmma") {
  for (int v = 3; v <= 10; ++v) {
    const Kernel k = lower(sm100(v, make_gemm(1024, 1024, 1024, DType::BF16, DType::BF16)));
    CAPTURE(v);
    CHECK(sync_error(k).empty());
    const std::string ir = dump(k.body);
    // v9 and v10: one m256 MMA over the CTA pair (cta_pair_test.cpp); v10 with two accumulator buffers.
    const char* mma = v == 10 ? "Tcgen05Mma m256n256k16.bf16" : v == 9 ? "Tcgen05Mma m256n128k16.bf16" : "Tcgen05Mma m64n128k16.bf16";
    for (const char* node : {"TmemAlloc", "TmemBaseLoad", mma, "Tcgen05Commit empty_bar",
                             v == 10 ? "Tcgen05Commit mma_done_bar[(tiles_done % 2)]" : "Tcgen05Commit mma_done_bar[0]", "TmemLoad 32x32b.x32", "TmemDealloc", "Tcgen05Fence"})
      CHECK_MESSAGE(ir.find(node) != std::string::npos, node);
    for (const char* node : {"Wgmma", "AccumulatorDecl", "AccumulatorZero"})
      CHECK_MESSAGE(ir.find(node) == std::string::npos, node);
    CHECK(k.plan.accumulator == Place::Tmem);
    CHECK(k.plan.tmem_columns == (v == 10 ? 512 : 128));  // v10: two buffers of 256 columns
  }
}

// Each bug is planted into v3 (synchronous copies), v5 (a TMA ring), v6 (persistent, several
// tiles per CTA), v8 (a TMA producer role; the consumer's thread commits each stage back to it) and
// v9 (a 2-CTA cluster: the commit releases the stage in both CTAs) and v10 (two consumer
// warpgroups writing back the accumulator buffers an MMA warp fills) at 256x512x256 on one SM; each must be caught, and where a
// check names what broke, the message says so.
TEST_CASE("sm_100a: planted tcgen05 bugs are caught by check_sync or the simulator") {
  struct Bug {
    std::string name;
    Plant::Fn plant;
    bool by_sync, by_sim;   // which of the two must catch it
    std::string message;    // a phrase the catching report contains
  };
  const auto commit_to = [](Barrier array) {
    return [array](const Tcgen05Commit& c) { return c.bar.array == array; };
  };
  const std::vector<Bug> bugs = {
      {"commit releasing a stage missing", drop<Tcgen05Commit>(commit_to(Barrier::Empty)), true, true, "empty_bar"},
      {"commit finishing the tile missing", drop<Tcgen05Commit>(commit_to(Barrier::MmaDone)), true, true,
       "mma_done_bar"},
      {"stage released on the tile's barrier instead",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.bar = {Barrier::MmaDone, imm(0)}; }, commit_to(Barrier::Empty)),
       true, true, ""},
      {"stage released on the next stage's barrier",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.bar.index = (c.bar.index + imm(1)) % imm(2); },
                              commit_to(Barrier::Empty)),
       true, false, "empty_bar"},
      {"stage released in this CTA only (multicast commit without its mask)",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.multicast_mask = 0; },
                              [](const Tcgen05Commit& c) { return c.multicast_mask != 0; }),
       true, true, "empty_bar"},
      {"stage refilled without waiting for its release",
       drop<MbarrierWait>([](const MbarrierWait& w) { return w.bar.array == Barrier::Empty; }), true, false,
       "empty_bar"},
      {"next tile's MMAs without the barrier after the last tile's tcgen05.ld",
       drop<NamedBarrierSync>([](const NamedBarrierSync& b) {
         int64_t id = 0;
         return is_const(b.id, &id) && id == kTmemBarrier;
       }),
       true, false, "may still read it"},
      {"both consumers storing the first band of the tile's rows",
       rewrite<EpilogueStore>([](EpilogueStore& e) { e.warpgroup = imm(0); index_epilogue_store(e); },
                              [](const EpilogueStore& e) { return !is_const(e.warpgroup); }),
       false, true, "mismatch"},
      {"TMEM read before the accumulator-ready wait",
       drop<MbarrierWait>([](const MbarrierWait& w) { return w.bar.array == Barrier::MmaDone; }), true, true,
       "without waiting on"},
      {"descriptor swizzle not the TMA layout's",
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.a_layout.swizzle_bytes = m.b_layout.swizzle_bytes = 64; }),
       true, true, "swizzle"},
      {"every MMA accumulating (the first does not overwrite TMEM)",
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.accumulate = imm(1); }),
       false, true, "mismatch"},
      {"m64 blocks in the same lanes",
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.lane = imm(0); }, [](const Tcgen05Mma& m) { return m.m == 64; }),
       false, true, "mismatch"},
      {"tcgen05.ld of another warp's lanes", rewrite<TmemLoad>([](TmemLoad& l) { l.lane = imm(0); }),
       false, true, "reaches only its quarter"},
      {"tcgen05.fence::after_thread_sync missing",
       drop<Tcgen05Fence>([](const Tcgen05Fence& f) { return f.after; }), true, false, "tcgen05.fence::after_thread_sync"},
      {"TMEM never freed", drop<TmemDealloc>(), true, true, "freed"},
      {"TMEM address read before the barrier after the allocation",
       drop<SyncThreads>(), true, true, ""},
  };
  int planted = 0, caught = 0;
  std::cout << "sm_100a planted bug -> caught by check_sync / the simulator (v3, v5, v6, v8, v9, v10)\n";
  for (const Bug& bug : bugs) {
    std::string row;
    for (int v : {3, 5, 6, 8, 9, 10}) {
      const Definition def = make_gemm(256, 512, 256, DType::BF16, DType::BF16);
      LowerOptions lo;
      lo.limits = b200_with_sms(1);
      const Kernel good = lower(sm100(v, def), lo);
      Kernel probe = good;
      Plant p(bug.plant);
      probe.body = p.mutate(probe.body);
      if (p.planted == 0) {
        row += " -";
        continue;
      }
      CAPTURE(bug.name);
      CAPTURE(v);
      const Verdict verdict = plant_into(good, def, bug.plant);
      CAPTURE(verdict.sync);
      CAPTURE(verdict.sim.to_string());
      const bool by_sync = !verdict.sync.empty(), by_sim = !verdict.sim.passed;
      ++planted;
      caught += by_sync || by_sim;
      CHECK((by_sync || by_sim));
      if (bug.by_sync) CHECK(by_sync);
      if (bug.by_sim) CHECK(by_sim);
      if (!bug.message.empty()) CHECK(mentions(verdict, bug.message));
      row += std::string(" ") + (by_sync ? "sync" : "-") + "/" + (by_sim ? "sim" : "-");
    }
    std::cout << "  " << bug.name << ":" << row << "\n";
  }
  std::cout << "caught " << caught << " of " << planted << "\n";
  CHECK(caught == planted);
}

// sm_100a clusters keep the cluster barrier at exit (the tcgen05.commit of a peer releases this
// CTA's stages); without it check_sync finds nothing that keeps a CTA from exiting under them.
TEST_CASE("sm_100a: a cluster kernel without its exit cluster barrier is refused by check_sync") {
  const Kernel k = lower(sm100(9, make_gemm(1024, 1024, 1024, DType::BF16, DType::BF16)));
  REQUIRE(k.plan.cluster_size == 2);
  REQUIRE_FALSE(k.plan.pipeline.drain_at_exit);
  CHECK(sync_error(k).empty());
  struct DropExit : Mutator {  // the whole barrier: the init's is split into an arrive and the roles' waits
    int dropped = 0;
    StmtPtr mutate_ClusterSync(const std::shared_ptr<const ClusterSync>& c) override {
      if (c->part != ClusterPart::ArriveAndWait) return c;
      ++dropped;
      return nullptr;
    }
  } drop_exit;
  Kernel no_exit = k;
  no_exit.body = drop_exit.mutate(k.body);
  REQUIRE(drop_exit.dropped == 1);
  const std::string message = sync_error(no_exit);
  CAPTURE(message);
  CHECK(message.find("neither a cluster barrier after the roles nor a producer's drain") != std::string::npos);
}

// What sm_100a does not lower yet is refused with `not-lowered`, naming the part.
TEST_CASE("sm_100a: CTA-pair MMAs lower with an MMA warp, and say why not elsewhere; consumers in turns and split-K lower") {
  const Definition def = make_gemm(1024, 1024, 1024, DType::BF16, DType::BF16);
  auto refusal = [](const Schedule& s) {
    try {
      LowerOptions lo;
      lo.limits = blackwell();
      lower(s, lo);
    } catch (const CompileError& e) {
      return e.rule() + ": " + e.message();
    }
    return std::string("lowered");
  };
  CHECK(refusal(ping_pong_schedule(def, Target::Sm100a)) == "lowered");  // ping_pong_tmem_test.cpp
  Schedule split = sm100(6, def);
  split.split_k(2);
  CHECK(refusal(split) == "lowered");  // split-K: split_k_tmem_test.cpp
  const std::string pair_head = "tile 128 256 64\ninline cast\nmma 256 256 16 sm_100a\nbind k_o serial\nbind m_o block.y\n"
                                "bind n_o block.x\ncache_read A tma\ncache_read B tma\n";
  auto pair = [&](const std::string& rest) {
    const ScheduleFile f = parse_schedule_file(pair_head + rest);
    return refusal(apply_directives(def, f.directives, f.directive_lines));
  };
  const std::string roles = "persist m_o n_o\nwarp_specialize 40 232\ncluster 2 1 1\ncircular_buffer k_o 4\n";
  CHECK(pair(roles) == "lowered");  // the pair: cta_pair_test.cpp
  CHECK(pair("cluster 2 1 1\n").find("not-lowered: a cluster without warp_specialize") == 0);
  CHECK(pair("warp_specialize 40 232\ncluster 2 1 1\ncircular_buffer k_o 4\n")
            .find("not-lowered: mma m256 (a tcgen05.mma over a CTA pair) without persist") == 0);
  CHECK(pair(roles + "multicast B\n")
            .find("not-lowered: mma m256 (a tcgen05.mma over a CTA pair) with multicast (the pair's MMA already reads "
                  "B's halves from both CTAs)") == 0);
  CHECK(pair(roles + "split_k 2\n") == "lowered");  // each CTA's epilogue hands its own tile's splits over
  CHECK(pair("persist m_o n_o\nwarp_specialize 40 232\ncluster 4 1 1\ncircular_buffer k_o 4\n")
            .find("not-lowered: mma m256 (a tcgen05.mma over a CTA pair) in a cluster of 4 CTAs (one pair: cluster 2 1 1)") == 0);
  // Every tutorial step lowers.
  for (int v = 1; v <= 10; ++v) CHECK(refusal(sm100(v, v <= 2 ? make_gemm(128, 128, 64 * v, DType::BF16, DType::BF16) : def)) == "lowered");
}

// A column-major D stored by TMA on sm_100a: each thread holds a row of the tile out of TMEM
// (tcgen05.ld) and writes its values down the transposed staging buffer's columns (one 16- or
// 32-bit store each, no stmatrix.trans), so f32 outputs take the TMA store too. One CTA's m64
// blocks (v8, a 128-row band over two swizzle chunks), and v10's pair with two consumer bands.
TEST_CASE("sm_100a: a column-major D stored by TMA through a transposed staging out of TMEM, bit-exact") {
  for (int v : {8, 10}) {
    for (DType out : {DType::BF16, DType::F16, DType::F32}) {
      ProblemLayout column_major;
      column_major.d = OutputLayout::ColumnMajor;
      const Definition def = make_definition(520, 264, 264, out == DType::F16 ? DType::F16 : DType::BF16, out, {},
                                             column_major);
      const Schedule step = sm100(v, def);
      Schedule s(def);
      for (Directive d : step.directives()) {
        if (auto* w = std::get_if<CacheWriteD>(&d); w && w->place == Place::Shared) w->method = CopyMethod::Tma;
        s.apply(d);
      }
      CAPTURE(v);
      CAPTURE(dtype_name(out));
      LowerOptions lo;
      lo.limits = b200_with_sms(2);
      const Kernel k = lower(s, lo);
      REQUIRE(k.plan.tma_store);
      REQUIRE(k.plan.staging.transposed);
      CHECK(sync_error(k).empty());
      for (uint64_t seed : {1, 2}) {
        const SimulationReport r = run(s, seed, 2);
        CAPTURE(r.to_string());
        CHECK(r.passed);
      }
    }
  }
}
