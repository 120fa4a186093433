#include "codegen/lower_epilogue.h"

#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

constexpr int kEpilogueBarrier = 1;  // id 0 is __syncthreads

// Columns of one staging chunk: a TMA store box is one swizzle atom wide.
int chunk_cols(const KernelPlan& p) { return p.store_swizzle_bytes / dtype_bytes(p.out); }

class LowerWrite : public Mutator {
 public:
  explicit LowerWrite(const KernelPlan& p) : p_(p) {}

  StmtPtr mutate_WriteTile(const std::shared_ptr<const WriteTile>& w) override {
    auto shape = sm90::accumulator_shape(p_);
    auto store = std::make_shared<EpilogueStore>();
    store->accumulator = "acc";
    store->blocks = shape.blocks;
    store->mma_n = p_.mma.n;
    store->mma_m = sm90::kWgmmaM;
    store->warpgroup_rows = shape.blocks * sm90::kWgmmaM;
    store->row0 = w->m_tile * imm(p_.tile_m);
    store->col0 = w->n_tile * imm(p_.tile_n);
    store->ops = p_.epilogue;
    store->out_type = std::string(dtype_name(p_.out));
    store->tile_rows = p_.tile_m;
    if (!p_.tma_store) return store;
    store->staged = true;
    store->staging = {"smem_D", imm(0)};
    store->staging_swizzle_bytes = p_.store_swizzle_bytes;
    GG_INTERNAL_CHECK(p_.tile_n % chunk_cols(p_) == 0, "staging chunks do not tile the output tile");
    std::vector<StmtPtr> stores;
    for (int c = 0; c * chunk_cols(p_) < p_.tile_n; ++c) {
      auto t = std::make_shared<TmaStore>();
      t->map = "map_d";
      t->src = {"smem_D", imm(int64_t(c) * p_.tile_m * p_.store_swizzle_bytes)};
      t->row = store->row0;
      t->col = store->col0 + imm(int64_t(c) * chunk_cols(p_));
      stores.push_back(t);
    }
    stores.push_back(std::make_shared<BulkCommit>());
    auto wait = std::make_shared<BulkWaitRead>();
    wait->pending = 0;
    stores.push_back(wait);
    // Only the threads that wrote the staging tile meet at the barrier (a named one, so a
    // producer role never has to join).
    auto staged = std::make_shared<NamedBarrierSync>();
    staged->id = kEpilogueBarrier;
    staged->threads = p_.threads;
    return block({store, std::make_shared<FenceProxyAsync>(), staged, elect_one(block(stores))});
  }

 private:
  const KernelPlan& p_;
};

}  // namespace

Kernel lower_epilogue(Kernel k) {
  const KernelPlan& p = k.plan;
  k.body = LowerWrite(p).mutate(k.body);
  if (p.tma_store) {
    k.launch.tensor_maps.push_back(
        tiled_tensor_map(rt::Operand::D, p.out, p.m, p.n, p.tile_m, p.store_swizzle_bytes));
  }
  return k;
}

}  // namespace gg
