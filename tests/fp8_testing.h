#pragma once
// Shared by the FP8 tests: data whose scale factors all differ.
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/device_buffer.h"

namespace gg::testing {

// Uniform values whose magnitude changes from block to block (factor 2^-4 .. 2^4), so a scale
// read from the wrong block is far off.
inline std::vector<float> varied_values(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<float> x = rt::random_uniform_values(rt::ElemType::F32, static_cast<size_t>(rows * cols), seed);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[static_cast<size_t>(r * cols + c)] *= std::ldexp(1.0f, static_cast<int>((r * 7 + c / 128 * 3) % 9) - 4);
  return x;
}

}  // namespace gg::testing
