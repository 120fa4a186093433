// quantize_on_device against the host quantizer: the same FP8 bytes and the same scales, bit for
// bit, for both block shapes, scale layouts, FP8 types and scale roundings.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "runtime/cuda_error.h"
#include "runtime/fp8_quantize.h"
#include "runtime/reference.h"

using gg::rt::ElemType;
using gg::rt::Granularity;
using gg::rt::ScaleLayout;

namespace {

// bf16 values whose magnitude changes by block (2^-6 .. 2^6, so some quantize to FP8 subnormals),
// with an all-zero 1 x 128 block (row 0, K block 0) and, where there is room, an all-zero
// 128 x 128 block (K block 1 of the first 128 rows).
std::vector<float> bf16_input(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<float> x = gg::rt::random_uniform_values(ElemType::BF16, static_cast<size_t>(rows * cols), seed);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& v = x[static_cast<size_t>(r * cols + c)];
      v *= std::ldexp(1.0f, static_cast<int>((r / 3 + c / 128 * 5) % 13) - 6);  // exact: a power of two
      if ((r == 0 && c < 128) || (c >= 128 && c < 256 && r < 128)) v = 0.0f;
    }
  return x;
}

size_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) return i;
  return a.size() == b.size() ? a.size() : std::min(a.size(), b.size());
}

}  // namespace

TEST_CASE("quantize_on_device gives the host quantizer's bytes and scales bit for bit") {
  struct Shape {
    int64_t rows, cols;
  };
  // Ragged rows (130: MN-major padding to 132; 300: three row blocks, padded to 4) and K (333).
  for (Shape shape : {Shape{130, 333}, Shape{300, 1024}, Shape{256, 128}}) {
    const std::vector<float> x = bf16_input(shape.rows, shape.cols, 31);
    const auto count = static_cast<size_t>(shape.rows * shape.cols);
    gg::rt::DeviceBuffer input(ElemType::BF16, count);
    input.upload(x);
    for (Granularity g : {Granularity::Row1x128, Granularity::Block128x128}) {
      for (ScaleLayout layout : {ScaleLayout::MNMajor, ScaleLayout::KMajor}) {
        for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
          for (bool pow2 : {false, true}) {
            CAPTURE(shape.rows);
            CAPTURE(shape.cols);
            CAPTURE(g == Granularity::Row1x128 ? "1x128" : "128x128");
            CAPTURE(layout == ScaleLayout::MNMajor ? "MN-major" : "K-major");
            CAPTURE(gg::rt::elem_name(type));
            CAPTURE(pow2);
            gg::rt::Fp8QuantizeOptions options;
            options.type = type;
            options.layout = layout;
            options.power_of_two_scales = pow2;
            const gg::rt::Fp8Quantized host = gg::rt::quantize(x, shape.rows, shape.cols, g, options);

            gg::rt::DeviceBuffer out(type, count);
            gg::rt::DeviceBuffer scales(ElemType::F32, host.scales.size());
            gg::rt::fill_poison(out);
            gg::rt::fill_poison(scales);  // padding included: the kernel writes its zeros
            gg::rt::quantize_on_device(input.data(), shape.rows, shape.cols, g, options, out.data(),
                                       static_cast<float*>(scales.data()));
            gg::rt::check_cuda(cudaDeviceSynchronize(), "quantize_on_device");

            std::vector<uint8_t> bytes(count);
            gg::rt::check_cuda(cudaMemcpy(bytes.data(), out.data(), count, cudaMemcpyDeviceToHost), "copying FP8 down");
            const size_t differs = first_difference(bytes, host.values);
            if (differs < count)
              std::printf("first difference at element %zu: device 0x%02X, host 0x%02X (input %a)\n", differs,
                          bytes[differs], host.values[differs], static_cast<double>(x[differs]));
            CHECK(differs == count);
            CHECK(gg::rt::same_bits(scales.download(), host.scales));
          }
        }
      }
    }
  }
}

TEST_CASE("quantize_on_device refuses per-tensor scaling and non-FP8 types") {
  gg::rt::DeviceBuffer input(ElemType::BF16, 256), out(ElemType::E4M3, 256), scales(ElemType::F32, 8);
  gg::rt::Fp8QuantizeOptions options;
  auto* s = static_cast<float*>(scales.data());
  CHECK_THROWS_AS(gg::rt::quantize_on_device(input.data(), 2, 128, Granularity::PerTensor, options, out.data(), s),
                  std::invalid_argument);
  options.type = ElemType::F16;
  CHECK_THROWS_AS(gg::rt::quantize_on_device(input.data(), 2, 128, Granularity::Row1x128, options, out.data(), s),
                  std::invalid_argument);
}

TEST_CASE("FP8 buffers round-trip values and count poisoned elements") {
  for (ElemType type : {ElemType::E4M3, ElemType::E5M2}) {
    CAPTURE(gg::rt::elem_name(type));
    gg::rt::DeviceBuffer buffer(type, 1000);
    gg::rt::fill_poison(buffer);
    CHECK(gg::rt::count_poisoned(buffer) == 1000);
    const auto values = gg::rt::fill_random_uniform(buffer, 3);
    CHECK(gg::rt::same_bits(buffer.download(), values));
    CHECK(gg::rt::count_poisoned(buffer) == 0);
  }
}
