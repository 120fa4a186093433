#include <doctest/doctest.h>

#include "codegen/resources.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

Definition gemm(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::BF16); }

const SmemItem& item(const ResourceSummary& r, const std::string& what) {
  for (const auto& i : r.smem)
    if (i.what == what) return i;
  FAIL("no shared-memory item " << what);
  throw 0;
}

bool has_item(const ResourceSummary& r, const std::string& what) {
  for (const auto& i : r.smem)
    if (i.what == what) return true;
  return false;
}

}  // namespace

TEST_CASE("v1: a synchronous copy of one tile, no barriers beyond __syncthreads") {
  ResourceSummary r = summarize_resources(tutorial_schedule(1, gemm(128, 128, 64)));
  CHECK(item(r, "A stages").bytes == 128 * 64 * 2);
  CHECK(item(r, "B stages").bytes == 128 * 64 * 2);
  CHECK_FALSE(has_item(r, "epilogue staging"));
  CHECK_FALSE(has_item(r, "mbarriers"));
  CHECK(item(r, "alignment padding").bytes == 1024);
  CHECK(r.smem_bytes == 2 * 16384 + 1024);
  CHECK(r.mbarrier_count == 0);
  REQUIRE(r.roles.size() == 1);
  CHECK(r.roles[0].name == "all");
  CHECK(r.roles[0].regs == 255);
  CHECK(r.roles[0].accumulator_regs == 128);
  CHECK(r.threads == 128);
  CHECK(r.grid.ctas() == 1);
}

TEST_CASE("v5: two stages, TMA loads with one mbarrier per stage, staged TMA store, a block grid") {
  ResourceSummary r = summarize_resources(tutorial_schedule(5, gemm(8192, 4096, 8192)));
  CHECK(r.stages == 2);
  CHECK(item(r, "A stages").formula == "2 x 128 x 64 x 2 B");
  CHECK(item(r, "A stages").bytes == 32768);
  CHECK(item(r, "A stages").stage_bytes == 16384);
  CHECK(item(r, "B stages").offset == 32768);
  CHECK(item(r, "epilogue staging").bytes == 128 * 128 * 2);
  CHECK(item(r, "mbarriers").bytes == 16);
  CHECK(r.mbarrier_count == 2);
  CHECK(r.smem_bytes == 3 * 32768 + 16 + 1024);
  CHECK(r.grid.x == 32);  // n_o -> block.x
  CHECK(r.grid.y == 64);  // m_o -> block.y
  CHECK_FALSE(r.grid.persistent);
  CHECK(r.grid.tiles == 64 * 32);
}

TEST_CASE("v10: warp roles, full and empty barriers, two consumers, a persistent grid of clusters") {
  ResourceSummary r = summarize_resources(tutorial_schedule(10, gemm(8192, 8192, 8192)));
  // 128x256x64 tile, four stages beside 64-column subtile staging: 2 warpgroups x 2 buffers x
  // 64 x 64 x 2 B (the whole tile's 64 KB of staging left room for three)
  CHECK(item(r, "A stages").bytes == 4 * 16384);
  CHECK(item(r, "B stages").bytes == 4 * 32768);
  CHECK(item(r, "epilogue staging").bytes == 32768);
  CHECK(item(r, "epilogue staging").formula == "2 warpgroups x 2 buffers x 64 x 64 x 2 B");
  CHECK(item(r, "mbarriers").bytes == 64);
  CHECK(item(r, "mbarriers").offset == 229376);
  CHECK(r.smem_bytes == 229376 + 64 + 1024);
  REQUIRE(r.mbarriers.size() == 2);
  CHECK(r.mbarriers[0].name == "full");
  CHECK(r.mbarriers[1].name == "empty");
  REQUIRE(r.roles.size() == 2);
  CHECK(r.roles[0].name == "producer");
  CHECK(r.roles[0].regs == 40);
  CHECK(r.roles[1].name == "consumer");
  CHECK(r.roles[1].warpgroups == 2);
  CHECK(r.roles[1].regs == 232);
  CHECK(r.roles[1].accumulator_regs == 128);
  CHECK(r.total_registers == 128 * 40 + 256 * 232);
  CHECK(r.threads == 384);
  // each consumer warpgroup meets its own threads around its staging
  REQUIRE(r.named_barriers.size() == 3);
  CHECK(r.named_barriers[1].threads == 128);
  CHECK(r.named_barriers[2].id == 2);
  CHECK(r.cluster_size == 2);
  CHECK(r.grid.persistent);
  CHECK(r.grid.tiles == 2048);
  CHECK(r.grid.x == 132);
  CHECK(r.tmem_columns == 0);
  CHECK(r.smem_breakdown().find("A stages 4 x 128 x 64 x 2 B = 65536 + B stages 4 x 256 x 64 x 2 B") == 0);
}

TEST_CASE("the persistent grid is capped by the tiles and the SMs, in whole clusters") {
  CHECK(summarize_resources(tutorial_schedule(6, gemm(256, 256, 128))).grid.x == 4);
  DeviceLimits seven = hopper();
  seven.sms = 7;
  ResourceSummary r = summarize_resources(tutorial_schedule(9, gemm(8192, 8192, 8192)), seven);
  CHECK(r.grid.x == 6);
  CHECK(r.grid.ctas() % r.cluster_size == 0);
}

