// The host FP8 quantizer (DeepGEMM's recipe), its scale layouts, and the device quantizer's
// kernel compiling (NVRTC needs no GPU).
#include "runtime/fp8_quantize.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "fp8_testing.h"
#include "runtime/device_buffer.h"
#include "runtime/error_metrics.h"
#include "runtime/host_dtype.h"
#include "runtime/ue8m0_atoms.h"

using gg::rt::ElemType;
using gg::rt::Fp8QuantizeOptions;
using gg::rt::Granularity;
using gg::rt::ScaleLayout;

using gg::testing::varied_values;

namespace {

float fp8_value(ElemType type, uint8_t bits) {
  return type == ElemType::E4M3 ? gg::rt::e4m3_value(bits) : gg::rt::e5m2_value(bits);
}

// The block of element (r, c): its first row and column and its extent.
struct Block {
  int64_t r0, r1, c0, c1;
};

Block block_of(Granularity g, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  if (g == Granularity::PerTensor) return {0, rows, 0, cols};
  const int64_t height = g == Granularity::Row1x128 ? 1 : 128;
  const int64_t r0 = r / height * height, c0 = c / 128 * 128;
  return {r0, std::min(rows, r0 + height), c0, std::min(cols, c0 + 128)};
}

}  // namespace

TEST_CASE("FP8 quantization round-trips random data closely") {
  const int64_t rows = 70, cols = 1000;  // the last K block has 104 columns
  const auto x = varied_values(rows, cols, 1);
  const std::vector<double> ref(x.begin(), x.end());
  for (Granularity g : {Granularity::Row1x128, Granularity::Block128x128, Granularity::PerTensor}) {
    for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
      CAPTURE(static_cast<int>(g));
      CAPTURE(gg::rt::elem_name(type));
      Fp8QuantizeOptions options;
      options.type = type;
      const double error =
          gg::rt::relative_frobenius_error(gg::rt::dequantize(gg::rt::quantize(x, rows, cols, g, options)), ref);
      // Relative rounding error up to 2^-4 (e4m3) or 2^-3 (e5m2) per element.
      CHECK(error < (type == ElemType::E4M3 ? 0.04 : 0.08));  // measured 0.025 and 0.05
      CHECK(error > 0.0);
    }
  }
}

TEST_CASE("each block's largest magnitude quantizes to exactly +-fp8_max, with scale amax / fp8_max") {
  const int64_t rows = 300, cols = 333;
  const auto x = varied_values(rows, cols, 2);
  for (Granularity g : {Granularity::Row1x128, Granularity::Block128x128, Granularity::PerTensor}) {
    for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
      CAPTURE(static_cast<int>(g));
      CAPTURE(gg::rt::elem_name(type));
      Fp8QuantizeOptions options;
      options.type = type;
      const auto q = gg::rt::quantize(x, rows, cols, g, options);
      const float max = gg::rt::fp8_max(type);
      int checked = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const Block b = block_of(g, rows, cols, r, c);
          if (r != b.r0 || c != b.c0) continue;  // once per block
          float amax = 0.0f;
          int64_t at = 0;
          for (int64_t i = b.r0; i < b.r1; ++i)
            for (int64_t j = b.c0; j < b.c1; ++j)
              if (std::fabs(x[static_cast<size_t>(i * cols + j)]) > amax) {
                amax = std::fabs(x[static_cast<size_t>(i * cols + j)]);
                at = i * cols + j;
              }
          const float scale = q.scale_at(r, c);
          CHECK(scale == amax / max);
          const float value = fp8_value(type, q.values[static_cast<size_t>(at)]);
          CHECK(std::fabs(value) == max);
          CHECK(std::signbit(value) == std::signbit(x[static_cast<size_t>(at)]));
          ++checked;
        }
      CHECK(checked == (g == Granularity::PerTensor ? 1 : g == Granularity::Row1x128 ? rows * 3 : 3 * 3));
    }
  }
}

TEST_CASE("scale layouts index as documented, MN-major padding included") {
  const int64_t rows = 130, cols = 640;  // 130 rows pad to 132; 2 row blocks pad to 4; 5 K blocks
  const auto x = varied_values(rows, cols, 3);
  for (ScaleLayout layout : {ScaleLayout::MNMajor, ScaleLayout::KMajor}) {
    Fp8QuantizeOptions options;
    options.layout = layout;
    const bool mn = layout == ScaleLayout::MNMajor;
    CAPTURE(mn);
    // 1 x 128: MN-major scales[kb * 132 + r], K-major scales[r * 5 + kb].
    const auto a = gg::rt::quantize_1x128(x, rows, cols, options);
    CHECK(a.scale_ld == (mn ? 132 : 5));
    CHECK(a.scales.size() == (mn ? 5u * 132u : 130u * 5u));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t kb = 0; kb < 5; ++kb) {
        float amax = 0.0f;
        for (int64_t c = kb * 128; c < kb * 128 + 128; ++c)
          amax = std::fmax(amax, std::fabs(x[static_cast<size_t>(r * cols + c)]));
        CHECK(a.scales[static_cast<size_t>(mn ? kb * 132 + r : r * 5 + kb)] == amax / 448.0f);
      }
    if (mn)
      for (int64_t kb = 0; kb < 5; ++kb) CHECK(a.scales[static_cast<size_t>(kb * 132 + 131)] == 0.0f);
    // 128 x 128: MN-major scales[kb * 4 + rb], K-major scales[rb * 5 + kb].
    const auto b = gg::rt::quantize_128x128(x, rows, cols, options);
    CHECK(b.scale_ld == (mn ? 4 : 5));
    CHECK(b.scales.size() == (mn ? 5u * 4u : 2u * 5u));
    for (int64_t rb = 0; rb < 2; ++rb)
      for (int64_t kb = 0; kb < 5; ++kb) {
        float amax = 0.0f;
        for (int64_t r = rb * 128; r < std::min(rows, rb * 128 + 128); ++r)
          for (int64_t c = kb * 128; c < kb * 128 + 128; ++c)
            amax = std::fmax(amax, std::fabs(x[static_cast<size_t>(r * cols + c)]));
        CHECK(b.scales[static_cast<size_t>(mn ? kb * 4 + rb : rb * 5 + kb)] == amax / 448.0f);
      }
    if (mn)
      for (int64_t kb = 0; kb < 5; ++kb) CHECK(b.scales[static_cast<size_t>(kb * 4 + 3)] == 0.0f);
  }
}

