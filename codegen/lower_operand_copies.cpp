#include "codegen/lower_operand_copies.h"

#include "codegen/index_math.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;


class LowerCopies : public ElectionAwareMutator {
 public:
  explicit LowerCopies(const KernelPlan& p) : p_(p) {}

  // The fill's announcement of `bytes` landing in this CTA's stage: a CTA pair's boxes all complete
  // on the leader's barrier, which expects both CTAs' bytes (the odd CTA announces none).
  StmtPtr expect_stage(const LoadTile& l, int64_t bytes) const {
    auto expect = std::make_shared<MbarrierArriveExpectTx>();
    expect->bar = {Barrier::Full, l.stage};
    expect->bytes = bytes * (p_.cta_pair ? 2 : 1);
    expect->leader_only = p_.cta_pair;
    return expect;
  }

  // A's scale factors of the tile's rows for the stage's k block: one unswizzled box of tile m
  // fp32 values at (row: k block, column: the tile's first row).
  StmtPtr scale_load(const LoadTile& l, const StagedOperand& operand) const {
    GG_INTERNAL_CHECK(p_.tma_load && p_.tile_k == kScaleBlock, "A's scale factors by TMA, one k block per k tile");
    const BarrierRef bar{Barrier::Full, l.stage};
    // A contiguous group's rows start anywhere: its boxes from the 16-byte-aligned column before
    // them (scale_a_layout's room; LoadScaleFactors reads past the shift), kScaleBoxCols each.
    const ExprPtr col0 = l.first ? l.first / imm(4) * imm(4) : l.tile * imm(p_.tile_m);
    const int64_t box_cols = p_.contiguous ? kScaleBoxCols : operand.smem.mn_extent();
    std::vector<StmtPtr> issue = {expect_stage(l, operand.smem.bytes())};
    for (int64_t box = 0; box < operand.smem.mn_extent() / box_cols; ++box) {
      auto load = std::make_shared<TmaLoad>();
      load->map = l.operand;
      load->dst = {operand.buffer, l.stage * imm(operand.smem.bytes()) + imm(box * box_cols * 4)};
      load->row = l.k_first ? l.k_first + l.k_tile : l.k_tile;
      load->col = col0 + imm(box * box_cols);
      load->bar = bar;
      load->batch = tensor_map_batch(p_, l.operand, l.batch);  // a masked group's or batch's own factors
      issue.push_back(load);
    }
    return elected_ ? block(issue) : elect_one(block(issue));
  }

  // UE8M0 factors (sm_100a): per 128 rows of the tile, the atom holding the stage's k block (row
  // block x k groups + k block / 4 of the map's rows), whole; the MMAs pick the k block's byte.
  // A CTA pair: each CTA its own rows' atom of A and all of the pair's B atoms (each CTA's MMA
  // rows take every column), completing on the leader's barrier as the operands do.
  StmtPtr ue8m0_scale_load(const LoadTile& l, const StagedOperand& operand) const {
    GG_INTERNAL_CHECK(p_.tma_load && p_.tile_k == kScaleBlock, "UE8M0 factors by TMA, one k block per k tile");
    const BarrierRef bar{Barrier::Full, l.stage};
    const int64_t k_groups = rt::ue8m0_atoms_along_k(p_.k);
    const int64_t tile_rows = l.operand == rt::Operand::ScaleA ? p_.tile_m : p_.tile_n;
    const ExprPtr k_block = l.k_first ? l.k_first + l.k_tile : l.k_tile;
    std::vector<StmtPtr> issue = {expect_stage(l, operand.smem.bytes())};
    for (int64_t atom = 0; atom < operand.smem.rows; ++atom) {
      auto load = std::make_shared<TmaLoad>();
      load->map = l.operand;
      load->dst = {operand.buffer, l.stage * imm(operand.smem.bytes()) + imm(atom * operand.smem.row_bytes)};
      load->row = (l.tile * imm(tile_rows / kUe8m0AtomRows) + imm(atom)) * imm(k_groups) + k_block / imm(kUe8m0AtomKBlocks);
      load->col = imm(0);
      load->bar = bar;
      load->to_pair_leader = p_.cta_pair;
      load->batch = tensor_map_batch(p_, l.operand, l.batch);
      issue.push_back(load);
    }
    return elected_ ? block(issue) : elect_one(block(issue));
  }

