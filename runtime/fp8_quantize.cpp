#include "runtime/fp8_quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/host_dtype.h"
#include "runtime/parallel_chunks.h"
#include "runtime/ue8m0_atoms.h"

namespace gg::rt {
namespace {

// A granularity's blocks over a [rows, cols] matrix: each `rows_per` x `cols_per`, `count_b` of
// them down the rows and `count_k` along K.
struct Blocks {
  int64_t rows_per = 1, cols_per = 128, count_b = 1, count_k = 1;
};

Blocks blocks_of(Granularity g, int64_t rows, int64_t cols) {
  switch (g) {
    case Granularity::PerTensor:
      return {rows, cols, 1, 1};
    case Granularity::Row1x128:
      return {1, 128, rows, k_blocks(cols)};
    case Granularity::Block128x128:
      return {128, 128, (rows + 127) / 128, k_blocks(cols)};
  }
  return {};
}

int64_t block_scale_index(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols, int64_t b, int64_t kb) {
  if (g == Granularity::PerTensor) return 0;
  const int64_t ld = scale_ld(g, layout, rows, cols);
  return layout == ScaleLayout::MNMajor ? kb * ld + b : b * ld + kb;
}

void check_shape(int64_t rows, int64_t cols, const char* what) {
  if (rows <= 0 || cols <= 0)
    throw std::invalid_argument(std::string(what) + ": the matrix is " + std::to_string(rows) + " x " +
                                std::to_string(cols) + "; both sizes must be positive");
}

uint8_t fp8_bits_of(ElemType type, float x) {
  const float max = fp8_max(type);
  x = std::clamp(x, -max, max);  // .satfinite; a NaN passes through (clamp keeps it)
  return type == ElemType::E4M3 ? e4m3_bits(x) : e5m2_bits(x);
}

}  // namespace

int64_t k_blocks(int64_t cols) { return (cols + 127) / 128; }

int64_t scale_ld(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols) {
  if (g == Granularity::PerTensor) return 1;
  const Blocks blocks = blocks_of(g, rows, cols);
  return layout == ScaleLayout::MNMajor ? (blocks.count_b + 3) / 4 * 4 : blocks.count_k;
}

int64_t scale_count(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols) {
  if (g == Granularity::PerTensor) return 1;
  const Blocks blocks = blocks_of(g, rows, cols);
  return (layout == ScaleLayout::MNMajor ? blocks.count_k : blocks.count_b) * scale_ld(g, layout, rows, cols);
}

int64_t scale_index(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  const Blocks blocks = blocks_of(g, rows, cols);
  return block_scale_index(g, layout, rows, cols, r / blocks.rows_per, c / blocks.cols_per);
}

float fp8_max(ElemType type) {
  if (type == ElemType::E4M3) return 448.0f;
  if (type == ElemType::E5M2) return 57344.0f;
  throw std::invalid_argument(std::string("FP8 quantization to ") + elem_name(type) +
                              ": the type must be e4m3 or e5m2");
}

float fp8_scale(float amax, const Fp8QuantizeOptions& options) {
  if (amax == 0.0f) return 1.0f;
  float scale = amax / fp8_max(options.type);
  if (options.power_of_two_scales) {  // up to the next power of two: clear the mantissa, bump the exponent
    auto bits = std::bit_cast<uint32_t>(scale);
    if ((bits & 0x7FFFFFu) != 0) bits = (bits & 0x7F800000u) + 0x00800000u;
    scale = std::bit_cast<float>(bits);
  }
  return scale;
}

float Fp8Quantized::scale_at(int64_t r, int64_t c) const {
  return scales[static_cast<size_t>(scale_index(granularity, options.layout, rows, cols, r, c))];
}

Fp8Quantized quantize(std::span<const float> x, int64_t rows, int64_t cols, Granularity g,
                      const Fp8QuantizeOptions& options) {
  check_shape(rows, cols, "FP8 quantization");
  if (x.size() != static_cast<size_t>(rows * cols))
    throw std::invalid_argument("FP8 quantization: " + std::to_string(x.size()) + " values for a " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
  fp8_max(options.type);  // checks the type
  Fp8Quantized q;
  q.rows = rows;
  q.cols = cols;
  q.granularity = g;
  q.options = options;
  q.scale_ld = scale_ld(g, options.layout, rows, cols);
  q.values.resize(x.size());
  q.scales.assign(static_cast<size_t>(scale_count(g, options.layout, rows, cols)), 0.0f);  // padding 0
  const Blocks blocks = blocks_of(g, rows, cols);
  const auto row_blocks = static_cast<size_t>(blocks.count_b);
  // Each range of block rows writes only its own values and scales; a range covers 2^16 values or more.
  const auto min_chunk = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 16) / (blocks.rows_per * cols)));
  for_each_chunk(row_blocks, min_chunk, [&](size_t first, size_t last) {
    for (auto b = static_cast<int64_t>(first); b < static_cast<int64_t>(last); ++b) {
      const int64_t r0 = b * blocks.rows_per, r1 = std::min(rows, r0 + blocks.rows_per);
      for (int64_t kb = 0; kb < blocks.count_k; ++kb) {
        const int64_t c0 = kb * blocks.cols_per, c1 = std::min(cols, c0 + blocks.cols_per);
        float amax = 0.0f;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) amax = std::fmax(amax, std::fabs(x[static_cast<size_t>(r * cols + c)]));
        const float scale = fp8_scale(amax, options);
        q.scales[static_cast<size_t>(block_scale_index(g, options.layout, rows, cols, b, kb))] = scale;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) {
            const auto i = static_cast<size_t>(r * cols + c);
            q.values[i] = fp8_bits_of(options.type, x[i] / scale);
          }
      }
    }
  });
  return q;
}

std::vector<uint8_t> ue8m0_atoms(const Fp8Quantized& q) {
  if (q.granularity != Granularity::Row1x128)
    throw std::invalid_argument("UE8M0 atoms hold factors per 1x128 (a quantization per row and 128 of K)");
  std::vector<uint8_t> atoms(static_cast<size_t>(ue8m0_atoms_bytes(q.rows, q.cols)), 127);
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t kb = 0; kb < k_blocks(q.cols); ++kb) {
      const float scale = q.scale_at(r, kb * 128);
      const uint32_t bits = std::bit_cast<uint32_t>(scale);
      if (!(scale > 0.0f) || (bits & 0x807FFFFFu) != 0 || bits >= 0x7F800000u)
        throw std::invalid_argument("scale " + std::to_string(scale) + " of row " + std::to_string(r) + ", k block " +
                                    std::to_string(kb) + " is no normal power of two (quantize with "
                                    "power_of_two_scales for UE8M0 factors)");
      atoms[static_cast<size_t>(ue8m0_byte_index(q.cols, r, kb))] = static_cast<uint8_t>(bits >> 23);
    }
  return atoms;
}

std::vector<double> dequantize(const Fp8Quantized& q) {
  std::vector<double> out(q.values.size());
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c) {
      const auto i = static_cast<size_t>(r * q.cols + c);
      const float value = q.options.type == ElemType::E4M3 ? e4m3_value(q.values[i]) : e5m2_value(q.values[i]);
      out[i] = static_cast<double>(value) * static_cast<double>(q.scale_at(r, c));
    }
  return out;
}

}  // namespace gg::rt
