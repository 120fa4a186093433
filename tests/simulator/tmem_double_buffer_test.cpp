// Double-buffered TMEM on sm_100a (accumulator_buffers 2, TIRx step 10): the producer warpgroup's
// second warp issues every tile's MMAs into accumulator buffer tiles_done % 2 once the writeback
// released it (acc_empty, ld2mma), and commits onto the buffer's mma_done (mma2ld); the consumer
// warpgroups only wait, read the buffer out of TMEM, write it back and release it. No Blackwell GPU
// has run these kernels: check_sync proves the hand-off, the simulator runs them bit-exactly against
// the host reference, bugs planted into the hand-off are caught by meaning, and nvcc compiles them
// for sm_100a without a spill.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/lower.h"
#include "codegen/resources.h"
#include "dsl/schedule_text.h"
#include "nvcc_compile.h"
#include "planted_bugs.h"
#include "sim_limits.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::drop;
using gg::testing::on_b200;
using gg::testing::Plant;
using gg::testing::plant_into;
using gg::testing::Verdict;
using gg::testing::rewrite;
using gg::testing::sync_error;

namespace {


Definition gemm(int64_t m, int64_t n, int64_t k, DType out = DType::BF16) {
  return make_definition(m, n, k, DType::BF16, out);
}

Definition grouped(ProblemSource source, int64_t groups, int64_t m, int64_t n, int64_t k) {
  ProblemLayout l;
  l.batch = groups;
  l.source = source;
  return make_definition(m, n, k, DType::BF16, DType::BF16, {}, l);
}

// v10 on sm_100a (an m256 MMA over a CTA pair), or where asked its one-CTA form without a cluster
// (grouped sources take neither a pair nor B multicast): m64 MMAs, two blocks per 128 TMEM lanes.
Schedule v10(const Definition& def, bool cta_pair = true) {
  const Schedule base = tutorial_schedule(10, def, Target::Sm100a);
  if (cta_pair) return base;
  Schedule s(def);
  for (Directive d : base.directives()) {
    if (std::holds_alternative<ClusterD>(d) || std::holds_alternative<MulticastD>(d)) continue;
    if (auto* m = std::get_if<MmaD>(&d)) m->m = 64;
    s.apply(d);
  }
  return s;
}

SimulationReport simulated(const Kernel& k, const Definition& def, uint64_t seed = 1, SimulateOptions o = {}) {
  o.seed = seed;
  o.max_steps = 5'000'000;
  return simulate_kernel(k, def, o);
}


bool is_acc_empty(const MbarrierWait& w) { return w.bar.array == Barrier::AccEmpty; }

}  // namespace