  StmtPtr mutate_LoadTile(const std::shared_ptr<const LoadTile>& l) override {
    const StagedOperand& operand = p_.operand(l->operand);
    if ((l->operand == rt::Operand::ScaleA || l->operand == rt::Operand::ScaleB) && p_.layouts.scales_ue8m0)
      return ue8m0_scale_load(*l, operand);
    if (l->operand == rt::Operand::ScaleA) return scale_load(*l, operand);
    const SmemTileLayout& layout = operand.smem;
    const int64_t tile_rows = layout.rows;
    SmemRef dst{operand.buffer, l->stage * imm(layout.bytes())};
    // The tile's first stored row and column: (m or n, k) K-major, (k, m or n) MN-major.
    ExprPtr k_tile = l->k_first ? l->k_first + l->k_tile : l->k_tile;
    ExprPtr mn0 = l->first ? l->first : l->tile * imm(layout.mn_extent()), k0 = k_tile * imm(p_.tile_k);
    // A CTA pair: each CTA holds its half of B's tile, the even CTA the first.
    const bool half_of_b = p_.cta_pair && l->operand == rt::Operand::B;
    if (half_of_b) mn0 = l->tile * imm(2 * layout.mn_extent()) + var("cta_rank") % imm(2) * imm(layout.mn_extent());
    if (l->k_row0) k0 = l->k_row0 + k0;  // a variable-K group's range starts mid-K
    ExprPtr row0 = layout.mn_major ? k0 : mn0, col0 = layout.mn_major ? mn0 : k0;
    if (p_.tma_load) {
      const BarrierRef bar{Barrier::Full, l->stage};
      // The barrier expects the whole stage of this operand, slices multicast by peers included.
      std::vector<StmtPtr> issue = {expect_stage(*l, layout.bytes())};
      // Under multicast each CTA loads its slice, landing in every CTA: a K-major operand's
      // slice of the rows, an MN-major one's slice of the swizzle atoms (each a whole box).
      const bool multicast = operand.multicast;
      GG_INTERNAL_CHECK(multicast == (layout.box_rows != tile_rows) || layout.mn_major,
                        "a K-major multicast operand's boxes are its slice of the rows");
      // In a two-dimensional cluster A's slice is the CTA's place among the Y CTAs of its m tile
      // (its column), and its multicast reaches them: mask bits cta_rank_m + X * j. B's is its place
      // among the X CTAs of its n tile (its row): bits X * cta_rank_n + i.
      const bool two_d = multicast && p_.cluster_2d();
      const bool is_a = l->operand == rt::Operand::A;
      const ExprPtr slice = two_d ? var(is_a ? "cta_rank_n" : "cta_rank_m") : var("cta_rank");
      unsigned mask = multicast ? (1u << p_.cluster_size) - 1u : 0u;
      ExprPtr mask_shift;
      if (two_d) {
        const unsigned x = unsigned(p_.cluster.x);
        unsigned column = 0;
        for (int j = 0; j < p_.cluster.y; ++j) column |= 1u << (x * unsigned(j));
        mask = is_a ? column : (1u << x) - 1u;
        mask_shift = is_a ? var("cta_rank_m") : var("cta_rank_n") * imm(p_.cluster.x);
      }
      ExprPtr slice_row = multicast && !layout.mn_major ? slice * imm(layout.box_rows) : imm(0);
      const int own_atoms = multicast && layout.mn_major ? layout.atoms() / p_.cluster_size : layout.atoms();
      ExprPtr first_atom = multicast && layout.mn_major ? var("cta_rank") * imm(own_atoms) : imm(0);
      for (int i = 0; i < own_atoms; ++i) {  // one TMA box per swizzle atom along the row
        ExprPtr atom = first_atom + imm(i);
        auto load = std::make_shared<TmaLoad>();
        load->map = l->operand;
        load->dst = {dst.buffer, dst.offset + atom * imm(layout.atom_bytes()) + slice_row * imm(layout.swizzle_bytes)};
        load->row = row0 + slice_row;
        load->col = col0 + atom * imm(layout.atom_cols());
        load->bar = bar;
        load->multicast_mask = mask;
        load->multicast_shift = mask_shift;
        load->to_pair_leader = p_.cta_pair;
        load->batch = tensor_map_batch(p_, l->operand, l->batch);
        load->group = tensor_map_group(p_, l->batch);
        if (l->k_end) {
          // A variable-K group's range ends inside the box: through the operand's row-limited map,
          // the box's rows of K past it read as zero.
          GG_INTERNAL_CHECK(layout.mn_major, "a K range limits an MN-major operand's rows");
          limit_box_rows(load->row, load->batch, l->k_end, layout.box_rows);
        }
        issue.push_back(load);
      }
      return elected_ ? block(issue) : elect_one(block(issue));
    }
    auto copy = std::make_shared<SyncCopyTile>();
    copy->source = operand.source;
    copy->dst = dst;
    copy->row0 = row0;
    copy->col0 = col0;
    ExprPtr mn_limit = var(operand.extent);
    copy->row_limit = layout.mn_major ? var("args.k") : mn_limit;
    copy->col_limit = layout.mn_major ? mn_limit : var("args.k");
    // A constant the launch checks against the problem's, or read from the arguments where it
    // follows a size read at run time.
    copy->ld = layout_value(p_, operand.ld, operand.ld_arg);
    copy->rows = static_cast<int>(tile_rows);
    copy->cols = static_cast<int>(layout.row_bytes / layout.elem_bytes);
    copy->elem_bytes = dtype_bytes(p_.in);
    copy->threads = p_.threads;
    copy->swizzle_bytes = layout.swizzle_bytes;
    copy->load_bytes = p_.operand_rows_aligned ? 16 : copy->elem_bytes;
    copy->mn_major = layout.mn_major;
    copy->offset = batch_offset(p_, l->operand, l->batch);
    copy->index = copy_index(*copy);
    return copy;
  }

 private:
  const KernelPlan& p_;
};

}  // namespace

Kernel lower_operand_copies(Kernel k) {
  const KernelPlan& p = k.plan;
  k.body = LowerCopies(p).mutate(k.body);
  if (p.tma_load) {
    GG_INTERNAL_CHECK(p.stage_bytes() * (p.cta_pair ? 2 : 1) == p.pipeline.tx_bytes,
                      "the operand loads expect other bytes than the pipeline record's per-stage transaction");
    for (const StagedOperand& o : p.operands) {
      const bool factors = o.operand == rt::Operand::ScaleA || o.operand == rt::Operand::ScaleB;
      k.launch.tensor_maps.push_back(factors ? scale_tensor_map(p, o.operand, o.smem)
                                             : tiled_tensor_map(p, o.operand, o.smem));
      k.launch.tensor_maps.back().row_limited = p.varlen_k;  // a group's loads stop at its K range's end
    }
  }
  return k;
}

}  // namespace gg
