// cuBLASLt's FP8 GEMMs (block-scaled 1x128 x 128x128, and per tensor) against an fp64 host product
// of the dequantized operands. Those operands are exact, so the error is cuBLASLt's accumulation
// and the output's rounding; block magnitudes differ by up to 2^8, so a scale applied to the wrong
// block (a layout or padding mistake) is an O(1) error.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/cublaslt_reference.h"
#include "runtime/cuda_error.h"
#include "runtime/fp8_quantize.h"
#include "runtime/parallel_chunks.h"
#include "runtime/reference.h"

using gg::rt::ElemType;
using gg::rt::Granularity;
using gg::rt::ScaleLayout;

namespace {

struct Shape {
  int64_t m, n, k;
};

// Values whose magnitude is constant over each `block_rows` x 128 block and changes between
// blocks (2^-4 .. 2^4); `integers`: small integers (-2..2) instead of uniform values.
std::vector<float> operand(int64_t rows, int64_t cols, int64_t block_rows, uint64_t seed, bool integers) {
  std::vector<float> x = integers
                             ? gg::rt::small_integer_values(static_cast<size_t>(rows * cols), seed)
                             : gg::rt::random_uniform_values(ElemType::F32, static_cast<size_t>(rows * cols), seed);
  const int spread = integers ? 5 : 9;  // integers: 2^-2 .. 2^2, so exact sums fit fp32
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[static_cast<size_t>(r * cols + c)] *=
          std::ldexp(1.0f, static_cast<int>((r / block_rows * 3 + c / 128 * 5) % spread) - spread / 2);
  return x;
}

// D[M,N] = A[M,K] * B[N,K]^T in fp64.
std::vector<double> product(const std::vector<double>& a, const std::vector<double>& b, Shape s) {
  std::vector<double> d(static_cast<size_t>(s.m * s.n));
  gg::rt::for_each_chunk(static_cast<size_t>(s.m), 8, [&](size_t first, size_t last) {
    for (auto i = static_cast<int64_t>(first); i < static_cast<int64_t>(last); ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < s.k; ++p)
          sum += a[static_cast<size_t>(i * s.k + p)] * b[static_cast<size_t>(j * s.k + p)];
        d[static_cast<size_t>(i * s.n + j)] = sum;
      }
  });
  return d;
}

// Quantized operands in device memory and the fp64 product of what they stand for.
struct Problem {
  Shape shape;
  gg::rt::Fp8Quantized a, b;
  gg::rt::DeviceBytes a_values, b_values, a_scales, b_scales;
  std::vector<double> reference;

  Problem(Shape s, Granularity ga, Granularity gb, bool integers, const gg::rt::Fp8QuantizeOptions& oa,
          const gg::rt::Fp8QuantizeOptions& ob)
      : shape(s),
        a(gg::rt::quantize(operand(s.m, s.k, 1, 41, integers), s.m, s.k, ga, oa)),
        b(gg::rt::quantize(operand(s.n, s.k, 128, 42, integers), s.n, s.k, gb, ob)),
        a_values(a.values),
        b_values(b.values),
        a_scales(a.scales),
        b_scales(b.scales),
        reference(product(gg::rt::dequantize(a), gg::rt::dequantize(b), s)) {}

  gg::rt::Fp8GemmOperands operands(gg::rt::DeviceBuffer& d) const {
    gg::rt::Fp8GemmOperands o;
    o.a = a_values.as<uint8_t>();
    o.b = b_values.as<uint8_t>();
    o.d = d.data();
    o.a_scales = a_scales.as<float>();
    o.b_scales = b_scales.as<float>();
    o.m = shape.m;
    o.n = shape.n;
    o.k = shape.k;
    o.out_type = d.type();
    o.a_layout = a.options.layout;
    o.b_layout = b.options.layout;
    return o;
  }
};

gg::rt::Fp8QuantizeOptions with_layout(ScaleLayout layout, bool pow2 = false) {
  gg::rt::Fp8QuantizeOptions options;
  options.layout = layout;
  options.power_of_two_scales = pow2;
  return options;
}

// Block-scaled operands as DeepGEMM lays out their scales: A MN-major, B K-major.
Problem blockscaled(Shape s, bool integers = false) {
  return Problem(s, Granularity::Row1x128, Granularity::Block128x128, integers,
                 with_layout(ScaleLayout::MNMajor, integers), with_layout(ScaleLayout::KMajor, integers));
}

double bound(ElemType out) {
  // Output rounding (bf16 2^-9, f16 2^-12 relative) over fp32 accumulation with FP8 tensor cores
  // (about 14 bits kept within a 128-deep block); f32 out is accumulation alone. Seen on an H100
  // with cuBLASLt 13.1: 1.7e-3, 2.3e-4 and 1.1e-4.
  return out == ElemType::BF16 ? 4e-3 : out == ElemType::F16 ? 1e-3 : 5e-4;
}

