// The m256 tcgen05.mma over a CTA pair on sm_100a (cta_group::2, TIRx's step 9; the tutorial's v9
// and v10 there): each CTA of a 2-CTA cluster holds its 128 rows of A and half of B's tile, both
// CTAs' loads complete on the even CTA's full barriers, the even CTA's MMA warp issues one MMA for
// both and commits to both CTAs' barriers, each CTA reads its 128 rows out of its own TMEM, and
// both CTAs' writebacks release the even CTA's accumulator buffers. No Blackwell GPU has run these
// kernels: check_sync proves them, the simulator runs them bit-exactly against the host reference
// (both CTAs' shared memory and TMEM), and bugs planted into the pair's hand-offs are caught.
#include <doctest/doctest.h>

#include <iostream>
#include <string>
#include <vector>

#include "codegen/explain.h"
#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "sim_limits.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::on_b200;
using gg::testing::Plant;
using gg::testing::rewrite;
using gg::testing::sync_error;

namespace {


Definition gemm(int64_t m, int64_t n, int64_t k, DType out = DType::BF16, int64_t batch = 1) {
  ProblemLayout l;
  l.batch = batch;
  return make_definition(m, n, k, DType::BF16, out, {}, l);
}

SimulationReport simulated(const Kernel& k, const Definition& def, uint64_t seed = 1) {
  SimulateOptions o;
  o.seed = seed;
  o.max_steps = 5'000'000;
  return simulate_kernel(k, def, o);
}

bool is_pair_commit_onto(const Tcgen05Commit& c, Barrier array) { return c.pair && c.bar.array == array; }

}  // namespace