TEST_CASE("power-of-two scales make quantization exact on small integers times powers of two") {
  const int64_t rows = 200, cols = 384;
  auto x = gg::rt::small_integer_values(static_cast<size_t>(rows * cols), 4);  // -2..2
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[static_cast<size_t>(r * cols + c)] *= std::ldexp(1.0f, static_cast<int>((r / 16 + c / 128) % 5) - 2);
  for (Granularity g : {Granularity::Row1x128, Granularity::Block128x128}) {
    for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
      Fp8QuantizeOptions options;
      options.type = type;
      options.power_of_two_scales = true;
      const auto q = gg::rt::quantize(x, rows, cols, g, options);
      const auto back = gg::rt::dequantize(q);
      CHECK(std::equal(back.begin(), back.end(), x.begin(),
                       [](double d, float f) { return d == static_cast<double>(f); }));
      for (float scale : q.scales) {
        if (scale == 0.0f) continue;  // MN-major padding
        int exponent = 0;
        CHECK(std::frexp(scale, &exponent) == 0.5f);  // a power of two
      }
    }
  }
  // Rounded up, never down: amax / scale stays within the format.
  Fp8QuantizeOptions options;
  options.power_of_two_scales = true;
  CHECK(gg::rt::fp8_scale(448.0f, options) == 1.0f);
  CHECK(gg::rt::fp8_scale(449.0f, options) == 2.0f);
  CHECK(gg::rt::fp8_scale(300.0f, options) == 1.0f);
  CHECK(gg::rt::fp8_scale(0.0f, options) == 1.0f);
}

TEST_CASE("UE8M0 atoms for sm_100a: each power-of-two scale's exponent byte where the atoms hold it") {
  const int64_t rows = 300, cols = 1000;  // 3 row blocks (the last partial), 8 k blocks (2 atoms along K)
  const std::vector<float> x = varied_values(rows, cols, 11);
  Fp8QuantizeOptions options;
  options.power_of_two_scales = true;
  const auto q = gg::rt::quantize_1x128(x, rows, cols, options);
  const std::vector<uint8_t> atoms = gg::rt::ue8m0_atoms(q);
  REQUIRE(atoms.size() == 3 * 2 * 512);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < 8; ++kb) {
      const uint8_t code = atoms[static_cast<size_t>(gg::rt::ue8m0_byte_index(cols, r, kb))];
      CHECK(std::ldexp(1.0f, int(code) - 127) == q.scale_at(r, kb * 128));
    }
  CHECK(atoms.back() == 127);  // rows past 300: padding, a factor of 1
  // fp32 scales that are no powers of two have no UE8M0 byte; 128x128 blocks are not 1x128.
  CHECK_THROWS_AS(gg::rt::ue8m0_atoms(gg::rt::quantize_1x128(x, rows, cols)), std::invalid_argument);
  CHECK_THROWS_AS(gg::rt::ue8m0_atoms(gg::rt::quantize_128x128(x, rows, cols, options)), std::invalid_argument);
}

TEST_CASE("an all-zero block gets scale 1 and zero values") {
  std::vector<float> x(2 * 256, 0.0f);
  x[300] = -3.0f;  // row 1, K block 0
  const auto q = gg::rt::quantize_1x128(x, 2, 256);
  CHECK(q.scale_at(0, 0) == 1.0f);
  CHECK(q.scale_at(0, 200) == 1.0f);
  CHECK(q.scale_at(1, 200) == 1.0f);
  CHECK(q.scale_at(1, 0) == 3.0f / 448.0f);
  CHECK(q.values[0] == 0x00);
  CHECK(q.values[300] == 0xFE);  // -448
}

TEST_CASE("FP8 quantization refuses bad sizes and types") {
  const std::vector<float> x(10, 1.0f);
  CHECK_THROWS_AS(gg::rt::quantize_1x128(x, 3, 3), std::invalid_argument);
  CHECK_THROWS_AS(gg::rt::quantize_1x128(x, 0, 10), std::invalid_argument);
  Fp8QuantizeOptions options;
  options.type = ElemType::BF16;
  CHECK_THROWS_AS(gg::rt::quantize_1x128(x, 1, 10, options), std::invalid_argument);
}

TEST_CASE("the device quantizer's kernel compiles for sm_89 and sm_90a") {
  for (const char* arch : {"sm_89", "sm_90a"}) {
    CAPTURE(arch);
    gg::rt::CompiledKernel kernel;
    REQUIRE_NOTHROW(kernel = gg::rt::compile_fp8_quantize_kernel(arch));
    CHECK(!kernel.cubin.empty());
    CHECK(kernel.lowered_name == "gg_fp8_quantize");
  }
}