void check_result(const gg::rt::DeviceBuffer& d, const Problem& p, const char* what) {
  CHECK(gg::rt::count_poisoned(d) == 0);
  const std::vector<float> got = d.download();
  const std::vector<double> x(got.begin(), got.end());
  const double error = gg::rt::relative_frobenius_error(x, p.reference);
  const double diff = gg::rt::deepgemm_diff(x, p.reference);
  std::printf("cuBLASLt %s %lldx%lldx%lld -> %s: relative Frobenius error %.3g, DeepGEMM diff %.3g\n", what,
              static_cast<long long>(p.shape.m), static_cast<long long>(p.shape.n), static_cast<long long>(p.shape.k),
              gg::rt::elem_name(d.type()), error, diff);
  CHECK(error < bound(d.type()));
  CHECK(diff < 1e-3);  // DeepGEMM's own test threshold
}

}  // namespace

TEST_CASE("cuBLASLt block-scaled FP8 matches the fp64 product of the dequantized operands") {
  const gg::rt::CublasLtFp8 lt;
  // 640 = 5 K blocks: B's scale rows need padding to 8 for cuBLASLt; N = 328 ends in a partial block;
  // K = 624 ends in a partial block too.
  for (Shape s : {Shape{256, 384, 1024}, Shape{200, 328, 640}, Shape{132, 200, 624}}) {
    const Problem p = blockscaled(s);
    for (ElemType out : {ElemType::BF16, ElemType::F16, ElemType::F32}) {
      CAPTURE(gg::rt::elem_name(out));
      gg::rt::DeviceBuffer d(out, static_cast<size_t>(s.m * s.n));
      gg::rt::fill_poison(d);
      lt.gemm_blockscaled(p.operands(d));
      check_result(d, p, "block-scaled");
    }
  }
}

TEST_CASE("cuBLASLt block-scaled FP8 takes scales in either layout") {
  const gg::rt::CublasLtFp8 lt;
  const Shape s{192, 256, 640};
  // A K-major and B MN-major, the other way from DeepGEMM's: the same product.
  const Problem p(s, Granularity::Row1x128, Granularity::Block128x128, false, with_layout(ScaleLayout::KMajor),
                  with_layout(ScaleLayout::MNMajor));
  gg::rt::DeviceBuffer d(ElemType::BF16, static_cast<size_t>(s.m * s.n));
  gg::rt::fill_poison(d);
  lt.gemm_blockscaled(p.operands(d));
  check_result(d, p, "block-scaled (A K-major, B MN-major scales)");
}

TEST_CASE("cuBLASLt block-scaled FP8 is exact on small integers with power-of-two scales") {
  const gg::rt::CublasLtFp8 lt;
  const Shape s{200, 328, 640};
  // FP8 values 0, +-128, +-256: each 128-deep block sum is a multiple of 2^14 below 2^23, and the
  // scaled sums (scales 2^-9 .. 2^-5) add up exactly in fp32.
  const Problem p = blockscaled(s, true);
  gg::rt::DeviceBuffer d(ElemType::F32, static_cast<size_t>(s.m * s.n));
  gg::rt::fill_poison(d);
  lt.gemm_blockscaled(p.operands(d));
  const std::vector<float> got = d.download();
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += static_cast<double>(got[i]) != p.reference[i] ? 1 : 0;
  if (wrong > 0)
    std::printf("%zu of %zu elements differ; element 0: %a vs %a\n", wrong, got.size(), static_cast<double>(got[0]),
                p.reference[0]);
  CHECK(wrong == 0);
}

TEST_CASE("cuBLASLt block-scaled FP8 with M a multiple of 4 but not of 8 (other M refused with a reason)") {
  const gg::rt::CublasLtFp8 lt;
  const Problem p = blockscaled(Shape{132, 256, 512});
  gg::rt::DeviceBuffer d(ElemType::BF16, 132 * 256);
  gg::rt::fill_poison(d);
  lt.gemm_blockscaled(p.operands(d));
  check_result(d, p, "block-scaled, M = 132");
  // cuBLASLt 13.1 on an H100 has no algorithm for M = 130; should a later one run it, it must be right.
  const Problem q = blockscaled(Shape{130, 256, 512});
  gg::rt::DeviceBuffer e(ElemType::BF16, 130 * 256);
  gg::rt::fill_poison(e);
  try {
    lt.gemm_blockscaled(q.operands(e));
    check_result(e, q, "block-scaled, M = 130");
  } catch (const gg::rt::CudaError& error) {
    CHECK(std::string(error.what()).find("M a multiple of 4") != std::string::npos);
  }
}

TEST_CASE("cuBLASLt per-tensor FP8 matches the fp64 product of the dequantized operands") {
  const gg::rt::CublasLtFp8 lt;
  for (Shape s : {Shape{256, 384, 1024}, Shape{200, 328, 640}}) {
    const Problem p(s, Granularity::PerTensor, Granularity::PerTensor, false, {}, {});
    for (ElemType out : {ElemType::BF16, ElemType::F32}) {
      CAPTURE(gg::rt::elem_name(out));
      gg::rt::DeviceBuffer d(out, static_cast<size_t>(s.m * s.n));
      gg::rt::fill_poison(d);
      lt.gemm_per_tensor(p.operands(d));
      check_result(d, p, "per-tensor");
    }
  }
}

