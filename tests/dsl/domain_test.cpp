// Before/after structural checks of each loop primitive on the iteration domain.
#include <doctest/doctest.h>

#include "dsl/schedule.h"

using namespace gg;

namespace {
Schedule gemm(int64_t m, int64_t n, int64_t k) { return Schedule(make_gemm(m, n, k, DType::BF16, DType::BF16)); }
std::vector<std::string> leaves(const Schedule& s) { return s.domain().leaves(); }
}  // namespace

TEST_CASE("split replaces an axis by outer and inner in place, with a ceil-divided outer extent") {
  Schedule s = gemm(300, 200, 64);
  CHECK(leaves(s) == std::vector<std::string>{"m", "n", "k"});
  s.split("m", 128, "m_o", "m_i");
  CHECK(leaves(s) == std::vector<std::string>{"m_o", "m_i", "n", "k"});
  CHECK(s.domain().axis("m_o").extent == 3);  // 300 = 2 x 128 + a tail of 44
  CHECK(s.domain().axis("m_i").extent == 128);
  CHECK(s.domain().axis("m_o").level == Level::Tile);
  CHECK(s.domain().axis("m_i").level == Level::Intra);
  CHECK(s.domain().relations().back().kind == Relation::Kind::Split);
}

TEST_CASE("merge fuses two adjacent axes into one of the product extent") {
  Schedule s = gemm(512, 384, 64);
  s.tile(128, 128, 64);
  s.merge("m_o", "n_o", "mn");
  CHECK(leaves(s) == std::vector<std::string>{"mn", "k_o", "m_i", "n_i", "k_i"});
  CHECK(s.domain().axis("mn").extent == 4 * 3);
  CHECK(s.domain().axis("mn").roots == (unsigned(Root::M) | unsigned(Root::N)));
}

TEST_CASE("reorder permutes the named axes among their own positions") {
  Schedule s = gemm(512, 384, 64);
  s.tile(128, 128, 64);
  s.reorder({"n_o", "m_o"});
  CHECK(leaves(s) == std::vector<std::string>{"n_o", "m_o", "k_o", "m_i", "n_i", "k_i"});
}

TEST_CASE("tile is sugar for three splits and a reorder") {
  Schedule s = gemm(512, 384, 256);
  s.tile(128, 64, 64);
  CHECK(leaves(s) == std::vector<std::string>{"m_o", "n_o", "k_o", "m_i", "n_i", "k_i"});
  CHECK(s.domain().tile_extent(Root::M) == 128);
  CHECK(s.domain().tile_extent(Root::N) == 64);
  CHECK(s.domain().tile_count(Root::N) == 6);
  CHECK(s.directives().size() == 1);
}

TEST_CASE("bind records the hardware index on the axis") {
  Schedule s = gemm(512, 384, 256);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("k_o", Binding::Serial);
  CHECK(s.domain().axis("m_o").binding == Binding::BlockY);
  CHECK(s.domain().bound_to(Binding::BlockY)->name == "m_o");
  CHECK(s.k_loop()->name == "k_o");
}

TEST_CASE("persist replaces the m and n tile axes by one persistent tile loop") {
  Schedule s = gemm(512, 384, 256);
  s.tile(128, 128, 64).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  s.persist("m_o", "n_o", Raster::ColumnMajor, 4);
  CHECK(leaves(s) == std::vector<std::string>{"tile", "k_o", "m_i", "n_i", "k_i"});
  CHECK(s.domain().axis("tile").extent == 12);
  CHECK(s.domain().axis("tile").binding == Binding::Persistent);
  CHECK(s.persistence()->group == 4);
}

TEST_CASE("circular_buffer called again on the same loop changes its depth") {
  Schedule s = gemm(512, 384, 1024);
  s.tile(128, 128, 64).bind("k_o", Binding::Serial).circular_buffer("k_o", 2).circular_buffer("k_o", 4);
  CHECK(s.circular_buffer_of()->stages == 4);
  CHECK(s.circular_buffer_of()->prefetch == 3);
}

TEST_CASE("retarget switches the mma target, the only difference between sm_90a and sm_100a schedules") {
  Schedule s = gemm(512, 384, 1024);
  s.tile(128, 128, 64).mma(64, 128, 16, Target::Sm90a);
  s.retarget(Target::Sm100a);
  CHECK(s.mma_shape()->target == Target::Sm100a);
}
