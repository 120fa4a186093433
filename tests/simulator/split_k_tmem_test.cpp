// Split-K on sm_100a, where the accumulator lies in TMEM: each split's partial sums leave TMEM a
// chunk at a time (tcgen05.ld, then the workspace), and the tile's last split adds the splits' sums
// into each chunk its epilogue loads, in split order; two splits claim the ticket first and the last
// adds the other's sums to its own. No Blackwell GPU has run these kernels: the simulator runs them
// bit-exactly against the host reference, planted bugs are caught, and nvcc compiles them for
// sm_100a without a spill.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/emit.h"
#include "codegen/lower.h"
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

namespace {

struct Case {
  int version, splits;
  bool tail;
  int64_t m, n, k;
  int sms;
  bool stream = false;
};

LowerOptions on_b200(int sms) {
  LowerOptions lo;
  lo.limits = blackwell();
  lo.limits.sms = sms;  // persistent CTAs then take several units
  return lo;
}

Schedule scheduled(const Case& c) {
  Schedule s = tutorial_schedule(c.version, make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16), Target::Sm100a);
  s.split_k(c.splits, c.tail || c.stream, c.stream);
  return s;
}
Kernel lowered(const Case& c) { return lower(scheduled(c), on_b200(c.sms)); }

// Whether the kernel stores its partial sums from TMEM chunks.
bool stores_tmem_chunks(const StmtPtr& body) {
  bool found = false;
  gg::testing::Plant look([&](const StmtPtr& s) -> std::optional<StmtPtr> {
    if (const auto* p = as<PartialStore>(s)) found = found || p->fragment == Fragment::TmemLanes;
    return std::nullopt;
  });
  look.mutate(body);
  return found;
}

bool says(const SimulationReport& r, const std::string& what) { return r.to_string().find(what) != std::string::npos; }

const std::vector<Case>& cases() {
  // v8 (one consumer warpgroup, m64 blocks), v10 (two warpgroups, a 2-CTA cluster sharing B); two
  // splits (claimed first), three, the last wave's and stream-K's k ranges across tiles (v8: stream-K
  // takes no cluster); ragged edges; 1-3 SMs so a CTA walks units.
  static const std::vector<Case> all = {
      {8, 2, false, 200, 300, 520, 2},  {8, 3, false, 130, 264, 264, 1}, {8, 2, true, 520, 128, 640, 2},
      {10, 2, false, 256, 512, 512, 2}, {10, 3, false, 200, 300, 520, 2}, {10, 3, true, 520, 300, 520, 2},
      {8, 2, false, 520, 300, 520, 3, true},
  };
  return all;
}

}  // namespace

TEST_CASE("sm_100a split-K: the splits' sums from TMEM chunks match the host reference bit-exactly") {
  for (const Case& c : cases()) {
    CAPTURE(c.version);
    CAPTURE(c.splits);
    CAPTURE(c.tail);
    CAPTURE(c.m);
    const Kernel k = lowered(c);
    CHECK(k.plan.accumulator == Place::Tmem);
    // a thread's partial sums: its TMEM lane's columns in every 128-lane column set
    CHECK(k.plan.epilogue.workspace.per_thread == (k.plan.tile_m + 127) / 128 * k.plan.tile_n);
    CHECK(stores_tmem_chunks(k.body));
    const SimulationReport r = simulate_kernel(k, make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16));
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("sm_100a split-K: planted bugs in the TMEM hand-off are caught") {
  for (const Case& c : {cases()[1], cases()[4], cases()[3]}) {
    CAPTURE(c.version);
    CAPTURE(c.splits);
    const Definition def = make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16);
    const Kernel good = lowered(c);
    REQUIRE(simulate_kernel(good, def).passed);
    // The last split stores the chunks it loaded without adding the others' sums.
    CHECK_FALSE(simulate_planted(good, def, drop<PartialReduce>()).passed);
    // A chunk's sums parked one chunk along: the reduction adds the wrong columns (or sums never
    // written), and the last chunk's lie past the thread's share of the workspace.
    const SimulationReport shifted = simulate_planted(
        good, def, rewrite<PartialStore>([](PartialStore& p) { p.element0 = p.element0 + imm(p.regs); }));
    CHECK_FALSE(shifted.passed);
    CHECK(says(shifted, "outside its"));
    // A chunk read back from another chunk's sums.
    CHECK_FALSE(simulate_planted(good, def, rewrite<PartialReduce>([](PartialReduce& r) {
                                   r.element0 = r.element0 + imm(8);
                                 })).passed);
    if (c.splits == 2) {
      // Claimed first: the last reads the other's sums without waiting for their count.
      const SimulationReport early = simulate_planted(good, def, drop<AwaitPartials>());
      CHECK_FALSE(early.passed);
      CHECK(says(early, "without waiting for their count"));
    } else {
      // A split that never parks its sums: the last adds sums never written (NaN).
      CHECK_FALSE(simulate_planted(good, def, drop<PartialStore>()).passed);
    }
  }
}

TEST_CASE("sm_100a split-K kernels compile with nvcc for sm_100a, without spills") {
  std::vector<std::string> sources;
  for (Case c : cases()) {
    c.m *= 8;  // the shapes of a GPU launch: several waves on the B200's SMs
    c.n *= 8;
    c.sms = 148;
    sources.push_back(emit_cuda(scheduled(c), on_b200(c.sms)).source);
  }
  test::check_compiles_clean("100a", GEMMGEN_NVCC, sources, "split_k_tmem");
}
