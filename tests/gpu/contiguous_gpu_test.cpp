// Contiguous grouped GEMM on the GPU: each group's rows of one A and D times its own B, against
// cuBLAS (one call per group) and fp64, with D poisoned before the launch so rows between and
// around the groups must stay untouched: one group, ragged groups with empty ones and ones
// smaller than a tile, 256 groups, a column-major D; through check_on_gpu (v7, v8, auto) and
// through gg::gemm_contiguous, whose one kernel serves every set of offsets and every M.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
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

gg::Definition contiguous(int64_t groups, int64_t m, int64_t n, int64_t k, gg::ProblemLayout l = {}) {
  l.batch = groups;
  l.source = gg::ProblemSource::Contiguous;
  return gg::make_definition(m, n, k, gg::DType::BF16, gg::DType::BF16, {}, l);
}

}  // namespace

TEST_CASE("contiguous groups on the GPU: each group's rows right, no other row written (v7, v8, auto)") {
  struct Case {
    const char* what;
    int64_t groups, m, n, k;
    std::vector<int64_t> offsets;
    gg::ProblemLayout layout = {};
  };
  gg::ProblemLayout column_major;
  column_major.d = gg::OutputLayout::ColumnMajor;
  const std::vector<Case> cases = {
      {"one group, all rows", 1, 1000, 512, 256, {0, 1000}},
      {"one group, rows 37..700", 1, 1000, 512, 256, {37, 700}},
      {"ragged with empty groups", 7, 700, 384, 264, {3, 3, 4, 131, 259, 259, 388, 650}},
      {"every group empty", 4, 256, 256, 128, {100, 100, 100, 100, 100}},
      {"256 groups", 256, 4096, 256, 128, gg::testing::random_offsets(256, 4000, 3, 50)},
      {"ragged, D column-major", 5, 600, 256, 128, {0, 70, 70, 199, 200, 590}, column_major},
  };
  for (const Case& c : cases) {
    gg::CheckOptions check;
    check.group_offsets = c.offsets;
    gg::testing::check_grouped_families("contiguous", c.what, contiguous(c.groups, c.m, c.n, c.k, c.layout), check);
  }
}

TEST_CASE("gg::gemm_contiguous: one kernel for new offsets and a new M, as a MoE layer calls it") {
  const int64_t groups = 8, n = 512, k = 512, m_most = 2048;
  gg::rt::CublasReference cublas;
  gg::rt::DeviceBuffer a(gg::rt::ElemType::BF16, size_t(m_most * k)), b(gg::rt::ElemType::BF16, size_t(groups * n * k));
  gg::rt::fill_random_uniform(a, 41);
  gg::rt::fill_random_uniform(b, 42);
  gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(m_most * n)), ref(gg::rt::ElemType::BF16, size_t(m_most * n));
  uint64_t compiles = 0;
  for (uint64_t step = 0; step < 3; ++step) {
    const int64_t m = step == 1 ? 777 : m_most;  // the tokens of a step
    const std::vector<int64_t> offsets = gg::testing::random_offsets(groups, m, 10 + step);
    std::vector<int> device_offsets(offsets.begin(), offsets.end());
    gg::rt::DeviceInts group_offsets(device_offsets);
    gg::rt::fill_poison(d);
    gg::rt::fill_poison(ref);
    const uint64_t before = gg::rt::nvrtc_compiles();
    gg::gemm_contiguous(a.data(), b.data(), d.data(), group_offsets.data(), groups, m, n, k, {}, m_most);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (step > 0) compiles += gg::rt::nvrtc_compiles() - before;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t rows = offsets[size_t(g) + 1] - offsets[size_t(g)];
      if (rows == 0) continue;
      cublas.gemm(static_cast<const char*>(a.data()) + offsets[size_t(g)] * k * 2,
                  static_cast<const char*>(b.data()) + g * n * k * 2,
                  static_cast<char*>(ref.data()) + offsets[size_t(g)] * n * 2, gg::rt::ElemType::BF16,
                  gg::rt::ElemType::BF16, rows, n, k);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = d.download(), want = ref.download();
    std::vector<double> x, y;
    int64_t written_outside = 0;
    for (int64_t i = 0; i < m_most; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = size_t(i * n + j);
        if (i < m) {
          x.push_back(got[at]);
          y.push_back(want[at]);
        } else if (got[at] == got[at]) {
          ++written_outside;  // a row past this step's M was written (poison is NaN)
        }
      }
    const double error = gg::rt::relative_frobenius_error(x, y);
    std::printf("gemm_contiguous step %llu (M=%lld): error vs cuBLAS %.3g, %lld elements written past M\n",
                (unsigned long long)step, (long long)m, error, (long long)written_outside);
    CHECK(error < 4e-3);
    CHECK(written_outside == 0);
  }
  // The later steps reuse the first step's kernel (planned for the expected M): no NVRTC compile,
  // however cold the disk cache.
  CHECK(compiles == 0);
}
