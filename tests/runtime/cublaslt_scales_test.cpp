// The scales rearranged as cuBLASLt's VEC128_32F and BLK128x128_32F modes read them (host side;
// the GPU half is tests/gpu/cublaslt_fp8_gpu_test.cpp).
#include "runtime/cublaslt_reference.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "runtime/device_buffer.h"
#include "fp8_testing.h"
#include "runtime/fp8_quantize.h"

using gg::rt::ElemType;
using gg::rt::Fp8QuantizeOptions;
using gg::rt::ScaleLayout;

using gg::testing::varied_values;

TEST_CASE("scales rearranged as cuBLASLt reads them: VEC128 [K/128][M], BLK128x128 [N/128][K/128 padded to 4]") {
  const int64_t rows = 130, cols = 640;  // 5 K blocks: BLK128x128 rows padded to 8
  const auto x = varied_values(rows, cols, 5);
  for (ScaleLayout layout : {ScaleLayout::MNMajor, ScaleLayout::KMajor}) {
    Fp8QuantizeOptions options;
    options.layout = layout;
    const auto a = gg::rt::quantize_1x128(x, rows, cols, options);
    const auto vec = gg::rt::cublaslt_vec128_scales(a.scales, layout, rows, cols);
    REQUIRE(vec.size() == 5u * 130u);
    for (int64_t kb = 0; kb < 5; ++kb)
      for (int64_t r = 0; r < rows; ++r) CHECK(vec[static_cast<size_t>(kb * rows + r)] == a.scale_at(r, kb * 128));

    const auto b = gg::rt::quantize_128x128(x, rows, cols, options);
    const auto blk = gg::rt::cublaslt_blk128x128_scales(b.scales, layout, rows, cols);
    REQUIRE(blk.size() == 2u * 8u);
    for (int64_t rb = 0; rb < 2; ++rb)
      for (int64_t kb = 0; kb < 8; ++kb)
        CHECK(blk[static_cast<size_t>(rb * 8 + kb)] == (kb < 5 ? b.scale_at(rb * 128, kb * 128) : 0.0f));
  }
  const std::vector<float> too_few(3, 1.0f);
  CHECK_THROWS_AS(gg::rt::cublaslt_vec128_scales(too_few, ScaleLayout::KMajor, rows, cols), std::invalid_argument);
}
