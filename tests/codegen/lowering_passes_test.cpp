// Each lowering pass, checked on the structure it leaves behind.
#include <doctest/doctest.h>

#include <map>

#include "codegen/build_loop_nests.h"
#include "codegen/check_sync.h"
#include "codegen/expand_circular_buffer.h"
#include "codegen/insert_mbarriers.h"
#include "codegen/lower.h"
#include "codegen/lower_epilogue.h"
#include "codegen/lower_operand_copies.h"
#include "codegen/plan_kernel.h"
#include "codegen/select_mma.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "schedules/tutorial.h"

using namespace gg;
using namespace gg::kir;

namespace {

struct KindCounter : Visitor {
  std::map<NodeKind, int> count;
  void visit_all(const StmtPtr& s) { visit(s); }
#define GG_COUNT(N)                     \
  void visit_##N(const N& n) override { \
    ++count[NodeKind::N];               \
    Visitor::visit_##N(n);              \
  }
  GG_KIR_NODES(GG_COUNT)
#undef GG_COUNT
};

std::map<NodeKind, int> kinds(const Kernel& k) {
  KindCounter c;
  c.visit_all(k.body);
  return c.count;
}

// True when the k loop's body ends with a CTA barrier (the release without warp roles).
bool k_loop_ends_with_syncthreads(const StmtPtr& body) {
  struct Find : Visitor {
    bool found = false, ends_with_sync = false;
    void visit_For(const For& f) override {
      if (f.kind == LoopKind::KTiles) {
        found = true;
        const auto* b = as<Block>(f.body);
        ends_with_sync = b && !b->body.empty() && as<SyncThreads>(b->body.back());
      }
      Visitor::visit_For(f);
    }
  } find;
  find.visit(body);
  return find.found && find.ends_with_sync;
}

Schedule step(int v, int64_t m = 512, int64_t n = 512, int64_t k = 512) {
  return tutorial_schedule(v, make_gemm(m, n, k, DType::BF16, DType::BF16));
}

}  // namespace

TEST_CASE("build_loop_nests: abstract per-k-tile steps inside the serial k loop, the write after it") {
  Schedule s = step(5);
  Kernel k = build_loop_nests(s, plan_kernel(s, analyze_schedule(s)));
  auto c = kinds(k);
  CHECK(c[NodeKind::For] == 1);
  CHECK(c[NodeKind::LoadTile] == 2);
  CHECK(c[NodeKind::AcquireStage] == 1);
  CHECK(c[NodeKind::ComputeTile] == 1);
  CHECK(c[NodeKind::ReleaseStage] == 1);
  CHECK(c[NodeKind::WriteTile] == 1);
  std::string ir = dump(k.body);
  CHECK(ir.find("int m_tile = blockIdx.y") != std::string::npos);
  CHECK(ir.find("int n_tile = blockIdx.x") != std::string::npos);
}

TEST_CASE("build_loop_nests: v1 has no k loop and fixed tile coordinates") {
  Schedule s = step(1, 128, 128, 64);
  Kernel k = build_loop_nests(s, plan_kernel(s, analyze_schedule(s)));
  CHECK(kinds(k)[NodeKind::For] == 0);
  CHECK(dump(k.body).find("int m_tile = 0") != std::string::npos);
}

TEST_CASE("expand_circular_buffer: a prologue fills prefetch stages; the loop refills k+prefetch") {
  Schedule s = step(5);
  Kernel k = expand_circular_buffer(build_loop_nests(s, plan_kernel(s, analyze_schedule(s))));
  auto c = kinds(k);
  CHECK(c[NodeKind::For] == 2);
  CHECK(c[NodeKind::LoadTile] == 4);
  std::string ir = dump(k.body);
  CHECK(ir.find("for fill in [0, min(1, k_tiles))") != std::string::npos);
  CHECK(ir.find("LoadTile A tile=m_tile k_tile=(k_tile + 1) stage=((k_tile + 1) % 2)") != std::string::npos);
  CHECK(ir.find("AcquireStage stage=(k_tile % 2) parity=((k_tile / 2) % 2)") != std::string::npos);
}

