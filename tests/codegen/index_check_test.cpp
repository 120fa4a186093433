// The CPU check of index math: hand-written schedules, the tutorial schedules, corrupted nests
// the check must reject, and >= 1000 random legal split/merge/reorder/bind/persist schedules.
#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/index_check.h"
#include "dsl/error.h"
#include "dsl/schedule.h"
#include "schedules/tutorial.h"

namespace {

using gg::Binding;
using gg::Raster;

gg::Schedule gemm(int64_t m, int64_t n, int64_t k) {
  return gg::Schedule(gg::make_gemm(m, n, k, gg::DType::BF16, gg::DType::BF16));
}

gg::IndexCheckReport check(const gg::Schedule& s, int64_t grid = 7) {
  gg::IndexCheckOptions opt;
  opt.persistent_grid = grid;
  return gg::check_index_math(s, opt);
}

// A passing report is exact: every product once, every output once.
void require_exact(const gg::IndexCheckReport& r, const gg::Schedule& s) {
  INFO(r.summary());
  CHECK(r.ok());
  CHECK(r.reductions == s.definition().m() * s.definition().n() * s.definition().k());
  CHECK(r.writes == s.definition().m() * s.definition().n());
}

bool has_kind(const gg::IndexCheckReport& r, gg::IndexFailure::Kind k) { return r.failures_of(k) > 0; }

std::vector<gg::TileCoord> order(int64_t tm, int64_t tn, Raster raster, int64_t group) {
  std::vector<gg::TileCoord> out;
  for (int64_t t = 0; t < tm * tn; ++t) out.push_back(gg::persistent_tile(t, tm, tn, raster, group));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The persistent tile order, written out by hand (not from the formula it checks).

TEST_CASE("persistent_tile: row-major and column-major without groups") {
  using C = gg::TileCoord;
  CHECK(order(2, 3, Raster::RowMajor, 1) == std::vector<C>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}});
  CHECK(order(2, 3, Raster::ColumnMajor, 1) == std::vector<C>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}});
}

TEST_CASE("persistent_tile: grouped bands with a partial last band") {
  using C = gg::TileCoord;
  // 5 x 3 tiles, bands of 2 m rows: rows {0,1}, {2,3}, then the partial band {4}.
  CHECK(order(5, 3, Raster::RowMajor, 2) == std::vector<C>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2},
                                                            {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2},
                                                            {4, 0}, {4, 1}, {4, 2}});
  // 2 x 5 tiles, column-major bands of 3 n columns: {0,1,2}, then the partial band {3,4}.
  CHECK(order(2, 5, Raster::ColumnMajor, 3) == std::vector<C>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2},
                                                               {0, 3}, {0, 4}, {1, 3}, {1, 4}});
  // A group larger than the grid is one partial band.
  CHECK(order(3, 2, Raster::RowMajor, 8) == std::vector<C>{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}});
}

// ---------------------------------------------------------------------------------------------
// (a) hand-written schedules

TEST_CASE("index check: plain tile on a grid") {
  auto s = gemm(256, 256, 128);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  auto r = check(s);
  require_exact(r, s);
  CHECK(r.ctas == 4);
  CHECK(r.predicated == 0);
}

TEST_CASE("index check: tails in M, N and K, in well under a second") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  std::clock_t t0 = std::clock();  // processor time: a busy machine does not fail the test
  auto r = check(s);
  double secs = double(std::clock() - t0) / CLOCKS_PER_SEC;
  require_exact(r, s);
  CHECK(r.points == 384 * 256 * 192);
  CHECK(r.predicated == r.points - 300 * 200 * 136);
  MESSAGE("300x200x136 with 128x128x64 tiles: " << r.points << " iterations checked in " << secs << " s of CPU");
  CHECK(secs < 1.0);
}

