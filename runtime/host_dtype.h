#pragma once
// Host-side conversions between float/double and the 16- and 8-bit storage formats, with
// round-to-nearest-even as the GPU's cvt.rn does. Used to prepare inputs and to round
// references the way a kernel's output is rounded.
#include <cstdint>

#include "runtime/launch_spec.h"

namespace gg::rt {

// The value nearest to `x` that `type` can hold (ties to even; overflow to infinity).
double round_to(ElemType type, double x);

uint16_t bf16_bits(float x);
float bf16_value(uint16_t bits);
uint16_t f16_bits(float x);
float f16_value(uint16_t bits);

// FP8 (OCP): e4m3 saturates to +-448 as cvt.rn.satfinite does (infinities too), NaN -> 0x7F;
// e5m2 overflows to infinity (0x7C, 0xFC), NaN -> 0x7F.
uint8_t e4m3_bits(float x);
float e4m3_value(uint8_t bits);
uint8_t e5m2_bits(float x);
float e5m2_value(uint8_t bits);

}  // namespace gg::rt
