#include <doctest/doctest.h>

#include "schedules/tutorial.h"

using namespace gg;

// A step's directives with the tile width and the MMA's n set to `n`: v10 widens the tile.
std::vector<Directive> at_tile_n(std::vector<Directive> ds, int64_t n) {
  for (Directive& d : ds) {
    if (auto* t = std::get_if<TileD>(&d)) t->n = n;
    if (auto* m = std::get_if<MmaD>(&d)) m->n = static_cast<int>(n);
  }
  return ds;
}

TEST_CASE("each tutorial step only adds primitive calls to the previous one (v10 also widens the tile)") {
  Definition def = make_gemm(8192, 8192, 8192, DType::BF16, DType::BF16);
  for (int v = 2; v <= kTutorialSteps; ++v) {
    auto next = tutorial_schedule(v, def).directives();
    const int64_t tile_n = std::get<TileD>(next[0]).n;
    CHECK(tile_n == (v == 10 ? 256 : 128));
    auto prev = at_tile_n(tutorial_schedule(v - 1, def).directives(), tile_n);
    CAPTURE(v);
    REQUIRE(next.size() > prev.size());
    for (size_t i = 0; i < prev.size(); ++i) {
      CAPTURE(i);
      // v8's deepest pipeline that fits is shallower on v10's wider tile
      auto* cb_next = std::get_if<CircularBufferD>(&next[i]);
      auto* cb_prev = std::get_if<CircularBufferD>(&prev[i]);
      if (v == 10 && cb_next && cb_prev && cb_prev->stages == 4) {
        CHECK(cb_next->stages == 3);
        continue;
      }
      CHECK(next[i] == prev[i]);
    }
  }
}

TEST_CASE("the tutorial steps build up the expected structure") {
  Definition def = make_gemm(8192, 8192, 8192, DType::BF16, DType::BF16);
  Schedule v10 = tutorial_schedule(10, def);
  CHECK(v10.domain().tile_extent(Root::M) == 128);
  CHECK(v10.domain().tile_extent(Root::N) == 256);
  CHECK(v10.domain().tile_extent(Root::K) == 64);
  // Four 48 KB stages fit beside 32 KB of subtile staging (64 KB for the whole tile did not).
  CHECK(v10.circular_buffer_of()->stages == 4);
  CHECK(v10.store_subtile_of()->cols == 64);
  CHECK(v10.store_subtile_of()->buffers == 2);
  Schedule v10_f32 = tutorial_schedule(10, make_gemm(8192, 8192, 8192, DType::BF16, DType::F32));
  CHECK(v10_f32.store_subtile_of()->cols == 32);  // one 128-byte swizzle atom of f32
  CHECK(v10_f32.circular_buffer_of()->stages == 4);
  CHECK(tutorial_schedule(8, def).circular_buffer_of()->stages == 4);
  CHECK(v10.consumer_warpgroups() == 2);
  CHECK(v10.cluster_dims()->x == 2);
  CHECK(v10.multicast_operands() == std::vector<std::string>{"B"});
  CHECK(v10.persistence().has_value());
  CHECK(tutorial_schedule(5, def).circular_buffer_of()->stages == 2);
  CHECK_FALSE(tutorial_schedule(4, def).circular_buffer_of().has_value());
}

TEST_CASE("small K clamps the pipeline depth to what the k loop can fill, never below two") {
  Definition def = make_gemm(256, 256, 64, DType::BF16, DType::BF16);
  CHECK(tutorial_schedule(8, def).circular_buffer_of()->stages == 2);
  Definition mid = make_gemm(256, 256, 192, DType::BF16, DType::BF16);
  CHECK(tutorial_schedule(8, mid).circular_buffer_of()->stages == 3);
}

TEST_CASE("unknown schedule names list the built-in ones") {
  Definition def = make_gemm(128, 128, 64, DType::BF16, DType::BF16);
  CHECK_THROWS_WITH(builtin_schedule("v11", def), doctest::Contains("built-in schedules are v1, v2"));
}