TEST_CASE("index check: M = 1 and tiles larger than the problem") {
  auto s = gemm(1, 24, 8);
  s.tile(128, 64, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  require_exact(check(s), s);
  auto u = gemm(1, 1, 8);  // nothing split at all: one tile is the whole problem
  require_exact(check(u), u);
}

TEST_CASE("index check: split of an inner axis") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  s.split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup);
  s.split("k_i", 16, "k_mma", "k_s");  // k inside the tile, in MMA-K steps
  require_exact(check(s), s);
  CHECK(s.domain().tile_extent(gg::Root::M) == 128);
}

TEST_CASE("index check: an inner split that does not divide predicates its tail inside the tile") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  s.split("n_i", 48, "n_a", "n_b");  // 128 = 2*48 + 32: the third n_a step is a partial one
  s.split("k_i", 24, "k_a", "k_b");
  auto r = check(s);
  require_exact(r, s);
  // The CTA tile is still 128 x 128 x 64, not 3*48 or 3*24.
  CHECK(s.domain().tile_extent(gg::Root::N) == 128);
  CHECK(s.domain().tile_extent(gg::Root::K) == 64);
  CHECK(s.domain().tile_count(gg::Root::N) == 2);
}

TEST_CASE("index check: merge of m_o and n_o bound to block.x") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 64, 64).merge("m_o", "n_o", "mn").bind("mn", Binding::BlockX).bind("k_o", Binding::Serial);
  auto r = check(s);
  require_exact(r, s);
  CHECK(r.ctas == 3 * 4);
}

TEST_CASE("index check: persistent, row and column raster, groups 1, 3, 8 with a partial last group") {
  // 7 x 5 tiles: groups of 3 leave a band of 1 (row-major) or 2 (column-major); 8 is one partial band.
  for (Raster raster : {Raster::RowMajor, Raster::ColumnMajor})
    for (int64_t group : {1, 3, 8})
      for (int64_t grid : {1, 4, 7, 34, 35, 100}) {
        auto s = gemm(7 * 32 - 5, 5 * 16 - 3, 40);
        s.tile(32, 16, 16).bind("k_o", Binding::Serial).persist("m_o", "n_o", raster, group);
        CAPTURE(group);
        CAPTURE(grid);
        CAPTURE(int(raster));
        auto r = check(s, grid);
        require_exact(r, s);
        CHECK(r.ctas == grid);
      }
}

TEST_CASE("index check: persistent tiles after the tile loops were reordered and split") {
  auto s = gemm(200, 300, 72);
  s.tile(32, 64, 32).reorder({"n_o", "m_o"}).split("m_o", 3, "m_a", "m_b");
  s.persist("m_a", "n_o", Raster::ColumnMajor, 2).bind("m_b", Binding::BlockY).bind("k_o", Binding::Serial);
  require_exact(check(s, 5), s);
}

TEST_CASE("index check: a cluster-bound axis") {
  auto s = gemm(300, 200, 136);
  s.tile(64, 128, 64).split("m_o", 2, "m_c", "m_p");  // 5 m tiles: the last cluster has one idle CTA
  s.bind("m_c", Binding::BlockY).bind("m_p", Binding::Cluster).bind("n_o", Binding::BlockX).cluster(2);
  auto r = check(s);
  require_exact(r, s);
  CHECK(r.ctas == 3 * 2 * 2);
}

TEST_CASE("index check: the loop nest reads outermost first with its index math") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("k_o", Binding::Serial).persist("m_o", "n_o", Raster::RowMajor, 8);
  std::string nest = gg::format_loop_nest(gg::loop_nest_of(s.domain()));
  INFO(nest);
  CHECK(nest.find("for cta in [0, 7)") != std::string::npos);
  CHECK(nest.find("for tile = cta; tile < 6; tile += 7") != std::string::npos);
  CHECK(nest.find("(m_o, n_o) = persistent_tile(tile; 3 x 2 tiles, row-major, group 8)") != std::string::npos);
  CHECK(nest.find("m = m_o * 128 + m_i   (predicated m < 300)") != std::string::npos);
  CHECK(nest.find("for k_o") < nest.find("for m_i"));
}

