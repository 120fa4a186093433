// One analysis of a schedule (analyze_schedule) is read by explain (its role nests), the resource
// report, the index-math check (its loop nest) and lowering (the kernel plan, its launch and the
// IR). They must agree on what the schedule means: tile, roles with their threads and registers,
// pipeline depth, cluster, threads, shared memory, barriers, grid, and the shared-memory layouts
// the TMA tensor maps, the WGMMA descriptors and the epilogue staging use. Each disagreement is
// a bug in one reader.
#include <doctest/doctest.h>

#include <algorithm>

#include "codegen/analyze_schedule.h"
#include "codegen/kernel_ir.h"
#include "codegen/lower.h"
#include "codegen/resources.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

// The circular-buffer depth explain shows on any loop of the nest (0: none).
int nest_stages(const std::vector<NestNode>& nodes) {
  for (const NestNode& n : nodes) {
    if (auto* l = std::get_if<NestLoop>(&n.item)) {
      if (l->pipeline) return l->pipeline->stages;
      if (int s = nest_stages(n.body)) return s;
    }
  }
  return 0;
}

// The first node of kind T in the nest, depth first.
template <class T>
const T* find_in_nest(const std::vector<NestNode>& nodes) {
  for (const NestNode& n : nodes) {
    if (auto* x = std::get_if<T>(&n.item)) return x;
    if (auto* x = find_in_nest<T>(n.body)) return x;
  }
  return nullptr;
}

// What the lowered IR says about registers and layouts.
struct IrFacts : kir::Visitor {
  std::vector<int> setmaxnreg;
  std::vector<int> wgmma_swizzles;
  std::vector<std::pair<int, int>> staging;  // (swizzle bytes, columns) of each staged EpilogueStore
  void visit_SetMaxNReg(const kir::SetMaxNReg& n) override { setmaxnreg.push_back(n.regs); }
  void visit_WgmmaIssue(const kir::WgmmaIssue& n) override { wgmma_swizzles.push_back(n.a_layout.swizzle_bytes); }
  void visit_EpilogueStore(const kir::EpilogueStore& n) override {
    if (n.staged) staging.push_back({n.staging_swizzle_bytes, n.cols});
  }
};

const rt::TensorMapSpec* tensor_map(const Kernel& k, rt::Operand op) {
  for (const auto& t : k.launch.tensor_maps)
    if (t.operand == op) return &t;
  return nullptr;
}

// A tensor map lands boxes of the layout: one swizzle atom wide, the layout's box rows tall.
void check_map_reads_layout(const rt::TensorMapSpec* t, const SmemTileLayout& l) {
  REQUIRE(t != nullptr);
  CHECK(int64_t(t->box_rows) == l.box_rows);
  CHECK(int(t->box_cols) == l.atom_cols());
  CHECK(int(t->swizzle) == (l.swizzle_bytes == 128 ? int(rt::Swizzle::B128)
                            : l.swizzle_bytes == 64 ? int(rt::Swizzle::B64)
                                                    : int(rt::Swizzle::B32)));
}

