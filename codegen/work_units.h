#pragma once
// The tile scheduler's work units. A unit is what one trip of a CTA's tile loop computes: the
// output tile (its batch matrix and m and n tile), the k tiles it runs (the first and how many),
// its split-K share and whether it hands its partial sum on. Batches, split-K and split-K on the
// last wave are ways of producing units; build_loop_nests walks them and keeps the pipeline's
// running count across them, and cta_work_units enumerates, on the host, the units a CTA walks
// from the same expressions the kernel evaluates (explain, the tests).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <utility>

#include "codegen/kernel.h"
#include "dsl/schedule.h"

namespace gg {

// One unit as kernel-IR expressions, valid once `lets` are bound (in order, in the tile loop's
// body), of the unit index the persistent loop binds (`tile`), or of the block indices.
struct WorkUnitExprs {
  std::vector<kir::StmtPtr> lets;
  kir::ExprPtr m_tile, n_tile;
  kir::ExprPtr batch;     // the batch matrix (64-bit); nullptr: one matrix
  kir::ExprPtr split;     // the split-K share; nullptr without split-K
  kir::ExprPtr k_first;   // the share's first k tile, of the `split` the loop binds; nullptr: k tile 0
  kir::ExprPtr k_tiles;   // the k tiles the unit runs
  kir::ExprPtr handed_on; // split-K on the last wave: whether the unit's tile is split; nullptr: as split_k says
  kir::ExprPtr pieces;    // stream-K: the CTAs sharing the unit's tile (`split` is its piece); nullptr: split_k
  kir::ExprPtr in_range;  // false for a grid tile past a split's tail (tile axes that do not divide)
  // 1 when the unit computes, 0 when it is skipped whole (a masked group's tile past its rows in
  // use: no loads, no MMAs, no store, no k tiles through the pipeline); imm(1) when none is.
  kir::ExprPtr computes = kir::imm(1);
  // Contiguous groups: the unit's first row of A and D (its group's first row plus the rows of the
  // m_tile the loop binds), and the row its store stops before (its group's end); nullptr:
  // m_tile * tile_m, and M.
  kir::ExprPtr m_first, row_end;
  // Variable-K groups: the unit's first row of K in A and B and the row its loads stop before
  // (its group's K range); nullptr: k tile * tile_k, and K.
  kir::ExprPtr k_row0, k_end;
  // Pointer-array groups: the unit's group's tensor maps acquired, once per group a thread's units
  // enter; for the roles that load (a store acquires its own map before it, lower_epilogue).
  kir::StmtPtr acquire_maps;
};

class WorkUnits {
 public:
  WorkUnits(const Schedule& s, const KernelPlan& p);

  // A persistent tile loop walks the units (else each CTA of the grid computes one).
  bool persistent() const { return tile_axis_ != nullptr; }
  // Once per kernel, before the roles: the k tile counts and, for split-K on the last wave, where
  // the whole waves end and the split units begin.
  std::vector<kir::StmtPtr> kernel_lets() const;
  // The persistent loop's units (in cluster groups): this CTA's first, the grid's stride, the end.
  kir::ExprPtr first() const;
  kir::ExprPtr stride() const;
  kir::ExprPtr end() const;
  // The unit the loop variable `tile` (or, without a persistent loop, the block) stands for.
  WorkUnitExprs unit() const;
  // The k tiles unit `index` runs, as one expression with no lets (for the units a warpgroup of a
  // dealt loop passes over): `k_tiles`, or with split-K on the last wave all of K or a share.
  kir::ExprPtr k_tiles_of(const kir::ExprPtr& index) const;
  // "persistent tile loop over 'mn' (64 tiles ..., grid-strided ...)": what the loop walks.
  std::string describe(bool dealt, int consumers) const;

 private:
  kir::ExprPtr all_tiles() const;  // the loop's tile groups over every matrix of the batch, before splits
  // split_k tail: all of K for a whole wave's unit, a share for one `in_tail`.
  kir::ExprPtr tail_k_tiles(const kir::ExprPtr& in_tail) const;