// ---------------------------------------------------------------------------------------------
// The check catches wrong index math.

TEST_CASE("index check fails on a wrong split factor") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  for (auto& rel : nest.relations)
    if (rel.kind == gg::Relation::Kind::Split && rel.parent == "m") rel.factor = 127;  // the tiles overlap by one row
  auto r = gg::check_index_math(nest);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  CHECK(has_kind(r, gg::IndexFailure::Kind::Reduction));
  CHECK(has_kind(r, gg::IndexFailure::Kind::Write));
  // The first duplicate is m = 127 (m_o=0, m_i=127 and m_o=1, m_i=0), with where it happened.
  bool found = false;
  for (const auto& f : r.failures)
    if (f.message.find("the product (m=127, n=0, k=0) is reduced 2 times") != std::string::npos) {
      found = true;
      CHECK(f.message.find("m_o=0") != std::string::npos);
      CHECK(f.message.find("m_o=1") != std::string::npos);
    }
  CHECK(found);
}

TEST_CASE("index check fails on a split factor that leaves a gap") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("k_o", Binding::Serial);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  for (auto& rel : nest.relations)
    if (rel.kind == gg::Relation::Kind::Split && rel.parent == "k") rel.factor = 65;
  auto r = gg::check_index_math(nest);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  bool never = false;
  for (const auto& f : r.failures)
    never = never || f.message.find("(m=0, n=0, k=64) is never reduced") != std::string::npos;
  CHECK(never);
}

TEST_CASE("index check fails on a stale tile-loop extent (the last tile dropped)") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  for (auto& a : nest.axes)
    if (a.name == "m_o") a.extent = 2;  // floor(300 / 128) instead of ceil
  auto r = gg::check_index_math(nest);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  CHECK(r.failures.front().message.find("(m=256, n=0, k=0) is never reduced") != std::string::npos);
}

TEST_CASE("index check fails on a wrong merge extent") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 64, 64).merge("m_o", "n_o", "mn").bind("mn", Binding::BlockX).bind("k_o", Binding::Serial);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  for (auto& rel : nest.relations)
    if (rel.kind == gg::Relation::Kind::Merge) rel.factor = 3;  // n_o has 4 tiles
  auto r = gg::check_index_math(nest);
  INFO(r.summary());
  CHECK_FALSE(r.ok());
}

TEST_CASE("index check fails on a tile extent the domain claims wrongly") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).bind("k_o", Binding::Serial);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  nest.tile_n = 144;
  auto r = gg::check_index_math(nest);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  CHECK(has_kind(r, gg::IndexFailure::Kind::TileShape));
}

namespace {
// The classic grouped-raster bug: the last band treated as full.
gg::TileCoord last_band_as_full(int64_t t, int64_t tm, int64_t tn, Raster raster, int64_t group) {
  bool row = raster == Raster::RowMajor;
  int64_t minor = row ? tn : tm;
  int64_t band = t / (group * minor);
  int64_t r = t - band * group * minor;
  int64_t a = band * group + r % group, b = r / group;
  return row ? gg::TileCoord{a, b} : gg::TileCoord{b, a};
}
}  // namespace

TEST_CASE("index check fails on a persistent order that treats the last band as full") {
  auto s = gemm(7 * 32, 5 * 16, 32);
  s.tile(32, 16, 16).bind("k_o", Binding::Serial).persist("m_o", "n_o", Raster::RowMajor, 3);
  gg::IndexCheckOptions opt;
  opt.persistent_map = last_band_as_full;
  auto r = gg::check_index_math(s, opt);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  CHECK(has_kind(r, gg::IndexFailure::Kind::PersistentMap));
  // With group 1 the bug is invisible: every band is full.
  auto s1 = gemm(7 * 32, 5 * 16, 32);
  s1.tile(32, 16, 16).bind("k_o", Binding::Serial).persist("m_o", "n_o", Raster::RowMajor, 1);
  CHECK(gg::check_index_math(s1, opt).ok());
}

