// Split-K in two claims the tile's ticket as the k loop ends, before any store: the first CTA parks
// its partial sums and counts them stored; the last keeps its own in registers, waits for that
// count, and adds the other's in split order. The simulator runs it bit-exactly (persistent CTAs
// taking several tiles, the last-wave split, a cluster, FP8), and each mistake in the protocol is
// caught by what it breaks.
#include <doctest/doctest.h>

#include <string>

#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "sim_limits.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::drop;
using gg::testing::few_sms;
using gg::testing::rewrite;
using gg::testing::simulate_planted;

namespace {

bool says(const SimulationReport& r, const std::string& what) { return r.to_string().find(what) != std::string::npos; }

}  // namespace

TEST_CASE("simulate: split-K in two claims first; the last adds the other's sums to its registers") {
  struct Case {
    int version, sms;
    bool tail;
    int64_t m, n, k;
  };
  // v8 on 1 and 3 SMs (a persistent CTA claims several tiles in turn), the last-wave split on 3, and
  // v10's 2-CTA cluster whose pairs split their tiles together.
  for (const Case& c : {Case{8, 1, false, 256, 256, 640}, Case{8, 3, false, 256, 256, 640},
                        Case{7, 3, true, 1408, 128, 640}, Case{10, 4, false, 256, 256, 1024}}) {
    CAPTURE(c.version);
    CAPTURE(c.sms);
    CAPTURE(c.tail);
    const Definition def = make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16);
    Schedule s = tutorial_schedule(c.version, def);
    s.split_k(2, c.tail);
    LowerOptions lo;
    lo.limits = few_sms(c.sms);
    const Kernel good = lower(s, lo);
    const SimulationReport ok = simulate_kernel(good, def);
    CAPTURE(ok.to_string());
    REQUIRE(ok.passed);

    // The last reads the other's sums without waiting for their count (whether or not they landed).
    const SimulationReport early = simulate_planted(good, def, drop<AwaitPartials>());
    CHECK_FALSE(early.passed);
    CHECK(says(early, "without waiting for their count"));
    // The first never counts its sums stored: the last waits for ever, and the simulator says on what.
    const SimulationReport lost = simulate_planted(good, def, drop<PartialsStored>());
    CHECK_FALSE(lost.passed);
    CHECK(says(lost, "waiting for the split-K partial sums of the tile's other CTAs"));
    // The last takes the other split's sums for its own: it reads its own, which were never stored.
    const SimulationReport swapped =
        simulate_planted(good, def, rewrite<PartialReduce>([](PartialReduce& r) { r.own = imm(1) - r.own; }));
    CHECK_FALSE(swapped.passed);
    CHECK(says(swapped, "before that CTA counted them stored"));
    // The first CTA parks its sums in the other split's place: the last adds sums never written (NaN).
    CHECK_FALSE(simulate_planted(good, def, rewrite<PartialStore>([](PartialStore& p) { p.split = imm(1) - p.split; })).passed);
  }
}

TEST_CASE("simulate: split-K in two on an FP8 kernel (promoted accumulators) claims first too") {
  const Definition def = make_definition(64, 256, 1024, DType::E4M3, DType::BF16);
  Schedule s = tutorial_schedule(8, def);
  s.split_k(2);
  LowerOptions lo;
  lo.limits = few_sms(2);
  const Kernel k = lower(s, lo);
  const SimulationReport r = simulate_kernel(k, def);
  CAPTURE(r.to_string());
  CHECK(r.passed);
  CHECK(dump(k.body).find("claimed before the store") != std::string::npos);
}
