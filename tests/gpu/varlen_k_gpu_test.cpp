// Variable-K grouped GEMM on the GPU (MoE weight gradients): D[g] = A[range g]^T B[range g] over
// one A [K, M] and B [K, N], against cuBLAS (one call per group on its rows of K; zeros for an
// empty range) and fp64, D poisoned before the launch: one group, ragged ranges with empty ones
// and ones shorter than a k tile, 64 groups; through check_on_gpu (v7, v8, auto) and through
// gg::gemm_varlen_k, whose one kernel serves every K and every set of offsets.
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

gg::Definition varlen_k(int64_t groups, int64_t m, int64_t n, int64_t k) {
  gg::ProblemLayout l;
  l.a = gg::Layout::MNMajor;
  l.b = gg::Layout::MNMajor;
  l.batch = groups;
  l.source = gg::ProblemSource::VarlenK;
  return gg::make_definition(m, n, k, gg::DType::BF16, gg::DType::BF16, {}, l);
}

}  // namespace

TEST_CASE("variable-K groups on the GPU: each group's range right, zeros for an empty one (v7, v8, auto)") {
  struct Case {
    const char* what;
    int64_t groups, m, n, k;
    std::vector<int64_t> offsets;
  };
  const std::vector<Case> cases = {
      {"one group, all of K", 1, 512, 384, 1000, {0, 1000}},
      {"one group, rows 37..700 of K", 1, 512, 384, 1000, {37, 700}},
      {"ragged with empty ranges", 6, 384, 256, 1000, {0, 0, 1, 64, 263, 263, 990}},
      {"64 groups", 64, 256, 512, 8192, gg::testing::random_offsets(64, 8192, 5)},
  };
  for (const Case& c : cases) {
    gg::CheckOptions check;
    check.group_offsets = c.offsets;
    gg::testing::check_grouped_families("varlen_k", c.what, varlen_k(c.groups, c.m, c.n, c.k), check);
  }
}

TEST_CASE("gg::gemm_varlen_k: one kernel for new offsets and a new K, as a training step calls it") {
  const int64_t groups = 8, m = 256, n = 384, k_most = 4096;
  gg::rt::CublasReference cublas;
  gg::rt::DeviceBuffer a(gg::rt::ElemType::BF16, size_t(k_most * m)), b(gg::rt::ElemType::BF16, size_t(k_most * n));
  gg::rt::fill_random_uniform(a, 51);
  gg::rt::fill_random_uniform(b, 52);
  gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(groups * m * n)), ref(gg::rt::ElemType::BF16, size_t(groups * m * n));
  gg::rt::MatrixLayouts mn_major;
  mn_major.a_mn_major = true;
  mn_major.b_mn_major = true;
  mn_major.lda = m;
  mn_major.ldb = n;
  uint64_t compiles = 0;
  for (uint64_t step = 0; step < 3; ++step) {
    const int64_t k = step == 1 ? 1234 : k_most;  // the tokens of a step
    std::vector<int64_t> offsets = gg::testing::random_offsets(groups, k, 20 + step);
    offsets[2] = offsets[1];  // group 1 has no tokens: its D is zero
    std::vector<int> device_offsets(offsets.begin(), offsets.end());
    gg::rt::DeviceInts group_offsets(device_offsets);
    gg::rt::fill_poison(d);
    const uint64_t before = gg::rt::nvrtc_compiles();
    gg::gemm_varlen_k(a.data(), b.data(), d.data(), group_offsets.data(), groups, m, n, k);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (step > 0) compiles += gg::rt::nvrtc_compiles() - before;
    REQUIRE(cudaMemset(ref.data(), 0, ref.bytes()) == cudaSuccess);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t rows = offsets[size_t(g) + 1] - offsets[size_t(g)];
      if (rows == 0) continue;
      cublas.gemm(static_cast<const char*>(a.data()) + offsets[size_t(g)] * m * 2,
                  static_cast<const char*>(b.data()) + offsets[size_t(g)] * n * 2,
                  static_cast<char*>(ref.data()) + g * m * n * 2, gg::rt::ElemType::BF16, gg::rt::ElemType::BF16, m, n,
                  rows, mn_major);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = d.download(), want = ref.download();
    std::vector<double> x(got.begin(), got.end()), y(want.begin(), want.end());
    int64_t nonzero_empty = 0;
    for (int64_t i = 0; i < m * n; ++i) nonzero_empty += got[size_t(1 * m * n + i)] != 0.0f;  // NaN counts too
    const double error = gg::rt::relative_frobenius_error(x, y);
    std::printf("gemm_varlen_k step %llu (K=%lld): error vs cuBLAS %.3g, %lld elements of the empty group not 0\n",
                (unsigned long long)step, (long long)k, error, (long long)nonzero_empty);
    CHECK(error < 4e-3);
    CHECK(nonzero_empty == 0);
  }
  CHECK(compiles == 0);  // the later steps reuse the first step's kernel
}
