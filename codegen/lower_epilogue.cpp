#include "codegen/lower_epilogue.h"

#include <optional>

#include "codegen/index_math.h"
#include "codegen/resources.h"
#include "codegen/target/sm100/tcgen05.h"
#include "codegen/target/sm90/wgmma.h"
#include "codegen/work_units.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

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
    store->row0 = w->row0 ? w->row0 : w->m_tile * imm(p_.tile_m);
    store->row_end = w->row_end;
    store->col0 = w->n_tile * imm(p_.tile_n);
    store->col_begin = imm(0);
    store->cols = p_.tile_n;
    store->ops = p_.epilogue.ops;
    store->out_type = std::string(dtype_name(p_.out));
    store->column_major = p_.layouts.d_column_major;
    // Constants the launch checks against the problem's, or read from the arguments where they
    // follow a size read at run time.
    store->ld = layout_value(p_, &rt::MatrixLayouts::ldd, "args.ldd");
    store->c_ld = layout_value(p_, &rt::MatrixLayouts::ldc, "args.ldc");
    store->d_offset = batch_offset(p_, rt::Operand::D, w->batch);
    store->c_offset = batch_offset(p_, rt::Operand::C, w->batch);
    if (p_.accumulator == Place::Tmem) store->mma_m = p_.mma.m;
    // A saved output first: the same store with the ops before the save, to Aux.
    std::vector<std::shared_ptr<EpilogueStore>> outputs;
    if (p_.epilogue.saves()) {
      auto saved = std::make_shared<EpilogueStore>(*store);
      saved->ops.resize(size_t(p_.epilogue.saved_after));
      saved->output = rt::Operand::Aux;
      outputs.push_back(saved);
    }
    outputs.push_back(store);
    // D = A * A^T: the tile again, transposed, at its mirror (none for a tile on the diagonal).
    if (p_.epilogue.commit == EpiloguePlan::Commit::Symmetric) {
      auto mirror = std::make_shared<EpilogueStore>(*store);
      mirror->transposed_staging = true;
      mirror->mirror = true;
      outputs.push_back(mirror);
    }
    // Reductions read the accumulator again after the stores, unstaged (copied before staging).
    StmtPtr reduce = reductions(*w, *store);
    // Split-K: the hand-off's nodes; a TMEM accumulator is reduced chunk by chunk as the epilogue
    // loads it (the sums never sit in registers whole).
    std::optional<SplitKNodes> split;
    chunk_reduce_ = {};
    if (p_.epilogue.commit == EpiloguePlan::Commit::SplitK) {
      split = split_k_nodes(*w);
      if (p_.accumulator == Place::Tmem) chunk_reduce_ = tmem_chunk_reduce(*w, *split->reduce);
    }
    StmtPtr commit;
    if (p_.tma_store) {
      commit = staged_store(outputs, *w);
    } else {
      std::vector<StmtPtr> each;
      for (const auto& o : outputs) each.push_back(read_accumulator(o));
      commit = block(each);
    }
    StmtPtr epilogue = split ? split_k_combine(*w, *split, commit) : commit;
    if (reduce) epilogue = block({epilogue, reduce});
    // A persistent CTA's next tile overwrites the TMEM accumulator its epilogue just read.
    if (p_.accumulator == Place::Tmem && p_.persistent) return block({epilogue, sm100::release_accumulator(p_)});
    return epilogue;
  }

  // The store itself where the accumulator is in registers; in TMEM, loads of it into registers
  // chunk by chunk, each stored the same way.
  StmtPtr read_accumulator(const std::shared_ptr<EpilogueStore>& store) const {
    if (p_.accumulator == Place::Registers) return store;
    return sm100::tmem_store(p_, *store, chunk_reduce_);
  }

  struct SplitKNodes {
    std::shared_ptr<PartialStore> store;
    std::shared_ptr<NamedBarrierSync> meet;
    std::shared_ptr<TileTicket> ticket;
    std::shared_ptr<PartialReduce> reduce;
  };
  // Split-K: every split parks its partial sums in the workspace; the tile's last split adds them
  // up in split order and alone runs the epilogue. Two splits (not stream-K) claim the ticket
  // first, and the last adds the other's sums to its own (`reduce->own`, claimed_first).
  SplitKNodes split_k_nodes(const WriteTile& w) const {
    GG_INTERNAL_CHECK(w.split != nullptr, "a split-K epilogue plan for a tile write with no split index");
    const kir::SplitKWorkspace& ws = p_.epilogue.workspace;
    const ExprPtr tiles_m = slot_tile_count(p_, Root::M), tiles_n = slot_tile_count(p_, Root::N);
    ExprPtr slot = (w.batch ? w.batch * tiles_m + w.m_tile : w.m_tile) * tiles_n + w.n_tile;
    const auto shape = sm90::accumulator_shape(p_);
    const int first_thread = role_.first_warpgroup * kWarpgroupThreads;
    // The accumulator's fragments and the tile's slot, as the store and the reduction address them.
    auto partials = [&](auto node) {
      node->accumulator = "acc";
      node->blocks = shape.blocks;
      node->regs = shape.regs;
      node->first_thread = first_thread;
      node->ws = ws;
      node->slot = slot;
      return node;
    };
    auto store = partials(std::make_shared<PartialStore>());
    store->split = w.split;
    auto meet = std::make_shared<NamedBarrierSync>();
    meet->id = imm(kSplitKBarrier);
    meet->threads = ws.threads;
    auto ticket = std::make_shared<TileTicket>();
    ticket->counter = wide(slot) * imm(ws.record_words());  // past 2^31 words for a multi-GB workspace
    ticket->arrivals = w.pieces ? w.pieces : imm(ws.splits);
    ticket->record_words = ws.record_words();
    ticket->counters = ws.count();
    ticket->threads = ws.threads;
    ticket->first_thread = first_thread;
    ticket->barrier = imm(kSplitKBarrier);
    auto reduce = partials(std::make_shared<PartialReduce>());
    reduce->pieces = w.pieces;
    if (claims_first(w)) reduce->own = w.split;
    return {store, meet, ticket, reduce};
  }
  bool claims_first(const WriteTile& w) const { return p_.epilogue.workspace.splits == 2 && !w.pieces; }

  // A TMEM accumulator's chunk, loaded by the epilogue: the tile's last split adds the splits' sums
  // of it into the chunk's registers (split_k tail: only a shared tile's).
  sm100::ChunkReduce tmem_chunk_reduce(const WriteTile& w, const PartialReduce& prototype) const {
    const ExprPtr when = w.split_when;
    return [prototype, when](const TmemLoad& load, const ExprPtr& element0) -> StmtPtr {
      auto reduce = std::make_shared<PartialReduce>(prototype);
      reduce->accumulator = load.dst;
      reduce->fragment = Fragment::TmemLanes;
      reduce->blocks = 1;
      reduce->regs = load.columns;
      reduce->element0 = element0;
      return when ? if_then(when, reduce) : StmtPtr(reduce);
    };
  }

  StmtPtr split_k_combine(const WriteTile& w, const SplitKNodes& nodes, StmtPtr epilogue) const {
    const auto& [partial_store, meet, ticket, reduce_all] = nodes;
    const kir::SplitKWorkspace& ws = p_.epilogue.workspace;
    // A TMEM accumulator leaves chunk by chunk; its reduction is already inside the epilogue's chunks.
    const StmtPtr store = p_.accumulator == Place::Tmem ? sm100::tmem_partial_store(p_, *partial_store) : partial_store;
    const StmtPtr reduce = p_.accumulator == Place::Tmem ? nullptr : reduce_all;
    if (claims_first(w)) return claimed_first(w, std::move(epilogue), store, meet, ticket, reduce_all->slot, reduce);
    StmtPtr note = comment(w.pieces ? "stream-K: `pieces` CTAs share this tile; the last adds their partial sums in "
                                      "range order"
                                    : "split-K: " + std::to_string(ws.splits) + " CTAs share this tile; the last adds "
                                      "their partial sums in split order");
    if (!w.split_when)
      return block({note, store, meet, ticket,
                    if_then(var(ticket->result), reduce ? block({reduce, std::move(epilogue)}) : std::move(epilogue))});
    // split_k tail: only the last wave's tiles are shared (the condition is uniform over the CTA);
    // a whole tile takes no ticket and runs the one epilogue, which is emitted once.
    ticket->when = w.split_when;
    return block({if_then(w.split_when, block({note, store, meet})), ticket,
                  if_then(var(ticket->result),
                          reduce ? block({if_then(w.split_when, reduce), std::move(epilogue)}) : std::move(epilogue))});
  }

  // Split-K in two: the ticket is claimed as the k loop ends, before any store. The first of the
  // two parks its sums and counts them stored; the last never stores its own: it waits for that
  // count and adds the other's sums to its registers (on an H100 the old order, store both, ticket,
  // read both back, cost the last CTA two of the hand-off's three tile transfers).
  StmtPtr claimed_first(const WriteTile& w, StmtPtr epilogue, const StmtPtr& store, const StmtPtr& meet,
                        const std::shared_ptr<TileTicket>& ticket, const ExprPtr& slot, const StmtPtr& reduce) const {
    ticket->claim = true;
    ticket->when = w.split_when;
    auto stored = std::make_shared<PartialsStored>();
    stored->counter = ticket->counter;
    stored->slot = slot;
    stored->split = w.split;
    stored->first_thread = ticket->first_thread;
    auto await = std::make_shared<AwaitPartials>();
    await->counter = ticket->counter;
    await->arrivals = ticket->arrivals;
    await->barrier = ticket->barrier;
    await->threads = ticket->threads;
    await->first_thread = ticket->first_thread;
    StmtPtr combine = reduce ? block({await, reduce}) : StmtPtr(await);
    // split_k tail: a whole tile (split_when zero) takes no ticket, stores nothing, and runs the epilogue.
    if (w.split_when) combine = if_then(w.split_when, combine);
    const ExprPtr last = var(ticket->result);
    return block({comment("split-K: 2 CTAs share this tile, claimed first; the last adds the other's partial sums "
                          "to its own, in split order"),
                  ticket, if_then(last == imm(0), block({store, meet, stored})),
                  if_then(last, block({combine, std::move(epilogue)}))});
  }

  // Row and column reductions: the tile's share of each (its partial sums, from the accumulator
  // again) goes to the workspace slot of the tile; the tiles meet and take a ticket per band; the
  // band's last tile adds the band's shares, in slot order, into the vector.
  StmtPtr reductions(const WriteTile& w, const EpilogueStore& store) const {
    const EpiloguePlan& plan = p_.epilogue;
    if (plan.reductions.empty()) return nullptr;
    GG_INTERNAL_CHECK(!w.row_end, "a reduction of a group");
    const ReductionWorkspace& ws = plan.reduction_workspace;
    const ExprPtr tiles_m = tile_count(p_, Root::M), tiles_n = tile_count(p_, Root::N);
    const ExprPtr row_band = w.batch ? w.batch * tiles_m + w.m_tile : w.m_tile;
    const ExprPtr col_band = w.batch ? w.batch * tiles_n + w.n_tile : w.n_tile;
    const ExprPtr slot = row_band * tiles_n + w.n_tile;
    const int first_thread = role_.first_warpgroup * kWarpgroupThreads;
    const int threads = warpgroups_per_tile(p_) * kWarpgroupThreads;
    std::vector<StmtPtr> body = {comment("reductions: this tile's partial sums to the workspace, then a ticket per band")};
    std::vector<StmtPtr> finish;
    for (const EpilogueReduction& r : plan.reductions) {
      const bool rows = r.along == EpilogueReduction::Along::Rows;
      auto share = std::make_shared<EpilogueStore>(store);
      share->ops.resize(size_t(r.after));
      ReduceInto into;
      into.along = r.along;
      into.squares = r.squares;
      // wgmma: a quad holds a row, lanes 4 apart a column; TMEM lanes: each lane a row, so a column
      // is summed over the warp's 32 and a row by its thread alone, a partial per chunk of columns.
      const bool tmem = p_.accumulator == Place::Tmem;
      const int row_parts = tmem ? p_.tile_n / sm100::tmem_chunk_columns(p_, p_.tile_n) : 1;
      into.lane_masks = rows ? (tmem ? std::vector<int>{} : std::vector<int>{1, 2})
                             : tmem ? std::vector<int>{1, 2, 4, 8, 16} : std::vector<int>{4, 8, 16};
      into.tile_m = p_.tile_m;
      into.tile_floats = wide(slot) * imm(ws.record_words()) + imm(2 + (rows ? 0 : ws.row_floats));
      into.tile_n = p_.tile_n;
      into.first_thread = first_thread;
      share->reduce = into;
      body.push_back(tmem ? sm100::tmem_store(p_, *share) : StmtPtr(share));
      auto ticket = std::make_shared<TileTicket>();
      ticket->counter = wide(rows ? row_band : col_band) * imm(ws.record_words()) + imm(rows ? 0 : 1);
      ticket->record_words = ws.record_words();
      ticket->counters = ws.count();
      ticket->arrivals = rows ? tiles_n : tiles_m;
      ticket->threads = threads;
      ticket->first_thread = first_thread;
      ticket->barrier = imm(kSplitKBarrier);
      ticket->result = rows ? "rows_last" : "cols_last";
      auto combine = std::make_shared<ReductionCombine>();
      combine->ws = ws;
      combine->along = r.along;
      combine->first_slot = rows ? row_band * tiles_n : (w.batch ? w.batch * tiles_m * tiles_n : imm(0)) + w.n_tile;
      combine->slot_stride = rows ? imm(1) : tiles_n;
      combine->slots_in_band = rows ? tiles_n : tiles_m;
      combine->parts = rows ? row_parts : ws.col_floats / p_.tile_n;  // a partial row per warp
      combine->part_stride = rows ? p_.tile_m : p_.tile_n;
      combine->part0 = rows ? 0 : ws.row_floats;
      combine->elements = rows ? p_.tile_m : p_.tile_n;
      combine->element0 = rows ? store.row0 : store.col0;
      combine->limit = var(rows ? "args.m" : "args.n");
      combine->out_offset = w.batch ? w.batch * var(rows ? "args.m" : "args.n") : imm(0);
      combine->out = rows ? "args.row_reduction" : "args.col_reduction";
      combine->threads = threads;
      combine->first_thread = first_thread;
      finish.push_back(ticket);
      finish.push_back(if_then(var(ticket->result), combine));
    }
    auto meet = std::make_shared<NamedBarrierSync>();
    meet->id = imm(kSplitKBarrier);
    meet->threads = threads;
    body.push_back(meet);
    body.insert(body.end(), finish.begin(), finish.end());
    // A cluster's CTA may hold a tile past D's edge (its pair's neighbour): it has no share of any
    // band and takes no ticket (the condition is uniform over the CTA).
    return if_then(w.m_tile < tiles_m && w.n_tile < tiles_n, block(body));
  }

  // The epilogue through the staging buffers and TMA stores: each subtile of each output (a saved
  // output's before D's) is staged in the next buffer and stored by TMA as one bulk group.
  StmtPtr staged_store(const std::vector<std::shared_ptr<EpilogueStore>>& outputs, const WriteTile& w) {
    GG_INTERNAL_CHECK(outputs.back()->warpgroup_rows == st_.rows(), "a warpgroup stages the rows it computes");
    GG_INTERNAL_CHECK(p_.tile_n == st_.subtiles * st_.cols &&
                          st_.buffer.atoms() * st_.buffer.atom_cols() == (st_.transposed ? st_.rows() : st_.cols) &&
                          st_.subtiles % st_.buffers == 0,
                      "staging chunks do not tile the subtiles, or subtiles the tile, or buffers the subtiles");
    GG_INTERNAL_CHECK(outputs.size() == 1 || !p_.epilogue.staged_c, "C staged beside a second output");
    // Output o of subtile `sub` goes to buffer (sub * outputs + o) % buffers of this warpgroup; its
    // store is the newest bulk group, so the buffer's previous store is `buffers - 1` groups older.
    const bool one_subtile = st_.subtiles == 1;
    const int64_t count = static_cast<int64_t>(outputs.size());
    const ExprPtr sub = one_subtile ? imm(0) : var("subtile");
    std::vector<StmtPtr> body;
    for (int64_t o = 0; o < count; ++o) {
      const ExprPtr slot = count == 1 ? sub : sub * imm(count) + imm(o);
      const ExprPtr buffer = st_.subtiles * count == st_.buffers ? slot
                             : count == st_.buffers               ? imm(o)  // a buffer per output
                                                                  : slot % imm(st_.buffers);
      const std::vector<StmtPtr> commit = stage_and_store(outputs[size_t(o)], w, sub, buffer);
      if (p_.epilogue.commit == EpiloguePlan::Commit::Symmetric)
        body.push_back(if_then(symmetric_subtile_stored(*outputs[size_t(o)], sub), block(commit)));
      else body.insert(body.end(), commit.begin(), commit.end());
    }
    const std::string why = "each staging buffer is rewritten after the store that read it last (bulk wait <" +
                            std::to_string(pending_stores()) + ">)";
    if (one_subtile) return block({comment(why), block(body)});
    auto loop = std::make_shared<For>();
    loop->kind = LoopKind::Subtiles;
    loop->var = "subtile";
    loop->begin = imm(0);
    loop->end = imm(st_.subtiles);
    loop->step = imm(1);
    loop->unroll = true;
    loop->origin = "store_subtile: " + std::to_string(st_.cols) + "-column subtiles through " +
                   std::to_string(st_.buffers) + " staging buffer(s) per warpgroup" +
                   (count > 1 ? ", the saved output's then D's" : "");
    loop->body = block(body);
    return block({comment(why), loop});
  }

  // D = A * A^T by square subtiles on the diagonal's grid (check_symmetric): a subtile above the
  // diagonal is stored and mirrored, one on it stored alone, one below it left to its mirror (a
  // tile the diagonal crosses computes some of those). Uniform over the warpgroup, which alone
  // meets at its staging barrier.
  ExprPtr symmetric_subtile_stored(const EpilogueStore& store, const ExprPtr& sub) const {
    const ExprPtr row0 = store.row0 + store.warpgroup * imm(st_.rows()), col0 = store.col0 + sub * imm(st_.cols);
    return store.mirror ? row0 < col0 : row0 < col0 + imm(st_.cols);
  }

  // One output's subtile `sub` through staging buffer `buffer`: the buffer's previous store has read
  // it (or C's load into it landed), the values go in, and TMA stores them to the output's map.
  std::vector<StmtPtr> stage_and_store(const std::shared_ptr<EpilogueStore>& store, const WriteTile& w,
                                       const ExprPtr& sub, const ExprPtr& buffer) {
    const SmemRef staging = {Buffer::D, staging_base() + buffer * imm(st_.buffer.bytes())};
    store->staged = true;
    store->staging = staging;
    store->staging_swizzle_bytes = st_.buffer.swizzle_bytes;
    store->col_begin = sub * imm(st_.cols);
    store->cols = static_cast<int>(st_.cols);
    store->stmatrix = st_.buffer.elem_bytes == 2 && st_.cols % 16 == 0;  // whole 16x16 b16 blocks
    store->transposed_staging = store->transposed_staging || st_.transposed;  // a mirror, or column-major D
    // (From TMEM each thread writes its row's values down the buffer's columns: tmem_store.)
    GG_INTERNAL_CHECK(store->stmatrix || !store->transposed_staging || p_.accumulator == Place::Tmem,
                      "a transposed staging without stmatrix.trans");
    const rt::Operand map = store->output;
    std::vector<StmtPtr> stores;
    if (p_.pointer_array) {  // the storing thread acquires the group's D map before its boxes
      auto acquire = std::make_shared<AcquireGroupMaps>();
      acquire->group = tensor_map_group(p_, w.batch);
      acquire->operand = map;
      stores.push_back(acquire);
    }
    for (int c = 0; c < st_.buffer.atoms(); ++c) {
      auto t = std::make_shared<TmaStore>();
      t->map = map;
      chunk_box(*store, staging, c, t->src, t->row, t->col);
      t->batch = tensor_map_batch(p_, map, w.batch);
      t->group = tensor_map_group(p_, w.batch);
      // A contiguous group's store stops at its end: through the output's row-limited map.
      if (store->row_end) limit_box_rows(t->row, t->batch, store->row_end, st_.rows());
      stores.push_back(t);
    }
    stores.push_back(std::make_shared<BulkCommit>());
    std::vector<StmtPtr> body;
    if (p_.epilogue.staged_c) {
      // C's subtile lands where the results go; every thread waits for it instead of meeting
      // the others (the load is issued only after the buffer's previous store read it).
      store->c_staged = true;
      const BarrierRef bar = c_barrier(buffer);
      body.push_back(elect_one(block({wait_buffer_read(), load_c(*store, staging, bar, w.batch)}), storing_warp()));
      auto wait = std::make_shared<MbarrierWait>();
      wait->bar = bar;
      // The barrier's phase counts the buffer's loads: the subtiles this warpgroup staged before
      // (in the units it computed before, tiles_done), divided among its buffers.
      const ExprPtr staged_tiles = p_.persistent ? var("tiles_done") : imm(0);
      wait->parity = ((staged_tiles * imm(st_.subtiles) + sub) / imm(st_.buffers)) % imm(2);
      body.push_back(wait);
    } else {
      // The buffer's previous store ran under the following work; the buffer is rewritten once
      // the store has read it. Only the warpgroup's own threads meet at its staging barrier.
      body.push_back(elect_one(wait_buffer_read(), storing_warp()));
      body.push_back(staging_barrier());
    }
    for (StmtPtr s : {read_accumulator(store), StmtPtr(std::make_shared<FenceProxyAsync>()), staging_barrier(),
                      elect_one(block(stores), storing_warp())})
      body.push_back(s);
    return body;
  }

  // Shared memory must outlive the last store's reads of it.
  StmtPtr mutate_WarpRole(const std::shared_ptr<const WarpRole>& r) override {
    StmtPtr out = Mutator::mutate_WarpRole(r);
    if (!p_.tma_store || r->role != role_.name) return out;
    auto copy = std::make_shared<WarpRole>(*as<WarpRole>(out));
    auto wait = std::make_shared<BulkWaitRead>();
    wait->pending = 0;
    copy->body = block({copy->body, elect_one(wait, storing_warp())});
    return copy;
  }

 private:
  bool several_consumers() const { return p_.consumer_warpgroups > 1; }
  // The warp whose elected thread stores a warpgroup's rows: each warpgroup's first.
  ExprPtr storing_warp() const {
    return several_consumers() ? var("warpgroup") * imm(4) : imm(int64_t(role_.first_warpgroup) * 4);
  }
  ExprPtr consumer() const { return several_consumers() ? var("consumer") : imm(0); }
  // Each consumer warpgroup stages in its own buffers, with its own barriers.
  ExprPtr staging_base() const {
    return consumer() * imm(int64_t(st_.buffers) * st_.buffer.bytes());
  }
  BarrierRef c_barrier(const ExprPtr& buffer) const {
    return {Barrier::C, consumer() * imm(st_.buffers) + buffer};
  }
  StmtPtr wait_buffer_read() const {
    auto wait = std::make_shared<BulkWaitRead>();
    wait->pending = pending_stores();
    return wait;
  }
  // The stores that may still read staging when a buffer is rewritten: the buffers' count less
  // one, as each store is the newest group when its buffer comes round again. Not so where a
  // symmetric tile on the diagonal skips its mirror's store: there every store is waited for
  // (a store reads 8-16 KB of shared memory, little beside a tile's mainloop).
  int pending_stores() const {
    return p_.epilogue.commit == EpiloguePlan::Commit::Symmetric ? 0 : st_.buffers - 1;
  }
  // One TMA box per staging chunk, the same boxes the store writes, completing on `bar`.
  StmtPtr load_c(const EpilogueStore& store, const SmemRef& staging, const BarrierRef& bar, const ExprPtr& batch) const {
    auto expect = std::make_shared<MbarrierArriveExpectTx>();
    expect->bar = bar;
    expect->bytes = st_.buffer.bytes();
    std::vector<StmtPtr> loads = {expect};
    for (int c = 0; c < st_.buffer.atoms(); ++c) {
      auto t = std::make_shared<TmaLoad>();
      t->map = rt::Operand::C;
      chunk_box(store, staging, c, t->dst, t->row, t->col);
      t->bar = bar;
      t->batch = tensor_map_batch(p_, rt::Operand::C, batch);
      t->group = tensor_map_group(p_, batch);
      loads.push_back(t);
    }
    return block(loads);
  }
  // Chunk c of a staged subtile (one swizzle atom of columns, one TMA box) in shared memory,
  // and the output row and column of its box: the same for the store and C's load.
  void chunk_box(const EpilogueStore& store, const SmemRef& staging, int c, SmemRef& smem, ExprPtr& row,
                 ExprPtr& col) const {
    smem = {staging.buffer, staging.offset + imm(st_.buffer.offset(c, 0))};
    row = store.row0 + store.warpgroup * imm(st_.rows());
    col = store.col0 + store.col_begin + imm(int64_t(c) * st_.buffer.atom_cols());
    // Transposed (a column-major output: the map's rows run along N and its chunks along M; a
    // symmetric tile's mirror: D's rows n, its columns m).
    if (store.transposed_staging) {
      row = store.col0 + store.col_begin;
      col = store.row0 + store.warpgroup * imm(st_.rows()) + imm(int64_t(c) * st_.buffer.atom_cols());
    }
  }
  StmtPtr staging_barrier() const {
    auto b = std::make_shared<NamedBarrierSync>();
    b->id = imm(kStagingBarrier) + consumer();
    b->threads = kWarpgroupThreads;
    return b;
  }

  const KernelPlan& p_;
  const StagingShape& st_ = p_.staging;
  const RoleShape& role_;
  sm100::ChunkReduce chunk_reduce_;  // split-K on a TMEM accumulator: each loaded chunk's reduction
};

}  // namespace

Kernel lower_epilogue(Kernel k) {
  const KernelPlan& p = k.plan;
  k.body = index_epilogue_stores(LowerWrite(p).mutate(k.body));
  if (p.tma_store) {
    k.launch.tensor_maps.push_back(tiled_tensor_map(p, rt::Operand::D, p.staging.buffer));
    k.launch.tensor_maps.back().row_limited = p.contiguous;  // a group's store stops at its last row
  }
  if (p.epilogue.staged_c) k.launch.tensor_maps.push_back(tiled_tensor_map(p, rt::Operand::C, p.staging.buffer));
  if (p.tma_store && p.epilogue.saves()) {  // the saved output lies as D does
    k.launch.tensor_maps.push_back(tiled_tensor_map(p, rt::Operand::Aux, p.staging.buffer));
    k.launch.tensor_maps.back().row_limited = p.contiguous;
  }
  return k;
}

}  // namespace gg
