#include "runtime/host_dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace gg::rt {
namespace {

// Rounds to a binary format with `mantissa_bits` explicit fraction bits, smallest
// normal exponent `min_exponent` (value 2^min_exponent) and largest finite `max_finite`.
double round_to_format(double x, int mantissa_bits, int min_exponent, double max_finite) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| = f * 2^exponent with f in [0.5, 1)
  const int unit_exponent = std::max(exponent - 1, min_exponent) - mantissa_bits;
  const double quantum = std::ldexp(1.0, unit_exponent);
  const double rounded = std::nearbyint(x / quantum) * quantum;  // default mode: ties to even
  // Overflow: IEEE rounds to infinity once |x| reaches max_finite + half a quantum.
  if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return rounded;
}

constexpr double kBf16Max = 3.38953138925153547590470800371487866880e+38;  // (2 - 2^-7) * 2^127
constexpr double kF16Max = 65504.0;
constexpr double kE4m3Max = 448.0;    // 1.75 * 2^8; e4m3 has no infinity (S.1111.111 is NaN)
constexpr double kE5m2Max = 57344.0;  // 1.75 * 2^15

}  // namespace

double round_to(ElemType type, double x) {
  switch (type) {
    case ElemType::F32: return static_cast<double>(static_cast<float>(x));
    case ElemType::BF16: return round_to_format(x, 7, -126, kBf16Max);
    case ElemType::F16: return round_to_format(x, 10, -14, kF16Max);
    // Past the largest finite value: e4m3 has no infinity and saturates as cvt's .satfinite does.
    case ElemType::E4M3: {
      const double r = round_to_format(x, 3, -6, kE4m3Max);
      return std::isinf(r) && std::isfinite(x) ? std::copysign(kE4m3Max, x) : r;
    }
    case ElemType::E5M2: return round_to_format(x, 2, -14, kE5m2Max);
  }
  return x;
}

uint16_t bf16_bits(float x) {
  if (std::isnan(x)) return 0x7FC0;
  const auto rounded = static_cast<float>(round_to(ElemType::BF16, x));
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(rounded) >> 16);
}

float bf16_value(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f16_bits(float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7E00;
  const double rounded = std::fabs(round_to(ElemType::F16, x));
  if (std::isinf(rounded)) return static_cast<uint16_t>(sign | 0x7C00);
  if (rounded < std::ldexp(1.0, -14)) {  // subnormal or zero: multiples of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(rounded, 24)));
  }
  int exponent = 0;
  const double fraction = std::frexp(rounded, &exponent);  // rounded = fraction * 2^exponent
  const auto biased = static_cast<uint16_t>(exponent - 1 + 15);
  const auto mantissa = static_cast<uint16_t>(std::ldexp(fraction * 2.0 - 1.0, 10));
  return static_cast<uint16_t>(sign | (biased << 10) | mantissa);
}

float f16_value(uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int biased = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double value = 0;
  if (biased == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (biased == 31) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    value = std::ldexp(1024 + mantissa, biased - 15 - 10);
  }
  return static_cast<float>(negative ? -value : value);
}

namespace {

// Bits of an already rounded finite value in a binary format with `mantissa_bits` fraction bits and
// exponent bias `bias` (the smallest normal is 2^(1 - bias)).
uint8_t fp8_bits(double rounded, bool negative, int mantissa_bits, int bias) {
  const auto sign = static_cast<uint8_t>(negative ? 0x80 : 0);
  const double magnitude = std::fabs(rounded);
  if (magnitude < std::ldexp(1.0, 1 - bias)) {  // subnormal or zero: multiples of 2^(1 - bias - mantissa_bits)
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::ldexp(magnitude, bias - 1 + mantissa_bits)));
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
  const int biased = exponent - 1 + bias;
  const auto mantissa = static_cast<int>(std::ldexp(fraction * 2.0 - 1.0, mantissa_bits));
  return static_cast<uint8_t>(sign | (biased << mantissa_bits) | mantissa);
}

double fp8_value(uint8_t bits, int mantissa_bits, int bias) {
  const int exponent_field = (bits & 0x7F) >> mantissa_bits;
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  const double magnitude = exponent_field == 0
                               ? std::ldexp(mantissa, 1 - bias - mantissa_bits)
                               : std::ldexp((1 << mantissa_bits) + mantissa, exponent_field - bias - mantissa_bits);
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

}  // namespace

uint8_t e4m3_bits(float x) {
  if (std::isnan(x)) return 0x7F;
  // round_to saturates finite values; an infinity saturates too, as cvt's .satfinite does.
  const double rounded = std::isinf(x) ? std::copysign(kE4m3Max, x) : round_to(ElemType::E4M3, x);
  return fp8_bits(rounded, std::signbit(x), 3, 7);
}

float e4m3_value(uint8_t bits) {
  if ((bits & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();  // S.1111.111, the only NaN
  return static_cast<float>(fp8_value(bits, 3, 7));
}

uint8_t e5m2_bits(float x) {
  if (std::isnan(x)) return 0x7F;
  const double rounded = round_to(ElemType::E5M2, x);
  if (std::isinf(rounded)) return std::signbit(x) ? 0xFC : 0x7C;
  return fp8_bits(rounded, std::signbit(x), 2, 15);
}

float e5m2_value(uint8_t bits) {
  if ((bits & 0x7C) == 0x7C) {  // exponent all ones: infinity or NaN, as in IEEE formats
    if ((bits & 0x03) != 0) return std::numeric_limits<float>::quiet_NaN();
    return (bits & 0x80) != 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(fp8_value(bits, 2, 15));
}

}  // namespace gg::rt
