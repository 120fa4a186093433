#include "codegen/target/sm100/tcgen05.h"

#include <functional>

#include "codegen/resources.h"
#include "codegen/target/operand_slices.h"
#include "dsl/error.h"
#include "targets/mma_shapes.h"

namespace gg::sm100 {

using namespace kir;

TmemPlacement tmem_placement(const KernelPlan& p) {
  // An m256 MMA over a CTA pair puts 128 rows in each CTA's TMEM, as an m128 one does.
  TmemPlacement t{p.cta_pair ? 128 : p.mma.m, p.tile_m, p.tile_n};
  GG_INTERNAL_CHECK(t.mma_m == 64 || t.mma_m == 128, "a one-CTA tcgen05.mma has m64 or m128");
  GG_INTERNAL_CHECK(t.tile_m % t.mma_m == 0, "tile rows not a multiple of the mma's m");
  GG_INTERNAL_CHECK(t.columns() <= p.tmem_columns, "the accumulator needs more TMEM columns than are allocated");
  return t;
}

int mma_warp(const KernelPlan& p) { return compute_role(p).first_warpgroup * 4; }

int tmem_accumulators(const KernelPlan& p) { return p.tmem_accumulators; }

ExprPtr issuing_warp(const KernelPlan& p) {
  if (p.mma_warp) return imm(mma_issuing_warp(p));
  return tmem_accumulators(p) > 1 ? var("warpgroup") * imm(4) : imm(mma_warp(p));
}

int mma_issuing_warp(const KernelPlan& p) {
  GG_INTERNAL_CHECK(p.mma_warp, "an MMA warp in a plan without one");
  for (const auto& r : p.roles)
    if (r.issues_loads && !r.computes) return r.first_warpgroup * 4 + 1;  // the loading warp's neighbour
  GG_INTERNAL_CHECK(false, "double-buffered TMEM without a producer warpgroup");
  return -1;
}

namespace {

StmtPtr fence(bool after) {
  auto f = std::make_shared<Tcgen05Fence>();
  f->after = after;
  return f;
}

// This warpgroup's accumulator: a ping-pong consumer's own (its index, its first TMEM column, the
// warp whose thread issues its MMAs), the buffer a double-buffered tile takes (tile t of the CTA:
// buffer t % 2, both roles counting tiles_done alike), else the role's one.
ExprPtr accumulator_index(const KernelPlan& p) {
  if (p.mma_warp) return tmem_accumulators(p) > 1 ? var("tiles_done") % imm(tmem_accumulators(p)) : imm(0);
  return tmem_accumulators(p) > 1 ? var("consumer") : imm(0);
}
// The phase of that accumulator's barriers the tile waits for: each buffer completes once per
// tile that takes it.
ExprPtr accumulator_use(const KernelPlan& p, const ExprPtr& tiles_done) {
  const ExprPtr done = tiles_done ? tiles_done : imm(0);
  return p.mma_warp && tmem_accumulators(p) > 1 ? done / imm(tmem_accumulators(p)) : done;
}
ExprPtr accumulator_column0(const KernelPlan& p) {
  return tmem_accumulators(p) > 1 ? accumulator_index(p) * imm(tmem_placement(p).columns()) : imm(0);
}

class SelectTcgen05 : public ElectionAwareMutator {
 public:
  explicit SelectTcgen05(const KernelPlan& p) : p_(p), t_(tmem_placement(p)) {}

