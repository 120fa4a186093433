#include "codegen/lower_operand_copies.h"

#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

// Rows of an operand tile one CTA loads: all of them, or its slice of a multicast tile.
int rows_per_cta(const KernelPlan& p, bool is_a) {
  bool multicast = is_a ? p.multicast_a : p.multicast_b;
  return (is_a ? p.tile_m : p.tile_n) / (multicast ? p.cluster_size : 1);
}

class LowerCopies : public Mutator {
 public:
  explicit LowerCopies(const KernelPlan& p) : p_(p) {}

  // The producer role's loop already runs on one elected thread.
  StmtPtr mutate_ElectOne(const std::shared_ptr<const ElectOne>& e) override {
    bool outer = elected_;
    elected_ = true;
    StmtPtr out = Mutator::mutate_ElectOne(e);
    elected_ = outer;
    return out;
  }

  StmtPtr mutate_LoadTile(const std::shared_ptr<const LoadTile>& l) override {
    bool is_a = l->operand == "A";
    int tile_rows = is_a ? p_.tile_m : p_.tile_n;
    int64_t stage_bytes = is_a ? p_.a_stage_bytes : p_.b_stage_bytes;
    SmemRef dst{is_a ? "smem_A" : "smem_B", l->stage * imm(stage_bytes)};
    ExprPtr row0 = l->tile * imm(tile_rows), col0 = l->k_tile * imm(p_.tile_k);
    if (p_.tma_load) {
      BarrierRef bar{p_.pipeline.full, l->stage};
      // The barrier expects the whole stage of this operand, slices multicast by peers included.
      auto expect = std::make_shared<MbarrierArriveExpectTx>();
      expect->bar = bar;
      expect->bytes = stage_bytes;
      std::vector<StmtPtr> issue = {expect};
      const int slice = rows_per_cta(p_, is_a);
      const bool multicast = slice != tile_rows;
      ExprPtr slice_row = multicast ? var("cta_rank") * imm(slice) : imm(0);
      int atom_cols = p_.swizzle_bytes / dtype_bytes(p_.in);
      for (int atom = 0; atom < p_.k_atoms; ++atom) {  // one TMA box per swizzle atom along K
        auto load = std::make_shared<TmaLoad>();
        load->map = is_a ? "map_a" : "map_b";
        load->dst = {dst.buffer, dst.offset + imm(int64_t(atom) * tile_rows * p_.swizzle_bytes) +
                                     slice_row * imm(p_.swizzle_bytes)};
        load->row = row0 + slice_row;
        load->col = col0 + imm(int64_t(atom) * atom_cols);
        load->bar = bar;
        load->multicast_mask = multicast ? (1u << p_.cluster_size) - 1u : 0u;
        issue.push_back(load);
      }
      return elected_ ? block(issue) : elect_one(block(issue));
    }
    auto copy = std::make_shared<SyncCopyTile>();
    copy->source = is_a ? "a" : "b";
    copy->dst = dst;
    copy->row0 = row0;
    copy->col0 = col0;
    copy->row_limit = var(is_a ? "args.m" : "args.n");
    copy->col_limit = var("args.k");
    copy->ld = var("args.k");
    copy->rows = tile_rows;
    copy->cols = p_.tile_k;
    copy->elem_bytes = dtype_bytes(p_.in);
    copy->threads = p_.threads;
    copy->swizzle_bytes = p_.swizzle_bytes;
    return copy;
  }

 private:
  const KernelPlan& p_;
  bool elected_ = false;
};

}  // namespace

Kernel lower_operand_copies(Kernel k) {
  const KernelPlan& p = k.plan;
  k.body = LowerCopies(p).mutate(k.body);
  if (p.tma_load) {
    GG_INTERNAL_CHECK(p.a_stage_bytes + p.b_stage_bytes == p.pipeline.tx_bytes,
                      "the operand loads expect other bytes than the pipeline record's per-stage transaction");
    k.launch.tensor_maps.push_back(
        tiled_tensor_map(rt::Operand::A, p.in, p.m, p.k, rows_per_cta(p, true), p.swizzle_bytes));
    k.launch.tensor_maps.push_back(
        tiled_tensor_map(rt::Operand::B, p.in, p.n, p.k, rows_per_cta(p, false), p.swizzle_bytes));
  }
  return k;
}

}  // namespace gg