TEST_CASE("index check fails on an off-by-one persistent tile index, through the counts alone") {
  auto s = gemm(100, 100, 16);
  s.tile(32, 32, 16).bind("k_o", Binding::Serial).persist("m_o", "n_o", Raster::RowMajor, 1);
  gg::IndexCheckOptions opt;
  opt.persistent_grid = 3;
  opt.max_failures = 64;
  // Tile t runs tile t+1's work: tile 0 is never computed and the last index runs off the grid.
  opt.persistent_map = [](int64_t t, int64_t tm, int64_t tn, Raster raster, int64_t group) {
    int64_t u = t + 1;
    if (u == tm * tn) return gg::TileCoord{tm, 0};
    return gg::persistent_tile(u, tm, tn, raster, group);
  };
  auto r = gg::check_index_math(s, opt);
  INFO(r.summary());
  REQUIRE_FALSE(r.ok());
  CHECK(has_kind(r, gg::IndexFailure::Kind::PersistentMap));
  CHECK(has_kind(r, gg::IndexFailure::Kind::Reduction));  // the enumeration ran and counted the hole
  CHECK(has_kind(r, gg::IndexFailure::Kind::Write));
}

TEST_CASE("index check refuses a nest over its limit instead of sampling") {
  auto s = gemm(300, 200, 136);
  s.tile(128, 128, 64);
  gg::IndexCheckOptions opt;
  opt.max_points = 1000;
  auto r = gg::check_index_math(s, opt);
  REQUIRE_FALSE(r.ok());
  CHECK(r.failures.front().kind == gg::IndexFailure::Kind::TooLarge);
}

TEST_CASE("index check reports a nest whose relations mix k with m") {
  auto s = gemm(64, 64, 64);
  s.tile(32, 32, 32);
  gg::LoopNest nest = gg::loop_nest_of(s.domain());
  for (auto& a : nest.axes)
    if (a.name == "k_o") a.roots = unsigned(gg::Root::K) | unsigned(gg::Root::M);
  auto r = gg::check_index_math(nest);
  REQUIRE_FALSE(r.ok());
  CHECK(r.failures.front().kind == gg::IndexFailure::Kind::Structure);
}

// ---------------------------------------------------------------------------------------------
// (b) the ten tutorial schedules

TEST_CASE("index check: the ten tutorial schedules") {
  // Tails in all three dimensions. 300 x 200 x 136: 3 x 2 tiles of 128 x 128 and 3 k steps, on 4
  // persistent CTAs (a partial second wave). 520 x 136 x 8: 5 x 2 tiles on 7 CTAs, a group of 8
  // m tiles that is partial, one k step that is mostly tail.
  const struct { int64_t m, n, k, grid; } sizes[] = {{300, 200, 136, 4}, {520, 136, 8, 7}};
  int checked = 0;
  for (const auto& sz : sizes)
    for (int v = 1; v <= gg::kTutorialSteps; ++v) {
      CAPTURE(v);
      CAPTURE(sz.m);
      gg::Schedule s = gg::tutorial_schedule(v, gg::make_gemm(sz.m, sz.n, sz.k, gg::DType::BF16, gg::DType::BF16));
      auto r = check(s, sz.grid);
      require_exact(r, s);
      if (s.persistence()) CHECK(r.ctas == sz.grid);
      ++checked;
    }
  CHECK(checked == 2 * gg::kTutorialSteps);
  for (const auto& sz : sizes) {
    gg::Schedule s = gg::ping_pong_schedule(gg::make_gemm(sz.m, sz.n, sz.k, gg::DType::BF16, gg::DType::BF16));
    auto r = check(s, sz.grid);
    require_exact(r, s);
    CHECK(r.loop_nest.find("for consumer in [0, 2)") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// (c) random legal schedules

namespace {

// Reproducible across standard libraries: no std::uniform_int_distribution.
class Draw {
 public:
  explicit Draw(uint32_t seed) : rng_(seed) {}
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_() % static_cast<uint32_t>(hi - lo + 1)); }
  bool chance(int percent) { return in(1, 100) <= percent; }
  // Log-uniform in [1, hi]: mostly small, sometimes large.
  int64_t size(int64_t hi) {
    int64_t bits = in(0, 8);
    int64_t cap = std::min<int64_t>(hi, (int64_t(1) << bits) + 1);
    return in(1, cap);
  }
  // A split factor for an axis of extent e: powers of two, divisors, odd sizes, larger than e.
  int64_t factor(int64_t e) {
    switch (in(0, 4)) {
      case 0: return int64_t(1) << in(0, 7);
      case 1: return in(1, std::max<int64_t>(1, e));
      case 2: return std::max<int64_t>(1, e / in(1, 4));
      case 3: return in(1, 8);
      default: return e + in(0, 5);
    }
  }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(in(0, static_cast<int64_t>(v.size()) - 1))]; }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
};