TEST_CASE("expand_circular_buffer: one stage is the degenerate ring, unchanged but for the stage index") {
  Schedule s = step(4);
  Kernel before = build_loop_nests(s, plan_kernel(s, analyze_schedule(s)));
  Kernel after = expand_circular_buffer(before);
  CHECK(kinds(after)[NodeKind::For] == 1);
  CHECK(dump(after.body).find("LoadTile A tile=m_tile k_tile=k_tile stage=0") != std::string::npos);
}

TEST_CASE("lower_operand_copies: TMA loads with expect-tx, or synchronous swizzled copies") {
  Schedule tma = step(5);
  Kernel k = lower_operand_copies(expand_circular_buffer(build_loop_nests(tma, plan_kernel(tma, analyze_schedule(tma)))));
  auto c = kinds(k);
  CHECK(c[NodeKind::LoadTile] == 0);
  CHECK(c[NodeKind::TmaLoad] == 4);
  CHECK(c[NodeKind::MbarrierArriveExpectTx] == 4);
  CHECK(k.launch.tensor_maps.size() == 2);

  Schedule sync = step(3);
  Kernel k3 = lower_operand_copies(expand_circular_buffer(build_loop_nests(sync, plan_kernel(sync, analyze_schedule(sync)))));
  CHECK(kinds(k3)[NodeKind::SyncCopyTile] == 2);
  CHECK(kinds(k3)[NodeKind::TmaLoad] == 0);
  CHECK(k3.launch.tensor_maps.empty());
}

TEST_CASE("insert_mbarriers: one full barrier per stage, acquire waits on parity, release is a CTA barrier") {
  Schedule s = step(5);
  Kernel k = insert_mbarriers(lower_operand_copies(expand_circular_buffer(build_loop_nests(s, plan_kernel(s, analyze_schedule(s))))));
  auto c = kinds(k);
  CHECK(c[NodeKind::MbarrierInit] == 2);
  CHECK(c[NodeKind::FenceMbarrierInit] == 1);
  CHECK(c[NodeKind::MbarrierWait] == 1);
  CHECK(c[NodeKind::AcquireStage] == 0);
  CHECK(c[NodeKind::ReleaseStage] == 0);
  CHECK(dump(k.body).find("MbarrierInit full_bar[0] arrivals=2") != std::string::npos);

  // Without warp roles a stage is released by a CTA barrier: the k loop ends with __syncthreads.
  CHECK(k_loop_ends_with_syncthreads(k.body));

  Schedule sync = step(3);
  Kernel k3 = insert_mbarriers(lower_operand_copies(expand_circular_buffer(build_loop_nests(sync, plan_kernel(sync, analyze_schedule(sync))))));
  CHECK(kinds(k3)[NodeKind::MbarrierInit] == 0);
  CHECK(k_loop_ends_with_syncthreads(k3.body));
  CHECK(kinds(k3)[NodeKind::FenceProxyAsync] == 1);  // the MMA reads what generic stores wrote
}

TEST_CASE("select_mma: each k tile becomes fence, unrolled m64n128k16 issues, commit and wait") {
  Schedule s = step(5);
  Kernel k = select_mma(insert_mbarriers(lower_operand_copies(expand_circular_buffer(build_loop_nests(s, plan_kernel(s, analyze_schedule(s)))))));
  auto c = kinds(k);
  CHECK(c[NodeKind::ComputeTile] == 0);
  CHECK(c[NodeKind::WgmmaFence] == 1);
  CHECK(c[NodeKind::WgmmaIssue] == 1);
  CHECK(c[NodeKind::WgmmaCommit] == 1);
  CHECK(c[NodeKind::WgmmaWait] == 1);
  CHECK(dump(k.body).find("WgmmaIssue m64n128k16.bf16") != std::string::npos);
}

