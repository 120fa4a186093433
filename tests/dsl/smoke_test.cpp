#include <doctest/doctest.h>

#include "dsl/schedule.h"

TEST_CASE("a tiled schedule records its directives") {
  gg::Schedule s(gg::make_gemm(256, 256, 128, gg::DType::BF16, gg::DType::BF16));
  s.tile(128, 128, 64).bind("k_o", gg::Binding::Serial);
  CHECK(s.directives().size() == 2);
  CHECK(s.domain().tile_extent(gg::Root::M) == 128);
}
