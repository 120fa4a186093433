// The FP8 formats on the host: every bit pattern, known values, ties to even, saturation, and
// the buffer helpers' FP8 fills.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/device_buffer.h"
#include "runtime/host_dtype.h"

using gg::rt::e4m3_bits;
using gg::rt::e4m3_value;
using gg::rt::e5m2_bits;
using gg::rt::e5m2_value;
using gg::rt::ElemType;

TEST_CASE("every e4m3 bit pattern decodes and encodes back to itself; 0x7F and 0xFF are its NaNs") {
  int nans = 0;
  for (int bits = 0; bits < 256; ++bits) {
    CAPTURE(bits);
    const float value = e4m3_value(static_cast<uint8_t>(bits));
    if ((bits & 0x7F) == 0x7F) {
      CHECK(std::isnan(value));
      CHECK(e4m3_bits(value) == 0x7F);
      ++nans;
      continue;
    }
    CHECK(std::isfinite(value));
    CHECK(e4m3_bits(value) == bits);  // negative zero (0x80) included
    CHECK(static_cast<double>(value) == gg::rt::round_to(ElemType::E4M3, value));
  }
  CHECK(nans == 2);
}

TEST_CASE("every e5m2 bit pattern decodes and encodes back to itself; NaNs encode as 0x7F") {
  int nans = 0;
  for (int bits = 0; bits < 256; ++bits) {
    CAPTURE(bits);
    const float value = e5m2_value(static_cast<uint8_t>(bits));
    if ((bits & 0x7C) == 0x7C && (bits & 0x03) != 0) {
      CHECK(std::isnan(value));
      CHECK(e5m2_bits(value) == 0x7F);
      ++nans;
      continue;
    }
    CHECK(e5m2_bits(value) == bits);  // infinities and negative zero included
  }
  CHECK(nans == 6);
  CHECK(e5m2_value(0x7C) == std::numeric_limits<float>::infinity());
  CHECK(e5m2_value(0xFC) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("known e4m3 and e5m2 values") {
  CHECK(e4m3_bits(448.0f) == 0x7E);
  CHECK(e4m3_bits(-448.0f) == 0xFE);
  CHECK(e4m3_bits(1.0f) == 0x38);
  CHECK(e4m3_bits(-2.0f) == 0xC0);
  CHECK(e4m3_bits(std::ldexp(1.0f, -9)) == 0x01);  // the smallest subnormal
  CHECK(e4m3_bits(std::ldexp(1.0f, -6)) == 0x08);  // the smallest normal
  CHECK(e4m3_bits(0.0f) == 0x00);
  CHECK(e4m3_bits(-0.0f) == 0x80);
  CHECK(e4m3_value(0x7E) == 448.0f);
  CHECK(e4m3_value(0x01) == std::ldexp(1.0f, -9));
  CHECK(e4m3_value(0x07) == 7 * std::ldexp(1.0f, -9));  // the largest subnormal
  CHECK(std::signbit(e4m3_value(0x80)));

  CHECK(e5m2_bits(1.0f) == 0x3C);
  CHECK(e5m2_bits(57344.0f) == 0x7B);
  CHECK(e5m2_bits(std::ldexp(1.0f, -16)) == 0x01);
  CHECK(e5m2_bits(std::ldexp(1.0f, -14)) == 0x04);
  CHECK(e5m2_value(0x7B) == 57344.0f);
  CHECK(e5m2_value(0x01) == std::ldexp(1.0f, -16));
}

TEST_CASE("FP8 rounding is to nearest, ties to even") {
  CHECK(e4m3_bits(1.0625f) == 0x38);  // halfway 1 (even) .. 1.125
  CHECK(e4m3_bits(1.1875f) == 0x3A);  // halfway 1.125 .. 1.25 (even)
  CHECK(e4m3_bits(1.07f) == 0x39);
  CHECK(e4m3_bits(std::ldexp(1.0f, -10)) == 0x00);      // half the smallest subnormal: to zero
  CHECK(e4m3_bits(3 * std::ldexp(1.0f, -10)) == 0x02);  // 1.5 subnormal quanta: to 2
  CHECK(e4m3_bits(-1.1875f) == 0xBA);
  CHECK(e5m2_bits(1.125f) == 0x3C);  // halfway 1 (even) .. 1.25
  CHECK(e5m2_bits(1.375f) == 0x3E);  // halfway 1.25 .. 1.5 (even)
  CHECK(e5m2_bits(3 * std::ldexp(1.0f, -17)) == 0x02);
}

TEST_CASE("e4m3 saturates at 448; e5m2 overflows to infinity") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(e4m3_bits(464.0f) == 0x7E);  // halfway 448 (even) .. 480
  CHECK(e4m3_bits(465.0f) == 0x7E);  // rounds to 480, past the largest finite value: saturated
  CHECK(e4m3_bits(1e6f) == 0x7E);
  CHECK(e4m3_bits(-1e6f) == 0xFE);
  CHECK(e4m3_bits(inf) == 0x7E);
  CHECK(e4m3_bits(-inf) == 0xFE);
  CHECK(e4m3_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
  CHECK(e5m2_bits(61439.0f) == 0x7B);
  CHECK(e5m2_bits(61440.0f) == 0x7C);  // halfway 57344 .. 65536 (even): infinity
  CHECK(e5m2_bits(-1e6f) == 0xFC);
  CHECK(e5m2_bits(inf) == 0x7C);
  CHECK(e5m2_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
}

TEST_CASE("FP8 random fills are in range and representable and their poison is a NaN") {
  for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
    CAPTURE(gg::rt::elem_name(type));
    const auto values = gg::rt::random_uniform_values(type, 4096, 7);
    int subnormals = 0;
    for (float v : values) {
      CHECK(std::fabs(v) <= 1.0f);
      const float back = type == ElemType::E4M3 ? e4m3_value(e4m3_bits(v)) : e5m2_value(e5m2_bits(v));
      CHECK(back == v);
      subnormals += v != 0.0f && std::fabs(v) < (type == ElemType::E4M3 ? std::ldexp(1.0f, -6) : std::ldexp(1.0f, -14));
    }
    if (type == ElemType::E4M3) CHECK(subnormals > 0);  // |x| < 2^-6 is 1.6% of [-1, 1]
    const auto poison = static_cast<uint8_t>(gg::rt::poison_bits(type));
    CHECK(std::isnan(type == ElemType::E4M3 ? e4m3_value(poison) : e5m2_value(poison)));
  }
}
