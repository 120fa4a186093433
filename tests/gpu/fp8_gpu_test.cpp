// FP8 with DeepGEMM's fine-grained factors on the GPU: every warp-specialized tutorial step and
// `auto` through check_on_gpu (fp64 over the dequantized operands, cuBLASLt's block-scaled FP8 on
// the same inputs, poisoned D, exact mode) on edge shapes, and gg::gemm_fp8 from decode to large M
// against cuBLASLt.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "runtime/cublaslt_reference.h"
#include "runtime/device_buffer.h"
#include "runtime/error_metrics.h"
#include "runtime/fp8_quantize.h"
#include "runtime/host_dtype.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

namespace {

gg::Definition fp8(int64_t m, int64_t n, int64_t k, gg::DType out = gg::DType::BF16) {
  gg::ProblemLayout l;
  l.scale_a = gg::ScaleGranularity::Block1x128;
  l.scale_b = gg::ScaleGranularity::Block128x128;
  return gg::make_definition(m, n, k, gg::DType::E4M3, out, {}, l);
}

}  // namespace

TEST_CASE("fp8 on the GPU: v8, v10 and auto on edge shapes, random and exact, against fp64 and cuBLASLt") {
  // M = 1, M and N not multiples of the tile, K = 128 and 128 x odd, N = 112 x k.
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 112, 128}, {129, 264, 640}, {200, 224, 384}, {256, 896, 1152}, {1000, 1000, 1024}};
  for (const auto& [m, n, k] : shapes)
    for (const char* name : {"v8", "v10", "auto"})
      for (bool exact : {false, true}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(name);
        CAPTURE(exact);
        // Exact mode with an f32 output: small integers times power-of-two factors, every sum exact.
        const gg::Definition def = fp8(m, n, k, exact ? gg::DType::F32 : gg::DType::BF16);
        const gg::Schedule s = std::string(name) == "auto" ? gg::plan_gemm(m, n, k, [&] {
          gg::GemmOptions o;
          o.in = gg::DType::E4M3;
          o.out = def.output_dtype();
          o.layout.scale_a = gg::ScaleGranularity::Block1x128;
          o.layout.scale_b = gg::ScaleGranularity::Block128x128;
          return o;
        }()).build() : gg::builtin_schedule(name, def);
        gg::CheckOptions o;
        o.exact = exact;
        o.repeat = 2;
        const gg::CheckReport r = gg::check_on_gpu(s, o);
        INFO(gg::format_report(r));
        CHECK(r.passed);
        CHECK(r.unwritten == 0);
        if (exact) CHECK(r.error_vs_host == 0.0);
      }
}

TEST_CASE("gg::gemm_fp8: decode to large M, each against cuBLASLt's block-scaled FP8 on the same inputs") {
  const int64_t n = 512, k = 1024;
  gg::rt::CublasLtFp8 lt;
  for (int64_t m : {4, 64, 1000, 4100}) {
    CAPTURE(m);
    const auto make = [](int64_t rows, int64_t cols, gg::rt::Granularity g, gg::rt::ScaleLayout layout, uint64_t seed) {
      const std::vector<float> x = gg::rt::random_uniform_values(gg::rt::ElemType::F32, size_t(rows * cols), seed);
      gg::rt::Fp8QuantizeOptions q;
      q.layout = layout;
      return gg::rt::quantize(x, rows, cols, g, q);
    };
    const gg::rt::Fp8Quantized qa = make(m, k, gg::rt::Granularity::Row1x128, gg::rt::ScaleLayout::MNMajor, 1 + m);
    const gg::rt::Fp8Quantized qb = make(n, k, gg::rt::Granularity::Block128x128, gg::rt::ScaleLayout::KMajor, 2);
    const gg::rt::DeviceBytes a(qa.values), b(qb.values), sa(qa.scales), sb(qb.scales);
    gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(m * n)), ref(gg::rt::ElemType::BF16, size_t(m * n));
    gg::rt::fill_poison(d);
    gg::GemmOptions o;
    o.in = gg::DType::E4M3;
    gg::gemm_fp8(a.as<void>(), sa.as<float>(), b.as<void>(), sb.as<float>(), d.data(), m, n, k, o);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    gg::rt::Fp8GemmOperands ops;
    ops.a = a.as<void>();
    ops.b = b.as<void>();
    ops.d = ref.data();
    ops.a_scales = sa.as<float>();
    ops.b_scales = sb.as<float>();
    ops.m = m;
    ops.n = n;
    ops.k = k;
    lt.gemm_blockscaled(ops);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<float> got = d.download(), want = ref.download();
    std::vector<double> mine(got.begin(), got.end()), theirs(want.begin(), want.end());
    for (double v : mine) REQUIRE_FALSE(std::isnan(v));
    const double error = gg::rt::relative_frobenius_error(mine, theirs);
    std::printf("gemm_fp8 M=%lld: error vs cuBLASLt %g, DeepGEMM diff %g\n", static_cast<long long>(m), error,
                gg::rt::deepgemm_diff(mine, theirs));
    CHECK(error <= 4e-3);
  }
}