  const KernelPlan& p_;
  const Axis* tile_axis_ = nullptr;
  bool tail_ = false;
  bool stream_ = false;  // split_k ... stream: the tail's k tiles in contiguous ranges (stream_unit())
  // The stream-K unit's lets and fields on top of the tail's (unit()).
  void stream_unit(WorkUnitExprs& u) const;
  bool masked_ = false;       // a grid of tiles over masked groups: units past a group's rows skip
  bool walk_groups_ = false;  // a persistent loop over groups: it walks their tiles in use only
  // The tiles the walk takes of group `group`: masked, its m tiles in use (its rows, at most M);
  // contiguous, the m tiles of its rows between its offsets; pointer arrays, all its tiles.
  kir::ExprPtr group_tiles(const kir::ExprPtr& group) const;
  // Contiguous: group `group`'s first row of A and D, or (`end`) the row after its last.
  kir::ExprPtr group_row(const kir::ExprPtr& group, bool end) const;
  // Group `group`'s offset (or, `end`, the next one) of args.group_offsets, clamped to 0..extent.
  kir::ExprPtr group_bound(const kir::ExprPtr& group, bool end, const char* extent) const;
  std::string group_kind() const;  // "masked", "contiguous", "pointer-array"
  // Pointer arrays: group `group`'s M (dim 0), N (1) or K (2) of args.group_sizes, negative as 0.
  kir::ExprPtr group_size(const kir::ExprPtr& group, int dim) const;
  // Variable K: the k tiles of the group of unit `index` (its batch coordinate), and group
  // `group`'s first K row or (`end`) the row after its last.
  kir::ExprPtr varlen_k_tiles(const kir::ExprPtr& index) const;
  kir::ExprPtr k_offset(const kir::ExprPtr& group, bool end) const;
  // masked: whether the unit of index `tile` computes (its m tile starts inside its group's rows)
  kir::ExprPtr in_group(const kir::ExprPtr& tile) const;
  // Units that compute nothing: a masked group's past its rows, a symmetric product's below the
  // diagonal; whether the unit of index `tile` computes.
  bool skips() const { return masked_ || symmetric_; }
  kir::ExprPtr unit_computes(const kir::ExprPtr& tile) const;
  const char* computes_name() const { return masked_ ? "in_group" : "on_or_above_diagonal"; }  // its let
  bool symmetric_ = false;
  kir::ExprPtr dealt_first_;   // the triangle order's test that a unit is among the tiles it deals first
  int cluster_ctas_ = 1;       // CTAs of a multicast group taking neighbouring tiles
  int ctas_m_ = 1, ctas_n_ = 1;  // of them along m (sharing B) and along n (sharing A)
  kir::ExprPtr groups_per_matrix_;  // a constant unless a size is read at run time
  WorkUnitExprs grid_unit_;    // the coordinates before the index is named (see unit())
};

// Stream-K (split_k S stream): the most CTAs whose k ranges meet in one tile of `k_tiles` k tiles
// when the tail's k tiles are dealt to at most S CTAs per tile (each range then holds at least
// floor(k_tiles / S) of them): the workspace's pieces per tile.
int stream_k_max_pieces(int64_t k_tiles, int splits);
// The stream-K deal's arithmetic, written once for host integers and kernel-IR expressions (the
// kernel's lets, WorkUnits::stream_unit): over a run of `iters` k tiles dealt to `ctas` CTAs, CTA
// c's range begins at k tile stream_k_begin(c) and ends where c + 1's begins; k tile x lies in CTA
// stream_k_cta_of(x)'s range. `one` is 1 in T.
template <class T>
T stream_k_begin(const T& cta, const T& iters, const T& ctas) {
  return cta * iters / ctas;
}
template <class T>
T stream_k_cta_of(const T& x, const T& iters, const T& ctas, const T& one) {
  return ((x + one) * ctas + iters - one) / iters - one;
}
// The deal on the host: `tiles` tail tiles of `k_tiles` k tiles each over min(grid, splits x tiles)
// CTAs.
struct StreamKDeal {
  int64_t tiles = 0, k_tiles = 1, ctas = 1;
  StreamKDeal(int64_t tiles, int64_t k_tiles, int64_t grid, int splits);
  int64_t iterations() const { return tiles * k_tiles; }
  int64_t begin(int64_t cta) const { return stream_k_begin<int64_t>(cta, iterations(), ctas); }
  int64_t cta_of(int64_t x) const { return stream_k_cta_of<int64_t>(x, iterations(), ctas, 1); }
  int64_t segments_per_cta() const;  // the most tiles one CTA's range touches
};

// The tile-level axes whose extents follow a size the kernel reads at run time (KernelPlan::
// runtime_m, runtime_n), as counts of M and N: the one model of them that the kernel's index math
// (count_expr) and the launch's grid (RuntimeSizes) both read. CompileError `runtime-size` for a
// split of a fused run-time count (its launch could not size it).
std::map<std::string, rt::SizedCount> axis_counts(const Domain& dom, const KernelPlan& p);
// The count as kernel IR: constant * ceil_div(args.m, m_divisor) * ceil_div(args.n, n_divisor).
kir::ExprPtr count_expr(const rt::SizedCount& c);
// The output's tiles along m or n: a constant, or a count of M or N read at run time; and as the
// kernel counts them (count_expr of it).
rt::SizedCount tile_counts(const KernelPlan& p, Root along);
kir::ExprPtr tile_count(const KernelPlan& p, Root along);
// The tiles a workspace has slots for along a dimension: a multicast group's CTAs take
// neighbouring tiles, so under split-K the last group's tile past D's edge along the paired
// dimension (it loads zeros and stores nothing, but takes part in the hand-off) has a slot too.
// (The reductions' epilogue skips such a tile.)
rt::SizedCount slot_tile_counts(const KernelPlan& p, Root along);
kir::ExprPtr slot_tile_count(const KernelPlan& p, Root along);
// Split-K's workspace slots: one per output tile of every matrix of the batch.
rt::SizedCount workspace_slots(const KernelPlan& p);
// How a launch sizes a kernel that reads M or N at run time: its grid (or persistent units, with
// at most `max_clusters` clusters resident), its split-K workspace, the counts it bounds; and in
// every case the sizes it has compiled in, which each launch must match.
rt::RuntimeSizes runtime_sizes(const Schedule& s, const KernelPlan& p, int64_t max_clusters);

// "work units: ..." for explain: how many units the grid's CTAs walk and CTA 0's first ones, as
// cta_work_units evaluates them for the problem's K on the kernel's grid.
std::string describe_work_units(const Schedule& s, const KernelPlan& p, const rt::LaunchSpec& launch);

// "sizes: M read at run time ...": which sizes the kernel reads at run time, how a launch sizes
// its grid and workspace from them, and the bounds it checks; "sizes: all compiled ..." otherwise.
std::string describe_runtime_sizes(const rt::LaunchSpec& launch);

// Contiguous and variable-K groups on the host: the batch + 1 offsets of args.group_offsets that
// `given` lists, or (empty) `extent` (M or K) split evenly among `groups`; and group g's span
// [start, end) of them as the kernel reads it (WorkUnits::group_bound: clamped to 0..extent, a
// group ending before its start empty).
std::vector<int64_t> group_offsets_or_even(const std::vector<int64_t>& given, int64_t groups, int64_t extent);
std::pair<int64_t, int64_t> group_span(const std::vector<int64_t>& offsets, int64_t g, int64_t extent);

// A unit on the host: the values the kernel's expressions take.
struct WorkUnit {
  int64_t index = 0, batch = 0, m_tile = 0, n_tile = 0, split = 0, k_first = 0, k_tiles = 0;
  bool handed_on = false;  // split-K: the unit stores a partial sum (and takes the tile's ticket)
  bool in_range = true;
};
// The units the CTA at `block` (blockIdx) of a grid of `grid` CTAs walks, in order, for a K of
// `k` (the kernel reads it from its arguments) and an M and N (0: the plan's; a kernel that reads
// them at run time serves others), every masked group full; pointer-array groups of
// `group_sizes` (M, N, K per group; empty: every group M x N x k). Evaluates WorkUnits' expressions.
std::vector<WorkUnit> cta_work_units(const Schedule& s, const KernelPlan& p, std::array<int64_t, 3> block,
                                     std::array<int64_t, 3> grid, int64_t k, int64_t m = 0, int64_t n = 0,
                                     const std::vector<int64_t>& group_sizes = {});

}  // namespace gg
