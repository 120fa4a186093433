#include "codegen/build_loop_nests.h"

#include <map>
#include <set>

#include "codegen/resources.h"
#include "codegen/target/sm100/tcgen05.h"
#include "codegen/target/sm90/wgmma.h"
#include "codegen/work_units.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

// Builds the nests every role shares: the loop over this CTA's work units (one tile, or the
// persistent grid-strided loop) and the k loop inside it.
class NestBuilder {
 public:
  NestBuilder(const Schedule& s, const KernelPlan& p) : p_(p), units_(s, p), unit_(units_.unit()) {}

  ExprPtr k_tile() const { return p_.k_loop.empty() ? imm(0) : var("k_tile"); }

  // The k loop (or the one k step when K fits a tile) around `step`.
  StmtPtr k_loop(StmtPtr step) const {
    if (p_.k_loop.empty()) return block({comment("one k tile: K fits the tile"), step});
    auto loop = std::make_shared<For>(*as<For>(for_loop("k_tile", imm(0), var("k_tiles"), step,
                                                         "k loop over '" + p_.k_loop + "' (serial)")));
    loop->kind = LoopKind::KTiles;
    return loop;
  }

  // `body` once per work unit of this CTA, with m_tile, n_tile (batch, split) bound. Persistent,
  // the pipeline's running count `k_done` (the k tiles of this CTA's earlier units, all of which
  // pass through the one pipeline) is declared before the loop and advanced after each unit, and
  // `counted` adds `tiles_done`, the units this warpgroup computed before. Dealt: the role's
  // warpgroups take the units in turn (ping-pong), each advancing k_done past the others' units.
  // A role whose loop runs no pipeline (the double-buffered writeback) keeps no running count.
  StmtPtr over_tiles(StmtPtr body, bool dealt = false, bool counted = false, bool pipelined = true) const {
    const WorkUnitExprs& u = unit_;
    // Ping-pong consumers take the tensor cores in turn, unit by unit (the body takes its turn
    // before its mainloop and passes it after): a skipped unit (a masked group's tile past its
    // rows) takes and passes its turn at once.
    StmtPtr skipped = dealt && p_.ping_pong ? block({take_turn(), pass_turn()}) : nullptr;
    StmtPtr guarded = is_const(u.in_range) ? body : if_then(u.in_range, body, skipped);
    std::vector<StmtPtr> coords = u.lets;
    if (u.acquire_maps && (!role_ || role_->issues_loads) && !mma_loop_) coords.push_back(u.acquire_maps);
    coords.push_back(let("m_tile", u.m_tile));
    coords.push_back(let("n_tile", u.n_tile));
    if (u.m_first) coords.push_back(let("m_row0", u.m_first));  // a contiguous group's rows
    // 64-bit: the batch's element offsets (batch * stride) pass 2^31 in big batches.
    // (A pointer-array group only picks its maps: an int.)
    if (u.batch && role_reads_batch() && !mma_loop_) coords.push_back(let("batch", u.batch, p_.pointer_array ? "int" : "long long"));
    // A stream-K unit's piece is the epilogue's alone (its loads start at k_first): the roles that
    // compute bind it.
    const bool binds_split = !p_.split_k_tail || (p_.split_k_stream && (!role_ || role_->computes));
    if (u.split && binds_split) coords.push_back(let("split", u.split));
    if (!units_.persistent()) {
      coords.insert(coords.begin(), comment("tile coordinates from the grid-bound axes"));
      coords.push_back(guarded);
      return block(coords);
    }
    const int dealers = dealt ? p_.consumer_warpgroups : 1;
    coords.push_back(guarded);
    if (mma_loop_ || !pipelined) mark_maybe_unused(coords, {"split", "k_tiles"});
    if (pipelined) coords.push_back(assign("k_done", var("k_done") + k_tiles_passed(dealers)));
    if (counted) coords.push_back(assign("tiles_done", var("tiles_done") + u.computes));
    auto loop = std::make_shared<For>();
    loop->kind = LoopKind::Tiles;
    loop->var = "tile";
    loop->begin = units_.first();
    loop->end = units_.end();
    loop->step = units_.stride();
    loop->body = block(coords);
    if (dealt) {
      loop->dealt = p_.consumer_warpgroups;
      loop->dealt_by = "consumer";
    }
    loop->origin = units_.describe(dealt, p_.consumer_warpgroups);
    std::vector<StmtPtr> nest;
    if (pipelined) {
      nest.push_back(comment("the pipeline's running count: k tiles of the units this CTA passed through it before"));
      nest.push_back(mutable_let("k_done", dealt ? k_tiles_before_turn() : imm(0)));
    }
    if (counted) nest.push_back(mutable_let("tiles_done", imm(0)));
    nest.push_back(loop);
    return block(nest);
  }