  // The elected thread issues the k tile's MMAs: for each m block, the k steps of the stage. Each
  // block's first MMA of the tile overwrites its accumulator.
  StmtPtr mutate_ComputeTile(const std::shared_ptr<const ComputeTile>& c) override {
    const SmemTileLayout& a = p_.operand(rt::Operand::A).smem;
    const SmemTileLayout& b = p_.operand(rt::Operand::B).smem;
    GG_INTERNAL_CHECK(a.mn_major || b.mn_major || b.swizzle_bytes == a.swizzle_bytes,
                      "K-major A and B stages swizzled alike (one k tile)");
    const bool scaled = p_.fp8.block_scaled;
    const int mma_k = scaled ? kTcgen05KFp8 : kTcgen05K;
    GG_INTERNAL_CHECK(targets::sm100a_mma_shapes().legal(p_.mma.m, p_.mma.n, mma_k),
                      "selected a tcgen05.mma shape the sm_100a table does not list");
    GG_INTERNAL_CHECK(c->k_index != nullptr, "a ComputeTile into TMEM without its k index");
    const int steps = p_.tile_k / mma_k;
    auto mma = std::make_shared<Tcgen05Mma>();
    mma->m = p_.cta_pair ? 256 : t_.mma_m;
    mma->pair = p_.cta_pair;
    mma->n = p_.mma.n;
    mma->k = mma_k;
    mma->dtype = std::string(dtype_name(p_.in));
    // Block mb: its lanes and columns (TmemPlacement), its rows of A.
    const ExprPtr mb = var("mb");
    if (t_.blocks_per_set() == 1) {
      mma->lane = imm(0);
      mma->column = mb * imm(t_.tile_n);
    } else {
      mma->lane = mb % imm(t_.blocks_per_set()) * imm(t_.mma_m / 4);
      mma->column = mb / imm(t_.blocks_per_set()) * imm(t_.tile_n);
    }
    if (tmem_accumulators(p_) > 1) mma->column = accumulator_column0(p_) + mma->column;
    mma->a = {Buffer::A, c->stage * imm(a.bytes()) + k_step_offset(a, mb * imm(t_.mma_m), mma_k, dtype_bytes(p_.in))};
    mma->b = {Buffer::B, c->stage * imm(b.bytes()) + k_step_offset(b, imm(0), mma_k, dtype_bytes(p_.in))};
    mma->a_layout = mma_operand_layout(a);
    mma->b_layout = mma_operand_layout(b);
    mma->accumulate = imm(0) < c->k_index * imm(steps) + var("kk");
    std::vector<StmtPtr> issue = {fence(true)};  // after the wait for the stage, before the MMAs
    if (scaled) {
      // Block mb's rows' factors are A's atom mb; the k block's byte of each factor word.
      mma->scale_a_column = scale_column0() + mb * imm(4);
      mma->scale_b_column = scale_column0() + imm(a_scale_columns());
      GG_INTERNAL_CHECK(c->k_block != nullptr, "a block-scaled ComputeTile without its k block");
      mma->scale_id = c->k_block % imm(kUe8m0AtomKBlocks);
      for (StmtPtr copy : scale_copies(c->stage)) issue.push_back(copy);
    }
    StmtPtr k_steps = for_loop("kk", imm(0), imm(steps), mma, "k steps of the MMA shape", true);
    issue.push_back(for_loop("mb", imm(0), imm(t_.blocks()), k_steps,
                             std::to_string(t_.mma_m) + "-row MMA blocks of the tile", true));
    return by_issuer(block(issue));
  }

