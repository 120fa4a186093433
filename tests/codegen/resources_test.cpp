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