TEST_CASE("a prepared cuBLASLt FP8 problem reruns to the same bits") {
  const gg::rt::CublasLtFp8 lt;
  const Problem p = blockscaled(Shape{256, 384, 1024});
  gg::rt::DeviceBuffer d(ElemType::BF16, 256 * 384);
  gg::rt::fill_poison(d);
  const gg::rt::Fp8Problem prepared = lt.prepare_blockscaled(p.operands(d));
  prepared.run();
  gg::rt::check_cuda(cudaDeviceSynchronize(), prepared.describe());
  const std::vector<float> first = d.download();
  gg::rt::fill_poison(d);
  for (int i = 0; i < 3; ++i) prepared.run();
  gg::rt::check_cuda(cudaDeviceSynchronize(), prepared.describe());
  CHECK(gg::rt::same_bits(d.download(), first));
  check_result(d, p, "block-scaled, prepared once");
}

TEST_CASE("device-quantized bf16 operands go straight into cuBLASLt") {
  const Shape s{256, 384, 640};
  const auto a = gg::rt::random_uniform_values(ElemType::BF16, static_cast<size_t>(s.m * s.k), 51);
  const auto b = gg::rt::random_uniform_values(ElemType::BF16, static_cast<size_t>(s.n * s.k), 52);
  gg::rt::DeviceBuffer a_in(ElemType::BF16, a.size()), b_in(ElemType::BF16, b.size());
  a_in.upload(a);
  b_in.upload(b);
  const auto oa = with_layout(ScaleLayout::MNMajor), ob = with_layout(ScaleLayout::KMajor);
  gg::rt::DeviceBuffer a_q(ElemType::E4M3, a.size()), b_q(ElemType::E4M3, b.size());
  gg::rt::DeviceBuffer a_s(ElemType::F32,
                           static_cast<size_t>(gg::rt::scale_count(Granularity::Row1x128, oa.layout, s.m, s.k)));
  gg::rt::DeviceBuffer b_s(ElemType::F32,
                           static_cast<size_t>(gg::rt::scale_count(Granularity::Block128x128, ob.layout, s.n, s.k)));
  gg::rt::quantize_on_device(a_in.data(), s.m, s.k, Granularity::Row1x128, oa, a_q.data(),
                             static_cast<float*>(a_s.data()));
  gg::rt::quantize_on_device(b_in.data(), s.n, s.k, Granularity::Block128x128, ob, b_q.data(),
                             static_cast<float*>(b_s.data()));
  gg::rt::check_cuda(cudaDeviceSynchronize(), "quantize_on_device");

  gg::rt::DeviceBuffer d(ElemType::BF16, static_cast<size_t>(s.m * s.n));
  gg::rt::fill_poison(d);
  gg::rt::Fp8GemmOperands o;
  o.a = a_q.data();
  o.b = b_q.data();
  o.d = d.data();
  o.a_scales = static_cast<const float*>(a_s.data());
  o.b_scales = static_cast<const float*>(b_s.data());
  o.m = s.m;
  o.n = s.n;
  o.k = s.k;
  gg::rt::CublasLtFp8().gemm_blockscaled(o);
  // The reference over the host quantizer's operands (bit for bit the device's: fp8_quantize_gpu_test).
  const auto ref = product(gg::rt::dequantize(gg::rt::quantize_1x128(a, s.m, s.k, oa)),
                           gg::rt::dequantize(gg::rt::quantize_128x128(b, s.n, s.k, ob)), s);
  const std::vector<float> got = d.download();
  const double error = gg::rt::relative_frobenius_error(std::vector<double>(got.begin(), got.end()), ref);
  std::printf("cuBLASLt on device-quantized operands 256x384x640 -> bf16: relative Frobenius error %.3g\n", error);
  CHECK(gg::rt::count_poisoned(d) == 0);
  CHECK(error < 4e-3);
}

TEST_CASE("cuBLASLt FP8 refuses what it cannot run") {
  const gg::rt::CublasLtFp8 lt;
  const Problem p = blockscaled(Shape{128, 128, 256});
  gg::rt::DeviceBuffer d(ElemType::BF16, 128 * 128);
  gg::rt::Fp8GemmOperands o = p.operands(d);
  o.k = 8;  // rows of 8 bytes: FP8 needs 16-byte aligned leading dimensions
  CHECK_THROWS_AS(lt.prepare_per_tensor(o), gg::rt::CudaError);
  o = p.operands(d);
  o.a_type = ElemType::BF16;
  CHECK_THROWS_AS(lt.prepare_blockscaled(o), std::invalid_argument);
  o = p.operands(d);
  o.b = nullptr;
  CHECK_THROWS_AS(lt.prepare_blockscaled(o), std::invalid_argument);
}