TEST_CASE("lower_epilogue: staged output goes out in one TMA store per 128-byte column chunk") {
  Schedule s = step(5);
  Kernel k = lower(s);
  auto c = kinds(k);
  CHECK(c[NodeKind::WriteTile] == 0);
  CHECK(c[NodeKind::EpilogueStore] == 1);
  CHECK(c[NodeKind::TmaStore] == 2);  // 128 bf16 columns = 2 x 64
  // The staging buffer is reused once the previous tile's store read it, and before exit.
  CHECK(c[NodeKind::BulkWaitRead] == 2);
  CHECK(c[NodeKind::NamedBarrierSync] == 2);
  CHECK(k.launch.tensor_maps.size() == 3);
  Kernel direct = lower(step(3));
  CHECK(kinds(direct)[NodeKind::TmaStore] == 0);
  CHECK(dump(direct.body).find("direct") != std::string::npos);
}

TEST_CASE("lower_epilogue: 16-bit staging is written with stmatrix, f32 staging with st.shared") {
  for (int v : {4, 5, 10}) {
    CAPTURE(v);
    const std::string bf16 = dump(lower(step(v)).body);
    CHECK(bf16.find("by stmatrix") != std::string::npos);
    CHECK(bf16.find("by st.shared") == std::string::npos);
    const std::string f32 = dump(lower(tutorial_schedule(v, make_gemm(512, 512, 512, DType::BF16, DType::F32))).body);
    CHECK(f32.find("by st.shared") != std::string::npos);
    CHECK(f32.find("by stmatrix") == std::string::npos);
  }
}

TEST_CASE("check_sync rejects a TMA load whose barrier expects no bytes") {
  auto load = std::make_shared<TmaLoad>();
  load->map = rt::Operand::A;
  load->dst = {Buffer::A, imm(0)};
  load->row = imm(0);
  load->col = imm(0);
  load->bar = {Barrier::Full, imm(0)};
  Kernel k;
  k.body = block({load});
  CHECK_THROWS_AS(check_sync(k), InternalError);
  auto expect = std::make_shared<MbarrierArriveExpectTx>();
  expect->bar = {Barrier::Full, imm(0)};
  expect->bytes = 16384;
  k.body = block({expect, load});
  CHECK_NOTHROW(check_sync(k));
  // Hand-assembled fragments (a plan without roles) still get the order check, by name.
  k.body = block({load, expect});
  try {
    check_sync(k);
    FAIL("a TMA load before its expect-tx passed check_sync");
  } catch (const InternalError& e) {
    CHECK(std::string(e.what()).find("without an expect-tx before it") != std::string::npos);
  }
}

TEST_CASE("check_sync rejects abstract nodes and wgmma outside a fenced group") {
  Kernel k;
  k.body = block({std::make_shared<ComputeTile>()});
  CHECK_THROWS_AS(check_sync(k), InternalError);
  auto issue = std::make_shared<WgmmaIssue>();
  issue->block = imm(0);
  issue->a = issue->b = {Buffer::A, imm(0)};
  k.body = block({issue});
  CHECK_THROWS_AS(check_sync(k), InternalError);
}

TEST_CASE("the IR dump names every pass; structural equality compares trees, not pointers") {
  StmtPtr a = for_loop("i", imm(0), imm(4), block({comment("x")}));
  StmtPtr b = for_loop("i", imm(0), imm(4), block({comment("x")}));
  StmtPtr c = for_loop("i", imm(0), imm(5), block({comment("x")}));
  CHECK(structurally_equal(a, b));
  CHECK_FALSE(structurally_equal(a, c));
  CHECK(lowering_passes().front() == "build_loop_nests");
  CHECK(lowering_passes().back() == "check_sync");
}

TEST_CASE("a mutator splices a replacement block and deletes on nullptr") {
  struct DropComments : Mutator {
    StmtPtr mutate_Comment(const std::shared_ptr<const Comment>&) override { return nullptr; }
  };
  StmtPtr tree = block({comment("gone"), let("x", imm(1)), for_loop("i", imm(0), imm(2), comment("gone too"))});
  StmtPtr out = DropComments().mutate(tree);
  CHECK(dump(out) == "int x = 1\nfor i in [0, 2) step 1\n");
}

