#include "codegen/work_units.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <tuple>

#include "codegen/tile_order.h"
#include "dsl/error.h"
#include "runtime/device/tile_order.h"

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
  ExprPtr groups_per_matrix;  // persistent: the loop's tile groups (of the cluster's CTAs) per matrix
  ExprPtr dealt_first;        // the triangle order: whether the unit is among the tiles it deals first
};

// Every tile-level axis's extent as an expression: the schedule's constant, or where the axis
// follows a size the kernel reads at run time, its count of args.m or args.n (axis_counts).
std::map<std::string, ExprPtr> axis_extents(const Domain& dom, const KernelPlan& p) {
  std::map<std::string, ExprPtr> extent;
  for (const auto& [name, count] : axis_counts(dom, p)) extent[name] = count_expr(count);
  return extent;
}

// Replays the tile-level relations backwards from the grid-bound leaves to the tile index
// of m and n (the outer result of each root split). The batch matrix and the split-K share are
// the outermost work coordinates (batch fastest): blockIdx.z of a grid of tiles, the slow part of
// a persistent tile index (each matrix's tiles in the schedule's order, one matrix after another).
// The CTAs of a multicast group take neighbouring tiles along the dimension they do not share
// (`ctas_m` along m, `ctas_n` along n; both for a two-dimensional cluster): the persistent loop
// walks groups of ctas_m x ctas_n tiles, and the CTA's rank picks its own.
TileCoordinates tile_coordinates(const Domain& dom, const std::map<std::string, ExprPtr>& extents, int64_t ctas_m,
                                 int64_t ctas_n, int64_t batches, int64_t splits, const std::string& persistent_tile) {
  const auto extent = [&](const std::string& name) {
    auto it = extents.find(name);
    return it != extents.end() ? it->second : imm(dom.find(name)->extent);
  };
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
      const PairedTileGridExprs groups = cluster_tile_grid(extent(it->outer), extent(it->inner), ctas_m, ctas_n);
      tc.groups_per_matrix = groups.groups_m * groups.groups_n;
      ExprPtr tile = value[it->fused];
      if (batches * splits > 1) {  // the loop walks splits x batches x (tile groups of one matrix)
        outer_coordinates(tile / tc.groups_per_matrix);
        tile = tile % tc.groups_per_matrix;
      }
      const int64_t ratio =
          it->raster == Raster::Triangle ? triangle_ratio(dom.tile_extent(Root::M), dom.tile_extent(Root::N)) : 1;
      TileCoordExprs c = persistent_tile_exprs(tile, groups.groups_m, groups.groups_n, it->raster, it->group, ratio);
      const bool two_d = ctas_m > 1 && ctas_n > 1;
      if (ctas_m > 1) c.m = c.m * imm(ctas_m) + var(two_d ? "cta_rank_m" : "cta_rank");
      if (ctas_n > 1) c.n = c.n * imm(ctas_n) + var(two_d ? "cta_rank_n" : "cta_rank");
      if (ctas_m * ctas_n == 1) tc.dealt_first = c.dealt_first;  // (a cluster's tiles are the pair's, not the order's)
      value[it->outer] = c.m;
      value[it->inner] = c.n;
    } else if (it->kind == Relation::Kind::Merge && value.count(it->fused)) {
      ExprPtr f = value[it->fused];
      value[it->outer] = f / extent(it->inner);
      value[it->inner] = f % extent(it->inner);
    } else if (it->kind == Relation::Kind::Split && value.count(it->outer) && value.count(it->inner)) {
      ExprPtr parent = value[it->outer] * imm(it->factor) + value[it->inner];
      const ExprPtr parent_extent = extent(it->parent);
      int64_t known = 0;
      if (!is_const(parent_extent, &known) || known % it->factor != 0)
        tc.in_range = tc.in_range && (parent < parent_extent);
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

namespace {

// The product of two counts, each following at most one of M and N (callers refuse the rest).
rt::SizedCount product(const rt::SizedCount& a, const rt::SizedCount& b) {
  return {a.constant * b.constant, a.m_divisor + b.m_divisor, a.n_divisor + b.n_divisor};
}

}  // namespace

std::map<std::string, rt::SizedCount> axis_counts(const Domain& dom, const KernelPlan& p) {
  std::map<std::string, rt::SizedCount> count;
  if (p.runtime_m) count["m"] = {1, 1, 0};
  if (p.runtime_n) count["n"] = {1, 0, 1};
  const auto constant = [&](const std::string& name) { return rt::SizedCount{uint64_t(dom.find(name)->extent), 0, 0}; };
  const auto of = [&](const std::string& name) { return count.count(name) ? count[name] : constant(name); };
  const auto refuse = [&](const std::string& axis) {
    throw_user_error("runtime-size", "tile axis '" + axis + "' splits or fuses a tile count the kernel learns at run "
                     "time in a way its launch cannot size (split the tile axes of m and n before merging them); or "
                     "compile M and N (`compiled=mnk` on the problem line, `--compiled-dims mnk`)");
  };
  for (const Relation& r : dom.relations()) {
    if (r.kind == Relation::Kind::Split) {
      if (!count.count(r.parent)) continue;  // a constant extent (the tile's own rows among them)
      const rt::SizedCount parent = count[r.parent];
      if (parent.constant != 1 || (parent.m_divisor != 0) == (parent.n_divisor != 0)) refuse(r.outer);
      const uint64_t f = static_cast<uint64_t>(r.factor);
      count[r.outer] = {1, parent.m_divisor * f, parent.n_divisor * f};  // ceil(ceil(x / a) / f) = ceil(x / (a f))
    } else if (count.count(r.outer) || count.count(r.inner)) {
      const rt::SizedCount a = of(r.outer), b = of(r.inner);
      if ((a.m_divisor && b.m_divisor) || (a.n_divisor && b.n_divisor)) refuse(r.fused);
      count[r.fused] = product(a, b);
    }
  }
  return count;
}

ExprPtr count_expr(const rt::SizedCount& c) {
  const auto tiles = [](const char* size, uint64_t divisor) {
    return divisor == 1 ? var(size) : ceil_div(var(size), imm(int64_t(divisor)));
  };
  ExprPtr e = imm(int64_t(c.constant));
  if (c.m_divisor) e = e * tiles("args.m", c.m_divisor);
  if (c.n_divisor) e = e * tiles("args.n", c.n_divisor);
  return narrow(e);  // a launch bounds it (RuntimeSizes::bounds); it meets the kernel's int indices
}

rt::SizedCount tile_counts(const KernelPlan& p, Root along) {
  const bool m = along == Root::M;
  const uint64_t tile = uint64_t(m ? p.tile_m : p.tile_n);
  if (m ? p.runtime_m : p.runtime_n) return {1, m ? tile : 0, m ? 0 : tile};
  return {uint64_t(ceil_div(m ? p.m : p.n, int64_t(tile))), 0, 0};
}

ExprPtr tile_count(const KernelPlan& p, Root along) { return count_expr(tile_counts(p, along)); }

rt::SizedCount slot_tile_counts(const KernelPlan& p, Root along) {
  const rt::SizedCount c = tile_counts(p, along);
  const bool paired = along == Root::M ? p.pairs_along_m() : p.multicast_a;
  const uint64_t cs = uint64_t(p.cluster_size);
  if (p.split_k == 1 || !p.persistent || !paired || cs <= 1) return c;  // reductions skip such a tile
  if (c.sized()) return {cs, c.m_divisor * cs, c.n_divisor * cs};  // ceil(x / (a cs)) * cs
  return {(c.constant + cs - 1) / cs * cs, 0, 0};
}

ExprPtr slot_tile_count(const KernelPlan& p, Root along) { return count_expr(slot_tile_counts(p, along)); }

rt::SizedCount workspace_slots(const KernelPlan& p) {
  return product(product(slot_tile_counts(p, Root::M), slot_tile_counts(p, Root::N)), {uint64_t(p.layouts.batch), 0, 0});
}

rt::RuntimeSizes runtime_sizes(const Schedule& s, const KernelPlan& p, int64_t max_clusters) {
  rt::RuntimeSizes r;
  r.m = p.runtime_m;
  r.n = p.runtime_n;
  r.compiled_m = p.runtime_m ? 0 : p.m;
  r.compiled_n = p.runtime_n ? 0 : p.n;
  r.compiled_k = p.k_per_unit() ? 0 : p.k;  // variable K, pointer arrays: any K
  if (!r.m && !r.n) return r;
  if (p.pointer_array) {
    // The units follow the groups' sizes, which only the device has: a full wave of CTAs, each
    // walking until the groups' tiles run out.
    r.persistent = true;
    r.max_clusters = uint64_t(std::max<int64_t>(1, max_clusters));
    r.units = {r.max_clusters, 0, 0};
    return r;
  }
  const Domain& dom = s.domain();
  const auto counts = axis_counts(dom, p);
  const auto of = [&](const Axis& a) {
    auto it = counts.find(a.name);
    return it != counts.end() ? it->second : rt::SizedCount{uint64_t(a.extent), 0, 0};
  };
  const uint64_t batch = uint64_t(p.layouts.batch), splits = uint64_t(p.split_k);
  if (const Axis* tile = dom.bound_to(Binding::Persistent)) {
    r.persistent = true;
    const Relation* persist = nullptr;
    for (const Relation& rel : dom.relations())
      if (rel.kind == Relation::Kind::Persist && rel.fused == tile->name) persist = &rel;
    GG_INTERNAL_CHECK(persist, "no persist relation for the persistent tile axis");
    rt::SizedCount along_m = of(*dom.find(persist->outer)), along_n = of(*dom.find(persist->inner));
    // A multicast group's CTAs take neighbouring tiles: its dimension counts groups of them, each
    // `cs` tiles of the loop (paired_tile_grid).
    const uint64_t cs = p.pairs_tiles() ? uint64_t(p.cluster_size) : 1;
    const auto group = [](rt::SizedCount& count, uint64_t ctas) {
      if (ctas <= 1) return;
      if (count.sized()) count = {1, count.m_divisor * ctas, count.n_divisor * ctas};
      else count.constant = (count.constant + ctas - 1) / ctas;
    };
    if (cs > 1) {
      group(along_m, uint64_t(p.cluster_m_ctas()));
      group(along_n, uint64_t(p.cluster_n_ctas()));
    }
    r.units = product(product(along_m, along_n), {cs * batch * splits, 0, 0});
    r.cluster_ctas = cs;
    r.max_clusters = uint64_t(std::max<int64_t>(1, max_clusters));
    r.bounds.push_back({r.units, uint64_t(INT32_MAX), "work units (the persistent loop's 32-bit index)"});
    if (persist->raster == Raster::Hilbert) {
      r.bounds.push_back({along_m, uint64_t(gg::dev::kHilbertMaxTiles), "tile groups along m in the Hilbert order"});
      r.bounds.push_back({along_n, uint64_t(gg::dev::kHilbertMaxTiles), "tile groups along n in the Hilbert order"});
    }
    if (persist->raster == Raster::Triangle)
      r.bounds.push_back({along_m, uint64_t(gg::dev::kHilbertMaxTiles), "tiles along m in the triangle order"});
  } else {
    static const char* const names[] = {"x", "y", "z"};
    const Binding bindings[] = {Binding::BlockX, Binding::BlockY, Binding::BlockZ};
    for (size_t d = 0; d < 3; ++d) {
      const Axis* a = dom.bound_to(bindings[d]);
      r.grid[d] = a ? of(*a) : rt::SizedCount{d == 2 ? batch * splits : 1, 0, 0};
      r.bounds.push_back({r.grid[d], d == 0 ? uint64_t(INT32_MAX) : 65535u,
                          std::string("CTAs along the grid's ") + names[d] + " dimension"});
    }
  }
  // A size's tiles the kernel has no index for (a tile axis bound to nothing stands for its first
  // tile; a size never split is one tile) bound the size to the tiles it computes.
  for (const auto& [root, runtime, name] : {std::tuple{Root::M, p.runtime_m, "m"}, {Root::N, p.runtime_n, "n"}}) {
    if (!runtime) continue;
    const std::string root_name = name;  // a copy: clang 14 lambdas cannot capture structured bindings
    if (std::none_of(dom.relations().begin(), dom.relations().end(),
                     [&](const Relation& rel) { return rel.kind == Relation::Kind::Split && rel.parent == root_name; }))
      r.bounds.push_back({tile_counts(p, root), 1, std::string("tiles along ") + name + " (the schedule never splits " +
                                                       name + " into tiles: one tile of " +
                                                       std::to_string(dom.tile_extent(root)) + ")"});
    for (const auto& leaf : dom.leaves()) {
      const Axis& a = dom.axis(leaf);
      if (a.level == Level::Tile && (a.roots & unsigned(root)) && a.binding == Binding::None)
        r.bounds.push_back({of(a), 1, "tiles of axis '" + leaf + "' (bound to nothing: the kernel computes its "
                                      "first tile only)"});
    }
  }
  if (p.split_k > 1) {
    r.workspace_slots = workspace_slots(p);
    r.workspace_slot_bytes = uint64_t(p.epilogue.workspace.splits) * uint64_t(p.epilogue.workspace.tile_floats()) * 4;
  }
  if (!p.epilogue.reductions.empty()) {  // each slot's partials and (with the 4 bytes a launch adds) two counters
    r.workspace_slots = workspace_slots(p);
    r.workspace_slot_bytes = uint64_t(p.epilogue.reduction_workspace.slot_floats()) * 4 + 4;
  }
  return r;
}

WorkUnits::WorkUnits(const Schedule& s, const KernelPlan& p) : p_(p) {
  if (p.persistent && p.pairs_tiles()) {
    cluster_ctas_ = p.cluster_size;
    ctas_m_ = p.cluster_m_ctas();
    ctas_n_ = p.cluster_n_ctas();
  }
  // split_k ... tail: the loop's units are the whole waves' tiles, then the last wave's tiles once
  // per split; a unit's tile is `work_tile` (see unit()), which the coordinates read.
  tail_ = p.split_k_tail;
  stream_ = p.split_k_stream;
  GG_INTERNAL_CHECK(!stream_ || (tail_ && p.cluster_size == 1), "split_k stream: a tail, one CTA per cluster");
  tile_axis_ = s.domain().bound_to(Binding::Persistent);
  GG_INTERNAL_CHECK(!tail_ || tile_axis_, "split_k tail needs the persistent tile loop");
  std::map<std::string, ExprPtr> extents = axis_extents(s.domain(), p);
  // Groups under a persistent loop (masked, contiguous): the loop walks the groups' m tiles in use
  // only, one group after another (walk_tiles of them, a kernel let summing the array), as one
  // virtual matrix whose m tile a unit maps back to its group (unit()): no unit is skipped, so
  // the units spread evenly over the grid however the groups are filled.
  // Pointer-array groups: the loop walks every group's tiles, one group after another; a unit's
  // tile within its group (group_tile) takes the schedule's tile order over the group's own m and
  // n tile counts.
  walk_groups_ = (p.masked || p.contiguous || p.pointer_array) && tile_axis_;
  GG_INTERNAL_CHECK(!(p.contiguous || p.pointer_array) || walk_groups_,
                    "contiguous and pointer-array groups need the persistent walk (plan_kernel refuses)");
  if (walk_groups_)
    for (const Relation& r : s.domain().relations()) {
      if (r.kind != Relation::Kind::Split) continue;
      if (r.parent == "m") extents[r.outer] = var(p.pointer_array ? "group_m_tiles" : "walk_tiles");
      if (r.parent == "n" && p.pointer_array) extents[r.outer] = var("group_n_tiles");
    }
  const TileCoordinates tc = tile_coordinates(s.domain(), extents, ctas_m_, ctas_n_,
                                              walk_groups_ ? 1 : p.layouts.batch, tail_ ? 1 : p.split_k,
                                              tail_ ? "work_tile" : p.pointer_array ? "group_tile" : "tile");
  groups_per_matrix_ = tc.groups_per_matrix;
  grid_unit_.m_tile = tc.m_tile;
  grid_unit_.n_tile = tc.n_tile;
  grid_unit_.batch = tc.batch;
  grid_unit_.split = tail_ ? var("split") : tc.split;
  grid_unit_.in_range = tc.in_range;
  masked_ = p.masked && !walk_groups_;  // a grid of tiles skips a group's tiles past its rows
  symmetric_ = p.epilogue.commit == EpiloguePlan::Commit::Symmetric;  // and a symmetric one those below the diagonal
  dealt_first_ = tc.dealt_first;
  // The pipeline's running count skips no unit's k tiles, so no unit may be skipped by a guard
  // (but a masked group's, whose unit runs no k tiles at all).
  if (tile_axis_ && !is_const(tc.in_range))
    throw_user_error("not-lowered", "a persistent tile loop over tile axes split with a tail is recorded and "
                     "checked, but this code generator does not lower it yet; split m and n so the tile axes divide");
}

ExprPtr WorkUnits::all_tiles() const {
  if (p_.pointer_array) return var("walk_tiles");  // every group's tiles
  return walk_groups_ ? groups_per_matrix_ : groups_per_matrix_ * imm(p_.layouts.batch);
}

ExprPtr WorkUnits::first() const {
  return cluster_ctas_ > 1 ? var("blockIdx.x") / imm(cluster_ctas_) : var("blockIdx.x");
}
ExprPtr WorkUnits::stride() const {
  return cluster_ctas_ > 1 ? var("gridDim.x") / imm(cluster_ctas_) : var("gridDim.x");
}
ExprPtr WorkUnits::end() const { return tail_ ? var("units_end") : all_tiles() * imm(p_.split_k); }

std::vector<StmtPtr> WorkUnits::kernel_lets() const {
  std::vector<StmtPtr> lets;
  if (walk_groups_) {
    lets.push_back(comment(group_kind() + " groups: the loop walks the " +
                           (p_.pointer_array ? "tiles" : "m tiles in use") + " of every group, one group after another"));
    lets.push_back(mutable_let("walk_tiles", imm(0)));
    lets.push_back(for_loop("scan", imm(0), imm(p_.layouts.batch),
                            assign("walk_tiles", var("walk_tiles") + group_tiles(var("scan"))),
                            p_.pointer_array ? "the tiles of every group" : "the m tiles in use of every group"));
    // The search cursor: the group of this thread's last unit and the walk's first (m) tile of it.
    // A thread's units mostly move forward through the walk, so each search starts there.
    lets.push_back(mutable_let("unit_group", imm(0)));
    lets.push_back(mutable_let("group_first", imm(0)));
    if (p_.pointer_array) lets.push_back(mutable_let("acquired_group", imm(-1)));  // whose maps this thread acquired
  }
  // A 1-D cluster along x: a CTA's rank in it is its block index modulo the cluster size.
  if (p_.pairs_tiles()) lets.push_back(let("cta_rank", var("blockIdx.x") % imm(p_.cluster_size)));
  if (p_.cluster_2d()) {  // its m tile's place among the X CTAs sharing B, its n tile's among the Y sharing A
    lets.push_back(let("cta_rank_m", var("cta_rank") % imm(p_.cluster.x)));
    lets.push_back(let("cta_rank_n", var("cta_rank") / imm(p_.cluster.x)));
  }
  // Split-K: each split loads ceil(k tiles / splits) of them; the last split's tiles past K are
  // zero-filled like any edge, so every split runs as many.
  if (!p_.k_loop.empty() && tail_) {  // k_tiles is each unit's (unit())
    lets.push_back(let("k_tiles_all", imm(ceil_div(p_.k, p_.tile_k))));  // K is compiled
    if (!stream_) lets.push_back(let("k_share", ceil_div(var("k_tiles_all"), imm(p_.split_k))));
  } else if (p_.k_per_unit()) {
    // each unit's k tiles are its group's (unit())
  } else if (!p_.k_loop.empty()) {
    // K is compiled: a dense problem's constant trip count lets ptxas unroll its FP8 k loop without
    // a remainder (expand_circular_buffer); over groups ptxas then spills the FP8 consumer (a
    // contiguous group's at 56 k tiles: 52 bytes), so they read it from args.k.
    ExprPtr k_tiles = p_.k_tiles_constant() ? imm(ceil_div(p_.k, p_.tile_k)) : ceil_div(var("args.k"), imm(p_.tile_k));
    lets.push_back(let(skips() ? "k_tiles_each" : "k_tiles", p_.split_k > 1 ? ceil_div(k_tiles, imm(p_.split_k)) : k_tiles));
  } else if (persistent()) {
    lets.push_back(let(skips() ? "k_tiles_each" : "k_tiles", imm(1)));
  }
  // split_k tail: the tile groups of whole waves of the grid, and where the split units end.
  // Rounded to whole waves at run time, from the grid the kernel runs with.
  if (tail_) {
    lets.push_back(let("whole_tiles", all_tiles() / stride() * stride()));
    if (!stream_) {
      lets.push_back(let("units_end", var("whole_tiles") + (all_tiles() - var("whole_tiles")) * imm(p_.split_k)));
    } else {
      // Stream-K (StreamKDeal): the tail's k tiles as one run, tile after tile, in even contiguous
      // ranges over sk_ctas CTAs; CTA c's j-th unit past the whole waves is the j-th tile its range
      // touches, so the loop runs sk_segments units per CTA there.
      lets.push_back(let("sk_tiles", all_tiles() - var("whole_tiles")));
      lets.push_back(let("sk_iters", var("sk_tiles") * var("k_tiles_all")));
      lets.push_back(let("sk_ctas", max(min(stride(), var("sk_tiles") * imm(p_.split_k)), imm(1))));
      lets.push_back(let("sk_segments",
                         ceil_div(ceil_div(var("sk_iters"), var("sk_ctas")), var("k_tiles_all")) + imm(1)));
      lets.push_back(let("units_end", var("whole_tiles") + (var("sk_tiles") >= imm(1)) * stride() * var("sk_segments")));
    }
  }
  return lets;
}

WorkUnitExprs WorkUnits::unit() const {
  WorkUnitExprs u = grid_unit_;
  u.k_tiles = p_.k_loop.empty() && !persistent() ? imm(1) : var("k_tiles");
  if (u.split) u.k_first = var("split") * var(tail_ ? "k_share" : skips() ? "k_tiles_each" : "k_tiles");
  if (walk_groups_) {
    // The unit's virtual m tile back to its group and the group's own m tile: from the cursor,
    // back over the groups past it (a tile order may revisit earlier m tiles), then forward over
    // the groups before it (an empty group is passed over).
    const ExprPtr groups = imm(p_.layouts.batch);
    auto back = block({assign("unit_group", var("unit_group") - imm(1)),
                       assign("group_first", var("group_first") - group_tiles(var("unit_group")))});
    auto forward = block({assign("group_first", var("group_first") + group_tiles(var("scan"))),
                          assign("unit_group", var("scan") + imm(1))});
    // Masked and contiguous groups walk m tiles (a unit's n tile is the loop's); pointer-array
    // groups walk whole tiles.
    const std::string walked = p_.pointer_array ? "tile" : "virtual_m";
    u.lets = {comment(group_kind() + " groups: the group of this unit's " + (p_.pointer_array ? "tile" : "m tile") +
                      ", and its first tile in the walk")};
    if (!p_.pointer_array) u.lets.push_back(let("virtual_m", grid_unit_.m_tile));
    u.lets.push_back(search_loop("back", imm(0), groups, var(walked) < var("group_first"), back,
                                 std::string("back to the group this unit's ") +
                                     (p_.pointer_array ? "tile" : "m tile") + " is in or after"));
    u.lets.push_back(search_loop("scan", var("unit_group"), groups,
                                 var(walked) >= var("group_first") + group_tiles(var("scan")), forward,
                                 "forward past the groups before this unit's"));
    u.batch = var("unit_group");
    if (p_.pointer_array) {
      // The unit's tile in its group's own grid of tiles, and its group's k tiles.
      u.lets.push_back(let("group_tile", var("tile") - var("group_first")));
      u.lets.push_back(let("group_m_tiles", ceil_div(group_size(var("unit_group"), 0), imm(p_.tile_m))));
      u.lets.push_back(let("group_n_tiles", ceil_div(group_size(var("unit_group"), 1), imm(p_.tile_n))));
      u.lets.push_back(let("k_tiles", ceil_div(group_size(var("unit_group"), 2), imm(p_.tile_k))));
      // Once per group a thread's units enter (the fence waits for the maps to reach the
      // tensor-map proxy; units of one group follow each other in the walk).
      auto acquire = std::make_shared<AcquireGroupMaps>();
      acquire->group = var("unit_group");
      u.acquire_maps = if_then((var("unit_group") == var("acquired_group")) == imm(0),
                               block({acquire, assign("acquired_group", var("unit_group"))}));
    } else {
      u.m_tile = var("virtual_m") - var("group_first");
    }
    if (p_.contiguous) {
      // The group's rows of A and D: the unit's tile starts at the group's first row and its
      // store stops at the group's last.
      u.lets.push_back(let("group_row0", group_row(var("unit_group"), false)));
      u.lets.push_back(let("group_end", group_row(var("unit_group"), true)));
      u.m_first = var("group_row0") + var("m_tile") * imm(p_.tile_m);
      u.row_end = var("group_end");
    }
  }
  if (p_.varlen_k) {
    // The unit's group's K range: its loads start at the range's first row of A and B and read
    // rows past its end as zero; a group with no K runs no k tiles and stores zeros.
    const ExprPtr group = u.batch ? u.batch : imm(0);
    u.lets.push_back(comment("variable-K groups: this unit's group's rows of K in A and B"));
    u.lets.push_back(let("k_row0", k_offset(group, false)));
    u.lets.push_back(let("k_end", k_offset(group, true)));
    u.lets.push_back(let("k_tiles", ceil_div(var("k_end") - var("k_row0"), imm(p_.tile_k))));
    u.k_row0 = var("k_row0");
    u.k_end = var("k_end");
  }
  if (skips()) {
    // A masked group's tile past its rows in use, or a symmetric product's tile below the diagonal,
    // computes nothing and runs no k tiles, so the pipeline's running count stays in step between
    // the roles.
    u.lets = {comment(masked_ ? "masked groups: a tile past its group's rows in use (args.group_rows) computes nothing"
                              : "symmetric: a tile below the diagonal computes nothing (its mirror above it stores it)"),
              let(computes_name(), unit_computes(var("tile")))};
    const ExprPtr computes = var(computes_name());
    if (!p_.k_loop.empty() || persistent()) u.lets.push_back(let("k_tiles", var("k_tiles_each") * computes));
    u.in_range = u.in_range && computes;
    u.computes = computes;
  }
  if (!tail_) return u;
  // A whole wave's unit runs all of K; a unit past them is tile work_tile's share `split`.
  // Written without negative operands: a whole wave's unit has past = 0, so its split is 0.
  const ExprPtr last_wave = all_tiles() - var("whole_tiles");
  const ExprPtr divisor = last_wave + (last_wave == imm(0));  // never 0, also where no wave is partial
  const ExprPtr tile = var("tile");
  u.lets = {comment("split_k tail: whole waves' tiles run all of K; the last wave's tiles are split"),
            let("in_tail", tile >= var("whole_tiles")),
            let("past", tile - min(tile, var("whole_tiles"))),
            let("work_tile", min(tile, var("whole_tiles")) + var("past") % divisor),
            let("split", var("past") / divisor),
            let("k_tiles", tail_k_tiles(var("in_tail")))};
  u.handed_on = var("in_tail");
  if (stream_) stream_unit(u);
  return u;
}

void WorkUnits::stream_unit(WorkUnitExprs& u) const {
  // Past the whole waves, unit `past` is CTA sk_cta's sk_seg-th tile of its range [range_begin,
  // range_end) of the tail's run of k tiles: tile sk_tile, its k tiles seg_begin..seg_end of the
  // run. The tile's pieces come from the CTAs whose ranges hold its first and last k tile
  // (StreamKDeal::cta_of), in range order: the unit's piece is its CTA's place among them. A unit
  // past its CTA's range (or of a CTA the deal leaves out) computes nothing and runs no k tiles.
  const ExprPtr kt = var("k_tiles_all"), iters = max(var("sk_iters"), imm(1)), ctas = var("sk_ctas");
  // 64-bit where a CTA index multiplies the run's k tiles (a long K over many tail tiles passes 2^31).
  const auto cta_of = [&](const ExprPtr& x) { return narrow(stream_k_cta_of<ExprPtr>(wide(x), iters, ctas, imm(1))); };
  const auto begin = [&](const ExprPtr& cta) { return narrow(stream_k_begin<ExprPtr>(wide(cta), var("sk_iters"), ctas)); };
  const ExprPtr tile = var("tile"), in_tail = var("in_tail");
  u.lets = {comment("split_k stream: whole waves' tiles run all of K; the rest's k tiles are dealt to the CTAs in "
                    "contiguous ranges (stream-K), a tile's pieces meeting in the workspace"),
            let("in_tail", tile >= var("whole_tiles")),
            let("past", tile - min(tile, var("whole_tiles"))),
            let("sk_cta", var("past") % stride()),
            let("sk_seg", var("past") / stride()),
            let("range_begin", begin(var("sk_cta"))),
            let("range_end", begin(var("sk_cta") + imm(1))),
            let("sk_tile", var("range_begin") / kt + var("sk_seg")),
            let("seg_begin", max(var("range_begin"), var("sk_tile") * kt)),
            let("seg_end", min(var("range_end"), (var("sk_tile") + imm(1)) * kt)),
            let("computes", (in_tail == imm(0)) + in_tail * ((var("sk_cta") < ctas) && (var("seg_begin") < var("seg_end")))),
            let("work_tile", min(tile, var("whole_tiles")) + in_tail * var("computes") * var("sk_tile")),
            let("first_piece", cta_of(var("sk_tile") * kt)),
            let("pieces", (in_tail == imm(0)) + in_tail * (cta_of((var("sk_tile") + imm(1)) * kt - imm(1)) -
                                                           var("first_piece") + imm(1))),
            let("k_tiles", (in_tail == imm(0)) * kt + in_tail * var("computes") * (var("seg_end") - var("seg_begin")))};
  u.k_first = in_tail * var("computes") * (var("seg_begin") - var("sk_tile") * kt);
  u.split = in_tail * var("computes") * (var("sk_cta") - var("first_piece"));  // bound by the computing roles
  u.computes = var("computes");
  u.in_range = u.in_range && var("computes");
  u.pieces = var("pieces");
  u.handed_on = in_tail * (var("pieces") >= imm(2));
}

int stream_k_max_pieces(int64_t k_tiles, int splits) {
  const int64_t least = std::max<int64_t>(1, k_tiles / splits);  // the shortest range's k tiles
  return static_cast<int>(std::min<int64_t>(k_tiles, (k_tiles + least - 1) / least + 1));
}

StreamKDeal::StreamKDeal(int64_t tiles_, int64_t k_tiles_, int64_t grid, int splits)
    : tiles(tiles_), k_tiles(k_tiles_), ctas(std::max<int64_t>(1, std::min<int64_t>(grid, tiles_ * splits))) {}

int64_t StreamKDeal::segments_per_cta() const {
  const int64_t longest = (iterations() + ctas - 1) / ctas;
  return (longest + k_tiles - 1) / k_tiles + 1;
}

ExprPtr WorkUnits::k_tiles_of(const ExprPtr& index) const {
  GG_INTERNAL_CHECK(!stream_, "a dealt loop over stream-K units (plan_kernel refuses ping-pong with split_k)");
  if (skips()) return var("k_tiles_each") * unit_computes(index);
  if (p_.varlen_k) return varlen_k_tiles(index);
  return tail_ ? tail_k_tiles(index >= var("whole_tiles")) : var("k_tiles");
}

ExprPtr WorkUnits::group_size(const ExprPtr& group, int dim) const {
  const ExprPtr size = load("args.group_sizes", group * imm(3) + imm(dim));
  return (size >= imm(0)) * size;  // a negative size reads as 0 (the documented behaviour of a bad array)
}
ExprPtr WorkUnits::group_tiles(const ExprPtr& group) const {
  if (p_.pointer_array)
    return ceil_div(group_size(group, 0), imm(p_.tile_m)) * ceil_div(group_size(group, 1), imm(p_.tile_n));
  if (p_.contiguous) return ceil_div(group_row(group, true) - group_row(group, false), imm(p_.tile_m));
  // A count past M reads as M, a negative one as 0 (the documented behaviour of a bad array).
  const ExprPtr rows = load("args.group_rows", group);
  return ceil_div(min((rows >= imm(0)) * rows, narrow(var("args.m"))), imm(p_.tile_m));
}

ExprPtr WorkUnits::group_bound(const ExprPtr& group, bool end, const char* extent) const {
  // An offset outside 0..extent reads as the nearer end, and a group whose end comes before its
  // start is empty (the documented behaviour of a bad array): no group reaches past the matrix
  // or before its own start.
  const ExprPtr most = narrow(var(extent));
  const auto clamp = [&](const ExprPtr& at, const ExprPtr& lo) { return min(max(at, lo), most); };
  const ExprPtr start = clamp(load("args.group_offsets", group), imm(0));
  return end ? clamp(load("args.group_offsets", group + imm(1)), start) : start;
}

ExprPtr WorkUnits::group_row(const ExprPtr& group, bool end) const { return group_bound(group, end, "args.m"); }
ExprPtr WorkUnits::k_offset(const ExprPtr& group, bool end) const { return group_bound(group, end, "args.k"); }

ExprPtr WorkUnits::varlen_k_tiles(const ExprPtr& index) const {
  // Clamped: a dealt loop asks about units past the loop's end too (and multiplies by 0).
  const ExprPtr group =
      grid_unit_.batch ? min(substitute(grid_unit_.batch, "tile", index), imm(p_.layouts.batch - 1)) : imm(0);
  return ceil_div(k_offset(group, true) - k_offset(group, false), imm(p_.tile_k));
}

std::string WorkUnits::group_kind() const {
  return p_.contiguous ? "contiguous" : p_.pointer_array ? "pointer-array" : "masked";
}

ExprPtr WorkUnits::unit_computes(const ExprPtr& tile) const {
  if (masked_) return in_group(tile);
  // A symmetric tile computes where one of its rows lies on or above the diagonal in one of its
  // columns: its first row before its last column's end (tiles as wide as they are tall or wider).
  // The triangle order deals those tiles first, so there it is a comparison with their count, not
  // a walk of the order to the tile's coordinates (a unit asks for every unit it deals).
  if (dealt_first_) return substitute(dealt_first_, "tile", tile);
  const ExprPtr m_tile = substitute(grid_unit_.m_tile, "tile", tile), n_tile = substitute(grid_unit_.n_tile, "tile", tile);
  return m_tile * imm(p_.tile_m) < (n_tile + imm(1)) * imm(p_.tile_n);
}

ExprPtr WorkUnits::in_group(const ExprPtr& tile) const {
  const ExprPtr m_tile = substitute(grid_unit_.m_tile, "tile", tile);
  // Clamped: a dealt loop asks about units past the loop's end too (and multiplies by 0), and
  // the array has one element per matrix.
  const ExprPtr batch = grid_unit_.batch ? min(substitute(grid_unit_.batch, "tile", tile), imm(p_.layouts.batch - 1))
                                         : imm(0);
  return m_tile * imm(p_.tile_m) < load("args.group_rows", batch);
}

ExprPtr WorkUnits::tail_k_tiles(const ExprPtr& in_tail) const {
  return var("k_tiles_all") - in_tail * (var("k_tiles_all") - var("k_share"));
}

std::string WorkUnits::describe(bool dealt, int consumers) const {
  const int64_t cs = cluster_ctas_;
  int64_t groups = 0;
  const bool known = is_const(groups_per_matrix_, &groups);
  const int64_t overhang = known ? groups * cs - tile_axis_->extent : 0;
  const std::string tiles = known ? std::to_string(tile_axis_->extent) + " tiles"
                            : p_.pointer_array ? "tiles counted from each group's M and N at run time"
                                  : "tiles counted from " + std::string(p_.runtime_m ? "M" : "") +
                                        (p_.runtime_m && p_.runtime_n ? " and " : "") + (p_.runtime_n ? "N" : "") +
                                        " at run time";
  return "persistent tile loop over '" + tile_axis_->name + "' (" + tiles +
         (grid_unit_.batch ? " of each of " + std::to_string(p_.layouts.batch) + " matrices" : "") +
         (masked_ ? ", each matrix a masked group: a tile past its group's rows in use is skipped" : "") +
         (symmetric_ ? ", symmetric: a tile below the diagonal is skipped" : "") +
         (walk_groups_ ? ", the " + group_kind() + " groups' " + (p_.pointer_array ? "tiles" : "m tiles in use only") +
                             ", one group after another"
                       : "") +
         (stream_ ? ", then the tiles past the last whole wave stream-K: their k tiles in even contiguous ranges over "
                    "at most " + std::to_string(p_.split_k) + " CTAs a tile, a tile's pieces (at most " +
                    std::to_string(p_.stream_pieces) + ") meeting in the workspace"
          : tail_ ? ", then the tiles past the last whole wave in " + std::to_string(p_.split_k) + " k splits"
          : grid_unit_.split ? " x " + std::to_string(p_.split_k) + " k splits" : "") +
         ", grid-strided" +
         (cs > 1 ? std::string(", in groups of ") +
                       (ctas_m_ > 1 && ctas_n_ > 1
                            ? std::to_string(ctas_m_) + " x " + std::to_string(ctas_n_) + " neighbouring m and n"
                            : std::to_string(cs) + " neighbouring " + (ctas_m_ > 1 ? "m" : "n")) +
                       " tiles, one per CTA of the cluster" +
                       (overhang > 0 ? " (" + std::to_string(overhang) + " tiles past D's edge complete the "
                                       "last groups)" : std::string())
                 : std::string()) +
         (dealt ? ", dealt in turn to " + std::to_string(consumers) + " consumer warpgroups" : std::string()) + ")";
}

std::vector<int64_t> group_offsets_or_even(const std::vector<int64_t>& given, int64_t groups, int64_t extent) {
  std::vector<int64_t> offsets;
  for (int64_t g = 0; g <= groups; ++g)
    offsets.push_back(g < static_cast<int64_t>(given.size()) ? given[size_t(g)] : g * extent / groups);
  return offsets;
}

std::pair<int64_t, int64_t> group_span(const std::vector<int64_t>& offsets, int64_t g, int64_t extent) {
  const int64_t start = std::clamp<int64_t>(offsets[size_t(g)], 0, extent);
  return {start, std::clamp<int64_t>(offsets[size_t(g) + 1], start, extent)};
}

std::vector<WorkUnit> cta_work_units(const Schedule& s, const KernelPlan& p, std::array<int64_t, 3> block,
                                     std::array<int64_t, 3> grid, int64_t k, int64_t m, int64_t n,
                                     const std::vector<int64_t>& group_sizes) {
  const WorkUnits units(s, p);
  std::map<std::string, int64_t> vars = {{"blockIdx.x", block[0]}, {"blockIdx.y", block[1]},
                                         {"blockIdx.z", block[2]}, {"gridDim.x", grid[0]},
                                         {"gridDim.y", grid[1]}, {"gridDim.z", grid[2]},
                                         {"args.m", m ? m : p.m}, {"args.n", n ? n : p.n}, {"args.k", k}};
  for (int64_t b = 0; p.masked && b < p.layouts.batch; ++b)  // every masked group full
    vars[element_name("args.group_rows", b)] = m ? m : p.m;
  for (int64_t g = 0; p.pointer_array && g < p.layouts.batch; ++g) {  // the given sizes, else the planned ones
    const std::array<int64_t, 3> planned = {m ? m : p.m, n ? n : p.n, k};
    for (size_t d = 0; d < 3; ++d)
      vars[element_name("args.group_sizes", 3 * g + int64_t(d))] =
          size_t(3 * g) + d < group_sizes.size() ? group_sizes[size_t(3 * g) + d] : planned[d];
  }
  if (p.contiguous || p.varlen_k) {  // groups of equal rows (contiguous) or K (variable K)
    const std::vector<int64_t> offsets = group_offsets_or_even({}, p.layouts.batch, p.varlen_k ? k : m ? m : p.m);
    for (size_t g = 0; g < offsets.size(); ++g) vars[element_name("args.group_offsets", int64_t(g))] = offsets[g];
  }
  // The lets run as the kernel runs them: values, and the loops and branches over a masked
  // problem's group array (the walk's sums and searches) with the assignments they make.
  std::function<void(const StmtPtr&)> run = [&](const StmtPtr& stmt) {
    if (!stmt) return;
    if (auto l = as<Let>(stmt)) vars[l->name] = evaluate(l->value, vars);
    else if (auto a = as<Assign>(stmt)) vars[a->name] = evaluate(a->value, vars);
    else if (auto b = as<Block>(stmt)) {
      for (const StmtPtr& inner : b->body) run(inner);
    } else if (auto i = as<If>(stmt)) {
      run(evaluate(i->cond, vars) ? i->then_body : i->else_body);
    } else if (auto f = as<For>(stmt)) {
      const int64_t end = evaluate(f->end, vars), step = evaluate(f->step, vars);
      for (vars[f->var] = evaluate(f->begin, vars); vars[f->var] < end; vars[f->var] += step) {
        if (f->while_cond && !evaluate(f->while_cond, vars)) break;
        run(f->body);
      }
    }
  };
  const auto bind = [&](const std::vector<StmtPtr>& lets) {
    for (const StmtPtr& stmt : lets) run(stmt);
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
  const auto g = rt::launch_grid(launch, p.m, p.n);  // the planned problem's (pointer arrays: a full wave)
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
  // Units that run k tiles, where some compute nothing (a symmetric product's below the diagonal,
  // a masked group's past its rows): the balance that matters is theirs.
  int64_t total = 0, fewest = INT64_MAX, most = 0, computing = 0, fewest_computing = INT64_MAX, most_computing = 0;
  for (int64_t x = 0; x < grid[0]; ++x) {
    const std::vector<WorkUnit> mine = cta_work_units(s, p, {x, 0, 0}, grid, p.k);
    const auto n = static_cast<int64_t>(mine.size());
    const auto c = static_cast<int64_t>(std::count_if(mine.begin(), mine.end(), [](const WorkUnit& u) {
      return u.in_range && u.k_tiles > 0;
    }));
    total += n;
    fewest = std::min(fewest, n);
    most = std::max(most, n);
    computing += c;
    fewest_computing = std::min(fewest_computing, c);
    most_computing = std::max(most_computing, c);
  }
  const auto span = [](int64_t lo, int64_t hi) { return lo == hi ? std::to_string(hi) : std::to_string(lo) + " to " + std::to_string(hi); };
  const std::vector<WorkUnit> first = cta_work_units(s, p, {0, 0, 0}, grid, p.k);
  std::string out = "work units: " + std::to_string(total) + " over " + std::to_string(grid[0]) + " CTAs (" +
                    span(fewest, most) + " each" +
                    (computing < total && p.k > 0 ? "; " + std::to_string(computing) + " compute, " +
                                                        span(fewest_computing, most_computing) + " each"
                                                  : std::string()) +
                    "); CTA 0 runs ";
  for (size_t i = 0; i < first.size() && i < 3; ++i) out += (i ? ", " : "") + unit_text(first[i]);
  if (first.size() > 3) out += ", ...";
  return out + "\n";
}

}  // namespace gg

namespace gg {

std::string describe_runtime_sizes(const rt::LaunchSpec& launch) {
  const rt::RuntimeSizes& r = launch.sizes;
  // In the kernel's orientation; a swapped kernel's N is the caller's M.
  const auto name = [&](bool kernel_m) { return std::string((kernel_m != launch.swapped) ? "M" : "N"); };
  if (!r.m && !r.n)
    return "sizes: all compiled (a launch of any other M, N or K is refused; `--compiled-dims nk` reads M at run time)\n";
  const auto count = [&](const rt::SizedCount& c) {
    std::string t = std::to_string(c.constant);
    if (c.m_divisor) t += " x ceil(" + name(true) + "/" + std::to_string(c.m_divisor) + ")";
    if (c.n_divisor) t += " x ceil(" + name(false) + "/" + std::to_string(c.n_divisor) + ")";
    return t;
  };
  if (launch.pointer_array)
    return "sizes: each group's M, N and K read at run time (args.group_sizes) and its tensor maps written on the "
           "device (args.group_maps): one kernel serves every set of sizes and pointers; a launch runs the map builder, "
           "then a full wave of " + std::to_string(r.max_clusters * launch.cluster[0]) + " CTAs\n";
  std::string out = "sizes: ";
  if (r.m && r.n) out += name(true) + " and " + name(false);
  else out += name(r.m);
  out += " read at run time: one kernel serves every value; a launch sizes ";
  if (r.persistent)
    out += "its persistent grid from " + count(r.units) + " work units (at most " + std::to_string(r.max_clusters) +
           " cluster(s) of " + std::to_string(launch.cluster[0]) + " resident)";
  else
    out += "its grid as " + count(r.grid[0]) + " x " + count(r.grid[1]) + " x " + count(r.grid[2]);
  if (launch.workspace_bytes)
    out += std::string(", and ") + (launch.reduces_rows || launch.reduces_cols ? "the reductions'" : "split-K's") + " workspace as " +
           count(r.workspace_slots) + " slots of " +
           std::to_string(r.workspace_slot_bytes + 4) + " bytes";
  out += "\n";
  for (const rt::RuntimeSizes::Bound& b : r.bounds)
    if (b.count.sized() && b.most < uint64_t(INT32_MAX))
      out += "  bound: at most " + std::to_string(b.most) + " " + b.what + " (" + count(b.count) + ")\n";
  return out;
}

}  // namespace gg
