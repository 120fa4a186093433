#include "codegen/build_loop_nests.h"

#include <map>

#include "codegen/resources.h"
#include "codegen/target/sm90/wgmma.h"
#include "codegen/tile_order.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

const char* grid_var(Binding b) {
  switch (b) {
    case Binding::BlockX: return "blockIdx.x";
    case Binding::BlockY: return "blockIdx.y";
    case Binding::BlockZ: return "blockIdx.z";
    default: return nullptr;
  }
}

struct TileCoordinates {
  ExprPtr m_tile, n_tile;
  ExprPtr batch;  // the batch matrix; nullptr for one matrix
  ExprPtr split;  // split-K: which share of the k tiles; nullptr without split-K
  ExprPtr in_range = imm(1);
  int64_t groups_per_matrix = 0;  // persistent: the loop's tile groups (of the cluster's CTAs) per matrix
};

// The CTAs of a multicast group take neighbouring tiles along the dimension they do not
// share: the persistent loop walks groups of `ctas` tiles, and the CTA's rank picks its own.
struct ClusterPairing {
  int ctas = 1;
  bool along_m = true;  // multicast B: the CTAs differ in their m tile
};

// Replays the tile-level relations backwards from the grid-bound leaves to the tile index
// of m and n (the outer result of each root split). The batch matrix and the split-K share are
// the outermost work coordinates (batch fastest): blockIdx.z of a grid of tiles, the slow part of
// a persistent tile index (each matrix's tiles in the schedule's order, one matrix after another).
TileCoordinates tile_coordinates(const Domain& dom, const ClusterPairing& pair, int64_t batches, int64_t splits,
                                 const char* persistent_tile = "tile") {
  std::map<std::string, ExprPtr> value;
  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level != Level::Tile) continue;
    if (const char* v = grid_var(a.binding)) value[name] = var(v);
    else if (a.binding == Binding::Persistent) value[name] = var(persistent_tile);
    else if (a.extent == 1 || a.binding == Binding::None) value[name] = imm(0);  // coverage checked it is 1
  }
  TileCoordinates tc;
  const auto outer_coordinates = [&](const ExprPtr& outer) {
    if (batches > 1) tc.batch = splits > 1 ? outer % imm(batches) : outer;
    if (splits > 1) tc.split = batches > 1 ? outer / imm(batches) : outer;
  };
  if (!dom.bound_to(Binding::Persistent)) outer_coordinates(var("blockIdx.z"));
  const auto& rel = dom.relations();
  for (auto it = rel.rbegin(); it != rel.rend(); ++it) {
    if (it->kind == Relation::Kind::Persist && value.count(it->fused)) {
      int64_t tiles_m = dom.find(it->outer)->extent, tiles_n = dom.find(it->inner)->extent;
      const int64_t cs = pair.ctas;
      const PairedTileGrid groups = paired_tile_grid(tiles_m, tiles_n, cs, pair.along_m);
      tc.groups_per_matrix = groups.groups_m * groups.groups_n;
      ExprPtr tile = value[it->fused];
      if (batches * splits > 1) {  // the loop walks splits x batches x (tile groups of one matrix)
        outer_coordinates(tile / imm(tc.groups_per_matrix));
        tile = tile % imm(tc.groups_per_matrix);
      }
      TileCoordExprs c = persistent_tile_exprs(tile, groups.groups_m, groups.groups_n, it->raster, it->group);
      if (cs > 1) (pair.along_m ? c.m : c.n) = (pair.along_m ? c.m : c.n) * imm(cs) + var("cta_rank");
      value[it->outer] = c.m;
      value[it->inner] = c.n;
    } else if (it->kind == Relation::Kind::Merge && value.count(it->fused)) {
      ExprPtr f = value[it->fused];
      value[it->outer] = f / imm(it->factor);
      value[it->inner] = f % imm(it->factor);
    } else if (it->kind == Relation::Kind::Split && value.count(it->outer) && value.count(it->inner)) {
      ExprPtr parent = value[it->outer] * imm(it->factor) + value[it->inner];
      const Axis* p = dom.find(it->parent);
      if (p->extent % it->factor != 0) tc.in_range = tc.in_range && (parent < imm(p->extent));
      value[it->parent] = parent;
    }
  }
  auto root_tile = [&](const char* root) -> ExprPtr {
    for (const auto& r : rel)
      if (r.kind == Relation::Kind::Split && r.parent == root) {
        GG_INTERNAL_CHECK(value.count(r.outer), std::string("no tile index for ") + root);
        return value[r.outer];
      }
    return imm(0);  // never split: one tile covers the whole extent
  };
  tc.m_tile = root_tile("m");
  tc.n_tile = root_tile("n");
  return tc;
}

