// UE8M0 scale factors (ScaleFormat::Ue8m0, sm_100a's block-scaled MMA) lie in CUTLASS's Sm1xx
// block-scaled atoms: per 128 rows and 4 k blocks of 128, 512 bytes, the factor of row 32 j + i of
// the 128 and k block q of the 4 at byte 16 i + 4 j + q (the 32 x 16-byte image tcgen05.cp
// .32x128b.warpx4 copies: row i to TMEM lane i, its 4 words to 4 columns, word j holding rows
// 32 j + i's factors, byte q the k block's), a row block's atoms one after another along K.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "dsl/definition.h"
#include "dsl/schedule_text.h"

using namespace gg;

namespace {

int64_t at(int64_t rows, int64_t k, int64_t r, int64_t kk) {
  return scale_factor_index(ScaleGranularity::Block1x128, Layout::KMajor, rows, k, r, kk, ScaleFormat::Ue8m0);
}

}  // namespace

TEST_CASE("UE8M0 atoms: each row and k block a byte of its own, where tcgen05.cp expects it") {
  // 300 rows (3 row blocks, the last partial) and K = 1000 (8 k blocks: 2 atoms along K).
  const int64_t rows = 300, k = 1000;
  CHECK(scale_factor_count(ScaleGranularity::Block1x128, Layout::KMajor, rows, k, ScaleFormat::Ue8m0) == 3 * 2 * 512);
  std::set<int64_t> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < 8; ++kb) {
      const int64_t i = at(rows, k, r, kb * 128);
      CHECK(seen.insert(i).second);  // no two factors share a byte
      // Its atom: the row block's, the k group's after it; inside: lane r % 32, word r % 128 / 32, byte kb % 4.
      CHECK(i / 512 == r / 128 * 2 + kb / 4);
      CHECK(i % 512 / 16 == r % 32);
      CHECK(i % 16 / 4 == r % 128 / 32);
      CHECK(i % 4 == kb % 4);
      // Every element of the k block has the same factor.
      CHECK(at(rows, k, r, kb * 128 + 127) == i);
    }
  // The first rows of a row block and k block: bytes 0, 16 (row 1), 4 (row 32), 1 (k block 1).
  CHECK(at(rows, k, 0, 0) == 0);
  CHECK(at(rows, k, 1, 0) == 16);
  CHECK(at(rows, k, 32, 0) == 4);
  CHECK(at(rows, k, 0, 128) == 1);
  CHECK(at(rows, k, 128, 0) == 2 * 512);
}

TEST_CASE("UE8M0 values are powers of two with bias 127; 255 is NaN") {
  CHECK(ue8m0_value(127) == 1.0f);
  CHECK(ue8m0_value(130) == 8.0f);
  CHECK(ue8m0_value(125) == 0.25f);
  CHECK(std::isnan(ue8m0_value(255)));
}

TEST_CASE("UE8M0 factors in the problem's text, layout and swap") {
  ProblemLayout l;
  l.scale_a = l.scale_b = ScaleGranularity::Block1x128;
  l.scale_a_format = l.scale_b_format = ScaleFormat::Ue8m0;
  const Definition def = make_definition(256, 256, 512, DType::E4M3, DType::BF16, {}, l);
  const ProblemLayout back = problem_layout(def);
  CHECK(back.scale_a_format == ScaleFormat::Ue8m0);
  CHECK(back.scale_b_format == ScaleFormat::Ue8m0);
  CHECK(problem_layout_text(back) == "A scaled per 1x128:ue8m0, B scaled per 1x128:ue8m0");
  CHECK(def.scale_of(def.matmul_node().operands[0])->scale_format == ScaleFormat::Ue8m0);
  ProblemLayout mixed = l;
  mixed.scale_b_format = ScaleFormat::F32;
  const ProblemLayout swapped = swapped_layout(mixed);
  CHECK(swapped.scale_a_format == ScaleFormat::F32);
  CHECK(swapped.scale_b_format == ScaleFormat::Ue8m0);
}
