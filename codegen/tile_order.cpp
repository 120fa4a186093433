#include "codegen/tile_order.h"

namespace gg {

using namespace kir;

TileCoordExprs persistent_tile_exprs(const ExprPtr& tile, int64_t tiles_m, int64_t tiles_n, Raster raster,
                                     int64_t group) {
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
