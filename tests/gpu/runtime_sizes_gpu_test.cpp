// One kernel for every M: a kernel planned once reads M at run time, and one loaded kernel is
// launched and checked (cuBLAS and fp64, poisoned output) at M = 1, 7, 64, 1000, 4097 with one
// NVRTC compile; in the swapped orientation too (the caller's M is then the kernel's N), and with
// split-K, whose workspace grows with M. gg::gemm then shares one kernel between the sizes its
// plan gives the same kernel.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

namespace {

void check_every_m(const gg::Schedule& s, const char* what) {
  const int64_t n = s.definition().swapped() ? s.definition().m() : s.definition().n();
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t m : {1, 7, 64, 1000, 4097}) sizes.push_back({m, n});
  const uint64_t compiles_before = gg::rt::nvrtc_compiles();
  const auto reports = gg::check_sizes_on_gpu(s, sizes);
  // One watchdog build, compiled once (none when the disk cache already holds it).
  CHECK(gg::rt::nvrtc_compiles() - compiles_before <= 1);
  REQUIRE(reports.size() == sizes.size());
  for (const gg::CheckReport& r : reports) {
    std::printf("%s: %s", what, gg::format_report(r).c_str());
    CHECK_MESSAGE(r.passed, what << ": " << r.verdict);
    CHECK(r.kernel_name == reports.front().kernel_name);
  }
}

}  // namespace

TEST_CASE("one loaded kernel at M = 1, 7, 64, 1000, 4097: v10, auto, auto swapped, auto split-K") {
  check_every_m(gg::builtin_schedule("v10", gg::make_definition(1000, 4096, 2048, gg::DType::BF16, gg::DType::BF16)),
                "v10");
  gg::GemmOptions o;
  check_every_m(gg::plan_gemm(1000, 4096, 2048, o).build(), "auto 1000x4096x2048");
  check_every_m(gg::plan_gemm(8, 4096, 4096, o).build(), "auto swapped 8x4096x4096");
  check_every_m(gg::plan_gemm(256, 256, 8192, o).build(), "auto split-K 256x256x8192");
}

TEST_CASE("gg::gemm shares one kernel between the sizes its plan gives the same kernel") {
  gg::rt::CublasReference cublas;
  const int64_t n = 2048, k = 1024;
  gg::GemmOptions options;
  options.schedule = "v10";  // one configuration for every M
  uint64_t compiles = 0;
  for (int64_t m : {1000, 3000, 4097, 129}) {
    gg::rt::DeviceBuffer a(gg::rt::ElemType::BF16, size_t(m * k)), b(gg::rt::ElemType::BF16, size_t(n * k));
    gg::rt::fill_random_uniform(a, 31);
    gg::rt::fill_random_uniform(b, 32);
    gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(m * n)), ref(gg::rt::ElemType::BF16, size_t(m * n));
    gg::rt::fill_poison(d);
    const uint64_t before = gg::rt::nvrtc_compiles();
    gg::gemm(a.data(), b.data(), d.data(), m, n, k, options);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    compiles += gg::rt::nvrtc_compiles() - before;
    cublas.gemm(a, b, ref, m, n, k);
    const auto got = d.download(), want = ref.download();
    std::vector<double> x(got.begin(), got.end()), y(want.begin(), want.end());
    const double error = gg::rt::relative_frobenius_error(x, y);
    std::printf("gg::gemm v10 M=%lld: error vs cuBLAS %.3g\n", (long long)m, error);
    CHECK(gg::rt::count_poisoned(d) == 0);
    CHECK(error < 4e-3);
  }
  CHECK(compiles <= 1);
}
