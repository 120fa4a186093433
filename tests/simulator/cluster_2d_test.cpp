// Two-dimensional clusters sharing both operands (cluster X Y 1, multicast A and B): X CTAs along m
// share B's tile and Y along n share A's, each loading its slice of both; a stage is refilled once
// the X + Y - 1 CTAs that write into it released it. Simulated bit-exactly on edge shapes (tile
// counts that leave a cluster's last row or column past D's edge), with bugs planted in the
// multicast masks and the releases, and the forms not lowered refused by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "error_check.h"
#include "planted_bugs.h"
#include "schedules/auto_schedule.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using gg::testing::check_error;
using gg::testing::Plant;
using gg::testing::rewrite;
using gg::testing::sync_error;

namespace {

Definition gemm(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::BF16, {}, {}); }

// auto's warp-specialized persistent tile, then the cluster: X CTAs along m, Y along n.
Schedule clustered(const Definition& def, int64_t tile_m, int64_t tile_n, int x, int y, int stages = 3) {
  AutoParams p;
  p.tile_m = tile_m;
  p.tile_n = tile_n;
  p.tile_k = 64;
  p.consumers = tile_m >= 128 ? 2 : 1;
  p.stages = stages;
  p.subtile_cols = tile_n % 64 == 0 ? 64 : tile_n;
  p.store_buffers = (tile_n / p.subtile_cols) % 2 == 0 ? 2 : 1;
  Schedule s = auto_schedule(def, p);
  s.cluster(x, y, 1);
  s.multicast("A");
  s.multicast("B");
  return s;
}

SimulationReport simulated(const Kernel& k, const Definition& def) {
  SimulateOptions o;
  o.max_steps = 20'000'000;
  return simulate_kernel(k, def, o);
}

}  // namespace

TEST_CASE("cluster X Y 1 sharing A and B: bit-exact, with clusters that overhang D's edge") {
  struct Case {
    int64_t m, n, k, tile_m, tile_n;
    int x, y;
  };
  // 2x2 over even and odd tile counts (3 x 3 tiles: each dimension's last group half past D); 2x4
  // (A shared by four CTAs, 32 rows each); 4x2 (B by four); a ragged K; two k tiles in two stages.
  for (const Case& c : {Case{256, 256, 192, 128, 128, 2, 2}, Case{300, 400, 320, 128, 128, 2, 2},
                        Case{200, 520, 136, 64, 128, 2, 2}, Case{130, 600, 192, 128, 64, 2, 4},
                        Case{520, 136, 128, 64, 128, 4, 2}, Case{128, 256, 128, 128, 128, 2, 2}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    CAPTURE(c.x);
    CAPTURE(c.y);
    const Definition def = gemm(c.m, c.n, c.k);
    const Kernel k = lower(clustered(def, c.tile_m, c.tile_n, c.x, c.y, int(std::min<int64_t>(3, (c.k + 63) / 64))));
    CHECK(k.plan.cluster_2d());
    CHECK(k.plan.pipeline.empty_arrivals == k.plan.consumer_warpgroups * (c.x + c.y - 1));
    CHECK(k.launch.cluster == std::array<unsigned, 3>{unsigned(c.x * c.y), 1, 1});  // ranks along x
    CHECK(sync_error(k).empty());
    const SimulationReport r = simulated(k, def);
    INFO(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("cluster X Y 1 sharing A and B: planted bugs in the masks and the releases are caught") {
  const Definition def = gemm(300, 400, 320);
  const Kernel good = lower(clustered(def, 128, 128, 2, 2));
  REQUIRE(sync_error(good).empty());
  REQUIRE(simulated(good, def).passed);
  struct Bug {
    std::string name;
    Plant::Fn plant;
    std::string sync_says;  // what check_sync's report contains
  };
  const std::vector<Bug> bugs = {
      // A's slices multicast to column 0 whatever the CTA's column: column 1 never gets A.
      {"A's multicast not shifted to the CTA's column",
       rewrite<TmaLoad>([](TmaLoad& l) { l.multicast_shift = nullptr; },
                        [](const TmaLoad& l) { return l.map == rt::Operand::A; }),
       "land"},
      // Each CTA releases its stages in its own column only: B's writers along the row never hear.
      {"the releases to the row's other CTAs dropped",
       [](const StmtPtr& st) -> std::optional<StmtPtr> {
         const Block* b = as<Block>(st);
         if (!b || b->body.size() != 3) return std::nullopt;
         for (const StmtPtr& x : b->body) {
           const MbarrierArrive* a = as<MbarrierArrive>(x);
           if (!a || a->bar.array != Barrier::Empty) return std::nullopt;
         }
         return block({b->body[0], b->body[1]});
       },
       "arrivals per release"},
      // The stage's barrier expecting one CTA fewer: a refill may overwrite what a peer still reads.
      {"the empty barriers counting one CTA's releases too few",
       rewrite<MbarrierInit>([](MbarrierInit& i) { i.arrivals -= 2; },
                             [](const MbarrierInit& i) { return i.bar.array == Barrier::Empty; }),
       "arrivals per release"},
  };
  for (const Bug& bug : bugs) {
    CAPTURE(bug.name);
    const gg::testing::Verdict v = gg::testing::plant_into(good, def, bug.plant);
    CAPTURE(v.sync);
    CAPTURE(v.sim.to_string());
    CHECK(v.sync.find(bug.sync_says) != std::string::npos);
    CHECK_FALSE(v.sim.passed);
    const std::string report = v.sim.to_string();
    const size_t error = report.find("error: ");
    std::cout << bug.name << "\n  check_sync: " << v.sync.substr(v.sync.find("failed: ") + 8, 160) << "\n  simulator:  "
              << report.substr(error != std::string::npos ? error : report.find("output"), 160) << "\n";
  }
}

TEST_CASE("cluster X Y 1: the forms not lowered are refused by name") {
  const Definition def = gemm(512, 512, 256);
  // One operand shared in a cluster along y.
  Schedule one = auto_schedule(def, AutoParams{});
  one.cluster(2, 2, 1);
  one.multicast("B");
  check_error([&] { lower(one); }, "not-lowered", "multicast of one operand in a cluster that extends along y or z");
  // Both shared, but the cluster only along x.
  Schedule flat = auto_schedule(def, AutoParams{});
  flat.cluster(4, 1, 1);
  flat.multicast("A");
  flat.multicast("B");
  check_error([&] { lower(flat); }, "multicast-cluster-axis", "needs at least 2 CTAs along x");
  // With split-K.
  AutoParams split;
  split.split_k = 2;
  Schedule s = auto_schedule(def, split);
  s.cluster(2, 2, 1);
  s.multicast("A");
  s.multicast("B");
  check_error([&] { lower(s); }, "not-lowered", "multicast of both operands in a 2x2x1 cluster with split_k");
  // A slice that is not whole 8-row swizzle groups: a 48-row B over 4 CTAs.
  check_error([&] { lower(clustered(def, 128, 48, 4, 2)); }, "not-lowered", "B's 48-row tile over the 4 CTAs");
}
