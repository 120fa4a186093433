// gg::gemm, the one-call API, on device pointers: the result matches cuBLAS on aligned, edge and
// tiny shapes in each dtype pair, and a second call reuses the cached kernel.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "runtime/reference.h"
#include "schedules/gemm.h"

using gg::rt::ElemType;

TEST_CASE("gg::gemm matches cuBLAS on device pointers, bf16 and f16 in, 16-bit and f32 out") {
  struct Shape {
    int64_t m, n, k;
  };
  gg::rt::CublasReference cublas;
  for (Shape s : {Shape{512, 384, 256}, Shape{300, 200, 136}, Shape{1, 8, 8}, Shape{1000, 1000, 1000}}) {
    for (gg::DType in : {gg::DType::BF16, gg::DType::F16}) {
      for (gg::DType out : {in, gg::DType::F32}) {
        const ElemType in_t = in == gg::DType::BF16 ? ElemType::BF16 : ElemType::F16;
        const ElemType out_t = out == gg::DType::F32 ? ElemType::F32 : in_t;
        gg::rt::DeviceBuffer a(in_t, size_t(s.m * s.k)), b(in_t, size_t(s.n * s.k));
        gg::rt::fill_random_uniform(a, 21);
        gg::rt::fill_random_uniform(b, 22);
        gg::rt::DeviceBuffer d(out_t, size_t(s.m * s.n)), ref(out_t, size_t(s.m * s.n));
        gg::rt::fill_poison(d);
        gg::GemmOptions options;
        options.in = in;
        options.out = out;
        gg::gemm(a.data(), b.data(), d.data(), s.m, s.n, s.k, options);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        cublas.gemm(a, b, ref, s.m, s.n, s.k);
        const auto got = d.download(), want = ref.download();
        std::vector<double> x(got.begin(), got.end()), y(want.begin(), want.end());
        const double error = gg::rt::relative_frobenius_error(x, y);
        std::printf("gg::gemm %lldx%lldx%lld %s -> %s (%s): error vs cuBLAS %.3g\n", (long long)s.m, (long long)s.n,
                    (long long)s.k, gg::rt::elem_name(in_t), gg::rt::elem_name(out_t),
                    gg::pick_schedule(gg::gemm_definition(s.m, s.n, s.k, options)).c_str(), error);
        CHECK(gg::rt::count_poisoned(d) == 0);
        CHECK(error < (out == gg::DType::F32 ? 1e-5 : 4e-3));
        // the cached kernel, on other inputs
        gg::rt::fill_random_uniform(a, 23);
        gg::rt::fill_poison(d);
        gg::gemm(a.data(), b.data(), d.data(), s.m, s.n, s.k, options);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        CHECK(gg::rt::count_poisoned(d) == 0);
      }
    }
  }
}

TEST_CASE("gg::gemm on a one-row M-major A and a one-column N-major B: read as K-major, same result") {
  gg::rt::CublasReference cublas;
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape s : {Shape{1, 4096, 512}, Shape{4096, 1, 512}, Shape{1, 1, 264}, Shape{1, 77, 72}}) {
    gg::rt::DeviceBuffer a(ElemType::BF16, size_t(s.m * s.k)), b(ElemType::BF16, size_t(s.n * s.k));
    gg::rt::fill_random_uniform(a, 31);
    gg::rt::fill_random_uniform(b, 32);
    gg::rt::DeviceBuffer d(ElemType::BF16, size_t(s.m * s.n)), ref(ElemType::BF16, size_t(s.m * s.n));
    gg::rt::fill_poison(d);
    gg::GemmOptions options;
    options.layout.a = gg::Layout::MNMajor;
    options.layout.b = gg::Layout::MNMajor;
    const gg::GemmPlan plan = gg::plan_gemm(s.m, s.n, s.k, options);
    gg::gemm(a.data(), b.data(), d.data(), s.m, s.n, s.k, options);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    gg::rt::MatrixLayouts user;  // cuBLAS reads the operands as the user gave them: TT
    user.a_mn_major = user.b_mn_major = true;
    cublas.gemm(a.data(), b.data(), ref.data(), ElemType::BF16, ElemType::BF16, s.m, s.n, s.k, user);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = d.download(), want = ref.download();
    std::vector<double> x(got.begin(), got.end()), y(want.begin(), want.end());
    const double error = gg::rt::relative_frobenius_error(x, y);
    std::printf("gg::gemm TT %lldx%lldx%lld (%s %s): error vs cuBLAS %.3g\n", (long long)s.m, (long long)s.n,
                (long long)s.k, plan.schedule.c_str(), plan.config.c_str(), error);
    CHECK(plan.config.find("read k-major") != std::string::npos);
    // Not the v4 fallback an M-major 2-byte row stride forced, unless the other operand's rows are
    // unaligned too (1x77x72: B N-major with 77-element rows; H100: v4, exact vs cuBLAS).
    if (s.n == 1 || s.n % 8 == 0) CHECK(plan.schedule == "auto");
    CHECK(gg::rt::count_poisoned(d) == 0);
    CHECK(error < 4e-3);
  }
}

TEST_CASE("gg::gemm to f32 over a long k loop: within 1e-5 of fp64 and never worse than 2x cuBLAS's own error") {
  // WGMMA's fp32 accumulation truncates, so one chain's error grows with K: 4096^2 x 16384 erred
  // 1.8e-5 (ours and cuBLAS's alike), 64 x 4096 x 8192 8.6e-6 against cuBLAS's split 4.0e-6, and
  // 1530 x 1500 x 2040 1.8e-6 against the 5.4e-7 of cuBLAS's split mma.sync kernel, until auto
  // promoted every 256 of K.
  struct Shape {
    int64_t m, n, k;
  };
  gg::rt::CublasReference cublas;
  for (Shape s : {Shape{4096, 4096, 16384}, Shape{64, 4096, 8192}, Shape{1530, 1500, 2040}, Shape{1, 4096, 4096}}) {
    gg::rt::DeviceBuffer a(ElemType::BF16, size_t(s.m * s.k)), b(ElemType::BF16, size_t(s.n * s.k));
    const auto host_a = gg::rt::fill_random_uniform(a, 31), host_b = gg::rt::fill_random_uniform(b, 32);
    gg::rt::DeviceBuffer d(ElemType::F32, size_t(s.m * s.n)), ref(ElemType::F32, size_t(s.m * s.n));
    gg::rt::fill_poison(d);
    gg::GemmOptions options;
    options.out = gg::DType::F32;
    gg::gemm(a.data(), b.data(), d.data(), s.m, s.n, s.k, options);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    cublas.gemm(a, b, ref, s.m, s.n, s.k);
    const auto host = gg::rt::host_gemm_reference(host_a, host_b, s.m, s.n, s.k);
    const double ours = gg::rt::relative_frobenius_error(gg::rt::gather_rows(d.download(), s.n, host.rows), host.values);
    const double theirs =
        gg::rt::relative_frobenius_error(gg::rt::gather_rows(ref.download(), s.n, host.rows), host.values);
    std::printf("gg::gemm %lldx%lldx%lld bf16 -> f32 (%s): error vs fp64 %.3g, cuBLAS's %.3g\n", (long long)s.m,
                (long long)s.n, (long long)s.k,
                gg::pick_schedule(gg::gemm_definition(s.m, s.n, s.k, options)).c_str(), ours, theirs);
    CHECK(gg::rt::count_poisoned(d) == 0);
    CHECK(ours < 1e-5);
    CHECK(ours <= 2 * theirs);
  }
}