  // The tensor cores serve one ping-pong consumer's mainloop at a time, in tile order: each
  // waits for its turn (but on the CTA's first tile) and passes it on when a tile follows.
  // The order also keeps a consumer from waiting on a full barrier two phases ahead, where
  // the parity wait would pass on an old phase.
  StmtPtr take_turn() const {
    auto sync = std::make_shared<NamedBarrierSync>();
    sync->id = imm(kTurnBarrier) + var("consumer");
    sync->threads = 2 * kWarpgroupThreads;
    return if_then(var("tile") >= units_.first() + units_.stride(), sync);
  }
  StmtPtr pass_turn() const {
    auto arrive = std::make_shared<NamedBarrierArrive>();
    arrive->id = imm(kTurnBarrier) + (var("consumer") + imm(1)) % imm(p_.consumer_warpgroups);
    arrive->threads = 2 * kWarpgroupThreads;
    return if_then(var("tile") + units_.stride() < units_.end(), arrive);
  }

  // The running count of k tiles this CTA has passed through the pipeline.
  ExprPtr k_run() const { return units_.persistent() ? var("k_done") + k_tile() : k_tile(); }

  // A k step: `before`, each staged operand's load (its tile at the unit's coordinate its rows
  // follow), then `after`, in one flat block (expand_circular_buffer finds the loads there).
  StmtPtr loads_between(std::vector<StmtPtr> before, const std::vector<StmtPtr>& after) const {
    for (const StagedOperand& o : p_.operands) before.push_back(load(o));
    before.insert(before.end(), after.begin(), after.end());
    return block(std::move(before));
  }

  StmtPtr load(const StagedOperand& operand) const {
    auto l = std::make_shared<LoadTile>();
    l->operand = operand.operand;
    l->tile = var(operand.tile);
    l->k_tile = k_tile();
    l->stage = imm(0);
    l->batch = batch();
    l->k_first = unit_.k_first;  // a split's share
    if (unit_.m_first && operand.tile == "m_tile") l->first = var("m_row0");
    l->k_row0 = unit_.k_row0;  // a variable-K group's range
    l->k_end = unit_.k_end;
    return l;
  }

  StmtPtr acquire(bool to_fill) const {
    auto a = std::make_shared<AcquireStage>();
    a->stage = imm(0);
    // One stage without a ring: the phase flips with every k tile this CTA has loaded. Before
    // fill f the loader waits for release f - 1 (parity (f + 1) % 2, which a fresh barrier passes).
    a->parity = to_fill ? (k_run() + imm(1)) % imm(2) : k_run() % imm(2);
    a->to_fill = to_fill;
    return a;
  }

  StmtPtr compute() const {
    auto c = std::make_shared<ComputeTile>();
    c->stage = imm(0);
    if (p_.accumulator == Place::Tmem) c->k_index = k_tile();  // the tile's first MMA overwrites TMEM
    if (p_.promotion.on || p_.fp8.block_scaled) {  // its scale factors
      c->k_block = unit_.k_first ? unit_.k_first + k_tile() : k_tile();
      c->batch = batch();
    }
    return c;
  }