// Builds the nests every role shares: the loop over this CTA's output tiles (one tile, or
// the persistent grid-strided loop) and the k loop inside it.
class NestBuilder {
 public:
  NestBuilder(const Schedule& s, const KernelPlan& p) : p_(p) {
    if (p.persistent && (p.multicast_a || p.multicast_b)) pair_ = {p.cluster_size, p.multicast_b};
    // split_k ... tail: the loop's work units are the whole waves' tiles, then the last wave's
    // tiles once per split; `work_tile` is the unit's tile (tail_unit), which the coordinates read.
    tail_ = p.split_k_tail;
    tc_ = tile_coordinates(s.domain(), pair_, p.layouts.batch, tail_ ? 1 : p.split_k, tail_ ? "work_tile" : "tile");
    if (tail_) tc_.split = var("split");
    tile_axis_ = s.domain().bound_to(Binding::Persistent);
    GG_INTERNAL_CHECK(!tail_ || tile_axis_, "split_k tail needs the persistent tile loop");
    // Each CTA strides over the tiles; the pipeline's stage and phase count k tiles across
    // all of this CTA's tiles (k_done), since the mbarriers' phases carry over. That count
    // assumes every visited tile runs its k loop, so no tile may be skipped by a guard.
    if (tile_axis_ && !is_const(tc_.in_range))
      throw_user_error("not-lowered", "a persistent tile loop over tile axes split with a tail is recorded and "
                       "checked, but this code generator does not lower it yet; split m and n so the tile axes divide");
  }

  ExprPtr k_tile() const { return p_.k_loop.empty() ? imm(0) : var("k_tile"); }

  // The k loop (or the one k step when K fits a tile) around `step`.
  StmtPtr k_loop(StmtPtr step) const {
    if (p_.k_loop.empty()) return block({comment("one k tile: K fits the tile"), step});
    auto loop = std::make_shared<For>(*as<For>(for_loop("k_tile", imm(0), var("k_tiles"), step,
                                                         "k loop over '" + p_.k_loop + "' (serial)")));
    loop->kind = LoopKind::KTiles;
    return loop;
  }

  // `body` once per output tile of this CTA, with m_tile, n_tile (and k_done) bound. Dealt:
  // the role's warpgroups take the tiles in turn (ping-pong); k_done still counts every tile
  // of the CTA, since all of them pass through the one pipeline.
  StmtPtr over_tiles(StmtPtr body, bool dealt = false) const {
    StmtPtr guarded = is_const(tc_.in_range) ? body : if_then(tc_.in_range, body);
    std::vector<StmtPtr> coords = tail_unit();
    coords.push_back(let("m_tile", tc_.m_tile));
    coords.push_back(let("n_tile", tc_.n_tile));
    // 64-bit: the batch's element offsets (batch * stride) pass 2^31 in big batches.
    if (tc_.batch) coords.push_back(let("batch", tc_.batch, "long long"));
    if (tc_.split && !tail_) coords.push_back(let("split", tc_.split));
    if (!tile_axis_) {
      coords.insert(coords.begin(), comment("tile coordinates from the grid-bound axes"));
      coords.push_back(guarded);
      return block(coords);
    }
    const int64_t cs = pair_.ctas;
    const int64_t overhang = tc_.groups_per_matrix * cs - tile_axis_->extent;
    coords.push_back(let("k_done", k_tiles_before((var("tile") - first_tile()) / tile_stride())));
    coords.push_back(guarded);
    StmtPtr one_tile = block(coords);
    auto loop = std::make_shared<For>();
    loop->kind = LoopKind::Tiles;
    loop->var = "tile";
    loop->begin = first_tile();
    loop->end = tile_end();
    loop->step = tile_stride();
    loop->body = one_tile;
    if (dealt) {
      loop->dealt = p_.consumer_warpgroups;
      loop->dealt_by = "consumer";
    }
    loop->origin = "persistent tile loop over '" + tile_axis_->name + "' (" + std::to_string(tile_axis_->extent) +
                   " tiles" + (tc_.batch ? " of each of " + std::to_string(p_.layouts.batch) + " matrices" : "") +
                   (tail_ ? ", then the tiles past the last whole wave in " + std::to_string(p_.split_k) + " k splits"
                    : tc_.split ? " x " + std::to_string(p_.split_k) + " k splits" : "") +
                   ", grid-strided" +
                   (cs > 1 ? std::string(", in groups of ") + std::to_string(cs) + " neighbouring " +
                                 (pair_.along_m ? "m" : "n") + " tiles, one per CTA of the cluster" +
                                 (overhang > 0 ? " (" + std::to_string(overhang) + " tiles past D's edge complete the "
                                                 "last groups)" : std::string())
                           : std::string()) +
                   (dealt ? ", dealt in turn to " + std::to_string(p_.consumer_warpgroups) + " consumer warpgroups"
                          : std::string()) +
                   ")";
    return loop;
  }

