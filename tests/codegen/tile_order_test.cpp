// The persistent tile order the code generator emits is the one the index-math check proves.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "codegen/index_check.h"
#include "codegen/kernel_ir.h"
#include "codegen/lower.h"
#include "codegen/tile_order.h"
#include "dsl/schedule_text.h"
#include "error_check.h"
#include "hilbert_schedule.h"
#include "runtime/device/tile_order.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

TileCoord emitted_order(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster raster, int64_t group, int64_t ratio = 1) {
  TileCoordExprs e = persistent_tile_exprs(kir::var("tile"), kir::imm(tiles_m), kir::imm(tiles_n), raster, group, ratio);
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

// An independent reference for the Hilbert order: gilbert's recursive generator, which lists the
// tiles in curve order (the kernel's helper descends to one tile instead). Rectangles as in
// gilbert: origin (x, y) = (m, n), major side (ax, ay), minor side (bx, by), halves truncated.
void gilbert_walk(std::vector<TileCoord>& out, int64_t x, int64_t y, int64_t ax, int64_t ay, int64_t bx, int64_t by) {
  const auto sgn = [](int64_t v) { return int64_t(v > 0) - int64_t(v < 0); };
  const int64_t w = std::abs(ax + ay), h = std::abs(bx + by);
  const int64_t dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
  if (h == 1 || w == 1) {
    const int64_t len = h == 1 ? w : h, sx = h == 1 ? dax : dbx, sy = h == 1 ? day : dby;
    for (int64_t i = 0; i < len; ++i) out.push_back({x + sx * i, y + sy * i});
    return;
  }
  int64_t ax2 = ax / 2, ay2 = ay / 2, bx2 = bx / 2, by2 = by / 2;
  if (2 * w > 3 * h) {
    if (std::abs(ax2 + ay2) % 2 == 1 && w > 2) ax2 += dax, ay2 += day;
    gilbert_walk(out, x, y, ax2, ay2, bx, by);
    gilbert_walk(out, x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by);
    return;
  }
  if (std::abs(bx2 + by2) % 2 == 1 && h > 2) bx2 += dbx, by2 += dby;
  gilbert_walk(out, x, y, bx2, by2, ax2, ay2);
  gilbert_walk(out, x + bx2, y + by2, ax, ay, bx - bx2, by - by2);
  gilbert_walk(out, x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2), -(ay - ay2));
}

std::vector<TileCoord> gilbert_order(int64_t tiles_m, int64_t tiles_n) {
  std::vector<TileCoord> out;
  if (tiles_m >= tiles_n) gilbert_walk(out, 0, 0, tiles_m, 0, 0, tiles_n);
  else gilbert_walk(out, 0, 0, 0, tiles_n, tiles_m, 0);
  return out;
}

// Rectangle sizes for the Hilbert tests: every size up to 24 x 24 and some big or thin ones.
std::vector<std::pair<int64_t, int64_t>> hilbert_sizes() {
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t tm = 1; tm <= 24; ++tm)
    for (int64_t tn = 1; tn <= 24; ++tn) sizes.push_back({tm, tn});
  for (auto mn : {std::pair<int64_t, int64_t>{64, 32}, {63, 17}, {128, 1}, {1, 128}, {17, 63}, {100, 63}, {132, 2}, {45, 45}})
    sizes.push_back(mn);
  return sizes;
}

// The distinct m tiles plus distinct n tiles of tiles [first, first + w) in `order`: the A and B
// tiles a wave of w persistent CTAs reads.
int64_t operand_tiles(const std::vector<TileCoord>& order, size_t first, size_t w, int64_t tiles_m, int64_t tiles_n) {
  std::vector<bool> m(static_cast<size_t>(tiles_m)), n(static_cast<size_t>(tiles_n));
  int64_t count = 0;
  for (size_t t = first; t < first + w; ++t) {
    if (!m[size_t(order[t].m)]) m[size_t(order[t].m)] = true, ++count;
    if (!n[size_t(order[t].n)]) n[size_t(order[t].n)] = true, ++count;
  }
  return count;
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
    options.persistent_map = [](int64_t t, int64_t tm, int64_t tn, Raster r, int64_t g) { return emitted_order(t, tm, tn, r, g); };
    IndexCheckReport r = check_index_math(tutorial_schedule(6, make_gemm(1000, 700, 72, DType::BF16, DType::BF16)), options);
    CAPTURE(r.summary());
    CHECK(r.ok());
  }
}

