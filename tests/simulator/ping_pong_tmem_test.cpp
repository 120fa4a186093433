// Ping-pong consumers on sm_100a: each consumer warpgroup owns an accumulator in TMEM (its own
// columns, its own mma_done barrier, its first warp's thread issuing and committing its MMAs, its
// own barrier before its next tile overwrites it), so one consumer's epilogue reads its tile while
// the other's MMAs run. No Blackwell GPU has run these kernels: check_sync proves them, the
// simulator runs them bit-exactly against the host reference, planted bugs are caught, and nvcc
// compiles them for sm_100a without a spill.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "codegen/resources.h"
#include "dsl/schedule_text.h"
#include "nvcc_compile.h"
#include "planted_bugs.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::drop;
using gg::testing::rewrite;
using gg::testing::simulate_planted;
using gg::testing::sync_error;

namespace {

LowerOptions on_b200(int sms) {
  LowerOptions lo;
  lo.limits = blackwell();
  lo.limits.sms = sms;  // persistent CTAs then deal several tiles to their consumers
  return lo;
}

Definition gemm(int64_t m, int64_t n, int64_t k, DType out = DType::BF16) {
  return make_definition(m, n, k, DType::BF16, out);
}

}  // namespace

TEST_CASE("sm_100a ping-pong: two consumers, two TMEM accumulators, bit-exact on edge shapes") {
  struct Case {
    int64_t m, n, k;
    int sms;
    DType out = DType::BF16;
  };
  for (const Case& c : {Case{256, 512, 512, 1}, Case{200, 300, 520, 2}, Case{520, 264, 264, 1}, Case{1000, 130, 200, 3},
                        Case{129, 136, 72, 1}, Case{384, 256, 192, 2, DType::F32}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    const Definition def = gemm(c.m, c.n, c.k, c.out);
    const Kernel k = lower(ping_pong_schedule(def, Target::Sm100a), on_b200(c.sms));
    CHECK(k.plan.accumulator == Place::Tmem);
    CHECK(k.plan.ping_pong);
    CHECK(k.plan.tmem_columns >= 2 * k.plan.tile_n);  // an accumulator per consumer
    for (uint64_t seed : {1, 2}) {
      SimulateOptions o;
      o.seed = seed;
      const SimulationReport r = simulate_kernel(k, def, o);
      CAPTURE(r.to_string());
      CHECK(r.passed);
    }
  }
}

TEST_CASE("sm_100a ping-pong: planted bugs on the consumers' accumulators are caught") {
  const Definition def = gemm(520, 264, 264);
  const Kernel good = lower(ping_pong_schedule(def, Target::Sm100a), on_b200(1));
  REQUIRE(simulate_kernel(good, def).passed);
  REQUIRE(sync_error(good).empty());
  // Both consumers' MMAs into one accumulator (its columns not offset by the consumer): the other
  // consumer's tile overwrites the one being read.
  const auto shared_columns = rewrite<Tcgen05Mma>([&](Tcgen05Mma& m) { m.column = m.column % imm(good.plan.tile_n); });
  CHECK_FALSE(simulate_planted(good, def, shared_columns).passed);
  // One completion barrier for both: a consumer's wait passes on the other's commit.
  const auto one_barrier = [](const StmtPtr& s) -> std::optional<StmtPtr> {
    if (const auto* c = as<Tcgen05Commit>(s); c && c->bar.array == Barrier::MmaDone) {
      auto n = std::make_shared<Tcgen05Commit>(*c);
      n->bar.index = imm(0);
      return StmtPtr(n);
    }
    if (const auto* w = as<MbarrierWait>(s); w && w->bar.array == Barrier::MmaDone) {
      auto n = std::make_shared<MbarrierWait>(*w);
      n->bar.index = imm(0);
      return StmtPtr(n);
    }
    return std::nullopt;
  };
  CHECK_FALSE(simulate_planted(good, def, one_barrier).passed);
  // A consumer's next tile overwrites its accumulator with no barrier of its threads after their
  // reads: check_sync says so.
  testing::Plant no_release(drop<NamedBarrierSync>([](const NamedBarrierSync& b) {
    return to_c(b.id) == to_c(imm(kTmemBarrier) + var("consumer"));
  }));
  Kernel k = good;
  k.body = no_release.mutate(k.body);
  REQUIRE(no_release.planted > 0);
  CHECK(sync_error(k).find("while the previous tile's tcgen05.ld may still read it") != std::string::npos);
}

TEST_CASE("sm_100a ping-pong kernels compile with nvcc for sm_100a, without spills") {
  std::vector<std::string> sources;
  for (const Definition& def : {gemm(4096, 4096, 4096), gemm(4000, 3000, 1000), gemm(4096, 4096, 4096, DType::F32)})
    sources.push_back(emit_cuda(ping_pong_schedule(def, Target::Sm100a), on_b200(148)).source);
  test::check_compiles_clean("100a", GEMMGEN_NVCC, sources, "ping_pong_tmem");
}