  // The producer's fills of every unit of this CTA, ending with the drain where the plan has one:
  // after its last fill it waits on each stage's empty barrier for the release of that stage's
  // last fill, as the next `stages` fills would. The fills counted are the running count after
  // the loop (k_done), or the one tile's k tiles.
  StmtPtr producer_tiles(StmtPtr fill_k_loop) const {
    if (!p_.pipeline.drain_at_exit) return over_tiles(std::move(fill_k_loop));
    const int stages = p_.pipeline.stages;
    ExprPtr filled = units_.persistent() ? var("k_done") : p_.k_loop.empty() ? imm(1) : var("k_tiles");
    auto wait = std::make_shared<AcquireStage>();
    ExprPtr fill = var("filled") + var("drain");
    wait->stage = fill % imm(stages);
    wait->parity = (fill / imm(stages) + imm(1)) % imm(2);
    wait->to_fill = true;
    auto loop = std::make_shared<For>(*as<For>(for_loop(
        "drain", imm(0), imm(stages), wait,
        "drain: every stage's last fill released by the consumers of every CTA reading it, so no peer "
        "arrives on this CTA's barriers after it exits")));
    loop->kind = LoopKind::Drain;
    StmtPtr drain = block({let("filled", filled), loop});
    // One tile without a tile loop: the drain follows its k loop inside the tile's guard.
    if (!units_.persistent()) return over_tiles(block({std::move(fill_k_loop), drain}));
    return block({over_tiles(std::move(fill_k_loop)), drain});
  }

  StmtPtr release() const {
    auto r = std::make_shared<ReleaseStage>();
    r->stage = imm(0);
    return r;
  }

  // The accumulator's lifetime: declared and zeroed per tile, written out after the k loop. In
  // TMEM it needs neither (the tile's first MMA overwrites it); the MMAs run asynchronously, so the
  // write waits for all of them to complete.
  StmtPtr accumulate(StmtPtr mainloop) const {
    auto write = write_tile();
    if (p_.accumulator == Place::Tmem) {
      auto finish = std::make_shared<FinishCompute>();
      if (units_.persistent()) finish->tiles_done = var("tiles_done");  // this warpgroup's earlier units
      return block({std::move(mainloop), finish, write});
    }
    auto acc_shape = sm90::accumulator_shape(p_);
    auto decl = std::make_shared<AccumulatorDecl>();
    decl->name = "acc";
    decl->blocks = acc_shape.blocks;
    decl->regs = acc_shape.regs;
    auto zero = std::make_shared<AccumulatorZero>();
    zero->name = "acc";
    zero->blocks = acc_shape.blocks;
    zero->regs = acc_shape.regs;
    std::vector<StmtPtr> steps = {decl, zero};
    if (p_.promotion.on && p_.promotion.every > 1) {
      // FP8 promoted every few k tiles: the promotion accumulator lives across them.
      auto promoted = std::make_shared<AccumulatorDecl>(*decl);
      promoted->name = sm90::kPromotedAccumulator;
      steps.push_back(promoted);
    }
    steps.push_back(std::move(mainloop));
    if (p_.fp8.scale_b == ScaleGranularity::PerRow) steps.push_back(column_factors(acc_shape));
    steps.push_back(write);
    return block(steps);
  }

  // The unit's output tile, written out.
  std::shared_ptr<WriteTile> write_tile() const {
    const WorkUnitExprs& u = unit_;
    auto write = std::make_shared<WriteTile>();
    write->m_tile = var("m_tile");
    write->n_tile = var("n_tile");
    write->batch = batch();
    if (u.split) write->split = var("split");
    if (u.handed_on) write->split_when = u.handed_on;
    if (u.pieces) write->pieces = var("pieces");
    if (u.m_first) write->row0 = var("m_row0");
    write->row_end = u.row_end;
    return write;
  }

  // FP8, B's factors per row of B: the unit's columns of D times theirs, once its k loop is done.
  StmtPtr column_factors(const sm90::AccumulatorShape& shape) const {
    const ExprPtr n = narrow(var("args.n"));
    const bool batched = unit_.batch && rt::stored_matrix(p_.layouts, rt::Operand::B, p_.m, p_.n, p_.k).batches > 1;
    const ExprPtr matrix_base = batched ? var("batch") * n : imm(0);
    auto scale = std::make_shared<ScaleAccumulatorColumns>();
    scale->blocks = shape.blocks;
    scale->regs = shape.regs;
    scale->first = matrix_base + var("n_tile") * imm(p_.tile_n);
    scale->last = matrix_base + n - imm(1);
    return scale;
  }

