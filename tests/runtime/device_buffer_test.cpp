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

TEST_CASE("same_bits: downloads with NaN poison in the same places are the same; any other bit differs") {
  // A padded output (ldd > N) keeps its poison between the rows: value comparison calls two
  // identical downloads different (NaN != NaN), which reported every repeated launch as a race.
  const float poison = std::bit_cast<float>(gg::rt::poison_bits(ElemType::F32));
  const std::vector<float> first = {1.0f, 2.5f, poison, poison, -3.0f, 0.0f, poison};
  const std::vector<float> again = first;
  CHECK_FALSE(first == again);  // why value comparison cannot be used
  CHECK(gg::rt::same_bits(first, again));

  std::vector<float> changed = first;
  changed[4] = -3.0000002f;
  CHECK_FALSE(gg::rt::same_bits(first, changed));
  std::vector<float> written = first;
  written[2] = 0.0f;  // a kernel that wrote into the padding
  CHECK_FALSE(gg::rt::same_bits(first, written));
  std::vector<float> signed_zero = first;
  signed_zero[5] = -0.0f;  // equal as values, different bits
  CHECK_FALSE(gg::rt::same_bits(first, signed_zero));
  CHECK_FALSE(gg::rt::same_bits(first, std::vector<float>(first.begin(), first.end() - 1)));
  CHECK(gg::rt::same_bits({}, {}));
}
