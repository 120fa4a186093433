#include "codegen/target/sm90/wgmma.h"

#include "codegen/target/operand_slices.h"
#include "dsl/error.h"
#include "targets/mma_shapes.h"

namespace gg::sm90 {

using namespace kir;

AccumulatorShape accumulator_shape(const KernelPlan& p) {
  const int sharers = warpgroups_per_tile(p);
  GG_INTERNAL_CHECK(p.tile_m % (kWgmmaM * sharers) == 0, "tile rows not a multiple of 64 per warpgroup");
  return {p.tile_m / (kWgmmaM * sharers), p.mma.n / 2};
}

namespace {

class SelectWgmma : public Mutator {
 public:
  explicit SelectWgmma(const KernelPlan& p) : p_(p) {}

  StmtPtr mutate_ComputeTile(const std::shared_ptr<const ComputeTile>& c) override {
    AccumulatorShape shape = accumulator_shape(p_);
    const SmemTileLayout& a = p_.operand(rt::Operand::A).smem;
    const SmemTileLayout& b = p_.operand(rt::Operand::B).smem;
    GG_INTERNAL_CHECK(a.mn_major || b.mn_major || b.swizzle_bytes == a.swizzle_bytes,
                      "K-major A and B stages swizzled alike (one k tile)");
    GG_INTERNAL_CHECK(targets::sm90a_mma_shapes().legal(kWgmmaM, p_.mma.n, kWgmmaK),
                      "selected a wgmma shape the sm_90a table does not list");
    auto issue = std::make_shared<WgmmaIssue>();
    issue->m = kWgmmaM;
    issue->n = p_.mma.n;
    issue->k = mma_k();
    issue->dtype = std::string(dtype_name(p_.in));
    issue->accumulator = "acc";
    issue->block = var("mb");
    ExprPtr a_row = (consumer_band(p_) * imm(shape.blocks) + var("mb")) * imm(kWgmmaM);
    issue->a = {Buffer::A, c->stage * imm(a.bytes()) + slice_offset(a, a_row)};
    issue->b = {Buffer::B, c->stage * imm(b.bytes()) + slice_offset(b, imm(0))};
    issue->a_layout = mma_operand_layout(a);
    issue->b_layout = mma_operand_layout(b);
    if (p_.promotion.on) {
      issue->accumulator = kPromotedAccumulator;
      // The first step of a promotion interval's first k tile overwrites.
      const int64_t every = p_.promotion.every;
      issue->accumulate = every > 1 ? var("kk") + var("k_tile") % imm(every) >= imm(1) : var("kk") >= imm(1);
      if (shape.blocks > 1) issue->block = imm(0);  // waves: each row block in the one promotion block
    }
    StmtPtr k_steps = for_loop("kk", imm(0), imm(p_.tile_k / mma_k()), issue, "k steps of the MMA shape", true);
    StmtPtr blocks = for_loop("mb", imm(0), imm(shape.blocks), k_steps, "64-row blocks of this warpgroup", true);
    if (p_.promotion.on) return promoted(*c, blocks);
    // The k step's MMAs are one group; waiting until at most `in_flight` groups run lets
    // this one overlap the next k step's wait for its stage.
    auto wait = std::make_shared<WgmmaWait>();
    wait->pending = c->in_flight;
    return block({accumulator_fence(), std::make_shared<WgmmaFence>(), blocks, std::make_shared<WgmmaCommit>(), wait,
                  accumulator_fence()});
  }

  // Where k step kk's slice starting at M or N index `mn` begins within a stage.
  ExprPtr slice_offset(const SmemTileLayout& l, const ExprPtr& mn) const {
    return k_step_offset(l, mn, mma_k(), dtype_bytes(p_.in));
  }
  // K per instruction: 32 bytes of it (16 bf16 or f16 elements, 32 FP8 ones).
  int mma_k() const { return 32 / dtype_bytes(p_.in); }

  // The k block whose factors a promoted k tile applies. A split-K share may run k tiles past K
  // (their loads fill zeros, their MMAs add nothing): they read the last k block's, inside the array.
  ExprPtr factor_k_block(const ComputeTile& c) const {
    GG_INTERNAL_CHECK(c.k_block != nullptr, "a promoted k tile knows its k block");
    return p_.split_k > 1 ? min(c.k_block, imm(p_.fp8.k_blocks - 1)) : c.k_block;
  }