  // The tensor cores serve one ping-pong consumer's mainloop at a time, in tile order: each
  // waits for its turn (but on the CTA's first tile) and passes it on when a tile follows.
  // The order also keeps a consumer from waiting on a full barrier two phases ahead, where
  // the parity wait would pass on an old phase.
  StmtPtr take_turn() const {
    auto sync = std::make_shared<NamedBarrierSync>();
    sync->id = imm(kTurnBarrier) + var("consumer");
    sync->threads = 2 * kWarpgroupThreads;
    return if_then(var("tile") >= first_tile() + tile_stride(), sync);
  }
  StmtPtr pass_turn() const {
    auto arrive = std::make_shared<NamedBarrierArrive>();
    arrive->id = imm(kTurnBarrier) + (var("consumer") + imm(1)) % imm(p_.consumer_warpgroups);
    arrive->threads = 2 * kWarpgroupThreads;
    return if_then(var("tile") + tile_stride() < tile_end(), arrive);
  }

  // The running count of k tiles this CTA has passed through the pipeline.
  ExprPtr k_run() const { return tile_axis_ ? var("k_done") + k_tile() : k_tile(); }

  StmtPtr load(rt::Operand operand, const char* tile) const {
    auto l = std::make_shared<LoadTile>();
    l->operand = operand;
    l->tile = var(tile);
    l->k_tile = k_tile();
    l->stage = imm(0);
    l->batch = batch();
    if (tc_.split) l->k_first = var("split") * var(tail_ ? "k_share" : "k_tiles");  // one split's share
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
    return c;
  }

