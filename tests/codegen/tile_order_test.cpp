// The persistent tile order the code generator emits is the one the index-math check proves.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "codegen/index_check.h"
#include "codegen/kernel_ir.h"
#include "codegen/lower.h"
#include "codegen/tile_order.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

TileCoord emitted_order(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster raster, int64_t group) {
  TileCoordExprs e = persistent_tile_exprs(kir::var("tile"), tiles_m, tiles_n, raster, group);
  return {kir::evaluate(e.m, {{"tile", t}}), kir::evaluate(e.n, {{"tile", t}})};
}

// The tile coordinates a lowered kernel computes: the first `m_tile` and `n_tile` lets of its IR.
struct TileLets : kir::Visitor {
  kir::ExprPtr m, n;
  void visit_Let(const kir::Let& l) override {
    if (l.name == "m_tile" && !m) m = l.value;
    if (l.name == "n_tile" && !n) n = l.value;
  }
};

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

TEST_CASE("lowered kernels compute the proved tile order: v6 visits persistent_tile's order, v10's cluster pairs cover the grid once") {
  {
    const Kernel k = lower(tutorial_schedule(6, make_gemm(1000, 704, 72, DType::BF16, DType::BF16)));
    TileLets lets;
    lets.visit(k.body);
    REQUIRE(lets.m != nullptr);
    REQUIRE(lets.n != nullptr);
    const int64_t tiles_m = 8, tiles_n = 6;  // 1000 / 128 and 704 / 128, rounded up
    for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
      CAPTURE(t);
      const TileCoord got{kir::evaluate(lets.m, {{"tile", t}}), kir::evaluate(lets.n, {{"tile", t}})};
      CHECK(got == persistent_tile(t, tiles_m, tiles_n, Raster::RowMajor, 8));
    }
  }
  {
    // v10: 128x256 tiles, CTAs paired along m; tile indexes a pair, cta_rank picks the m tile.
    const Kernel k = lower(tutorial_schedule(10, make_gemm(1000, 704, 72, DType::BF16, DType::BF16)));
    TileLets lets;
    lets.visit(k.body);
    REQUIRE(lets.m != nullptr);
    REQUIRE(lets.n != nullptr);
    const int64_t tiles_m = 8, tiles_n = 3;
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t t = 0; t < tiles_m * tiles_n / 2; ++t)
      for (int64_t rank : {0, 1}) {
        const int64_t m = kir::evaluate(lets.m, {{"tile", t}, {"cta_rank", rank}});
        const int64_t n = kir::evaluate(lets.n, {{"tile", t}, {"cta_rank", rank}});
        CAPTURE(t);
        CAPTURE(rank);
        CHECK(m >= 0);
        CHECK(m < tiles_m);
        CHECK(n >= 0);
        CHECK(n < tiles_n);
        CHECK(seen.insert({m, n}).second);  // no tile twice
      }
    CHECK(seen.size() == size_t(tiles_m * tiles_n));
  }
}