  // One matrix's two-dimensional factors over `rows` rows (an operand's rows, or its 128-row
  // blocks), laid out as scale_factor_index says: factor (row, kb) at kb * ld + row (MN-major, ld
  // the rows rounded up to 4) or row * k_blocks + kb (K-major).
  struct FactorArray {
    bool mn_major;
    ExprPtr ld, per_matrix, row_stride;
    ExprPtr k_offset(const ExprPtr& kb) const { return mn_major ? kb * ld : kb; }
    ExprPtr at(const ExprPtr& row, const ExprPtr& kb) const { return mn_major ? k_offset(kb) + row : row * row_stride + kb; }
  };
  FactorArray factor_array(const ExprPtr& rows, Layout major) const {
    FactorArray f;
    f.mn_major = major == Layout::MNMajor;
    const ExprPtr k_blocks = imm(p_.fp8.k_blocks);
    f.ld = f.mn_major ? (rows + imm(3)) / imm(4) * imm(4) : k_blocks;
    f.per_matrix = f.mn_major ? f.ld * k_blocks : rows * k_blocks;
    f.row_stride = f.mn_major ? imm(1) : k_blocks;
    return f;
  }

  // FP8: the k tile's MMAs into their own accumulator, waited for, then added into the fp32
  // one times the k block's factors: A's of each row from the stage, B's of the tile's (at most
  // two) 128-column blocks from args.scale_b. `mmas` is the loop over the warpgroup's row blocks.
  StmtPtr promoted(const ComputeTile& c, const StmtPtr& mmas) const {
    const AccumulatorShape shape = accumulator_shape(p_);
    // Several 64-row blocks per warpgroup are promoted one at a time (waves, as DeepGEMM does): each
    // block's MMAs into the one promotion accumulator (their issues say block 0), waited for and
    // promoted before the next's.
    const bool waves = shape.blocks > 1;
    const int64_t every = p_.promotion.every;
    GG_INTERNAL_CHECK(every == 1 || !waves, "plan_fp8 refuses a promotion interval past a k tile with waves");
    auto decl = std::make_shared<AccumulatorDecl>();
    decl->name = kPromotedAccumulator;
    decl->blocks = waves ? 1 : shape.blocks;
    decl->regs = shape.regs;
    auto wait = std::make_shared<WgmmaWait>();
    wait->pending = 0;
    auto promote = std::make_shared<PromoteAccumulator>();
    promote->from = kPromotedAccumulator;
    promote->into = "acc";
    promote->blocks = shape.blocks;
    promote->regs = shape.regs;
    auto factors = std::make_shared<LoadScaleFactors>();
    factors->blocks = shape.blocks;
    factors->row0 = consumer_band(p_) * imm(shape.blocks * kWgmmaM);
    // A matrix of a batch or masked group has its own factors after the previous matrices'.
    const auto batched = [&](rt::Operand o) {
      return c.batch && rt::stored_matrix(p_.layouts, o, p_.m, p_.n, p_.k).batches > 1;
    };
    if (p_.fp8.stages_scale_a()) {
      const StagedOperand& sa = p_.operand(rt::Operand::ScaleA);
      // A contiguous group's box starts at the aligned column before its first row (scale_load).
      const ExprPtr shift = p_.contiguous ? var("m_row0") % imm(4) * imm(4) : imm(0);
      factors->row_scales = SmemRef{sa.buffer, c.stage * imm(sa.smem.bytes()) + shift};
      promote->row_scaled = true;
    } else if (p_.fp8.scale_a) {  // from args.scale_a: per tensor, per row, per 1x128 K-major, per 128x128
      const ScaleGranularity g = *p_.fp8.scale_a;
      const ExprPtr m = narrow(var("args.m"));
      const ExprPtr matrix = batched(rt::Operand::A) ? c.batch : imm(0);
      if (g == ScaleGranularity::PerTensor) {
        factors->a_index = matrix;
      } else {
        // A matrix's factors: one per row, or a factor array over its rows or 128-row blocks.
        const bool block_rows = g == ScaleGranularity::Block128x128, per_row = g == ScaleGranularity::PerRow;
        factors->a_row = p_.contiguous ? var("m_row0") : var("m_tile") * imm(p_.tile_m);
        factors->a_last = m - imm(1);  // rows past M read the last row's factor
        factors->a_row_block = block_rows ? kScaleBlock : 1;
        if (per_row) {
          factors->a_index = matrix * m;
          factors->a_row_stride = imm(1);
        } else {
          const FactorArray f = factor_array(block_rows ? (m + imm(kScaleBlock - 1)) / imm(kScaleBlock) : m,
                                             p_.fp8.scale_a_major);
          factors->a_index = matrix * f.per_matrix + f.k_offset(factor_k_block(c));
          factors->a_row_stride = f.row_stride;
        }
      }
      promote->row_scaled = true;
    }
    if (p_.fp8.scale_b == ScaleGranularity::PerTensor) {
      factors->lo = batched(rt::Operand::B) ? c.batch : imm(0);
      promote->col_split = imm(p_.tile_n);  // every column takes sb_lo
    } else if (p_.fp8.scale_b == ScaleGranularity::Block128x128) {
      const ExprPtr n0 = var("n_tile") * imm(p_.tile_n), block = n0 / imm(kScaleBlock);
      const ExprPtr last = imm(p_.fp8.n_blocks - 1);
      // A matrix's factors: an array over its 128-column blocks.
      const FactorArray f = factor_array(imm(p_.fp8.n_blocks), p_.fp8.scale_b_major);
      const ExprPtr matrix_base = batched(rt::Operand::B) ? c.batch * f.per_matrix : imm(0);
      const ExprPtr kb = factor_k_block(c);
      const auto at = [&](const ExprPtr& n_block) { return matrix_base + f.at(min(n_block, last), kb); };
      factors->lo = at(block);
      // Where a tile's columns start on a 128-column block (tile n a multiple of 128, or dividing it),
      // the split between two blocks' factors is known here; else it follows the tile. A tile
      // within one block reads one factor.
      const bool aligned = p_.tile_n % kScaleBlock == 0 || kScaleBlock % p_.tile_n == 0;
      promote->col_split = aligned ? imm(std::min<int64_t>(p_.tile_n, kScaleBlock)) : imm(kScaleBlock) - n0 % imm(kScaleBlock);
      if (!aligned || p_.tile_n > kScaleBlock) factors->hi = at(block + imm(1));
      if (!p_.k_loop.empty() && p_.k_tiles_constant()) prefetch_b_factors(*factors);
    } else if (p_.fp8.scale_b == ScaleGranularity::Block1x128) {
      // A factor per column and k block: each thread's columns' for this k block, from a factor
      // array over the matrix's N columns.
      const ExprPtr n = narrow(var("args.n"));
      const FactorArray f = factor_array(n, p_.fp8.scale_b_major);
      const ExprPtr matrix_base = batched(rt::Operand::B) ? c.batch * f.per_matrix : imm(0);
      factors->cols_index = matrix_base + f.k_offset(factor_k_block(c));
      factors->cols_first = var("n_tile") * imm(p_.tile_n);
      factors->cols_last = n - imm(1);  // columns past N read the last column's factor
      factors->cols_stride = f.row_stride;
      factors->cols = static_cast<int>(p_.tile_n);
      promote->col_scaled = true;
    }  // per row (per column of D): after the k loop (build_loop_nests, ScaleAccumulatorColumns)
    std::vector<StmtPtr> out;
    if (factors->lo || factors->row_scales || factors->a_index || factors->cols_index) out.push_back(factors);
    if (every == 1) out.push_back(decl);  // else declared beside acc (build_loop_nests): it spans k tiles
    // The stage is released once the MMAs reading it are done (the last wave's), before the
    // promotion, which reads registers only.
    const auto k_tile = [&](const StmtPtr& issues, const StmtPtr& release) {
      std::vector<StmtPtr> steps = {accumulator_fence(kPromotedAccumulator, decl->blocks), std::make_shared<WgmmaFence>(),
                                    issues, std::make_shared<WgmmaCommit>(), wait,
                                    accumulator_fence(kPromotedAccumulator, decl->blocks)};
      if (release) steps.push_back(release);
      // Promoted every `every` k tiles, and after the unit's last.
      const ExprPtr k = var("k_tile");
      steps.push_back(every == 1 ? StmtPtr(promote)
                                 : if_then((k % imm(every) + imm(1) == imm(every)) + (k + imm(1) == var("k_tiles")) >= imm(1),
                                           promote));
      return block(steps);
    };
    if (!waves) {
      out.push_back(k_tile(mmas, c.release));
      return block(out);
    }
    // The block loop (mb) keeps its A slices; each trip is a wave promoted into its block.
    const For* blocks_loop = as<For>(mmas);
    GG_INTERNAL_CHECK(blocks_loop != nullptr, "the k tile's MMAs are a loop over row blocks");
    promote->block = var(blocks_loop->var);
    auto wave = std::make_shared<For>(*blocks_loop);
    wave->origin = "64-row blocks of this warpgroup, each promoted in turn (waves)";
    const StmtPtr last_wave_release =
        c.release ? if_then(var(blocks_loop->var) == imm(shape.blocks - 1), c.release) : nullptr;
    wave->body = k_tile(blocks_loop->body, last_wave_release);
    out.push_back(wave);
    return block(out);
  }

