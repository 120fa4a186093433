#pragma once
// Host-side conversions between float/double and the 16-bit storage formats, with
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

}  // namespace gg::rt
