#include "codegen/tile_order.h"

#include <string>

#include "dsl/error.h"
#include "runtime/device/tile_order.h"

namespace gg {

using namespace kir;

TileCoordExprs persistent_tile_exprs(const ExprPtr& tile, int64_t tiles_m, int64_t tiles_n, Raster raster,
                                     int64_t group) {
  if (raster == Raster::Hilbert) {
    // One call per coordinate of runtime/device/tile_order.h's generalized Hilbert curve; the
    // rectangle travels as one constant, tiles_m * 65536 + tiles_n. `group` plays no part.
    const int64_t most = gg::dev::kHilbertMaxTiles;
    if (tiles_m > most || tiles_n > most)
      throw_user_error("persist-hilbert-size",
                       "persist ... hilbert: the tile loop walks " + std::to_string(tiles_m) + " x " +
                           std::to_string(tiles_n) + " tiles; the Hilbert order takes at most " +
                           std::to_string(most) + " tiles along m and along n; use row or column order, or "
                           "larger tiles");
    GG_INTERNAL_CHECK(tiles_m >= 1 && tiles_n >= 1, "empty tile grid");
    ExprPtr dims = imm(gg::dev::hilbert_dims(static_cast<int>(tiles_m), static_cast<int>(tiles_n)));
    return {call("gg::dev::hilbert_tile_m", tile, dims), call("gg::dev::hilbert_tile_n", tile, dims)};
  }
  // Bands of `group` tiles along the slow dimension; inside a band the band's own dimension
  // runs fastest, so consecutive CTAs share the fast dimension's operand tiles in L2.
  bool row_major = raster == Raster::RowMajor;
  int64_t slow = row_major ? tiles_m : tiles_n, fast = row_major ? tiles_n : tiles_m;
  ExprPtr per_band = imm(group * fast);
  ExprPtr first = (tile / per_band) * imm(group);
  ExprPtr band_size = min(imm(slow) - first, imm(group));
  ExprPtr in_band = tile % per_band;
  ExprPtr slow_index = first + in_band % band_size, fast_index = in_band / band_size;
  return row_major ? TileCoordExprs{slow_index, fast_index} : TileCoordExprs{fast_index, slow_index};
}

}  // namespace gg