  // The producer's fills of every tile of this CTA, ending with the drain where the plan has one:
  // after its last fill it waits on each stage's empty barrier for the release of that stage's
  // last fill, as the next `stages` fills would. The fills counted are the k tiles of every tile
  // this CTA walks (a persistent CTA's k_done after its last tile).
  StmtPtr producer_tiles(StmtPtr fill_k_loop) const {
    if (!p_.pipeline.drain_at_exit) return over_tiles(std::move(fill_k_loop));
    const int stages = p_.pipeline.stages;
    ExprPtr per_tile = p_.k_loop.empty() && !tile_axis_ ? imm(1) : var("k_tiles");
    ExprPtr filled = per_tile;
    if (tile_axis_) filled = k_tiles_before(ceil_div(tile_end() - min(first_tile(), tile_end()), tile_stride()));
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
    if (!tile_axis_) return over_tiles(block({std::move(fill_k_loop), drain}));
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
    auto write = std::make_shared<WriteTile>();
    write->m_tile = var("m_tile");
    write->n_tile = var("n_tile");
    write->batch = batch();
    if (tc_.split) write->split = var("split");
    if (tail_) write->split_when = var("in_tail");
    if (p_.accumulator == Place::Tmem) {
      auto finish = std::make_shared<FinishCompute>();
      if (tile_axis_) finish->tiles_done = var("k_done") / var("k_tiles");  // this CTA's earlier tiles
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
    return block({decl, zero, std::move(mainloop), write});
  }

  bool persistent() const { return tile_axis_ != nullptr; }
  ExprPtr batch() const { return tc_.batch ? var("batch") : nullptr; }

 private:
  ExprPtr first_tile() const { return pair_.ctas > 1 ? var("blockIdx.x") / imm(pair_.ctas) : var("blockIdx.x"); }
  ExprPtr tile_stride() const { return pair_.ctas > 1 ? var("gridDim.x") / imm(pair_.ctas) : var("gridDim.x"); }
  // The loop's tiles (tile groups of a cluster) over every matrix of the batch, before any split.
  int64_t all_tiles() const { return tc_.groups_per_matrix * p_.layouts.batch; }
  ExprPtr tile_end() const { return tail_ ? var("units_end") : imm(all_tiles() * p_.split_k); }

 public:
  // The k tiles a CTA passes through its pipeline in its first `units` work units: each unit
  // runs k_tiles of them, or with split_k tail the whole waves' units all of K (k_tiles_all) and
  // the later ones a split's share (k_share). Every CTA's first units are whole-wave ones.
  ExprPtr k_tiles_before(ExprPtr units) const {
    if (!tail_) return units * var("k_tiles");
    ExprPtr whole_units = min(units, var("whole_tiles") / tile_stride());
    return whole_units * var("k_tiles_all") + (units - whole_units) * var("k_share");
  }

  // split_k tail, once per kernel: the tile groups of whole waves of the grid, and where the
  // split units end. Rounded to whole waves at run time, from the grid the kernel runs with.
  std::vector<StmtPtr> tail_grid() const {
    if (!tail_) return {};
    return {let("whole_tiles", imm(all_tiles()) / tile_stride() * tile_stride()),
            let("units_end", var("whole_tiles") + (imm(all_tiles()) - var("whole_tiles")) * imm(p_.split_k))};
  }

 private:
  // split_k tail, per work unit `tile`: its tile (work_tile), split and k tile count. Written
  // without negative operands: a whole wave's unit has past = 0, so its split is 0.
  std::vector<StmtPtr> tail_unit() const {
    if (!tail_) return {};
    ExprPtr last_wave = imm(all_tiles()) - var("whole_tiles");
    ExprPtr divisor = last_wave + (last_wave == imm(0));  // never 0, also where no wave is partial
    return {comment("split_k tail: whole waves' tiles run all of K; the last wave's tiles are split"),
            let("in_tail", var("tile") >= var("whole_tiles")),
            let("past", var("tile") - min(var("tile"), var("whole_tiles"))),
            let("work_tile", min(var("tile"), var("whole_tiles")) + var("past") % divisor),
            let("split", var("past") / divisor),
            let("k_tiles", var("k_tiles_all") - var("in_tail") * (var("k_tiles_all") - var("k_share")))};
  }

  const KernelPlan& p_;
  ClusterPairing pair_;
  TileCoordinates tc_;
  const Axis* tile_axis_ = nullptr;
  bool tail_ = false;
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
    StmtPtr body;
    if (r.issues_loads && r.computes) {
      // One role: each k step loads, waits, computes and releases in program order. Where a
      // stage is released on its empty barrier (the MMAs complete asynchronously), its fill first
      // waits for that release.
      StmtPtr free_stage = p.pipeline.empty_barriers ? nb.acquire(true) : nullptr;
      body = nb.over_tiles(nb.accumulate(nb.k_loop(
          block({free_stage, nb.load(rt::Operand::A, "m_tile"), nb.load(rt::Operand::B, "n_tile"), nb.acquire(false), nb.compute(), nb.release()}))));
    } else if (r.issues_loads) {
      // The producer: one elected thread walks the same tiles and k tiles as the consumers,
      // waiting for a free stage before each fill.
      body = elect_one(nb.producer_tiles(nb.k_loop(block({nb.acquire(true), nb.load(rt::Operand::A, "m_tile"),
                                                           nb.load(rt::Operand::B, "n_tile")}))),
                       imm(int64_t(r.first_warpgroup) * 4));
    } else if (p.ping_pong) {
      StmtPtr mainloop = nb.k_loop(block({nb.acquire(false), nb.compute(), nb.release()}));
      body = nb.over_tiles(nb.accumulate(block({nb.take_turn(), mainloop, nb.pass_turn()})), true);
    } else {
      body = nb.over_tiles(nb.accumulate(nb.k_loop(block({nb.acquire(false), nb.compute(), nb.release()}))));
    }
    std::vector<StmtPtr> role_body = {role_prologue(r)};
    if (r.computes && r.warpgroups > 1)  // which of the role's warpgroups runs: its band, buffers, barriers
      role_body.push_back(let("consumer", r.first_warpgroup ? var("warpgroup") - imm(r.first_warpgroup)
                                                            : var("warpgroup")));
    role_body.push_back(body);
    roles.push_back(warp_role(r.name, r.first_warpgroup, r.warpgroups, block(role_body)));
  }
  std::vector<StmtPtr> top;
  // A 1-D cluster along x: a CTA's rank in it is its block index modulo the cluster size.
  if (p.multicast_a || p.multicast_b) top.push_back(let("cta_rank", var("blockIdx.x") % imm(p.cluster_size)));
  // Split-K: each split loads ceil(k tiles / splits) of them; the last split's tiles past K are
  // zero-filled like any edge, so every split runs as many and the pipeline counts stay uniform.
  if (!p.k_loop.empty() && p.split_k_tail) {  // k_tiles is each work unit's (NestBuilder::tail_unit)
    top.push_back(let("k_tiles_all", ceil_div(var("args.k"), imm(p.tile_k))));
    top.push_back(let("k_share", ceil_div(var("k_tiles_all"), imm(p.split_k))));
  } else if (!p.k_loop.empty()) {
    ExprPtr k_tiles = ceil_div(var("args.k"), imm(p.tile_k));
    top.push_back(let("k_tiles", p.split_k > 1 ? ceil_div(k_tiles, imm(p.split_k)) : k_tiles));
  } else if (nb.persistent()) top.push_back(let("k_tiles", imm(1)));
  for (StmtPtr grid_let : nb.tail_grid()) top.push_back(grid_let);
  top.insert(top.end(), roles.begin(), roles.end());
  k.body = block(top);
  return k;
}

}  // namespace gg