struct RandomResult {
  bool built = false;
  std::string recipe;
  std::string rule;  // the CompileError rule when not built
};

// Draws one schedule; on a CompileError it stops and reports the rule.
RandomResult random_schedule(Draw& d, gg::Schedule*& out, std::vector<gg::Schedule>& keep, int64_t& grid) {
  RandomResult res;
  int64_t M = d.size(300), N = d.size(300), K = 8 * d.size(37);
  res.recipe = "gemm(" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ")";
  keep.clear();
  keep.push_back(gemm(M, N, K));
  gg::Schedule& s = keep.back();
  int fresh = 0;
  auto name = [&] { return "x" + std::to_string(fresh++); };
  auto step = [&](const std::string& text, auto&& call) {
    res.recipe += "." + text;
    call();
  };
  try {
    if (d.chance(50)) {
      int64_t fm = d.factor(M), fn = d.factor(N), fk = d.factor(K);
      step("tile(" + std::to_string(fm) + ", " + std::to_string(fn) + ", " + std::to_string(fk) + ")",
           [&] { s.tile(fm, fn, fk); });
    } else {
      for (const char* r : {"m", "n", "k"})
        if (d.chance(85)) {
          int64_t f = d.factor(s.domain().axis(r).extent);
          std::string o = name(), i = name();
          step(std::string("split(") + r + ", " + std::to_string(f) + ", " + o + ", " + i + ")",
               [&] { s.split(r, f, o, i); });
        }
    }
    int64_t ops = d.in(0, 6);
    for (int64_t op = 0; op < ops; ++op) {
      const auto& leaves = s.domain().leaves();
      switch (d.in(0, 5)) {
        case 0: {  // split
          std::string a = d.pick(leaves);
          int64_t f = d.factor(s.domain().axis(a).extent);
          std::string o = name(), i = name();
          step("split(" + a + ", " + std::to_string(f) + ", " + o + ", " + i + ")", [&] { s.split(a, f, o, i); });
          break;
        }
        case 1: {  // merge two adjacent loops
          if (leaves.size() < 2) break;
          std::vector<size_t> fits;  // pairs the rules allow, drawn from most of the time
          for (size_t q = 0; q + 1 < leaves.size(); ++q) {
            const gg::Axis &x = s.domain().axis(leaves[q]), &y = s.domain().axis(leaves[q + 1]);
            bool k_ok = (x.roots == unsigned(gg::Root::K)) == (y.roots == unsigned(gg::Root::K));
            if (x.level == y.level && x.binding == Binding::None && y.binding == Binding::None && k_ok &&
                (x.level == gg::Level::Tile || x.roots == y.roots))
              fits.push_back(q);
          }
          size_t p = !fits.empty() && d.chance(85)
                         ? d.pick(fits)
                         : static_cast<size_t>(d.in(0, static_cast<int64_t>(leaves.size()) - 2));
          std::string a = leaves[p], b = leaves[p + 1], f = name();
          step("merge(" + a + ", " + b + ", " + f + ")", [&] { s.merge(a, b, f); });
          break;
        }
        case 2: {  // reorder a random subset
          std::vector<std::string> sub;
          for (const auto& l : leaves)
            if (d.chance(60)) sub.push_back(l);
          std::shuffle(sub.begin(), sub.end(), d.rng());
          std::string text;
          for (const auto& x : sub) text += (text.empty() ? "" : ", ") + x;
          step("reorder({" + text + "})", [&] { s.reorder(sub); });
          break;
        }
        case 3:
        case 4: {  // bind, mostly to something the level allows
          std::string a = d.pick(leaves);
          bool tile = s.domain().axis(a).level == gg::Level::Tile;
          static const std::vector<Binding> tile_b = {Binding::BlockX, Binding::BlockY, Binding::BlockZ,
                                                      Binding::Cluster, Binding::Serial, Binding::Unroll};
          static const std::vector<Binding> intra_b = {Binding::Warpgroup, Binding::Warp, Binding::Thread,
                                                       Binding::Serial, Binding::Unroll};
          static const std::vector<Binding> any_b = {Binding::BlockX, Binding::Warpgroup, Binding::Thread,
                                                     Binding::Cluster, Binding::None};
          Binding b = d.chance(85) ? d.pick(tile ? tile_b : intra_b) : d.pick(any_b);
          step("bind(" + a + ", " + std::string(gg::binding_name(b)) + ")", [&] { s.bind(a, b); });
          break;
        }
        default: {  // persist an m tile loop with an n tile loop
          std::vector<std::string> ms, ns;
          for (const auto& l : leaves) {
            const gg::Axis& x = s.domain().axis(l);
            if (x.level != gg::Level::Tile) continue;
            if (x.roots == unsigned(gg::Root::M)) ms.push_back(l);
            if (x.roots == unsigned(gg::Root::N)) ns.push_back(l);
          }
          if (ms.empty() || ns.empty()) break;
          std::string a = d.pick(ms), b = d.pick(ns), f = name();
          Raster raster = d.chance(50) ? Raster::RowMajor : Raster::ColumnMajor;
          int64_t group = d.chance(3) ? 0 : d.in(1, 10);
          step("persist(" + a + ", " + b + ", " + (raster == Raster::RowMajor ? "row" : "col") + ", " +
                   std::to_string(group) + ", " + f + ")",
               [&] { s.persist(a, b, raster, group, f); });
          break;
        }
      }
    }
    // Ping-pong: the persistent tiles of each CTA dealt in turn to two consumer warpgroups.
    if (s.persistence() && d.chance(40)) step("ping_pong()", [&] { s.ping_pong(); });
  } catch (const gg::CompileError& e) {
    res.rule = e.rule();
    return res;
  }
  grid = d.in(1, 20);
  res.built = true;
  out = &s;
  return res;
}

