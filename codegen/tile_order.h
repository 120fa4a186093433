#pragma once
// The persistent tile order as kernel-IR index math: linear tile index -> (m tile, n tile),
// row- or column-major in bands of `group` tiles (Triton's GROUP_M), or along a generalized
// Hilbert curve (calls of runtime/device/tile_order.h's helpers; `group` ignored). The index-math check's
// persistent_tile is the reference this must match (tests/codegen/tile_order_test.cpp).
#include <cstdint>

#include "codegen/expr.h"
#include "dsl/domain.h"

namespace gg {

struct TileCoordExprs {
  kir::ExprPtr m, n;
  // The triangle order: 1 where the index is one of the tiles it deals first (a row on or above
  // the diagonal), 0 past them, from their count rather than the walk; nullptr for other orders.
  kir::ExprPtr dealt_first = nullptr;
};

// The triangle order's tile width over its height (runtime/device/tile_order.h's `ratio`): a
// symmetric tile is as wide as it is tall or a whole number of times wider (check_symmetric).
int64_t triangle_ratio(int64_t tile_m, int64_t tile_n);

// With multicast, the persistent loop deals a cluster's CTAs `ctas` neighbouring tiles along the
// dimension they do not share (along m when they share B), so that dimension's tiles round up to
// whole groups. A group that overhangs the grid gives its last CTAs a tile past M or N: they still
// load (TMA fills zeros) and feed their peers' multicast, and store nothing (TMA stores and guarded
// stores drop it).
struct PairedTileGrid {
  int64_t groups_m = 1, groups_n = 1, ctas = 1;
  int64_t tiles() const { return groups_m * groups_n * ctas; }  // past-the-edge ones included
};
// A cluster of `ctas_m` CTAs along m and `ctas_n` along n (both above 1: a two-dimensional cluster
// sharing both operands) takes a block of ctas_m x ctas_n neighbouring tiles.
inline PairedTileGrid cluster_tile_grid(int64_t tiles_m, int64_t tiles_n, int64_t ctas_m, int64_t ctas_n) {
  return {(tiles_m + ctas_m - 1) / ctas_m, (tiles_n + ctas_n - 1) / ctas_n, ctas_m * ctas_n};
}
inline PairedTileGrid paired_tile_grid(int64_t tiles_m, int64_t tiles_n, int64_t ctas, bool along_m) {
  return cluster_tile_grid(tiles_m, tiles_n, along_m ? ctas : 1, along_m ? 1 : ctas);
}

// The same groups where a tile count is known only at run time (an expression of args.m or args.n).
struct PairedTileGridExprs {
  kir::ExprPtr groups_m, groups_n;
};
PairedTileGridExprs cluster_tile_grid(const kir::ExprPtr& tiles_m, const kir::ExprPtr& tiles_n, int64_t ctas_m,
                                      int64_t ctas_n);

// CompileError `persist-hilbert-size` for a Hilbert order over more than
// gg::dev::kHilbertMaxTiles tiles along m or n (where the counts are constants; a launch checks
// run-time ones, RuntimeSizes::bounds). The tile counts are constants or expressions of the sizes
// the kernel reads at run time. `triangle_ratio`: the triangle order's tile width over its height
// (runtime/device/tile_order.h's triangle_tile), 1 for a square tile.
TileCoordExprs persistent_tile_exprs(const kir::ExprPtr& tile, const kir::ExprPtr& tiles_m,
                                     const kir::ExprPtr& tiles_n, Raster raster, int64_t group,
                                     int64_t triangle_ratio = 1);

}  // namespace gg