TEST_CASE("expressions fold constants and print as C") {
  CHECK(to_c(var("k") * imm(1) + imm(0)) == "k");
  CHECK(to_c(imm(6) / imm(4)) == "1");
  CHECK(to_c(ceil_div(var("K"), imm(64))) == "(((K + 64) - 1) / 64)");
  CHECK(to_c(min(imm(1), var("t"))) == "min(1, t)");
}

TEST_CASE("same input, same bytes") {
  CHECK(structurally_equal(lower(step(5)).body, lower(step(5)).body));
}

TEST_CASE("swizzle widths follow the tile: 32B operand rows for k tiles of 16, 64B staging chunks for 96 columns") {
  // Operands and staging get different swizzles here, so a map or node reading the wrong one shows.
  Definition def = make_gemm(300, 264, 520, DType::BF16, DType::BF16);
  Schedule s(def);
  s.tile(64, 96, 16).inline_op("cast").mma(64, 96, 16, Target::Sm90a);
  s.bind("k_o", Binding::Serial).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  s.cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma).cache_write("cast", Place::Shared, CopyMethod::Tma);
  Kernel k = lower(s);
  CHECK(k.plan.operand(rt::Operand::A).smem.swizzle_bytes == 32);
  CHECK(k.plan.operand(rt::Operand::B).smem.swizzle_bytes == 32);
  CHECK(k.plan.staging.buffer.swizzle_bytes == 64);
  CHECK(kinds(k)[NodeKind::TmaStore] == 3);  // 96 bf16 columns = 3 chunks of 32
  REQUIRE(k.launch.tensor_maps.size() == 3);
  const rt::TensorMapSpec& a = k.launch.tensor_maps[0];
  const rt::TensorMapSpec& b = k.launch.tensor_maps[1];
  const rt::TensorMapSpec& d = k.launch.tensor_maps[2];
  CHECK(a.operand == rt::Operand::A);
  CHECK(a.box_rows == 64);
  CHECK(a.box_cols == 16);
  CHECK(a.swizzle == rt::Swizzle::B32);
  CHECK(b.operand == rt::Operand::B);
  CHECK(b.box_rows == 96);
  CHECK(b.box_cols == 16);
  CHECK(b.swizzle == rt::Swizzle::B32);
  CHECK(d.operand == rt::Operand::D);
  CHECK(d.box_rows == 64);
  CHECK(d.box_cols == 32);
  CHECK(d.swizzle == rt::Swizzle::B64);
  const std::string ir = dump(k.body);
  CHECK(ir.find("swizzle=32") != std::string::npos);   // the wgmma descriptors
  CHECK(ir.find("swizzle=64") == std::string::npos);   // ... never the staging's
}

TEST_CASE("k tiles wider than one 128B atom load one TMA box per atom") {
  Definition def = make_gemm(512, 512, 512, DType::BF16, DType::BF16);
  Schedule s(def);
  s.tile(128, 128, 128).inline_op("cast").mma(64, 128, 16, Target::Sm90a);
  s.bind("k_o", Binding::Serial).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  s.cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma);
  Kernel k = lower(s);
  CHECK(k.plan.operand(rt::Operand::A).smem.atoms() == 2);
  CHECK(kinds(k)[NodeKind::TmaLoad] == 4);  // A and B, two atoms each
  CHECK(k.launch.tensor_maps[0].box_cols == 64);
  CHECK(k.launch.tensor_maps[1].box_cols == 64);
  const std::string ir = dump(k.body);
  // Each barrier expects its operand's whole stage (128 rows x 256 bytes), both atoms.
  CHECK(ir.find("MbarrierArriveExpectTx full_bar[0] bytes=32768") != std::string::npos);
  // The second atom: 64 columns further in K, one atom (128 rows x 128 bytes) further in smem.
  CHECK(ir.find("TmaLoad map_a row=(m_tile * 128) col=((k_tile * 128) + 64) -> smem_A+16384") != std::string::npos);
  CHECK(ir.find("TmaLoad map_b row=(n_tile * 128) col=((k_tile * 128) + 64) -> smem_B+16384") != std::string::npos);
  // k step kk reads atom (kk * 32) / 128 at byte (kk * 32) % 128 of its rows.
  CHECK(ir.find("a=smem_A+(((((kk * 32) / 128) * 16384) + ((mb * 64) * 128)) + ((kk * 32) % 128))") !=
        std::string::npos);
  CHECK(ir.find("b=smem_B+((((kk * 32) / 128) * 16384) + ((kk * 32) % 128))") != std::string::npos);
  CHECK(ir.find("for kk in [0, 8)") != std::string::npos);  // 128 / 16 k steps
}