int64_t iterations(const gg::Domain& dom) {
  int64_t p = 1;
  for (const auto& l : dom.leaves()) p *= dom.axis(l).extent;
  return p;
}

}  // namespace

TEST_CASE("index check: 1000 random legal split/merge/reorder/bind/persist schedules, zero failures") {
  Draw d(20240607u);
  const int wanted = 1000;
  int built = 0, rejected = 0, too_large = 0, failures = 0, internal = 0, persistent = 0;
  int64_t points = 0;
  std::map<std::string, int> rules, used;
  std::vector<gg::Schedule> keep;
  auto t0 = std::chrono::steady_clock::now();
  for (int attempt = 0; built < wanted && attempt < 50000; ++attempt) {
    gg::Schedule* s = nullptr;
    int64_t grid = 7;
    RandomResult res;
    try {
      res = random_schedule(d, s, keep, grid);
    } catch (const gg::InternalError& e) {  // a user mistake must never reach an internal check
      ++internal;
      FAIL_CHECK("InternalError while building " << res.recipe << ": " << e.what());
      continue;
    }
    if (!res.built) {
      ++rejected;
      ++rules[res.rule];
      continue;
    }
    if (iterations(s->domain()) > 2'000'000) {  // keep the run short; not counted
      ++too_large;
      continue;
    }
    ++built;
    persistent += s->persistence() ? 1 : 0;
    for (const auto& dir : s->directives()) ++used[gg::directive_name(dir)];
    try {
      gg::IndexCheckOptions opt;
      opt.persistent_grid = grid;
      auto r = gg::check_index_math(*s, opt);
      points += r.points;
      if (!r.ok() || r.reductions != s->definition().m() * s->definition().n() * s->definition().k() ||
          r.writes != s->definition().m() * s->definition().n()) {
        ++failures;
        FAIL_CHECK(res.recipe << " with " << grid << " persistent CTAs:\n" << r.summary());
      }
    } catch (const gg::InternalError& e) {
      ++internal;
      FAIL_CHECK("InternalError checking " << res.recipe << ": " << e.what());
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string rule_text, used_text;
  for (const auto& [rule, n] : rules) rule_text += " " + rule + ":" + std::to_string(n);
  for (const auto& [prim, n] : used) used_text += " " + prim + ":" + std::to_string(n);
  MESSAGE(built << " random schedules checked (" << persistent << " persistent; primitives" << used_text << " ), "
                << points
                << " iterations, in " << secs << " s; " << rejected << " draws rejected by CompileError ("
                << rule_text << " ), " << too_large << " over the size budget; " << failures << " failures, "
                << internal << " internal errors");
  CHECK(built >= wanted);
  CHECK(failures == 0);
  CHECK(internal == 0);
}

// Mutation testing: shrink one split factor of a random legal schedule by one (the parent's
// values then overlap and leave a gap). A surviving mutant is one whose counts are still all
// exactly one: the overlap and the gap lie wholly in predicated tails (say N = 2 and the mutated
// split of n_i only moves n >= 2), so the mutant is itself a correct nest.
TEST_CASE("index check: mutated random schedules are caught") {
  Draw d(9001u);
  int mutants = 0, killed = 0, equivalent = 0;
  std::vector<gg::Schedule> keep;
  for (int attempt = 0; mutants < 300 && attempt < 20000; ++attempt) {
    gg::Schedule* s = nullptr;
    int64_t grid = 7;
    RandomResult res = random_schedule(d, s, keep, grid);
    if (!res.built || iterations(s->domain()) > 500'000) continue;
    gg::LoopNest nest = gg::loop_nest_of(s->domain());
    std::vector<size_t> splits;
    for (size_t i = 0; i < nest.relations.size(); ++i) {
      const auto& rel = nest.relations[i];
      if (rel.kind != gg::Relation::Kind::Split || rel.factor < 2) continue;
      for (const auto& a : nest.axes)
        if (a.name == rel.outer && a.extent >= 2) splits.push_back(i);
    }
    if (splits.empty()) continue;
    gg::LoopNest mutant = nest;
    mutant.relations[d.pick(splits)].factor -= 1;
    mutant.tile_m = mutant.tile_n = mutant.tile_k = 0;  // count on the reductions and writes alone
    gg::IndexCheckOptions opt;
    opt.persistent_grid = grid;
    ++mutants;
    if (!gg::check_index_math(mutant, opt).ok()) {
      ++killed;
      continue;
    }
    ++equivalent;
    CHECK(gg::check_index_math(nest, opt).ok());
  }
  MESSAGE(mutants << " mutants (a split factor shrunk by one): " << killed << " caught, " << equivalent
                  << " equivalent (the change lies in predicated tails only)");
  CHECK(mutants == 300);
  CHECK(killed >= mutants * 9 / 10);
}
