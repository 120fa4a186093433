#include "runtime/host_reference.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "runtime/error_metrics.h"
#include "runtime/host_dtype.h"

using gg::rt::Activation;
using gg::rt::BiasAlong;
using gg::rt::ElemType;
using gg::rt::EpilogueRef;

namespace {

// A[2,3] and B[2,3] (N = 2, K = 3): D = A * B^T by hand.
const std::vector<float> kA = {1, 2, -1, 0, -2, 2};
const std::vector<float> kB = {2, 1, 1, -1, 0, 2};
// D[0,0] = 2+2-1 = 3, D[0,1] = -1+0-2 = -3, D[1,0] = 0-2+2 = 0, D[1,1] = 0+0+4 = 4

}  // namespace

TEST_CASE("host reference computes A * B^T exactly on a tiny integer case") {
  const auto ref = gg::rt::host_gemm_reference(kA, kB, 2, 2, 3);
  CHECK(ref.rows == std::vector<int64_t>{0, 1});
  CHECK(ref.values == std::vector<double>{3, -3, 0, 4});
}

TEST_CASE("epilogue: alpha, beta * C, bias along rows or columns, then activation") {
  const std::vector<float> c = {1, 1, 1, 1};
  EpilogueRef epi;
  epi.alpha = 2.0;
  epi.beta = 0.5;
  epi.bias_along = BiasAlong::Cols;
  const std::vector<float> col_bias = {10, 20};
  auto ref = gg::rt::host_gemm_reference(kA, kB, 2, 2, 3, epi, c, col_bias);
  CHECK(ref.values == std::vector<double>{6.5 + 10, -5.5 + 20, 0.5 + 10, 8.5 + 20});

  epi.bias_along = BiasAlong::Rows;
  const std::vector<float> row_bias = {-100, 1};
  epi.activation = Activation::Relu;
  ref = gg::rt::host_gemm_reference(kA, kB, 2, 2, 3, epi, c, row_bias);
  CHECK(ref.values == std::vector<double>{0, 0, 1.5, 9.5});

  const std::vector<float> short_bias = {1};
  CHECK_THROWS_AS(gg::rt::host_gemm_reference(kA, kB, 2, 2, 3, epi, c, short_bias), std::invalid_argument);
}

TEST_CASE("activations") {
  CHECK(gg::rt::apply_activation(Activation::Relu, -1.0) == 0.0);
  CHECK(gg::rt::apply_activation(Activation::Silu, 0.0) == 0.0);
  CHECK(gg::rt::apply_activation(Activation::Silu, 1.0) == doctest::Approx(0.7310585786300049));
  CHECK(gg::rt::apply_activation(Activation::GeluTanh, 1.0) == doctest::Approx(0.8411919906082768));
  CHECK(gg::rt::apply_activation(Activation::GeluTanh, -3.0) == doctest::Approx(-0.0036373920817).epsilon(1e-6));
}

TEST_CASE("the final rounding follows the output type") {
  EpilogueRef epi;
  epi.out = ElemType::BF16;
  CHECK(gg::rt::apply_epilogue(epi, 1.0 + std::ldexp(1.0, -8), 0, 0) == 1.0);  // tie to even
  CHECK(gg::rt::apply_epilogue(epi, 1.0 + 3 * std::ldexp(1.0, -8), 0, 0) == 1.0 + std::ldexp(1.0, -6));
  epi.out = ElemType::F16;
  CHECK(gg::rt::apply_epilogue(epi, 65519.0, 0, 0) == 65504.0);
  CHECK(std::isinf(gg::rt::apply_epilogue(epi, 65520.0, 0, 0)));
  CHECK(gg::rt::apply_epilogue(epi, std::ldexp(1.0, -25) * 3, 0, 0) == std::ldexp(1.0, -23));  // subnormal
}

TEST_CASE("16-bit encodings round trip and round to nearest even") {
  for (float x : {0.0f, -0.0f, 1.0f, -2.5f, 3.140625f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    CAPTURE(x);
    CHECK(gg::rt::f16_value(gg::rt::f16_bits(x)) == x);
    CHECK(gg::rt::bf16_value(gg::rt::bf16_bits(x)) == static_cast<float>(gg::rt::round_to(ElemType::BF16, x)));
  }
  CHECK(gg::rt::f16_bits(1.0f) == 0x3C00);
  CHECK(gg::rt::f16_bits(-2.0f) == 0xC000);
  CHECK(gg::rt::f16_bits(65504.0f) == 0x7BFF);
  CHECK(gg::rt::f16_bits(1e6f) == 0x7C00);
  CHECK(gg::rt::f16_bits(5.9604645e-08f) == 0x0001);
  CHECK(gg::rt::bf16_bits(1.0f) == 0x3F80);
  CHECK(gg::rt::bf16_bits(1.0f + 0x1.0p-8f) == 0x3F80);
  CHECK(gg::rt::bf16_bits(1.0f + 0x1.8p-8f) == 0x3F81);
  CHECK(std::isnan(gg::rt::bf16_value(gg::rt::bf16_bits(NAN))));
}

TEST_CASE("reference rows: all for small problems, a stated sample for large ones") {
  CHECK(gg::rt::reference_rows(256, 256, 256).size() == 256);
  const auto rows = gg::rt::reference_rows(4096, 4096, 4096);
  CHECK(rows.front() == 0);
  CHECK(rows.back() == 4095);
  CHECK(rows.size() <= 64);
  CHECK(std::is_sorted(rows.begin(), rows.end()));
  bool residue_seen[8] = {};
  for (int64_t r : rows) residue_seen[r % 8] = true;
  for (bool seen : residue_seen) CHECK(seen);

  const std::vector<float> full = {1, 2, 3, 4, 5, 6};  // 3 x 2
  CHECK(gg::rt::gather_rows(full, 2, {0, 2}) == std::vector<double>{1, 2, 5, 6});
}