TEST_CASE("sm_100a v10: an MMA warp and two TMEM accumulator buffers, bit-exact on edge shapes") {
  struct Case {
    int64_t m, n, k;
    int sms;
    DType out = DType::BF16;
  };
  // 1 tile per CTA, 2 and 5 (each buffer reused), ragged M and N, K of one and of many k tiles, f32.
  for (const Case& c : {Case{256, 512, 512, 2}, Case{520, 264, 264, 2}, Case{1000, 136, 200, 2},
                        Case{129, 256, 128, 2}, Case{384, 512, 192, 1, DType::F32}, Case{130, 264, 520, 1}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    const Definition def = gemm(c.m, c.n, c.k, c.out);
    const Kernel k = lower(v10(def), on_b200(c.sms));
    REQUIRE(k.plan.tmem_double_buffered);
    CHECK(k.plan.tmem_accumulators == 2);
    CHECK(k.plan.tmem_columns == 512);  // 2 buffers x 256 columns
    for (uint64_t seed : {1, 2, 3}) {
      const SimulationReport r = simulated(k, def, seed);
      CAPTURE(r.to_string());
      CHECK(r.passed);
      CHECK(r.tcgen05_mmas > 0);
    }
  }
}

TEST_CASE("sm_100a double-buffered TMEM: batches, masked and contiguous groups, split-K, bit-exact") {
  auto check = [](const Schedule& s, const Definition& def, const SimulateOptions& o = {}) {
    const Kernel k = lower(s, on_b200(2));
    REQUIRE(k.plan.tmem_double_buffered);
    for (uint64_t seed : {1, 2}) {
      const SimulationReport r = simulated(k, def, seed, o);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
  };
  SUBCASE("a batch of 3") {
    const Definition def = grouped(ProblemSource::Dense, 3, 256, 256, 256);
    check(v10(def), def);
  }
  SUBCASE("masked groups: empty, ragged and full") {
    const Definition def = grouped(ProblemSource::Masked, 4, 256, 256, 256);
    SimulateOptions o;
    o.group_rows = {0, 200, 256, 77};
    check(v10(def, false), def, o);
  }
  SUBCASE("contiguous groups, one empty") {
    const Definition def = grouped(ProblemSource::Contiguous, 3, 600, 256, 256);
    SimulateOptions o;
    o.group_offsets = {0, 100, 100, 600};
    check(v10(def, false), def, o);
  }
  SUBCASE("split-K over 2 CTAs a tile") {
    const Definition def = gemm(256, 256, 512);
    Schedule s = v10(def, false);
    s.split_k(2);
    check(s, def);
  }
}

TEST_CASE("sm_100a double-buffered TMEM: planted hand-off bugs are caught by check_sync and the simulator") {
  const Definition def = gemm(520, 264, 264);
  const Kernel good = lower(v10(def), on_b200(2));
  REQUIRE(simulated(good, def).passed);
  REQUIRE(sync_error(good).empty());
  struct Bug {
    std::string name;
    Plant::Fn plant;
    std::string sync_says, sim_says;  // what check_sync's and the simulator's reports contain
  };
  const std::vector<Bug> bugs = {
      // The buffer reused before ld2mma: the MMA warp does not wait for the writeback's release.
      {"MMAs into a buffer without waiting on its acc_empty", drop<MbarrierWait>(is_acc_empty),
       "without waiting on acc_empty_bar", "TMEM"},
      // ... or both tiles' MMAs into the first buffer's columns, each still waiting on its own barrier.
      {"every tile's MMAs into buffer 0",
       rewrite<Tcgen05Mma>([](Tcgen05Mma& m) { m.column = m.column % imm(256); }),
       "without waiting on acc_empty_bar[0]", "TMEM"},
      // The writeback hands the buffer back before ordering its reads (no tcgen05 fence before).
      {"release without tcgen05.fence::before_thread_sync",
       [](const StmtPtr& s) -> std::optional<StmtPtr> {
         const Block* b = as<Block>(s);
         if (!b) return std::nullopt;
         for (size_t i = 0; i + 1 < b->body.size(); ++i) {
           const auto* fence = as<Tcgen05Fence>(b->body[i]);
           const auto* arrive = as<MbarrierArrive>(b->body[i + 1]);
           if (!fence || fence->after || !arrive || arrive->bar.array != Barrier::AccEmpty) continue;
           std::vector<StmtPtr> kept = b->body;
           kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
           return block(kept);
         }
         return std::nullopt;
       },
       "with no tcgen05.fence::before_thread_sync after its tcgen05.ld", "overwrites TMEM"},
      // A fresh acc_empty passes parity 1: waiting for parity 0 first hangs.
      {"acc_empty waited with the mma_done parity",
       rewrite<MbarrierWait>([](MbarrierWait& w) { w.parity = var("tiles_done") / imm(2) % imm(2); }, is_acc_empty),
       "with parity 0 before its fill #0", "deadlock"},
      // mma2ld on the wrong buffer: the writeback of buffer 1 waits for a commit that never comes.
      {"commit onto mma_done[0] for every tile",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.bar.index = imm(0); },
                              [](const Tcgen05Commit& c) { return c.bar.array == Barrier::MmaDone; }),
       "after MMAs into accumulator buffer 1", "deadlock"},
      // ld2mma before the reads: the writeback releases the buffer as soon as it is complete.
      {"release right after the mma_done wait, before the reads",
       [](const StmtPtr& s) -> std::optional<StmtPtr> {
         const Block* b = as<Block>(s);
         if (!b) return std::nullopt;
         std::vector<StmtPtr> body = b->body;
         auto at = [&](auto pred) { return std::find_if(body.begin(), body.end(), pred); };
         auto ready = at([](const StmtPtr& n) { return as<MbarrierWait>(n) && as<MbarrierWait>(n)->bar.array == Barrier::MmaDone; });
         auto release = at([](const StmtPtr& n) { return as<MbarrierArrive>(n) && as<MbarrierArrive>(n)->bar.array == Barrier::AccEmpty; });
         if (ready == body.end() || release == body.end()) return std::nullopt;
         const StmtPtr arrive = *release;
         body.erase(release);
         body.insert(ready + 1, arrive);
         return block(body);
       },
       "without waiting on mma_done_bar[0] for the commit after its tile's last MMA since it last released it", "TMEM"},
  };
  for (const Bug& bug : bugs) {
    CAPTURE(bug.name);
    const Verdict v = plant_into(good, def, bug.plant);
    CAPTURE(v.sync);
    CAPTURE(v.sim.to_string());
    CHECK(v.sync.find(bug.sync_says) != std::string::npos);
    CHECK_FALSE(v.sim.passed);
    CHECK(v.sim.to_string().find(bug.sim_says) != std::string::npos);
    const std::string sim = v.sim.to_string();
    const size_t error = sim.find("error: ");
    std::cout << bug.name << "\n  check_sync: " << v.sync.substr(v.sync.find("failed: ") + 8, 160)
              << "\n  simulator:  " << (error == std::string::npos ? sim.substr(0, 160) : sim.substr(error, 200)) << "\n";
  }
}

TEST_CASE("sm_100a double-buffered TMEM: explain shows the MMA warp; the kernel compiles for sm_100a without spills") {
  const Definition big = gemm(4096, 4096, 4096);
  ExplainOptions eo;
  eo.limits = on_b200(148).limits;
  const std::string nests = explain(v10(big), eo);
  CHECK(nests.find("producer, warp 1 of the pair's even CTA: one elected thread issues the MMAs, tile t into TMEM "
                   "accumulator buffer t % 2") != std::string::npos);
  CHECK(nests.find("consumer: 2 warpgroup(s), 256 threads, setmaxnreg 232; epilogue") != std::string::npos);
  CHECK(nests.find("double-buffered: a tile's writeback reads one while the next tile's MMAs fill the other") !=
        std::string::npos);
  std::vector<std::string> sources;
  for (const Definition& def : {big, gemm(4000, 3000, 1000), gemm(4096, 4096, 4096, DType::F32)}) {
    const EmittedKernel e = emit_cuda(v10(def), on_b200(148));
    CHECK(e.source.find("acc_empty_bar") != std::string::npos);
    sources.push_back(e.source);
  }
  test::check_compiles_clean("100a", GEMMGEN_NVCC, sources, "tmem_double_buffer");
}
