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