namespace {

// A lowered one-CTA kernel (v6) visits persistent_tile's order over tiles_m x tiles_n.
void check_lowered_order(const Kernel& k, int64_t tiles_m, int64_t tiles_n, Raster raster) {
  TileLets lets;
  lets.visit(k.body);
  REQUIRE(lets.m != nullptr);
  REQUIRE(lets.n != nullptr);
  for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
    CAPTURE(t);
    const TileCoord got{kir::evaluate(lets.m, {{"tile", t}}), kir::evaluate(lets.n, {{"tile", t}})};
    CHECK(got == persistent_tile(t, tiles_m, tiles_n, raster, 8));
  }
}

// A lowered v10 kernel: `tile` indexes a pair of CTAs along m in persistent_tile's order over the
// pairs, cta_rank picks the m tile, and the pairs cover the grid once.
void check_lowered_pairs(const Kernel& k, int64_t tiles_m, int64_t tiles_n, Raster raster) {
  TileLets lets;
  lets.visit(k.body);
  REQUIRE(lets.m != nullptr);
  REQUIRE(lets.n != nullptr);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t t = 0; t < tiles_m * tiles_n / 2; ++t)
    for (int64_t rank : {0, 1}) {
      const int64_t m = kir::evaluate(lets.m, {{"tile", t}, {"cta_rank", rank}});
      const int64_t n = kir::evaluate(lets.n, {{"tile", t}, {"cta_rank", rank}});
      CAPTURE(t);
      CAPTURE(rank);
      const TileCoord pair = persistent_tile(t, tiles_m / 2, tiles_n, raster, 8);
      CHECK(m == pair.m * 2 + rank);
      CHECK(n == pair.n);
      CHECK(seen.insert({m, n}).second);  // no tile twice
    }
  CHECK(seen.size() == size_t(tiles_m * tiles_n));
}

}  // namespace

TEST_CASE("lowered kernels compute the proved tile order: v6 visits persistent_tile's order, v10's cluster pairs cover the grid once") {
  // 1000 / 128 and 704 / 128 tiles, rounded up; v10's 128x256 tiles pair along m
  check_lowered_order(lower(tutorial_schedule(6, make_gemm(1000, 704, 72, DType::BF16, DType::BF16))), 8, 6,
                      Raster::RowMajor);
  check_lowered_pairs(lower(tutorial_schedule(10, make_gemm(1000, 704, 72, DType::BF16, DType::BF16))), 8, 3,
                      Raster::RowMajor);
}

TEST_CASE("Hilbert order: the emitted helper calls equal the index check's reference and gilbert's own walk") {
  for (const auto& size : hilbert_sizes()) {
    const int64_t tiles_m = size.first, tiles_n = size.second;  // clang 14 cannot capture structured bindings (CAPTURE)
    CAPTURE(tiles_m);
    CAPTURE(tiles_n);
    const std::vector<TileCoord> walk = gilbert_order(tiles_m, tiles_n);
    REQUIRE(walk.size() == size_t(tiles_m * tiles_n));
    const TileCoordExprs e = persistent_tile_exprs(kir::var("tile"), kir::imm(tiles_m), kir::imm(tiles_n), Raster::Hilbert, 8);
    CHECK(kir::to_c(e.m).find("gg::dev::hilbert_tile_m(tile, ") == 0);
    CHECK(kir::to_c(e.n).find("gg::dev::hilbert_tile_n(tile, ") == 0);
    for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
      CAPTURE(t);
      const TileCoord reference = persistent_tile(t, tiles_m, tiles_n, Raster::Hilbert, 8);
      CHECK(emitted_order(t, tiles_m, tiles_n, Raster::Hilbert, 8) == reference);
      CHECK(reference == walk[size_t(t)]);
    }
  }
}

TEST_CASE("Hilbert order ignores the group") {
  for (auto [tiles_m, tiles_n] : {std::pair<int64_t, int64_t>{7, 5}, {16, 16}, {33, 8}})
    for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
      const TileCoord one = emitted_order(t, tiles_m, tiles_n, Raster::Hilbert, 1);
      CHECK(one == emitted_order(t, tiles_m, tiles_n, Raster::Hilbert, 8));
      CHECK(one == persistent_tile(t, tiles_m, tiles_n, Raster::Hilbert, 40));
    }
}