TEST_CASE("sm_100a v9 and v10: one m256 MMA over the CTA pair, bit-exact on edge shapes") {
  struct Case {
    int v;
    int64_t m, n, k;
    DType out = DType::BF16;
    int64_t batch = 1;
  };
  // Odd m tile counts give the last pair a tile past M; ragged N and K; one k tile; f32; a batch.
  for (const Case& c : {Case{9, 256, 256, 256}, Case{9, 520, 264, 264}, Case{9, 130, 136, 520}, Case{10, 256, 512, 512},
                        Case{10, 520, 264, 264}, Case{10, 129, 256, 64}, Case{10, 384, 512, 192, DType::F32},
                        Case{9, 200, 128, 128, DType::BF16, 3}}) {
    CAPTURE(c.v);
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    const Definition def = gemm(c.m, c.n, c.k, c.out, c.batch);
    const Kernel k = lower(tutorial_schedule(c.v, def, Target::Sm100a), on_b200(2));
    REQUIRE(k.plan.cta_pair);
    CHECK(k.plan.mma.m == 256);
    CHECK(k.plan.mma_warp);
    CHECK(k.plan.operand(rt::Operand::B).smem.rows == k.plan.tile_n / 2);  // this CTA's half of B
    CHECK(k.plan.tmem_double_buffered == (c.v == 10));
    CHECK(sync_error(k).empty());
    for (uint64_t seed : {1, 2, 3}) {
      const SimulationReport r = simulated(k, def, seed);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
  }
}

TEST_CASE("sm_100a CTA pair: split-K (two and three splits, the last wave's) and N-major operands, bit-exact") {
  const auto check = [](const Schedule& s, const Definition& def) {
    const Kernel k = lower(s, on_b200(2));
    REQUIRE(k.plan.cta_pair);
    CHECK(sync_error(k).empty());
    for (uint64_t seed : {1, 2}) {
      const SimulationReport r = simulated(k, def, seed);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
  };
  for (int v : {9, 10}) {
    CAPTURE(v);
    const Definition def = gemm(520, 264, 512);
    for (const std::pair<int, bool>& split : {std::pair{2, false}, std::pair{3, false}, std::pair{2, true}}) {
      const int splits = split.first;  // (not a structured binding: clang 14 cannot capture one)
      const bool tail = split.second;
      CAPTURE(splits);
      CAPTURE(tail);
      Schedule s = tutorial_schedule(v, def, Target::Sm100a);
      s.split_k(splits, tail);
      check(s, def);
    }
    ProblemLayout mn;
    mn.a = Layout::MNMajor;
    mn.b = Layout::MNMajor;
    const Definition transposed = make_definition(520, 264, 264, DType::BF16, DType::BF16, {}, mn);
    check(tutorial_schedule(v, transposed, Target::Sm100a), transposed);
  }
}

TEST_CASE("sm_100a CTA pair: planted bugs in the pair's hand-offs are caught") {
  const Definition def = gemm(520, 264, 264);
  const Kernel good = lower(tutorial_schedule(10, def, Target::Sm100a), on_b200(2));
  REQUIRE(good.plan.cta_pair);
  REQUIRE(simulated(good, def).passed);
  REQUIRE(sync_error(good).empty());
  struct Bug {
    std::string name;
    Plant::Fn plant;
    std::string sync_says, sim_says;  // what check_sync's and the simulator's reports contain ("": passes)
  };
  const std::vector<Bug> bugs = {
      // Commit to one CTA only: the odd CTA's writeback never learns its rows are final.
      {"the accumulator's commit to the even CTA only",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.multicast_mask = 0b01u; },
                              [](const Tcgen05Commit& c) { return is_pair_commit_onto(c, Barrier::MmaDone); }),
       "mma_done_bar[(tiles_done % 2)] in role 'producer': 0 arrivals per release land in CTA 1", "deadlock"},
      // ... or a stage's release: the odd CTA's loads never refill it.
      {"a stage's release to the even CTA only",
       rewrite<Tcgen05Commit>([](Tcgen05Commit& c) { c.multicast_mask = 0b01u; },
                              [](const Tcgen05Commit& c) { return is_pair_commit_onto(c, Barrier::Empty); }),
       "empty_bar[pipe_stage] in role 'producer': 0 arrivals per release land in CTA 1", "deadlock"},
      // Wrong peer address: the odd CTA's boxes complete on its own barrier, not the leader's.
      {"the odd CTA's loads completing on its own barrier",
       rewrite<TmaLoad>([](TmaLoad& l) { l.to_pair_leader = false; }),
       "expect_tx announces 65536 bytes per fill, but the TMA loads completing on it land 32768 bytes in CTA 0",
       "deadlock"},
      // ... and both CTAs loading the first half of B's tile (the rank dropped from its rows).
      {"both CTAs loading B's first half",
       rewrite<TmaLoad>([](TmaLoad& l) { l.row = var("n_tile") * imm(256); },
                        [](const TmaLoad& l) { return l.map == rt::Operand::B; }),
       "", "mismatch"},
      // The TMEM buffer reused before ld2mma: the leader's acc_empty counts its own writeback only.
      {"acc_empty expecting one CTA's writeback",
       rewrite<MbarrierInit>([](MbarrierInit& i) { i.arrivals /= 2; },
                             [](const MbarrierInit& i) { return i.bar.array == Barrier::AccEmpty; }),
       "arrivals per release land in CTA 0, but MbarrierInit gives acc_empty_bar 256", "TMEM"},
      // ... or the odd CTA's writeback releasing its own acc_empty, which no MMA warp waits on.
      {"the odd CTA releasing its own acc_empty",
       rewrite<MbarrierArrive>([](MbarrierArrive& a) { a.cta = var("cta_rank"); },
                               [](const MbarrierArrive& a) { return a.bar.array == Barrier::AccEmpty; }),
       "256 arrivals per release land in CTA 0, but MbarrierInit gives acc_empty_bar 512", "deadlock"},
  };
  for (const Bug& bug : bugs) {
    CAPTURE(bug.name);
    Kernel k = good;
    Plant p(bug.plant);
    k.body = p.mutate(k.body);
    REQUIRE(p.planted > 0);
    const std::string sync = sync_error(k);
    const SimulationReport sim = simulated(k, def);
    CAPTURE(sync);
    CAPTURE(sim.to_string());
    if (bug.sync_says.empty()) CHECK(sync.empty());
    else CHECK(sync.find(bug.sync_says) != std::string::npos);
    CHECK_FALSE(sim.passed);
    CHECK(sim.to_string().find(bug.sim_says) != std::string::npos);
    const std::string s = sim.to_string();
    const size_t error = s.find("error: ");
    std::cout << bug.name << "\n  check_sync: " << (sync.empty() ? "passes" : sync.substr(sync.find("failed: ") + 8, 160))
              << "\n  simulator:  " << (error == std::string::npos ? s.substr(s.find("output"), 60) : s.substr(error, 160))
              << "\n";
  }
}

TEST_CASE("sm_100a CTA pair: explain says who issues and what each CTA holds") {
  ExplainOptions eo;
  eo.limits = on_b200(148).limits;
  const std::string text = explain(tutorial_schedule(10, gemm(4096, 4096, 4096), Target::Sm100a), eo);
  CHECK(text.find("mma m256n256k16 x (1 m x 1 n x 4 k) over the CTA pair (the even CTA issues; each CTA's 128 rows "
                  "land in its TMEM) -> acc fp32 in tmem") != std::string::npos);
  CHECK(text.find("load B[tile.n, k_o] 128 x 64 -> smem stage (tile, k_o) % 4 (TMA, this CTA's half of the pair's "
                  "B tile, completing on the even CTA's barrier)") != std::string::npos);
  CHECK(text.find("producer, warp 1 of the pair's even CTA: one elected thread issues the MMAs") != std::string::npos);
}