  // FP8: the stage's UE8M0 atoms of A's then B's rows into their TMEM columns, 4 per atom, by the
  // issuing thread before the k tile's MMAs (which the copies precede in the tensor pipe; they
  // follow the previous k tile's MMAs the same way).
  // Each issuing thread's own set of factor columns (a ping-pong consumer's MMAs run beside the
  // other's, and only one thread's copy is ordered after its own earlier MMAs): A's, then B's.
  int a_scale_columns() const { return 4 * int(p_.operand(rt::Operand::ScaleA).smem.rows); }
  int scale_set_columns() const { return a_scale_columns() + 4 * int(p_.operand(rt::Operand::ScaleB).smem.rows); }
  ExprPtr scale_column0() const {
    const ExprPtr first = imm(p_.tmem_scale_column0);
    return tmem_accumulators(p_) > 1 && !p_.mma_warp ? first + accumulator_index(p_) * imm(scale_set_columns()) : first;
  }
  std::vector<StmtPtr> scale_copies(const ExprPtr& stage) const {
    std::vector<StmtPtr> copies = {comment("the k tile's UE8M0 factors into TMEM: A's atoms, then B's")};
    for (auto [operand, column0] : {std::pair{rt::Operand::ScaleA, scale_column0()},
                                    std::pair{rt::Operand::ScaleB, scale_column0() + imm(a_scale_columns())}}) {
      const StagedOperand& o = p_.operand(operand);
      for (int64_t atom = 0; atom < o.smem.rows; ++atom) {
        auto copy = std::make_shared<Tcgen05Copy>();
        copy->src = {o.buffer, stage * imm(o.smem.bytes()) + imm(atom * o.smem.row_bytes)};
        copy->column = column0 + imm(4 * atom);
        copy->pair = p_.cta_pair;
        copies.push_back(copy);
      }
    }
    return copies;
  }

  // Double-buffered: the buffer this tile takes is free once the writeback of the tile that took
  // it before released it (ld2mma); a fresh barrier passes parity 1, so the first two tiles go on.
  StmtPtr mutate_AcquireAccumulator(const std::shared_ptr<const AcquireAccumulator>& a) override {
    auto wait = std::make_shared<MbarrierWait>();
    wait->bar = {Barrier::AccEmpty, accumulator_index(p_)};
    wait->parity = (accumulator_use(p_, a->tiles_done) + imm(1)) % imm(2);
    return block({wait, fence(true)});
  }

  // The stage is free once the MMAs reading it completed: the issuing thread's commit says so,
  // in every CTA of a multicast group (each of them writes into this CTA's stage).
  StmtPtr mutate_ReleaseStage(const std::shared_ptr<const ReleaseStage>& r) override {
    auto c = std::make_shared<Tcgen05Commit>();
    c->bar = {Barrier::Empty, r->stage};
    if (p_.multicast_a || p_.multicast_b) c->multicast_mask = (1u << p_.cluster_size) - 1u;
    pair_commit(*c);  // a pair's stage: both CTAs' halves, both CTAs' loads waiting
    return by_issuer(c);
  }

  // The tile's accumulator is final once every MMA completed: the issuing thread commits onto
  // mma_done (mma2ld), every reading thread waits for it (one phase per tile that takes the
  // accumulator) and orders its TMEM reads after.
  StmtPtr mutate_FinishCompute(const std::shared_ptr<const FinishCompute>& f) override {
    std::vector<StmtPtr> steps;
    if (f->commits) {
      auto c = std::make_shared<Tcgen05Commit>();
      c->bar = {Barrier::MmaDone, accumulator_index(p_)};
      pair_commit(*c);  // a pair's accumulator: both CTAs' TMEM, both CTAs' writeback waiting
      steps.push_back(by_issuer(c));
    }
    if (f->waits) {
      auto wait = std::make_shared<MbarrierWait>();
      wait->bar = {Barrier::MmaDone, accumulator_index(p_)};
      wait->parity = accumulator_use(p_, f->tiles_done) % imm(2);
      steps.push_back(wait);
      steps.push_back(fence(true));
    }
    return block(steps);
  }

 private:
  // A CTA pair's commit tracks the pair's MMAs and arrives in both CTAs.
  void pair_commit(Tcgen05Commit& c) const {
    if (!p_.cta_pair) return;
    c.pair = true;
    c.multicast_mask = 0b11u;
  }
  // `s` on the issuing thread: elected here, or already (the MMA warp's loop).
  StmtPtr by_issuer(StmtPtr s) const { return elected_ ? s : elect_one(std::move(s), issuing_warp(p_)); }