TEST_CASE("Hilbert order: a bijection whose steps are edge-adjacent but for at most one diagonal step") {
  // gilbert keeps every step edge-adjacent unless the longer side is odd and the shorter even;
  // then one diagonal step (one m and one n) is unavoidable, and it takes exactly one at most.
  int64_t sizes_with_a_diagonal = 0;
  for (const auto& size : hilbert_sizes()) {
    const int64_t tiles_m = size.first, tiles_n = size.second;  // clang 14 cannot capture structured bindings (CAPTURE)
    CAPTURE(tiles_m);
    CAPTURE(tiles_n);
    std::vector<int> hits(size_t(tiles_m * tiles_n));
    int64_t diagonals = 0;
    TileCoord prev{};
    for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
      CAPTURE(t);
      const TileCoord c = persistent_tile(t, tiles_m, tiles_n, Raster::Hilbert, 8);
      REQUIRE(c.m >= 0);
      REQUIRE(c.m < tiles_m);
      REQUIRE(c.n >= 0);
      REQUIRE(c.n < tiles_n);
      ++hits[size_t(c.m * tiles_n + c.n)];
      if (t == 0) CHECK(c == TileCoord{0, 0});
      if (t > 0) {
        const int64_t dm = std::abs(c.m - prev.m), dn = std::abs(c.n - prev.n);
        const bool edge = dm + dn == 1, diagonal = dm == 1 && dn == 1;
        CHECK((edge || diagonal));
        diagonals += diagonal;
      }
      prev = c;
    }
    CHECK(std::count(hits.begin(), hits.end(), 1) == tiles_m * tiles_n);  // every tile exactly once
    const bool may_step_diagonally = std::max(tiles_m, tiles_n) % 2 == 1 && std::min(tiles_m, tiles_n) % 2 == 0;
    CHECK(diagonals <= (may_step_diagonally ? 1 : 0));
    sizes_with_a_diagonal += diagonals;
  }
  CHECK(sizes_with_a_diagonal > 0);  // the odd-size rule is exercised (4 x 5, 5 x 4, ...)
}

TEST_CASE("Hilbert order: every wave of consecutive tiles reads few A and B tiles") {
  // A persistent wave of w CTAs works on w consecutive tile indices; their distinct m tiles plus
  // distinct n tiles are the A and B tiles it pulls through L2. Along the Hilbert curve every
  // window of w tiles -- at any start, since CTAs drift apart -- stays within 3 sqrt(w) of them
  // whatever the grid's shape, and its worst window is no worse than row-major groups of 8's
  // (the default); plain row-major (group 1) reads every n tile of a row per wave, more than
  // the Hilbert worst case on wide grids (64 or more n tiles). (On average groups of 8 do as well or better
  // where their band of 8 m tiles fits the wave -- this bounds the worst case, not the mean.)
  for (const auto& size : {std::pair<int64_t, int64_t>{32, 32}, {64, 16}, {16, 64}, {48, 40}, {128, 128}}) {
    const int64_t tiles_m = size.first, tiles_n = size.second;  // clang 14 cannot capture structured bindings (CAPTURE)
    const int64_t tiles = tiles_m * tiles_n;
    std::vector<TileCoord> hilbert, grouped, rows;
    for (int64_t t = 0; t < tiles; ++t) {
      hilbert.push_back(persistent_tile(t, tiles_m, tiles_n, Raster::Hilbert, 8));
      grouped.push_back(persistent_tile(t, tiles_m, tiles_n, Raster::RowMajor, 8));
      rows.push_back(persistent_tile(t, tiles_m, tiles_n, Raster::RowMajor, 1));
    }
    for (size_t w : {66u, 132u, 264u}) {
      CAPTURE(tiles_m);
      CAPTURE(tiles_n);
      CAPTURE(w);
      int64_t worst_hilbert = 0, worst_grouped = 0, worst_rows = 0;
      for (size_t first = 0; first + w <= size_t(tiles); ++first) {
        worst_hilbert = std::max(worst_hilbert, operand_tiles(hilbert, first, w, tiles_m, tiles_n));
        worst_grouped = std::max(worst_grouped, operand_tiles(grouped, first, w, tiles_m, tiles_n));
        worst_rows = std::max(worst_rows, operand_tiles(rows, first, w, tiles_m, tiles_n));
      }
      CHECK(double(worst_hilbert) <= 3 * std::sqrt(double(w)));
      CHECK(worst_hilbert <= worst_grouped);
      if (tiles_n >= 64) CHECK(worst_hilbert < worst_rows);  // wide grids; on 32 x 32 a wave of 264 row-major tiles is 9 whole rows, 41 operand tiles, Hilbert's worst 48
    }
  }
  // The waves of 132 CTAs (an H100's SMs) over 32 x 32 and 64 x 16 tiles, stated outright.
  for (auto [tiles_m, tiles_n, bound] : {std::tuple<int64_t, int64_t, int64_t>{32, 32, 32}, {64, 16, 32}}) {
    std::vector<TileCoord> order;
    for (int64_t t = 0; t < tiles_m * tiles_n; ++t) order.push_back(persistent_tile(t, tiles_m, tiles_n, Raster::Hilbert, 8));
    for (size_t first = 0; first + 132 <= order.size(); first += 132) CHECK(operand_tiles(order, first, 132, tiles_m, tiles_n) <= bound);
  }
}

