#pragma once
// FP8 operands with fine-grained fp32 scales, DeepGEMM's recipe: per 1 x 128 block along K for
// activations (A), per 128 x 128 block for weights (B), or one scale per tensor. For each block,
// scale = amax / fp8_max (1 when amax is 0) and q = round_to_fp8(x / scale), both in fp32, q
// saturated to +-fp8_max as cvt.rn.satfinite does; the value q stands for is q * scale.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/jit.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

enum class Granularity { PerTensor, Row1x128, Block128x128 };

// Where the scale of block (b, kb) lies (b: the row, or the 128-row block; kb: the 128-column
// block along K). MNMajor, DeepGEMM's TMA-aligned layout: scales[kb * ld + b], ld = the number of
// b rounded up to 4 (16 bytes), padding 0. KMajor: scales[b * k_blocks + kb]. One scale per tensor
// ignores the layout.
enum class ScaleLayout { MNMajor, KMajor };

struct Fp8QuantizeOptions {
  ElemType type = ElemType::E4M3;  // E4M3 (max 448) or E5M2 (max 57344)
  ScaleLayout layout = ScaleLayout::MNMajor;
  bool power_of_two_scales = false;  // each scale rounded up to a power of two: x / scale is exact
};

int64_t k_blocks(int64_t cols);  // ceil(cols / 128)
int64_t scale_ld(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols);
int64_t scale_count(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols);
// The index into the scales of the scale that element (r, c) is quantized with.
int64_t scale_index(Granularity g, ScaleLayout layout, int64_t rows, int64_t cols, int64_t r, int64_t c);

float fp8_max(ElemType type);  // 448 or 57344; throws std::invalid_argument for other types
// The scale for a block whose largest magnitude is `amax`, as host and device compute it.
float fp8_scale(float amax, const Fp8QuantizeOptions& options);

struct Fp8Quantized {
  int64_t rows = 0, cols = 0;
  Granularity granularity = Granularity::Row1x128;
  Fp8QuantizeOptions options;
  std::vector<uint8_t> values;  // rows x cols, row-major (K contiguous)
  std::vector<float> scales;    // scale_count(...) floats in options.layout
  int64_t scale_ld = 0;
  float scale_at(int64_t r, int64_t c) const;  // the scale element (r, c) is quantized with
};

// `x` is row-major [rows, cols]. Throws std::invalid_argument on sizes or a non-FP8 type.
Fp8Quantized quantize(std::span<const float> x, int64_t rows, int64_t cols, Granularity g,
                      const Fp8QuantizeOptions& options = {});
inline Fp8Quantized quantize_1x128(std::span<const float> x, int64_t rows, int64_t cols,
                                   const Fp8QuantizeOptions& options = {}) {
  return quantize(x, rows, cols, Granularity::Row1x128, options);
}
inline Fp8Quantized quantize_128x128(std::span<const float> x, int64_t rows, int64_t cols,
                                     const Fp8QuantizeOptions& options = {}) {
  return quantize(x, rows, cols, Granularity::Block128x128, options);
}

// sm_100a's block-scaled MMA takes UE8M0 factors in their atoms (runtime/ue8m0_atoms.h): a
// quantization per 1x128 with power-of-two scales (options.power_of_two_scales), each scale as its
// exponent byte, repacked into ue8m0_atoms_bytes(rows, cols) bytes (padding 127, a factor of 1).
// Throws std::invalid_argument for another granularity or a scale that is not a power of two.
std::vector<uint8_t> ue8m0_atoms(const Fp8Quantized& q);

// q * scale for every element, row-major: the operand a reference multiplies.
std::vector<double> dequantize(const Fp8Quantized& q);

// The same quantization on the device, from bf16 (bit for bit what quantize() gives for those
// values): `bf16_input` is row-major [rows, cols], `fp8_out` receives rows * cols bytes and
// `scales_out` scale_count(...) floats (padding included). Per-tensor is host only. The kernel is
// compiled through the JIT (sm_89 or newer) and loaded into the current context at first use;
// asynchronous on `stream`. Throws CudaError, std::invalid_argument.
void quantize_on_device(const void* bf16_input, int64_t rows, int64_t cols, Granularity g,
                        const Fp8QuantizeOptions& options, void* fp8_out, float* scales_out,
                        cudaStream_t stream = nullptr);

// The device quantizer's kernel compiled for `arch` (no GPU needed; for tests).
CompiledKernel compile_fp8_quantize_kernel(const std::string& arch);

}  // namespace gg::rt