  // B's factors from global memory are loaded a k step ahead (measured on an H100 at 4096 x 7168 x
  // 16384: 2.5% faster), the k loop's first step's before the loop (mutate_For), its last step's
  // refill clamped to the last k tile, so it reads inside the array. Dense problems only, as the
  // k loop's unroll (expand_circular_buffer): a grouped 256x128 consumer spills with the two
  // registers more.
  void prefetch_b_factors(LoadScaleFactors& factors) const {
    const ExprPtr next = min(var("k_tile") + imm(1), var("k_tiles") - imm(1));
    factors.lo_next = substitute(factors.lo, "k_tile", next);
    if (factors.hi) factors.hi_next = substitute(factors.hi, "k_tile", next);
    auto first = std::make_shared<PrefetchScaleFactors>();
    first->lo = substitute(factors.lo, "k_tile", imm(0));
    if (factors.hi) first->hi = substitute(factors.hi, "k_tile", imm(0));
    first_b_factors_ = first;
  }
  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    StmtPtr loop = Mutator::mutate_For(f);
    if (f->kind != LoopKind::KTiles || !first_b_factors_) return loop;
    StmtPtr first = std::move(first_b_factors_);
    first_b_factors_ = nullptr;
    return block({first, loop});
  }
  // The first step's prefetch (spliced in before the k loop) moves up to just after the unit's
  // coordinates (the last Let before it), so a ping-pong consumer's load runs while it waits for
  // its turn, not after.
  StmtPtr mutate_Block(const std::shared_ptr<const Block>& b) override {
    StmtPtr out = Mutator::mutate_Block(b);
    const Block* rebuilt = as<Block>(out);
    if (!rebuilt) return out;
    std::vector<StmtPtr> body = rebuilt->body;
    for (size_t i = 0; i < body.size(); ++i) {
      if (!as<PrefetchScaleFactors>(body[i])) continue;
      size_t to = i;
      while (to > 0 && !as<Let>(body[to - 1])) --to;
      if (to == 0 || to == i) return out;
      StmtPtr prefetch = body[i];
      body.erase(body.begin() + static_cast<std::ptrdiff_t>(i));
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(to), prefetch);
      return block(std::move(body));
    }
    return out;
  }

  StmtPtr mutate_FinishCompute(const std::shared_ptr<const FinishCompute>&) override {
    auto wait = std::make_shared<WgmmaWait>();
    wait->pending = 0;
    return block({wait, accumulator_fence()});
  }

  // The accumulator registers pinned in place around the asynchronous MMAs (AccumulatorFence).
  StmtPtr accumulator_fence(const char* name = "acc", int blocks = 0) const {
    const auto shape = accumulator_shape(p_);
    auto fence = std::make_shared<AccumulatorFence>();
    fence->name = name;
    fence->blocks = blocks > 0 ? blocks : shape.blocks;
    fence->regs = shape.regs;
    return fence;
  }

 private:
  const KernelPlan& p_;
  // The prefetch of B's factors the k loop being rebuilt needs before it (prefetch_b_factors).
  mutable std::shared_ptr<PrefetchScaleFactors> first_b_factors_;
};

}  // namespace

StmtPtr select_wgmma(const KernelPlan& p, const StmtPtr& body) { return SelectWgmma(p).mutate(body); }

}  // namespace gg::sm90