TEST_CASE("persist: a grid-strided tile loop whose pipeline phases run across tiles") {
  Schedule s = step(6, 1000, 704, 520);
  Kernel k = lower(s);
  std::string ir = dump(k.body);
  CHECK(ir.find("for tile in [blockIdx.x, 48) step gridDim.x") != std::string::npos);  // 8 x 6 tiles
  // The pipeline's running count: declared before the loop, advanced by each unit's k tiles.
  CHECK(ir.find("var int k_done = 0\n") != std::string::npos);
  CHECK(ir.find("k_done := (k_done + k_tiles)") != std::string::npos);
  CHECK(ir.find("MbarrierWait full_bar[((k_done + k_tile) % 2)] parity=(((k_done + k_tile) / 2) % 2)") !=
        std::string::npos);
  CHECK(k.launch.grid[0] == 48);  // min(tiles, resident CTA slots)
  Kernel big = lower(step(6, 4096, 4096, 4096));
  CHECK(big.launch.grid[0] == 264);  // 132 SMs x 2 resident CTAs
}

// The operand list: the plan's staged operands drive the loads of each k step, the full barrier's
// arrivals and transaction bytes, and the tensor maps; no pass names A or B for them.
TEST_CASE("the staged operand list: one load per operand per k step, arrivals, bytes and maps from the list") {
  for (int v : {4, 5, 8, 10}) {
    CAPTURE(v);
    const Kernel k = lower(step(v, 1024, 1024, 512));
    const KernelPlan& p = k.plan;
    REQUIRE(p.operands.size() == 2);
    CHECK(p.operands[0].operand == rt::Operand::A);
    CHECK(p.operands[1].operand == rt::Operand::B);
    CHECK(p.operands[0].tile == "m_tile");
    CHECK(p.operands[1].tile == "n_tile");
    CHECK(p.pipeline.full_arrivals == 2);
    CHECK(p.stage_bytes() == p.operands[0].smem.bytes() + p.operands[1].smem.bytes());
    if (p.tma_load) {
      CHECK(p.pipeline.tx_bytes == p.stage_bytes());
      REQUIRE(k.launch.tensor_maps.size() >= 2);
      CHECK(k.launch.tensor_maps[0].operand == rt::Operand::A);
      CHECK(k.launch.tensor_maps[1].operand == rt::Operand::B);
    }
    // After build_loop_nests, each k loop that loads holds one LoadTile per staged operand.
    Kernel nests = build_loop_nests(step(v, 1024, 1024, 512), plan_kernel(step(v, 1024, 1024, 512),
                                                                           validate_schedule(step(v, 1024, 1024, 512), hopper())));
    struct Loads : Visitor {
      std::vector<rt::Operand> seen;
      void visit_LoadTile(const LoadTile& l) override { seen.push_back(l.operand); }
    } loads;
    loads.visit(nests.body);
    REQUIRE(loads.seen.size() % p.operands.size() == 0);
    for (size_t i = 0; i < loads.seen.size(); ++i) CHECK(loads.seen[i] == p.operands[i % p.operands.size()].operand);
  }
}