TEST_CASE("lowered Hilbert kernels: v6 passes the index check, v10's cluster pairs cover the grid once, kernels embed tile_order.h") {
  using test::with_hilbert;
  {
    const Schedule s = with_hilbert(6, make_gemm(1000, 700, 72, DType::BF16, DType::BF16));
    for (int64_t grid : {1, 5, 7, 132}) {
      IndexCheckOptions options;
      options.persistent_grid = grid;
      options.persistent_map = [](int64_t t, int64_t tm, int64_t tn, Raster r, int64_t g) { return emitted_order(t, tm, tn, r, g); };
      IndexCheckReport r = check_index_math(s, options);
      CAPTURE(r.summary());
      CHECK(r.ok());
    }
    check_lowered_order(lower(s), 8, 6, Raster::Hilbert);
  }
  // v10: tile indexes a pair of CTAs along m (groups of 2 m tiles), cta_rank picks the m tile.
  const Kernel k = lower(with_hilbert(10, make_gemm(1000, 704, 72, DType::BF16, DType::BF16)));
  TileLets lets;
  lets.visit(k.body);
  REQUIRE(lets.m != nullptr);
  CHECK(kir::to_c(lets.m).find("gg::dev::hilbert_tile_m(tile, 262147)") != std::string::npos);  // 4 x 3 pairs
  check_lowered_pairs(k, 8, 3, Raster::Hilbert);
}

TEST_CASE("the Hilbert order refuses a tile grid past kHilbertMaxTiles along m or n") {
  static_assert(gg::dev::kHilbertMaxTiles == 32767);
  CHECK_NOTHROW(persistent_tile_exprs(kir::var("tile"), kir::imm(32767), kir::imm(3), Raster::Hilbert, 8));
  testing::check_error([] { persistent_tile_exprs(kir::var("tile"), kir::imm(32768), kir::imm(3), Raster::Hilbert, 8); },
                       "persist-hilbert-size", "takes at most 32767 tiles along m and along n");
  testing::check_error([] { persistent_tile_exprs(kir::var("tile"), kir::imm(2), kir::imm(40000), Raster::Hilbert, 8); },
                       "persist-hilbert-size", "2 x 40000 tiles");
  CHECK_NOTHROW(persistent_tile_exprs(kir::var("tile"), kir::imm(2), kir::imm(40000), Raster::RowMajor, 8));  // row and column orders have no such limit
}