  const KernelPlan& p_;
  TmemPlacement t_;
};

}  // namespace

StmtPtr select_tcgen05(const KernelPlan& p, const StmtPtr& body) {
  const TmemPlacement t = tmem_placement(p);
  const int warp = mma_warp(p);
  auto alloc = std::make_shared<TmemAlloc>();
  alloc->warp = imm(warp);
  alloc->columns = p.tmem_columns;
  alloc->pair = p.cta_pair;
  auto dealloc = std::make_shared<TmemDealloc>();
  dealloc->warp = imm(warp);
  dealloc->columns = p.tmem_columns;
  dealloc->pair = p.cta_pair;
  // The allocation's address reaches every thread through shared memory and a CTA barrier; the
  // fences order the allocation before it and every thread's tcgen05 operations after it.
  const int accumulators = tmem_accumulators(p);
  const std::string columns = accumulators > 1 ? std::to_string(accumulators) +
                                                    (p.tmem_double_buffered ? " accumulator buffers (tiles take them in turn) of "
                                                                            : " ping-pong consumers' accumulators of ") +
                                                      std::to_string(t.columns()) + " fp32 columns each ("
                                                : std::to_string(t.columns()) + " fp32 columns of accumulator (";
  StmtPtr allocate = block({comment("TMEM: " + columns +
                                    std::to_string(t.blocks()) + " m" + std::to_string(t.mma_m) + " block(s) x " +
                                    std::to_string(t.tile_n) + " columns), allocating " +
                                    std::to_string(p.tmem_columns)),
                            alloc, fence(false), std::make_shared<SyncThreads>(), fence(true),
                            std::make_shared<TmemBaseLoad>()});
  // Every thread's last TMEM read is ordered before the barrier, the free after it.
  StmtPtr free = block({comment("TMEM: every thread is done with the accumulator; the allocating warp frees it"),
                        fence(false), std::make_shared<SyncThreads>(), fence(true), dealloc});
  return block({allocate, SelectTcgen05(p).mutate(body), free});
}

int tmem_chunk_columns(const KernelPlan& p, int64_t cols) {
  // Split-K reads 16 columns at a time: with 32, v10's kernel (384 threads, so 168 registers) and
  // the last wave split spilled 8 bytes (ptxas for sm_100a); with 16, none.
  const int widest = p.split_k > 1 ? 16 : 32;
  const int chunk = cols % widest == 0 ? widest : cols % 16 == 0 ? 16 : 8;
  GG_INTERNAL_CHECK(cols % chunk == 0, "TMEM read in chunks of " + std::to_string(cols) + " columns, not a multiple of 8");
  return chunk;
}

namespace {

// Columns [col_begin, col_begin + cols) of each column set of the TMEM accumulator, `chunk` at a time
// (the widest tcgen05.ld.32x32b that divides them): per chunk a load into `dst`, then body(load,
// set, first, element0): the chunk's first column, and that column counted over the sets (set x
// tile n + column).
StmtPtr tmem_chunk_loops(const KernelPlan& p, const ExprPtr& col_begin, int cols, const std::string& dst,
                         const std::string& what,
                         const std::function<std::vector<StmtPtr>(const std::shared_ptr<TmemLoad>&, int, const ExprPtr&, const ExprPtr&)>& body) {
  const TmemPlacement t = tmem_placement(p);
  const int chunk = tmem_chunk_columns(p, cols);
  std::vector<StmtPtr> sets;
  for (int set = 0; set < t.column_sets(); ++set) {
    const ExprPtr first = col_begin + var("tchunk") * imm(chunk);
    auto load = std::make_shared<TmemLoad>();
    load->dst = dst;
    load->lane = imm(kLanesPerWarp) * (var("warp") % imm(4));  // the warp's own quarter of the lanes
    load->column = imm(int64_t(set) * t.tile_n) + first;
    if (tmem_accumulators(p) > 1) load->column = accumulator_column0(p) + load->column;
    load->columns = chunk;
    // A unit with no k tiles (variable K, pointer arrays) ran no MMA: its accumulator is zeros.
    if (p.k_per_unit()) load->zero_when = var("k_tiles") == imm(0);
    std::vector<StmtPtr> trip = {load};
    for (StmtPtr s : body(load, set, first, imm(int64_t(set) * t.tile_n) + first)) trip.push_back(s);
    // A loop, not unrolled: unrolled, the compiler hoists later chunks' loads (and C's) and their
    // registers pile up (a 192x256 tile with beta*C from memory spilled 588 bytes).
    auto loop = std::make_shared<For>(*as<For>(for_loop(
        "tchunk", imm(0), imm(cols / chunk), block(trip),
        "TMEM accumulator rows " + std::to_string(set * kTmemLanes) + ".., " + std::to_string(chunk) + " columns at a " +
            "time (tcgen05.ld.32x32b.x" + std::to_string(chunk) + ")" + what)));
    loop->rolled = true;
    sets.push_back(loop);
  }
  return block(sets);
}

}  // namespace

StmtPtr tmem_store(const KernelPlan& p, const EpilogueStore& store, const ChunkReduce& reduce) {
  const TmemPlacement t = tmem_placement(p);
  return tmem_chunk_loops(
      p, store.col_begin, store.cols, "acc_t", "",
      [&](const std::shared_ptr<TmemLoad>& load, int set, const ExprPtr& first, const ExprPtr& element0) {
        auto part = std::make_shared<EpilogueStore>(store);
        part->accumulator = load->dst;
        part->fragment = Fragment::TmemLanes;
        part->mma_m = t.mma_m;
        part->lane_row0 = set * kTmemLanes;
        part->col_begin = first;
        part->cols = load->columns;
        part->stmatrix = false;  // stmatrix takes wgmma's fragment
        if (store.staged) {
          part->staging_col0 = store.col_begin;
          part->staging_cols = store.cols;  // a transposed buffer's rows are all of them
        }
        std::vector<StmtPtr> trip;
        if (reduce) trip.push_back(reduce(*load, element0));
        trip.push_back(part);
        return trip;
      });
}

StmtPtr tmem_partial_store(const KernelPlan& p, const PartialStore& prototype) {
  return tmem_chunk_loops(p, imm(0), p.tile_n, "acc_p", ": this split's partial sums",
                          [&](const std::shared_ptr<TmemLoad>& load, int, const ExprPtr&, const ExprPtr& element0) {
                            auto store = std::make_shared<PartialStore>(prototype);
                            store->accumulator = load->dst;
                            store->fragment = Fragment::TmemLanes;
                            store->blocks = 1;
                            store->regs = load->columns;
                            store->element0 = element0;
                            return std::vector<StmtPtr>{store};
                          });
}

int tmem_partials_per_thread(const KernelPlan& p) { return tmem_placement(p).columns(); }

StmtPtr release_accumulator(const KernelPlan& p) {
  if (p.mma_warp) {  // ld2mma: every reading thread arrives once its reads are ordered
    auto arrive = std::make_shared<MbarrierArrive>();
    arrive->bar = {Barrier::AccEmpty, accumulator_index(p)};
    if (p.cta_pair) arrive->cta = var("cta_rank") - var("cta_rank") % imm(2);  // the leader's, whose MMAs wait
    return block({comment("the MMA warp may refill this accumulator buffer: every thread's TMEM reads come first"),
                  fence(false), arrive});
  }
  StmtPtr meet = std::make_shared<SyncThreads>();
  if (p.warp_specialized) {  // the computing role's threads only: the producer runs ahead
    auto named = std::make_shared<NamedBarrierSync>();
    named->id = imm(kTmemBarrier);
    named->threads = compute_role(p).threads();
    if (tmem_accumulators(p) > 1) {  // a ping-pong consumer's own accumulator: its own threads
      named->id = imm(kTmemBarrier) + var("consumer");
      named->threads = kWarpgroupThreads;
    }
    meet = named;
  }
  return block({comment("the next tile's MMAs overwrite the accumulator: every thread's TMEM reads come first"),
                fence(false), meet});
}

}  // namespace gg::sm100
