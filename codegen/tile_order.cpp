#include "codegen/tile_order.h"

#include <algorithm>
#include <string>

#include "dsl/error.h"
#include "runtime/device/tile_order.h"

namespace gg {

using namespace kir;

PairedTileGridExprs cluster_tile_grid(const ExprPtr& tiles_m, const ExprPtr& tiles_n, int64_t ctas_m, int64_t ctas_n) {
  const auto groups = [&](const ExprPtr& tiles, int64_t ctas) { return ctas > 1 ? ceil_div(tiles, imm(ctas)) : tiles; };
  return {groups(tiles_m, ctas_m), groups(tiles_n, ctas_n)};
}

int64_t triangle_ratio(int64_t tile_m, int64_t tile_n) { return tile_m > 0 && tile_n >= tile_m ? tile_n / tile_m : 1; }

TileCoordExprs persistent_tile_exprs(const ExprPtr& tile, const ExprPtr& tiles_m_expr, const ExprPtr& tiles_n_expr,
                                     Raster raster, int64_t group, int64_t triangle_ratio) {
  int64_t tiles_m = 1, tiles_n = 1;
  is_const(tiles_m_expr, &tiles_m);
  is_const(tiles_n_expr, &tiles_n);
  if (raster == Raster::Hilbert) {
    // One call per coordinate of runtime/device/tile_order.h's generalized Hilbert curve; the
    // rectangle travels as one value, hilbert_dims = tiles_m * 65536 + tiles_n (a constant unless
    // a size is read at run time). `group` plays no part.
    const int64_t most = gg::dev::kHilbertMaxTiles;
    if (tiles_m > most || tiles_n > most)
      throw_user_error("persist-hilbert-size",
                       "persist ... hilbert: the tile loop walks " + std::to_string(tiles_m) + " x " +
                           std::to_string(tiles_n) + " tiles; the Hilbert order takes at most " +
                           std::to_string(most) + " tiles along m and along n; use row or column order, or "
                           "larger tiles");
    GG_INTERNAL_CHECK(tiles_m >= 1 && tiles_n >= 1, "empty tile grid");
    ExprPtr dims = call("gg::dev::hilbert_dims", tiles_m_expr, tiles_n_expr);
    return {call("gg::dev::hilbert_tile_m", tile, dims), call("gg::dev::hilbert_tile_n", tile, dims)};
  }
  if (raster == Raster::Triangle) {
    // The tiles on and above the diagonal first (runtime/device/tile_order.h's triangle_tile): the
    // grid's m tile count, the band height and the tile's width over its height packed in one value.
    GG_INTERNAL_CHECK(triangle_ratio >= 1 && triangle_ratio < 16 && (tiles_m + triangle_ratio - 1) / triangle_ratio == tiles_n,
                      "a triangle order over a grid that is not its tiles' diagonal's");
    const int shape = gg::dev::triangle_shape(static_cast<int>(std::min<int64_t>(group, 4095)), static_cast<int>(triangle_ratio));
    ExprPtr dims = call("gg::dev::triangle_dims", tiles_m_expr, imm(shape));
    return {call("gg::dev::triangle_tile_m", tile, dims), call("gg::dev::triangle_tile_n", tile, dims),
            call("gg::dev::triangle_computes", tile, dims)};
  }
  // Bands of `group` tiles along the slow dimension; inside a band the band's own dimension
  // runs fastest, so consecutive CTAs share the fast dimension's operand tiles in L2.
  bool row_major = raster == Raster::RowMajor;
  const ExprPtr& slow = row_major ? tiles_m_expr : tiles_n_expr;
  const ExprPtr& fast = row_major ? tiles_n_expr : tiles_m_expr;
  ExprPtr per_band = imm(group) * fast;
  ExprPtr first = (tile / per_band) * imm(group);
  ExprPtr band_size = min(slow - first, imm(group));
  ExprPtr in_band = tile % per_band;
  ExprPtr slow_index = first + in_band % band_size, fast_index = in_band / band_size;
  return row_major ? TileCoordExprs{slow_index, fast_index} : TileCoordExprs{fast_index, slow_index};
}

}  // namespace gg
