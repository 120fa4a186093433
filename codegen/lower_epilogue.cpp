#include "codegen/lower_epilogue.h"

#include "codegen/resources.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

// Columns of one staging chunk: a TMA store box is one swizzle atom wide.
int chunk_cols(const KernelPlan& p) { return p.store_swizzle_bytes / dtype_bytes(p.out); }

class LowerWrite : public Mutator {
 public:
  explicit LowerWrite(const KernelPlan& p) : p_(p), role_(compute_role(p)) {}

  StmtPtr mutate_WriteTile(const std::shared_ptr<const WriteTile>& w) override {
    auto shape = sm90::accumulator_shape(p_);
    auto store = std::make_shared<EpilogueStore>();
    store->accumulator = "acc";
    store->blocks = shape.blocks;
    store->mma_n = p_.mma.n;
    store->mma_m = sm90::kWgmmaM;
    store->warpgroup_rows = shape.blocks * sm90::kWgmmaM;
    store->warpgroup = consumer_band(p_);
    store->row0 = w->m_tile * imm(p_.tile_m);
    store->col0 = w->n_tile * imm(p_.tile_n);
    store->ops = p_.epilogue;
    store->out_type = std::string(dtype_name(p_.out));
    store->tile_rows = p_.tile_m;
    if (!p_.tma_store) return store;
    store->staged = true;
    store->staging = {"smem_D", staging_base()};
    store->staging_swizzle_bytes = p_.store_swizzle_bytes;
    GG_INTERNAL_CHECK(p_.tile_n % chunk_cols(p_) == 0, "staging chunks do not tile the output tile");
    std::vector<StmtPtr> stores;
    for (int c = 0; c * chunk_cols(p_) < p_.tile_n; ++c) {
      auto t = std::make_shared<TmaStore>();
      t->map = "map_d";
      t->src = {"smem_D", staging_base() + imm(int64_t(c) * p_.tile_m * p_.store_swizzle_bytes)};
      t->row = store->row0;
      t->col = store->col0 + imm(int64_t(c) * chunk_cols(p_));
      stores.push_back(t);
    }
    stores.push_back(std::make_shared<BulkCommit>());
    std::vector<StmtPtr> out = {comment("the previous tile's TMA store has read the staging buffer")};
    if (p_.staged_c) {
      // C's tile lands where the results go; every thread waits for it instead of meeting the
      // others (the load is issued only after the previous store finished reading).
      store->c_staged = true;
      out.push_back(elect_one(block({wait_staging_read_here(), load_c_tile(*store)}), first_warp()));
      auto wait = std::make_shared<MbarrierWait>();
      wait->bar = c_barrier();
      // The barrier's phase counts the tiles its consumer has staged: all of the CTA's, or
      // under ping-pong every other one.
      ExprPtr staged_tiles = var("k_done") / var("k_tiles");
      if (p_.ping_pong) staged_tiles = staged_tiles / imm(p_.consumer_warpgroups);
      wait->parity = p_.persistent ? staged_tiles % imm(2) : imm(0);
      out.push_back(wait);
    } else {
      // The previous tile's store ran under this tile's mainloop; the staging buffer is
      // rewritten once it has been read. Only the computing role's threads meet at the
      // barriers (named ones, so a producer role never has to join).
      out.push_back(wait_staging_read());
      out.push_back(staging_barrier());
    }
    for (StmtPtr s : {StmtPtr(store), StmtPtr(std::make_shared<FenceProxyAsync>()), staging_barrier(),
                      elect_one(block(stores), first_warp())})
      out.push_back(s);
    return block(out);
  }

  // Shared memory must outlive the last store's reads of it.
  StmtPtr mutate_WarpRole(const std::shared_ptr<const WarpRole>& r) override {
    StmtPtr out = Mutator::mutate_WarpRole(r);
    if (!p_.tma_store || r->role != role_.name) return out;
    auto copy = std::make_shared<WarpRole>(*as<WarpRole>(out));
    copy->body = block({copy->body, wait_staging_read()});
    return copy;
  }

 private:
  // The warp whose elected thread stores the tile: the role's first, or under ping-pong the
  // first of each consumer warpgroup (each stores its own tiles).
  ExprPtr first_warp() const {
    return p_.ping_pong ? var("warpgroup") * imm(4) : imm(int64_t(role_.first_warpgroup) * 4);
  }
  // Under ping-pong each consumer stages its tile in its own buffer, with its own barriers.
  ExprPtr staging_base() const {
    return staging_buffers(p_) > 1 ? var("consumer") * imm(staged_tile_bytes(p_)) : imm(0);
  }
  BarrierRef c_barrier() const { return {kCBarrier, p_.ping_pong ? var("consumer") : imm(0)}; }
  StmtPtr wait_staging_read_here() const {
    auto wait = std::make_shared<BulkWaitRead>();
    wait->pending = 0;
    return wait;
  }
  StmtPtr wait_staging_read() const { return elect_one(wait_staging_read_here(), first_warp()); }
  // One TMA box per staging chunk, the same boxes the store writes, completing on c_bar.
  StmtPtr load_c_tile(const EpilogueStore& store) const {
    const int64_t chunk_bytes = int64_t(p_.tile_m) * p_.store_swizzle_bytes;
    auto expect = std::make_shared<MbarrierArriveExpectTx>();
    expect->bar = c_barrier();
    expect->bytes = staged_tile_bytes(p_);
    std::vector<StmtPtr> loads = {expect};
    for (int c = 0; c * chunk_cols(p_) < p_.tile_n; ++c) {
      auto t = std::make_shared<TmaLoad>();
      t->map = "map_c";
      t->dst = {"smem_D", staging_base() + imm(int64_t(c) * chunk_bytes)};
      t->row = store.row0;
      t->col = store.col0 + imm(int64_t(c) * chunk_cols(p_));
      t->bar = c_barrier();
      loads.push_back(t);
    }
    return block(loads);
  }
  StmtPtr staging_barrier() const {
    auto b = std::make_shared<NamedBarrierSync>();
    b->id = imm(kStagingBarrier) + (p_.ping_pong ? var("consumer") : imm(0));
    b->threads = warpgroups_per_tile(p_) * kWarpgroupThreads;
    return b;
  }

  const KernelPlan& p_;
  const RolePlan& role_;
};

}  // namespace

Kernel lower_epilogue(Kernel k) {
  const KernelPlan& p = k.plan;
  k.body = LowerWrite(p).mutate(k.body);
  if (p.tma_store) {
    k.launch.tensor_maps.push_back(
        tiled_tensor_map(rt::Operand::D, p.out, p.m, p.n, p.tile_m, p.store_swizzle_bytes));
  }
  if (p.staged_c)
    k.launch.tensor_maps.push_back(tiled_tensor_map(rt::Operand::C, p.out, p.m, p.n, p.tile_m, p.store_swizzle_bytes));
  return k;
}

}  // namespace gg
