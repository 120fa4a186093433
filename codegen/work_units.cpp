#include "codegen/work_units.h"

#include <algorithm>
#include <climits>
#include <map>

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

// Replays the tile-level relations backwards from the grid-bound leaves to the tile index
// of m and n (the outer result of each root split). The batch matrix and the split-K share are
// the outermost work coordinates (batch fastest): blockIdx.z of a grid of tiles, the slow part of
// a persistent tile index (each matrix's tiles in the schedule's order, one matrix after another).
// The CTAs of a multicast group (`ctas`) take neighbouring tiles along the dimension they do not
// share: the persistent loop walks groups of `ctas` tiles, and the CTA's rank picks its own.
TileCoordinates tile_coordinates(const Domain& dom, int64_t ctas, bool along_m, int64_t batches, int64_t splits,
                                 const std::string& persistent_tile) {
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
      const PairedTileGrid groups = paired_tile_grid(tiles_m, tiles_n, ctas, along_m);
      tc.groups_per_matrix = groups.groups_m * groups.groups_n;
      ExprPtr tile = value[it->fused];
      if (batches * splits > 1) {  // the loop walks splits x batches x (tile groups of one matrix)
        outer_coordinates(tile / imm(tc.groups_per_matrix));
        tile = tile % imm(tc.groups_per_matrix);
      }
      TileCoordExprs c = persistent_tile_exprs(tile, groups.groups_m, groups.groups_n, it->raster, it->group);
      if (ctas > 1) (along_m ? c.m : c.n) = (along_m ? c.m : c.n) * imm(ctas) + var("cta_rank");
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

WorkUnits::WorkUnits(const Schedule& s, const KernelPlan& p) : p_(p) {
  if (p.persistent && (p.multicast_a || p.multicast_b)) {
    cluster_ctas_ = p.cluster_size;
    pair_along_m_ = p.multicast_b;
  }
  // split_k ... tail: the loop's units are the whole waves' tiles, then the last wave's tiles once
  // per split; a unit's tile is `work_tile` (see unit()), which the coordinates read.
  tail_ = p.split_k_tail;
  tile_axis_ = s.domain().bound_to(Binding::Persistent);
  GG_INTERNAL_CHECK(!tail_ || tile_axis_, "split_k tail needs the persistent tile loop");
  const TileCoordinates tc = tile_coordinates(s.domain(), cluster_ctas_, pair_along_m_, p.layouts.batch,
                                              tail_ ? 1 : p.split_k, tail_ ? "work_tile" : "tile");
  groups_per_matrix_ = tc.groups_per_matrix;
  grid_unit_.m_tile = tc.m_tile;
  grid_unit_.n_tile = tc.n_tile;
  grid_unit_.batch = tc.batch;
  grid_unit_.split = tail_ ? var("split") : tc.split;
  grid_unit_.in_range = tc.in_range;
  // The pipeline's running count skips no unit's k tiles, so no unit may be skipped by a guard.
  if (tile_axis_ && !is_const(tc.in_range))
    throw_user_error("not-lowered", "a persistent tile loop over tile axes split with a tail is recorded and "
                     "checked, but this code generator does not lower it yet; split m and n so the tile axes divide");
}

int64_t WorkUnits::all_tiles() const { return groups_per_matrix_ * p_.layouts.batch; }

ExprPtr WorkUnits::first() const {
  return cluster_ctas_ > 1 ? var("blockIdx.x") / imm(cluster_ctas_) : var("blockIdx.x");
}
ExprPtr WorkUnits::stride() const {
  return cluster_ctas_ > 1 ? var("gridDim.x") / imm(cluster_ctas_) : var("gridDim.x");
}
ExprPtr WorkUnits::end() const { return tail_ ? var("units_end") : imm(all_tiles() * p_.split_k); }

std::vector<StmtPtr> WorkUnits::kernel_lets() const {
  std::vector<StmtPtr> lets;
  // A 1-D cluster along x: a CTA's rank in it is its block index modulo the cluster size.
  if (p_.multicast_a || p_.multicast_b) lets.push_back(let("cta_rank", var("blockIdx.x") % imm(p_.cluster_size)));
  // Split-K: each split loads ceil(k tiles / splits) of them; the last split's tiles past K are
  // zero-filled like any edge, so every split runs as many.
  if (!p_.k_loop.empty() && tail_) {  // k_tiles is each unit's (unit())
    lets.push_back(let("k_tiles_all", ceil_div(var("args.k"), imm(p_.tile_k))));
    lets.push_back(let("k_share", ceil_div(var("k_tiles_all"), imm(p_.split_k))));
  } else if (!p_.k_loop.empty()) {
    ExprPtr k_tiles = ceil_div(var("args.k"), imm(p_.tile_k));
    lets.push_back(let("k_tiles", p_.split_k > 1 ? ceil_div(k_tiles, imm(p_.split_k)) : k_tiles));
  } else if (persistent()) {
    lets.push_back(let("k_tiles", imm(1)));
  }
  // split_k tail: the tile groups of whole waves of the grid, and where the split units end.
  // Rounded to whole waves at run time, from the grid the kernel runs with.
  if (tail_) {
    lets.push_back(let("whole_tiles", imm(all_tiles()) / stride() * stride()));
    lets.push_back(let("units_end", var("whole_tiles") + (imm(all_tiles()) - var("whole_tiles")) * imm(p_.split_k)));
  }
  return lets;
}

WorkUnitExprs WorkUnits::unit() const {
  WorkUnitExprs u = grid_unit_;
  u.k_tiles = p_.k_loop.empty() && !persistent() ? imm(1) : var("k_tiles");
  if (u.split) u.k_first = var("split") * var(tail_ ? "k_share" : "k_tiles");  // one split's share
  if (!tail_) return u;
  // A whole wave's unit runs all of K; a unit past them is tile work_tile's share `split`.
  // Written without negative operands: a whole wave's unit has past = 0, so its split is 0.
  const ExprPtr last_wave = imm(all_tiles()) - var("whole_tiles");
  const ExprPtr divisor = last_wave + (last_wave == imm(0));  // never 0, also where no wave is partial
  const ExprPtr tile = var("tile");
  u.lets = {comment("split_k tail: whole waves' tiles run all of K; the last wave's tiles are split"),
            let("in_tail", tile >= var("whole_tiles")),
            let("past", tile - min(tile, var("whole_tiles"))),
            let("work_tile", min(tile, var("whole_tiles")) + var("past") % divisor),
            let("split", var("past") / divisor),
            let("k_tiles", tail_k_tiles(var("in_tail")))};
  u.handed_on = var("in_tail");
  return u;
}

ExprPtr WorkUnits::k_tiles_of(const ExprPtr& index) const {
  return tail_ ? tail_k_tiles(index >= var("whole_tiles")) : var("k_tiles");
}

ExprPtr WorkUnits::tail_k_tiles(const ExprPtr& in_tail) const {
  return var("k_tiles_all") - in_tail * (var("k_tiles_all") - var("k_share"));
}

std::string WorkUnits::describe(bool dealt, int consumers) const {
  const int64_t cs = cluster_ctas_;
  const int64_t overhang = groups_per_matrix_ * cs - tile_axis_->extent;
  return "persistent tile loop over '" + tile_axis_->name + "' (" + std::to_string(tile_axis_->extent) + " tiles" +
         (grid_unit_.batch ? " of each of " + std::to_string(p_.layouts.batch) + " matrices" : "") +
         (tail_ ? ", then the tiles past the last whole wave in " + std::to_string(p_.split_k) + " k splits"
          : grid_unit_.split ? " x " + std::to_string(p_.split_k) + " k splits" : "") +
         ", grid-strided" +
         (cs > 1 ? std::string(", in groups of ") + std::to_string(cs) + " neighbouring " +
                       (pair_along_m_ ? "m" : "n") + " tiles, one per CTA of the cluster" +
                       (overhang > 0 ? " (" + std::to_string(overhang) + " tiles past D's edge complete the "
                                       "last groups)" : std::string())
                 : std::string()) +
         (dealt ? ", dealt in turn to " + std::to_string(consumers) + " consumer warpgroups" : std::string()) + ")";
}

std::vector<WorkUnit> cta_work_units(const Schedule& s, const KernelPlan& p, std::array<int64_t, 3> block,
                                     std::array<int64_t, 3> grid, int64_t k) {
  const WorkUnits units(s, p);
  std::map<std::string, int64_t> vars = {{"blockIdx.x", block[0]}, {"blockIdx.y", block[1]},
                                         {"blockIdx.z", block[2]}, {"gridDim.x", grid[0]},
                                         {"gridDim.y", grid[1]}, {"gridDim.z", grid[2]},
                                         {"args.k", k}};
  const auto bind = [&](const std::vector<StmtPtr>& lets) {
    for (const StmtPtr& stmt : lets)
      if (auto l = as<Let>(stmt)) vars[l->name] = evaluate(l->value, vars);
  };
  bind(units.kernel_lets());
  const WorkUnitExprs u = units.unit();
  const auto one = [&](int64_t index) {
    if (units.persistent()) vars["tile"] = index;
    bind(u.lets);
    WorkUnit w;
    w.index = index;
    w.m_tile = evaluate(u.m_tile, vars);
    w.n_tile = evaluate(u.n_tile, vars);
    w.batch = u.batch ? evaluate(u.batch, vars) : 0;
    w.split = u.split ? evaluate(u.split, vars) : 0;
    if (u.split) vars["split"] = w.split;  // as the loop binds it
    w.k_first = u.k_first ? evaluate(u.k_first, vars) : 0;
    w.k_tiles = evaluate(u.k_tiles, vars);
    w.handed_on = u.handed_on ? evaluate(u.handed_on, vars) != 0 : p.split_k > 1;
    w.in_range = evaluate(u.in_range, vars) != 0;
    return w;
  };
  if (!units.persistent()) return {one(0)};
  std::vector<WorkUnit> out;
  const int64_t stride = evaluate(units.stride(), vars), end = evaluate(units.end(), vars);
  for (int64_t t = evaluate(units.first(), vars); t < end; t += stride) out.push_back(one(t));
  return out;
}

std::string describe_work_units(const Schedule& s, const KernelPlan& p, const rt::LaunchSpec& launch) {
  const auto& g = launch.grid;
  const std::array<int64_t, 3> grid = {g[0], g[1], g[2]};
  const auto unit_text = [&](const WorkUnit& u) {
    std::string t = "(";
    if (p.layouts.batch > 1) t += "batch " + std::to_string(u.batch) + ", ";
    t += "m " + std::to_string(u.m_tile) + ", n " + std::to_string(u.n_tile) + ", k tiles " +
         std::to_string(u.k_first) + "+" + std::to_string(u.k_tiles);
    if (p.split_k > 1) t += u.handed_on ? ", split " + std::to_string(u.split) : ", whole";
    return t + ")";
  };
  if (!WorkUnits(s, p).persistent())
    return "work units: one per CTA of the grid (" + std::to_string(g[0] * g[1] * g[2]) + "); CTA (0,0,0) runs " +
           unit_text(cta_work_units(s, p, {0, 0, 0}, grid, p.k).front()) + "\n";
  int64_t total = 0, fewest = INT64_MAX, most = 0;
  for (int64_t x = 0; x < grid[0]; ++x) {
    const auto n = static_cast<int64_t>(cta_work_units(s, p, {x, 0, 0}, grid, p.k).size());
    total += n;
    fewest = std::min(fewest, n);
    most = std::max(most, n);
  }
  const std::vector<WorkUnit> first = cta_work_units(s, p, {0, 0, 0}, grid, p.k);
  std::string out = "work units: " + std::to_string(total) + " over " + std::to_string(grid[0]) + " CTAs (" +
                    (fewest == most ? std::to_string(most) : std::to_string(fewest) + " to " + std::to_string(most)) +
                    " each); CTA 0 runs ";
  for (size_t i = 0; i < first.size() && i < 3; ++i) out += (i ? ", " : "") + unit_text(first[i]);
  if (first.size() > 3) out += ", ...";
  return out + "\n";
}

}  // namespace gg
