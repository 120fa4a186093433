// Masked grouped GEMM on the GPU: each group's rows in use against cuBLAS (a strided batch over
// M_max) and fp64, D's tiles past a group's rows untouched (poisoned before the launch), for one
// group, ragged groups with empty and full ones, and 256 groups; through check_on_gpu (v7, v8,
// auto) and through gg::gemm_masked, whose one kernel serves every count in the device array.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <random>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "grouped_gpu_check.h"

namespace {

gg::Definition masked(int64_t groups, int64_t m_max, int64_t n, int64_t k) {
  gg::ProblemLayout l;
  l.batch = groups;
  l.source = gg::ProblemSource::Masked;
  return gg::make_definition(m_max, n, k, gg::DType::BF16, gg::DType::BF16, {}, l);
}

std::vector<int64_t> random_rows(int64_t groups, int64_t m_max, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, m_max);
  std::vector<int64_t> rows;
  for (int64_t g = 0; g < groups; ++g) rows.push_back(g == 0 ? 0 : g == 1 ? m_max : pick(rng));
  return rows;
}

}  // namespace

TEST_CASE("masked groups on the GPU: rows in use right, later tiles untouched (v7, v8, auto)") {
  struct Case {
    const char* what;
    int64_t groups, m_max, n, k;
    std::vector<int64_t> rows;
  };
  const std::vector<Case> cases = {
      {"one group, full", 1, 1024, 512, 256, {1024}},
      {"one group, 300 rows", 1, 1024, 512, 256, {300}},
      {"ragged", 6, 256, 384, 264, {0, 1, 127, 128, 129, 256}},
      {"every group empty", 4, 256, 256, 128, {0, 0, 0, 0}},
      {"256 groups", 256, 64, 256, 128, random_rows(256, 64, 3)},
  };
  for (const Case& c : cases) {
    gg::CheckOptions check;
    check.group_rows = c.rows;
    gg::testing::check_grouped_families("masked", c.what, masked(c.groups, c.m_max, c.n, c.k), check);
  }
}

TEST_CASE("gg::gemm_masked: one kernel for new counts in the device array, as a decode loop calls it") {
  const int64_t groups = 8, m_max = 256, n = 512, k = 512;
  gg::rt::CublasReference cublas;
  gg::rt::DeviceBuffer a(gg::rt::ElemType::BF16, size_t(groups * m_max * k)), b(gg::rt::ElemType::BF16, size_t(groups * n * k));
  gg::rt::fill_random_uniform(a, 41);
  gg::rt::fill_random_uniform(b, 42);
  gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(groups * m_max * n)), ref(gg::rt::ElemType::BF16, size_t(groups * m_max * n));
  gg::rt::MatrixLayouts batched;
  batched.batch = groups;
  cublas.gemm(a.data(), b.data(), ref.data(), gg::rt::ElemType::BF16, gg::rt::ElemType::BF16, m_max, n, k, batched);
  const auto want = ref.download();
  uint64_t compiles = 0;
  for (uint64_t step = 0; step < 3; ++step) {
    std::vector<int> rows;
    for (int64_t row : random_rows(groups, m_max, 10 + step)) rows.push_back(int(row));
    gg::rt::DeviceInts group_rows(rows);
    gg::rt::fill_poison(d);
    const uint64_t before = gg::rt::nvrtc_compiles();
    gg::gemm_masked(a.data(), b.data(), d.data(), group_rows.data(), groups, m_max, n, k, {}, 64);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (step > 0) compiles += gg::rt::nvrtc_compiles() - before;
    const auto got = d.download();
    std::vector<double> x, y;
    int64_t touched_past = 0;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t i = 0; i < m_max; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const size_t at = size_t((g * m_max + i) * n + j);
          if (i < rows[size_t(g)]) {
            x.push_back(got[at]);
            y.push_back(want[at]);
          } else if (i >= (rows[size_t(g)] + 127) / 128 * 128 && got[at] == got[at]) {
            ++touched_past;  // a tile past the group's rows was written (poison is NaN)
          }
        }
    const double error = gg::rt::relative_frobenius_error(x, y);
    std::printf("gemm_masked step %llu: error vs cuBLAS %.3g, %lld elements written past groups\n",
                (unsigned long long)step, error, (long long)touched_past);
    CHECK(error < 4e-3);
    CHECK(touched_past == 0);
  }
  CHECK(compiles == 0);  // the later steps reuse the first step's kernel
}
