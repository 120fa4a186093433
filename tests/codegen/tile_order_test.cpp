// The persistent tile order the code generator emits is the one the index-math check proves.
#include <doctest/doctest.h>

#include "codegen/index_check.h"
#include "codegen/tile_order.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

TileCoord emitted_order(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster raster, int64_t group) {
  TileCoordExprs e = persistent_tile_exprs(kir::var("tile"), tiles_m, tiles_n, raster, group);
  return {kir::evaluate(e.m, {{"tile", t}}), kir::evaluate(e.n, {{"tile", t}})};
}

}  // namespace

TEST_CASE("the emitted tile order equals the index check's reference for every tile") {
  for (int64_t tiles_m : {1, 2, 7, 16, 33})
    for (int64_t tiles_n : {1, 3, 8, 19})
      for (Raster raster : {Raster::RowMajor, Raster::ColumnMajor})
        for (int64_t group : {1, 3, 8, 40})
          for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
            CAPTURE(tiles_m);
            CAPTURE(tiles_n);
            CAPTURE(group);
            CAPTURE(t);
            CHECK(emitted_order(t, tiles_m, tiles_n, raster, group) ==
                  persistent_tile(t, tiles_m, tiles_n, raster, group));
          }
}

TEST_CASE("v6 with the emitted tile order passes the index-math check on partial waves") {
  for (int64_t grid : {1, 5, 7, 132}) {
    IndexCheckOptions options;
    options.persistent_grid = grid;
    options.persistent_map = emitted_order;
    IndexCheckReport r = check_index_math(tutorial_schedule(6, make_gemm(1000, 700, 72, DType::BF16, DType::BF16)), options);
    CAPTURE(r.summary());
    CHECK(r.ok());
  }
}