  // Double-buffered TMEM: the MMA warp's tiles. Its elected thread takes each tile's accumulator
  // buffer once the writeback released it, issues the k loop's MMAs into it as the stages land,
  // and commits onto the buffer's mma_done after the last (mma2ld).
  StmtPtr mma_tiles() {
    mma_loop_ = true;
    auto take = std::make_shared<AcquireAccumulator>();
    take->tiles_done = var("tiles_done");
    auto issued = std::make_shared<FinishCompute>();
    issued->tiles_done = var("tiles_done");
    issued->waits = false;
    StmtPtr loop = over_tiles(block({take, k_loop(block({acquire(false), compute(), release()})), issued}), false, true);
    mma_loop_ = false;
    return loop;
  }
  // ... and the writeback's: each tile waits for its buffer's MMAs (mma2ld), writes it out and
  // releases it (ld2mma, after the epilogue's reads: lower_epilogue).
  StmtPtr writeback_tiles() const {
    auto ready = std::make_shared<FinishCompute>();
    ready->tiles_done = var("tiles_done");
    ready->commits = false;
    return over_tiles(block({ready, write_tile()}), false, true, false);
  }

  // The lets named in `names` marked maybe-unused: a role that does part of a unit's work (the MMA
  // warp, the double-buffered writeback) may not read a split's index or the k tile count.
  static void mark_maybe_unused(std::vector<StmtPtr>& stmts, const std::set<std::string>& names) {
    for (StmtPtr& st : stmts)
      if (const Let* l = as<Let>(st); l && names.count(l->name)) {
        auto marked = std::make_shared<Let>(*l);
        marked->maybe_unused = true;
        st = marked;
      }
  }

  // The nests built next are role `r`'s.
  void for_role(const RoleShape& r) { role_ = &r; }
  // Whether the role reads the unit's batch matrix (a group's): to load a batched operand, or to
  // store a batched D or C, or for split-K's slot (contiguous groups share A, C and D: a consumer
  // that only stores needs no batch).
  bool role_reads_batch() const {
    if (!role_ || p_.pointer_array) return true;  // pointer arrays: the group picks the maps of every box
    const auto batched = [&](rt::Operand o) { return rt::stored_matrix(p_.layouts, o, p_.m, p_.n, p_.k).batches > 1; };
    bool reads = false;
    if (role_->issues_loads)
      for (const StagedOperand& o : p_.operands) reads = reads || batched(o.operand);
    if (role_->computes) reads = reads || batched(rt::Operand::D) || batched(rt::Operand::C) || p_.split_k > 1;
    // FP8: the promotion reads the unit's matrix's (or group's) factors of B
    if (role_->computes && p_.fp8.scale_b && !p_.fp8.block_scaled) reads = reads || batched(rt::Operand::B);
    if (role_->computes && p_.fp8.scale_a && !p_.fp8.stages_scale_a()) reads = reads || batched(rt::Operand::A);
    return reads;
  }

  bool persistent() const { return units_.persistent(); }
  ExprPtr batch() const { return unit_.batch ? var("batch") : nullptr; }
  std::vector<StmtPtr> kernel_lets() const { return units_.kernel_lets(); }
  // Whether a compute role counts its units (tiles_done): the staged C tile's barrier phase and
  // TMEM's completion barrier follow them.
  bool counts_units() const { return persistent() && (p_.epilogue.staged_c || p_.accumulator == Place::Tmem); }

