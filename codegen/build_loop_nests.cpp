#include "codegen/build_loop_nests.h"

#include <map>

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
  ExprPtr in_range = imm(1);
};

// Replays the tile-level relations backwards from the grid-bound leaves to the tile index
// of m and n (the outer result of each root split).
TileCoordinates tile_coordinates(const Domain& dom) {
  std::map<std::string, ExprPtr> value;
  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level != Level::Tile) continue;
    if (const char* v = grid_var(a.binding)) value[name] = var(v);
    else if (a.binding == Binding::Persistent) value[name] = var("tile");
    else if (a.extent == 1 || a.binding == Binding::None) value[name] = imm(0);  // coverage checked it is 1
  }
  TileCoordinates tc;
  const auto& rel = dom.relations();
  for (auto it = rel.rbegin(); it != rel.rend(); ++it) {
    if (it->kind == Relation::Kind::Persist && value.count(it->fused)) {
      TileCoordExprs c = persistent_tile_exprs(value[it->fused], dom.find(it->outer)->extent,
                                               dom.find(it->inner)->extent, it->raster, it->group);
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

}  // namespace

Kernel build_loop_nests(const Schedule& s, Kernel k) {
  const KernelPlan& p = k.plan;
  TileCoordinates tc = tile_coordinates(s.domain());
  auto acc_shape = sm90::accumulator_shape(p);

  auto decl = std::make_shared<AccumulatorDecl>();
  decl->name = "acc";
  decl->blocks = acc_shape.blocks;
  decl->regs = acc_shape.regs;
  auto zero = std::make_shared<AccumulatorZero>();
  zero->name = "acc";
  zero->blocks = acc_shape.blocks;
  zero->regs = acc_shape.regs;

  ExprPtr kt = p.k_loop.empty() ? imm(0) : var("k_tile");
  auto load = [&](const char* operand, ExprPtr tile) {
    auto l = std::make_shared<LoadTile>();
    l->operand = operand;
    l->tile = std::move(tile);
    l->k_tile = kt;
    l->stage = imm(0);
    return l;
  };
  auto acquire = std::make_shared<AcquireStage>();
  acquire->stage = imm(0);
  // One stage without a ring: the phase flips with every k tile this CTA has loaded.
  bool persistent = s.domain().bound_to(Binding::Persistent) != nullptr;
  acquire->parity = (persistent ? var("k_done") + kt : kt) % imm(2);
  auto compute = std::make_shared<ComputeTile>();
  compute->stage = imm(0);
  auto release = std::make_shared<ReleaseStage>();
  release->stage = imm(0);
  StmtPtr k_step = block({load("A", var("m_tile")), load("B", var("n_tile")), acquire, compute, release});
  StmtPtr mainloop = p.k_loop.empty()
                         ? block({comment("one k tile: K fits the tile"), k_step})
                         : for_loop("k_tile", imm(0), var("k_tiles"), k_step, "k loop over '" + p.k_loop + "' (serial)");
  auto write = std::make_shared<WriteTile>();
  write->m_tile = var("m_tile");
  write->n_tile = var("n_tile");

  StmtPtr tile_body = block({decl, zero, mainloop, write});
  StmtPtr guarded = is_const(tc.in_range) ? tile_body : if_then(tc.in_range, tile_body);
  StmtPtr k_tiles = p.k_loop.empty() ? nullptr : let("k_tiles", ceil_div(var("args.k"), imm(p.tile_k)));
  const Axis* tile_axis = s.domain().bound_to(Binding::Persistent);
  if (!tile_axis) {
    k.body = block({comment("tile coordinates from the grid-bound axes"), let("m_tile", tc.m_tile),
                    let("n_tile", tc.n_tile), k_tiles, guarded});
    return k;
  }
  // Each CTA strides over the tiles; the pipeline's stage and phase count k tiles across
  // all of this CTA's tiles (k_done), since the mbarriers' phases carry over. That count
  // assumes every visited tile runs its k loop, so no tile may be skipped by a guard.
  if (!is_const(tc.in_range))
    throw_user_error("not-lowered", "a persistent tile loop over tile axes split with a tail is recorded and "
                     "checked, but this code generator does not lower it yet; split m and n so the tile axes divide");
  StmtPtr one_tile = block({let("m_tile", tc.m_tile), let("n_tile", tc.n_tile),
                            let("k_done", (var("tile") - var("blockIdx.x")) / var("gridDim.x") * var("k_tiles")),
                            guarded});
  auto loop = std::make_shared<For>();
  loop->var = "tile";
  loop->begin = var("blockIdx.x");
  loop->end = imm(tile_axis->extent);
  loop->step = var("gridDim.x");
  loop->body = one_tile;
  loop->origin = "persistent tile loop over '" + tile_axis->name + "' (" + std::to_string(tile_axis->extent) +
                 " tiles, grid-strided)";
  k.body = block({k_tiles ? k_tiles : let("k_tiles", imm(1)), loop});
  return k;
}

}  // namespace gg