TEST_CASE("without warp roles the per-thread cap is the register file over the threads") {
  Schedule s(gemm(1024, 1024, 1024));
  s.tile(192, 128, 64).split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup);
  ResourceSummary r = summarize_resources(s);
  CHECK(r.threads == 384);
  CHECK(r.roles[0].regs == 168);  // 65536 / 384 = 170, down to a multiple of 8
  CHECK(r.roles[0].accumulator_regs == 192 * 128 / 384);
}

TEST_CASE("sm_100a: the accumulator takes TMEM columns and an mma-done barrier") {
  ResourceSummary r = summarize_resources(tutorial_schedule(7, gemm(8192, 8192, 8192), Target::Sm100a), blackwell());
  CHECK(r.target == Target::Sm100a);
  CHECK(r.tmem_columns == 128);
  CHECK(r.tmem_alloc_columns == 128);
  CHECK(r.roles[1].accumulator_regs == 0);
  CHECK(r.mbarriers.back().name == "mma_done");
  CHECK(r.grid.x == 148);

  Schedule wide(gemm(1024, 1024, 1024));
  wide.tile(128, 96, 64).mma(128, 96, 16, Target::Sm100a);
  CHECK(summarize_resources(wide).tmem_columns == 96);
  CHECK(summarize_resources(wide).tmem_alloc_columns == 128);
}

TEST_CASE("the summary text shows the breakdown and the roles") {
  std::string text = summarize_resources(tutorial_schedule(10, gemm(8192, 8192, 8192))).to_string();
  CHECK(text.find("shared memory: 230464 B of 232448") != std::string::npos);
  CHECK(text.find("A stages           4 x 128 x 64 x 2 B") != std::string::npos);
  CHECK(text.find("epilogue staging   2 warpgroups x 2 buffers x 64 x 64 x 2 B = 32768") != std::string::npos);
  CHECK(text.find("consumer: 2 warpgroup(s) x 128 threads x 232 regs (setmaxnreg), accumulator 128") != std::string::npos);
  CHECK(text.find("grid: 132 x 1 x 1 = 132 CTA(s), persistent over 2048 tiles") != std::string::npos);
}

// A cluster lives inside one GPC, and GPCs differ in SM count: an H100/H200 holds 66 clusters of
// 2 but only 30 of 4 and 15 of 8 (cudaOccupancyMaxActiveClusters on an H200,
// benchmarks/resident_clusters.cu). A persistent grid planned for 33 clusters of 4 ran its last
// three after the rest: 4096 x 4096 x 7000 in 2x2 clusters took 486 us at 132 CTAs, 368 at 120.
TEST_CASE("a persistent grid plans no more clusters than the device holds at once") {
  const DeviceLimits h = hopper();
  CHECK(h.resident_clusters(1) == 132);
  CHECK(h.resident_clusters(2) == 66);
  CHECK(h.resident_clusters(4) == 30);
  CHECK(h.resident_clusters(8) == 15);
  CHECK(h.resident_clusters(7) == 18);   // not measured: every SM in whole clusters
  CHECK(h.resident_clusters(2, 2) == 132);  // two CTAs an SM
  DeviceLimits other = h;
  other.sms = 264;  // another SM count (`--sms`): the table does not apply
  CHECK(other.resident_clusters(4) == 66);
  const std::string clustered =
      "tile 128 256 64\ninline cast\nmma 64 256 16 sm_90a\nbind k_o serial\nbind m_o block.y\nbind n_o block.x\n"
      "cache_read A tma\ncache_read B tma\ncache_write cast shared tma\npersist m_o n_o tile row 8\n"
      "warp_specialize 40 232\nsplit m_i 64 m_wg m_mma\nbind m_wg warpgroup\nstore_subtile 64 2\n"
      "circular_buffer k_o 4 3\n";
  const Definition def = gemm(4096, 4096, 7000);
  const auto grid_of = [&](const std::string& cluster) {
    const ScheduleFile file = parse_schedule_file(clustered + cluster);
    return summarize_resources(apply_directives(def, file.directives, file.directive_lines)).grid;
  };
  CHECK(grid_of("").x == 132);
  CHECK(grid_of("cluster 2 1 1\nmulticast B\n").x == 132);
  CHECK(grid_of("cluster 2 2 1\nmulticast A\nmulticast B\n").x == 120);
  CHECK(grid_of("cluster 4 2 1\nmulticast A\nmulticast B\n").x == 120);
  CHECK(grid_of("cluster 4 1 1\nmulticast B\n").x == 120);
  // explain's resource summary says why the grid stops short of the SMs.
  const ScheduleFile c22 = parse_schedule_file(clustered + "cluster 2 2 1\nmulticast A\nmulticast B\n");
  const std::string text = summarize_resources(apply_directives(def, c22.directives, c22.directive_lines)).to_string();
  CHECK(text.find("the device holds 30 clusters of 4 at once (120 CTAs: a cluster stays inside one GPC)") !=
        std::string::npos);
  const ScheduleFile c2 = parse_schedule_file(clustered + "cluster 2 1 1\nmulticast B\n");
  CHECK(summarize_resources(apply_directives(def, c2.directives, c2.directive_lines)).to_string().find("clusters of") ==
        std::string::npos);
}