 private:
  // The k tiles a dealt loop's trip passes: its own unit's and the next dealers - 1 units' (dealt
  // to the other warpgroups; none past the loop's end).
  ExprPtr k_tiles_passed(int dealers) const {
    ExprPtr passed = var("k_tiles");
    for (int j = 1; j < dealers; ++j) {
      const ExprPtr next = var("tile") + imm(j) * units_.stride();
      passed = passed + (next < units_.end()) * units_.k_tiles_of(next);
    }
    return passed;
  }
  // A dealt loop's warpgroup starts after the units the warpgroups before it take first.
  ExprPtr k_tiles_before_turn() const {
    ExprPtr before = imm(0);
    for (int j = 0; j + 1 < p_.consumer_warpgroups; ++j) {
      const ExprPtr unit = units_.first() + imm(j) * units_.stride();
      before = before + (imm(j) < var("consumer")) * (unit < units_.end()) * units_.k_tiles_of(unit);
    }
    return before;
  }

  const KernelPlan& p_;
  WorkUnits units_;
  WorkUnitExprs unit_;  // the unit each trip of the tile loop computes
  const RoleShape* role_ = nullptr;
  bool mma_loop_ = false;  // building the MMA warp's tiles: they neither load nor store
};

StmtPtr role_prologue(const RoleShape& r) {
  if (!r.declared) return nullptr;  // the launch's allocation stands
  auto set = std::make_shared<SetMaxNReg>();
  set->regs = r.regs;
  set->increase = r.increase;
  return set;
}

}  // namespace

Kernel build_loop_nests(const Schedule& s, Kernel k) {
  const KernelPlan& p = k.plan;
  NestBuilder nb(s, p);
  std::vector<StmtPtr> roles;
  for (const RoleShape& r : p.roles) {
    nb.for_role(r);
    StmtPtr body;
    if (r.issues_loads && r.computes) {
      // One role: each k step loads, waits, computes and releases in program order. Where a
      // stage is released on its empty barrier (the MMAs complete asynchronously), its fill first
      // waits for that release.
      StmtPtr free_stage = p.pipeline.empty_barriers ? nb.acquire(true) : nullptr;
      body = nb.over_tiles(nb.accumulate(nb.k_loop(
          nb.loads_between({free_stage}, {nb.acquire(false), nb.compute(), nb.release()}))),
                           false, nb.counts_units());
    } else if (r.issues_loads) {
      // The producer: one elected thread walks the same tiles and k tiles as the consumers,
      // waiting for a free stage before each fill.
      body = elect_one(nb.producer_tiles(nb.k_loop(nb.loads_between({nb.acquire(true)}, {}))),
                       imm(int64_t(r.first_warpgroup) * 4));
      // Double-buffered TMEM: the next warp's elected thread issues the MMAs (TIRx step 10).
      if (p.mma_warp) {
        StmtPtr mma = elect_one(nb.mma_tiles(), imm(sm100::mma_issuing_warp(p)));
        // A CTA pair: the even CTA's MMA warp issues for both.
        if (p.cta_pair) mma = if_then(var("cta_rank") % imm(2) == imm(0), mma);
        body = block({body, mma});
      }
    } else if (p.mma_warp) {
      body = nb.writeback_tiles();
    } else if (p.ping_pong) {
      StmtPtr mainloop = nb.k_loop(block({nb.acquire(false), nb.compute(), nb.release()}));
      body = nb.over_tiles(nb.accumulate(block({nb.take_turn(), mainloop, nb.pass_turn()})), true, nb.counts_units());
    } else {
      body = nb.over_tiles(nb.accumulate(nb.k_loop(block({nb.acquire(false), nb.compute(), nb.release()}))), false,
                           nb.counts_units());
    }
    std::vector<StmtPtr> role_body = {role_prologue(r)};
    if (r.computes && r.warpgroups > 1)  // which of the role's warpgroups runs: its band, buffers, barriers
      role_body.push_back(let("consumer", r.first_warpgroup ? var("warpgroup") - imm(r.first_warpgroup)
                                                            : var("warpgroup")));
    role_body.push_back(body);
    roles.push_back(warp_role(r.name, r.first_warpgroup, r.warpgroups, block(role_body)));
  }
  std::vector<StmtPtr> top = nb.kernel_lets();
  top.insert(top.end(), roles.begin(), roles.end());
  k.body = block(top);
  return k;
}

}  // namespace gg
