// The host-side halves of the buffer helpers; uploading needs a GPU (tests/gpu).
#include "runtime/device_buffer.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "runtime/host_dtype.h"

using gg::rt::ElemType;

TEST_CASE("poison patterns are NaN in every element type and are counted") {
  CHECK(std::isnan(std::bit_cast<float>(gg::rt::poison_bits(ElemType::F32))));
  CHECK(std::isnan(gg::rt::bf16_value(static_cast<uint16_t>(gg::rt::poison_bits(ElemType::BF16)))));
  CHECK(std::isnan(gg::rt::f16_value(static_cast<uint16_t>(gg::rt::poison_bits(ElemType::F16)))));

  for (ElemType type : {ElemType::F32, ElemType::BF16, ElemType::F16}) {
    CAPTURE(gg::rt::elem_name(type));
    std::vector<uint8_t> bytes = gg::rt::poison_bytes(type, 10);
    CHECK(gg::rt::count_poisoned_bytes(type, bytes) == 10);
    // Overwrite three elements, one of them with an ordinary (canonical) NaN.
    const auto width = static_cast<size_t>(gg::rt::elem_bytes(type));
    std::memset(&bytes[0], 0, width);
    std::memset(&bytes[4 * width], 0x3C, width);
    std::memset(&bytes[9 * width], 0xFF, width);
    CHECK(gg::rt::count_poisoned_bytes(type, bytes) == 7);
  }
}

TEST_CASE("random fills are deterministic, in range and representable") {
  const auto a = gg::rt::random_uniform_values(ElemType::BF16, 1000, 42);
  CHECK(a == gg::rt::random_uniform_values(ElemType::BF16, 1000, 42));
  CHECK(a != gg::rt::random_uniform_values(ElemType::BF16, 1000, 43));
  double sum = 0;
  for (float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v <= 1.0f);
    CHECK(static_cast<double>(v) == gg::rt::round_to(ElemType::BF16, v));
    sum += v;
  }
  CHECK(std::fabs(sum / 1000) < 0.1);  // roughly centred
}

TEST_CASE("small-integer fills take every value in -2..2 and nothing else") {
  const auto values = gg::rt::small_integer_values(1000, 7);
  int seen[5] = {};
  for (float v : values) {
    REQUIRE(v == std::round(v));
    REQUIRE(v >= -2.0f);
    REQUIRE(v <= 2.0f);
    ++seen[static_cast<int>(v) + 2];
  }
  for (int count : seen) CHECK(count > 100);
}
