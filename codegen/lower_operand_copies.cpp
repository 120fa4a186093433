#include "codegen/lower_operand_copies.h"

#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;


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
    const bool is_a = l->operand == rt::Operand::A;
    const SmemTileLayout& layout = is_a ? p_.a_smem : p_.b_smem;
    const int64_t tile_rows = layout.rows;
    SmemRef dst{is_a ? Buffer::A : Buffer::B, l->stage * imm(layout.bytes())};
    ExprPtr row0 = l->tile * imm(tile_rows), col0 = l->k_tile * imm(p_.tile_k);
    if (p_.tma_load) {
      BarrierRef bar{Barrier::Full, l->stage};
      // The barrier expects the whole stage of this operand, slices multicast by peers included.
      auto expect = std::make_shared<MbarrierArriveExpectTx>();
      expect->bar = bar;
      expect->bytes = layout.bytes();
      std::vector<StmtPtr> issue = {expect};
      // Under multicast each CTA's box is its slice of the rows, landing in every CTA.
      const bool multicast = layout.box_rows != tile_rows;
      ExprPtr slice_row = multicast ? var("cta_rank") * imm(layout.box_rows) : imm(0);
      for (int atom = 0; atom < layout.atoms(); ++atom) {  // one TMA box per swizzle atom along K
        auto load = std::make_shared<TmaLoad>();
        load->map = l->operand;
        load->dst = {dst.buffer, dst.offset + imm(layout.offset(atom, 0)) + slice_row * imm(layout.swizzle_bytes)};
        load->row = row0 + slice_row;
        load->col = col0 + imm(int64_t(atom) * layout.atom_cols());
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
    copy->rows = static_cast<int>(tile_rows);
    copy->cols = p_.tile_k;
    copy->elem_bytes = dtype_bytes(p_.in);
    copy->threads = p_.threads;
    copy->swizzle_bytes = layout.swizzle_bytes;
    copy->load_bytes = p_.operand_rows_aligned ? 16 : copy->elem_bytes;
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
    GG_INTERNAL_CHECK(p.a_smem.bytes() + p.b_smem.bytes() == p.pipeline.tx_bytes,
                      "the operand loads expect other bytes than the pipeline record's per-stage transaction");
    k.launch.tensor_maps.push_back(tiled_tensor_map(rt::Operand::A, p.in, p.m, p.k, p.a_smem));
    k.launch.tensor_maps.push_back(tiled_tensor_map(rt::Operand::B, p.in, p.n, p.k, p.b_smem));
  }
  return k;
}

}  // namespace gg