void check_agree(const Schedule& s, const std::string& label) {
  CAPTURE(label);
  const ScheduleAnalysis an = analyze_schedule(s);
  const ResourceSummary& r = an.resources;
  const LoopNests& nests = an.nests;
  const LoopNest& index = an.index;
  const Kernel k = lower(s);
  const KernelPlan& p = k.plan;
  IrFacts ir;
  ir.visit(k.body);

  // the index check reads the analysis's nest
  CHECK(check_index_math(s).loop_nest == check_index_math(index).loop_nest);

  // tile
  CHECK(nests.tile_m == r.tile_m);
  CHECK(nests.tile_n == r.tile_n);
  CHECK(nests.tile_k == r.tile_k);
  CHECK(index.tile_m == r.tile_m);
  CHECK(index.tile_n == r.tile_n);
  CHECK(index.tile_k == r.tile_k);
  CHECK(p.tile_m == r.tile_m);
  CHECK(p.tile_n == r.tile_n);
  CHECK(p.tile_k == r.tile_k);
  CHECK(index.tiles_m * index.tiles_n == r.grid.tiles);

  // roles, threads, registers: one list, read by all
  REQUIRE(nests.roles.size() == an.roles.size());
  REQUIRE(p.roles.size() == an.roles.size());
  REQUIRE(r.roles.size() == an.roles.size());
  int nest_threads = 0;
  for (size_t i = 0; i < an.roles.size(); ++i) {
    CAPTURE(i);
    const RoleShape& role = an.roles[i];
    for (const RoleShape* other : {&nests.roles[i].shape, &p.roles[i], &r.roles[i]}) {
      CHECK(other->name == role.name);
      CHECK(other->first_warpgroup == role.first_warpgroup);
      CHECK(other->warpgroups == role.warpgroups);
      CHECK(other->regs == role.regs);
      CHECK(other->declared == role.declared);
      CHECK(other->accumulator_regs == role.accumulator_regs);
    }
    nest_threads += nests.roles[i].shape.threads();
    // setmaxnreg in the IR exactly when declared, with the analysis's count
    CHECK((std::find(ir.setmaxnreg.begin(), ir.setmaxnreg.end(), role.regs) != ir.setmaxnreg.end()) ==
          role.declared);
  }
  CHECK(nest_threads == r.threads);
  CHECK(p.threads == r.threads);
  CHECK(int(k.launch.block[0]) == r.threads);

  // layouts: the tensor maps, the WGMMA descriptors and the staging read the analysis's values
  if (p.tma_load) {
    check_map_reads_layout(tensor_map(k, rt::Operand::A), an.a);
    check_map_reads_layout(tensor_map(k, rt::Operand::B), an.b);
  }
  CHECK_FALSE(ir.wgmma_swizzles.empty());
  for (int sb : ir.wgmma_swizzles) {
    CHECK(sb == an.a.swizzle_bytes);
    CHECK(sb == an.b.swizzle_bytes);
  }
  if (p.tma_store) {
    check_map_reads_layout(tensor_map(k, rt::Operand::D), an.staging.buffer);
    CHECK_FALSE(ir.staging.empty());
    for (auto [sb, cols] : ir.staging) {
      CHECK(sb == an.staging.buffer.swizzle_bytes);
      CHECK(cols == an.staging.cols);
    }
  }
  if (p.epilogue.staged_c) check_map_reads_layout(tensor_map(k, rt::Operand::C), an.staging.buffer);

  // consumer mode: how many warpgroups share a tile's accumulator, and who takes which tile
  const MmaStmt* mma = find_in_nest<MmaStmt>(nests.roles.back().body);
  REQUIRE(mma != nullptr);
  CHECK(mma->tile_m * warpgroups_per_tile(p) == p.tile_m);
  const auto acc = sm90::accumulator_shape(p);
  CHECK(acc.blocks * acc.regs == an.roles.back().accumulator_regs);
  const NestLoop* tiles = find_in_nest<NestLoop>(nests.roles.back().body);
  REQUIRE(tiles != nullptr);
  CHECK(tiles->dealt == (p.ping_pong ? p.consumer_warpgroups : 1));
  const std::string checked = check_index_math(s).loop_nest;
  CHECK((checked.find("for consumer in") != std::string::npos) == p.ping_pong);

  // pipeline
  CHECK(p.pipeline.stages == r.stages);
  const int shown = nests.roles.empty() ? 0 : nest_stages(nests.roles.back().body);
  CHECK((shown == 0 ? 1 : shown) == r.stages);

  // cluster and grid
  CHECK(nests.cluster.x == r.cluster.x);
  CHECK(p.cluster_size == r.cluster_size);
  CHECK(int64_t(k.launch.cluster[0]) * k.launch.cluster[1] * k.launch.cluster[2] == r.cluster_size);
  CHECK(int64_t(k.launch.grid[0]) == r.grid.x);
  CHECK(int64_t(k.launch.grid[1]) == r.grid.y);
  CHECK(int64_t(k.launch.grid[2]) == r.grid.z);
  CHECK(p.persistent == r.grid.persistent);

  // shared memory and barriers
  CHECK(p.smem_bytes == r.smem_bytes);
  CHECK(int64_t(k.launch.dynamic_smem_bytes) == r.smem_bytes);
  int64_t barrier_bytes = 0;
  for (const SmemBuffer& b : p.smem)
    if (b.name.find("_bar") != std::string::npos) barrier_bytes += b.bytes;
  CHECK(barrier_bytes == int64_t(r.mbarrier_count) * 8);
}

}  // namespace

TEST_CASE("explain, resources, the index check and lowering agree on every tutorial step") {
  struct Problem {
    int64_t m, n, k;
  };
  for (Problem pr : {Problem{8192, 8192, 8192}, Problem{1000, 1000, 1000}, Problem{256, 512, 64}}) {
    for (int v = 3; v <= 10; ++v) {
      for (DType out : {DType::BF16, DType::F32}) {
        Definition def = make_definition(pr.m, pr.n, pr.k, DType::BF16, out);
        check_agree(tutorial_schedule(v, def), "v" + std::to_string(v) + " " + std::to_string(pr.m) + "x" +
                                                   std::to_string(pr.n) + "x" + std::to_string(pr.k) +
                                                   (out == DType::F32 ? " f32" : " bf16"));
      }
    }
    for (DType out : {DType::BF16, DType::F32})
      check_agree(ping_pong_schedule(make_definition(pr.m, pr.n, pr.k, DType::BF16, out)), "pingpong");
  }
}

TEST_CASE("they agree on a fused epilogue with C staged by TMA, and on other tiles and depths") {
  const Definition def =
      make_definition(1024, 1024, 512, DType::BF16, DType::F32, {{OpKind::AddScaled, 1.0}, {OpKind::Gelu}});
  for (int v : {5, 6, 8, 10}) check_agree(tutorial_schedule(v, def), "fused v" + std::to_string(v));
  check_agree(ping_pong_schedule(def), "fused pingpong");

  Schedule wide(make_definition(2048, 2048, 1024, DType::F16, DType::F16));
  wide.tile(128, 256, 64).inline_op("cast").mma(64, 256, 16, Target::Sm90a);
  wide.bind("k_o", Binding::Serial).cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma);
  wide.cache_write("cast", Place::Shared, CopyMethod::Tma).circular_buffer("k_o", 3);
  wide.persist("m_o", "n_o", Raster::ColumnMajor, 4).warp_specialize(40, 232);
  wide.split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup);
  check_agree(wide, "128x256, 3 stages, two consumers, column-major");
}