TEST_CASE("triangle order: a bijection of the square grid, the tiles on and above the diagonal first, in row bands") {
  for (int64_t tiles : {1, 2, 7, 8, 9, 17, 64})
    for (int64_t group : {1, 3, 8}) {
      CAPTURE(tiles);
      CAPTURE(group);
      const int64_t upper = tiles * (tiles + 1) / 2;
      std::set<std::pair<int64_t, int64_t>> seen;
      for (int64_t t = 0; t < tiles * tiles; ++t) {
        CAPTURE(t);
        const TileCoord c = persistent_tile(t, tiles, tiles, Raster::Triangle, group);
        CHECK(emitted_order(t, tiles, tiles, Raster::Triangle, group) == c);  // the emitted calls, the same helper
        REQUIRE((c.m >= 0 && c.m < tiles && c.n >= 0 && c.n < tiles));
        CHECK(seen.insert({c.m, c.n}).second);
        CHECK((t < upper) == (c.m <= c.n));  // the upper triangle first
        if (t > 0 && t < upper)  // the bands in order: a tile's band is its predecessor's or the next
          CHECK(c.m / group - persistent_tile(t - 1, tiles, tiles, Raster::Triangle, group).m / group <= 1);
      }
      CHECK(int64_t(seen.size()) == tiles * tiles);
    }
  // Band by band: 8 rows, their first 8 columns as a triangle, then whole columns, m fastest.
  const auto at = [](int64_t t) { return persistent_tile(t, 64, 64, Raster::Triangle, 8); };
  CHECK(at(0) == TileCoord{0, 0});
  CHECK(at(1) == TileCoord{0, 1});
  CHECK(at(2) == TileCoord{1, 1});
  CHECK(at(36) == TileCoord{0, 8});
  CHECK(at(37) == TileCoord{1, 8});
  CHECK(at(36 + 8 * 56) == TileCoord{8, 8});  // the second band's first tile
  const TileCoordExprs e = persistent_tile_exprs(kir::var("tile"), kir::imm(64), kir::imm(64), Raster::Triangle, 8);
  CHECK(kir::to_c(e.m) == "gg::dev::triangle_tile_m(tile, 4194433)");  // 64 * 65536 + 8 * 16 + 1
}

TEST_CASE("triangle order over tiles wider than tall: a bijection, every tile with a row on or above the diagonal first") {
  for (int64_t ratio : {2, 3, 4})
    for (int64_t tiles_m : {1, 2, 3, 5, 8, 9, 17, 63, 64})
      for (int64_t group : {1, 3, 8}) {
        CAPTURE(ratio);
        CAPTURE(tiles_m);
        CAPTURE(group);
        const int64_t tiles_n = (tiles_m + ratio - 1) / ratio;
        int64_t computing = 0;  // tile (m, n) of a tile_m x (ratio * tile_m) grid has a row above a column of it
        for (int64_t m = 0; m < tiles_m; ++m)
          for (int64_t n = 0; n < tiles_n; ++n) computing += m < ratio * (n + 1);
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
          CAPTURE(t);
          const TileCoord c = persistent_tile(t, tiles_m, tiles_n, Raster::Triangle, group, ratio);
          CHECK(emitted_order(t, tiles_m, tiles_n, Raster::Triangle, group, ratio) == c);
          REQUIRE((c.m >= 0 && c.m < tiles_m && c.n >= 0 && c.n < tiles_n));
          CHECK(seen.insert({c.m, c.n}).second);
          CHECK((t < computing) == (c.m < ratio * (c.n + 1)));
        }
      }
  // 128x256 tiles at 8192^2: 64 x 32 tiles, 1056 computing; the first band's first column holds
  // its rows 0 and 1, the second its rows 0..3.
  const auto at = [](int64_t t) { return persistent_tile(t, 64, 32, Raster::Triangle, 8, 2); };
  CHECK(at(0) == TileCoord{0, 0});
  CHECK(at(1) == TileCoord{1, 0});
  CHECK(at(2) == TileCoord{0, 1});
  CHECK(at(5) == TileCoord{3, 1});
  CHECK(at(6) == TileCoord{0, 2});
  CHECK(at(1055).m < 2 * (at(1055).n + 1));
  CHECK(at(1056).m >= 2 * (at(1056).n + 1));
  // A grid that is not the ratio's is outside the order (the index check reports it).
  CHECK(persistent_tile(0, 64, 64, Raster::Triangle, 8, 2) == TileCoord{-1, -1});
}

TEST_CASE("triangle order: only for D = A * A^T") {
  const Definition def = make_definition(512, 512, 128, DType::BF16, DType::BF16, {}, {}, false);
  std::vector<Directive> ds = tutorial_schedule(8, def).directives();
  for (Directive& d : ds)
    if (auto* p = std::get_if<PersistD>(&d)) p->raster = Raster::Triangle;
  gg::testing::check_error([&] { lower(apply_directives(def, ds)); }, "symmetric",
              "persist ... triangle walks the tiles on and above the diagonal first, which only D = A * A^T "
              "(the symmetric directive) computes alone; use row, column or hilbert");
}
