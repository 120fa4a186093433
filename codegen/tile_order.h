#pragma once
// The persistent tile order as kernel-IR index math: linear tile index -> (m tile, n tile),
// row- or column-major in bands of `group` tiles (Triton's GROUP_M). The index-math check's
// persistent_tile is the reference this must match (tests/codegen/tile_order_test.cpp).
#include <cstdint>

#include "codegen/expr.h"
#include "dsl/domain.h"

namespace gg {

struct TileCoordExprs {
  kir::ExprPtr m, n;
};

TileCoordExprs persistent_tile_exprs(const kir::ExprPtr& tile, int64_t tiles_m, int64_t tiles_n, Raster raster,
                                     int64_t group);

}  // namespace gg
