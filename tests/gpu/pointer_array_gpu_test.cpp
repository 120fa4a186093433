// Pointer-array grouped GEMM on the GPU: every group in allocations of its own with its own M, N,
// K and leading dimensions (every other group's padded), its tensor maps written on the device by
// the launch's map builder; against cuBLAS (one call per group) and fp64, with D poisoned so the
// padding between a group's rows must stay untouched. One group, ragged groups with empty ones
// (no rows, no columns, no K) and ones smaller than a tile, 256 groups, MN-major operands;
// through check_on_gpu (v8, auto) and through gg::gemm_pointer_array, whose one kernel serves
// every set of sizes.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <random>
#include <vector>

#include "codegen/gemm_check.h"
#include "runtime/cublas_reference.h"
#include "runtime/device_buffer.h"
#include "runtime/error_metrics.h"
#include "runtime/jit.h"
#include "schedules/gemm.h"
#include "grouped_gpu_check.h"

namespace {

gg::Definition pointer_array(int64_t groups, int64_t m, int64_t n, int64_t k, gg::ProblemLayout l = {}) {
  l.batch = groups;
  l.source = gg::ProblemSource::PointerArray;
  return gg::make_definition(m, n, k, gg::DType::BF16, gg::DType::BF16, {}, l);
}

// `groups` groups of random sizes up to m, n, k, N a multiple of 8 (D's rows whole 16-byte pieces,
// as a TMA store needs).
std::vector<int64_t> random_sizes(int64_t groups, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> sizes;
  for (int64_t g = 0; g < groups; ++g) {
    sizes.push_back(std::uniform_int_distribution<int64_t>(0, m)(rng));
    sizes.push_back(std::uniform_int_distribution<int64_t>(0, n / 8)(rng) * 8);
    sizes.push_back(std::uniform_int_distribution<int64_t>(0, k)(rng));
  }
  return sizes;
}

}  // namespace

TEST_CASE("pointer-array groups on the GPU: each group's own sizes and pitches, no padding written (v8, auto)") {
  struct Case {
    const char* what;
    int64_t groups, m, n, k;
    std::vector<int64_t> sizes;  // M, N, K per group
    gg::ProblemLayout layout = {};
  };
  gg::ProblemLayout mn_major;
  mn_major.a = gg::Layout::MNMajor;
  mn_major.b = gg::Layout::MNMajor;
  const std::vector<Case> cases = {
      {"one group", 1, 1000, 512, 256, {1000, 512, 256}},
      {"ragged with empty groups", 7, 700, 384, 264,
       {700, 384, 264, 0, 384, 264, 130, 0, 64, 1, 8, 1, 129, 200, 0, 333, 384, 8, 65, 104, 263}},
      {"256 groups", 256, 300, 256, 128, random_sizes(256, 300, 256, 128, 5)},
      {"ragged, A and B MN-major", 5, 600, 256, 128, {600, 256, 128, 17, 200, 64, 0, 0, 0, 256, 72, 100, 99, 8, 120},
       mn_major},
  };
  for (const Case& c : cases) {
    gg::CheckOptions check;
    check.group_sizes = c.sizes;
    gg::testing::check_grouped_families("pointer_array", c.what, pointer_array(c.groups, c.m, c.n, c.k, c.layout),
                                        check, {"v8", "auto"});
  }
}

TEST_CASE("gg::gemm_pointer_array: one kernel for every set of sizes and pointers, as cuBLAS's grouped call takes them") {
  const int64_t groups = 6, most = 512;
  gg::rt::CublasReference cublas;
  uint64_t compiles = 0;
  for (uint64_t step = 0; step < 3; ++step) {
    const std::vector<int64_t> sizes = random_sizes(groups, most, most, most, 20 + step);
    std::vector<gg::rt::DeviceBuffer> a, b, d, ref;
    std::vector<const void*> a_ptrs, b_ptrs;
    std::vector<void*> d_ptrs;
    std::vector<long long> lda, ldb, ldd;
    std::vector<int> device_sizes(sizes.begin(), sizes.end());
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t m = sizes[size_t(3 * g)], n = sizes[size_t(3 * g + 1)], k = sizes[size_t(3 * g + 2)];
      lda.push_back((k + 7) / 8 * 8 + 8);  // padded: a pitch of its own
      ldb.push_back((k + 7) / 8 * 8);
      ldd.push_back((n + 7) / 8 * 8);
      a.emplace_back(gg::rt::ElemType::BF16, size_t(std::max<int64_t>(1, m * lda.back())));
      b.emplace_back(gg::rt::ElemType::BF16, size_t(std::max<int64_t>(1, n * ldb.back())));
      d.emplace_back(gg::rt::ElemType::BF16, size_t(std::max<int64_t>(1, m * ldd.back())));
      ref.emplace_back(gg::rt::ElemType::BF16, d.back().count());
      gg::rt::fill_random_uniform(a.back(), 50 + uint64_t(g));
      gg::rt::fill_random_uniform(b.back(), 80 + uint64_t(g));
      gg::rt::fill_poison(d.back());
      gg::rt::fill_poison(ref.back());
      a_ptrs.push_back(a.back().data());
      b_ptrs.push_back(b.back().data());
      d_ptrs.push_back(d.back().data());
    }
    const gg::rt::DeviceBytes a_array(a_ptrs), b_array(b_ptrs), d_array(d_ptrs), lda_array(lda), ldb_array(ldb),
        ldd_array(ldd), sizes_array(device_sizes);
    gg::GroupedPointers arrays;
    arrays.a = a_array.as<const void*>();
    arrays.b = b_array.as<const void*>();
    arrays.d = d_array.as<void*>();
    arrays.sizes = sizes_array.as<int>();
    arrays.lda = lda_array.as<long long>();
    arrays.ldb = ldb_array.as<long long>();
    arrays.ldd = ldd_array.as<long long>();
    const uint64_t before = gg::rt::nvrtc_compiles();
    gg::gemm_pointer_array(arrays, groups, {}, {most, most, most});
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (step > 0) compiles += gg::rt::nvrtc_compiles() - before;
    double worst = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t m = sizes[size_t(3 * g)], n = sizes[size_t(3 * g + 1)], k = sizes[size_t(3 * g + 2)];
      if (m == 0 || n == 0) continue;
      gg::rt::MatrixLayouts l;
      l.lda = lda[size_t(g)];
      l.ldb = ldb[size_t(g)];
      l.ldd = ldd[size_t(g)];
      if (k > 0)
        cublas.gemm(a_ptrs[size_t(g)], b_ptrs[size_t(g)], ref[size_t(g)].data(), gg::rt::ElemType::BF16,
                    gg::rt::ElemType::BF16, m, n, k, l);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      const std::vector<float> got = d[size_t(g)].download(), want = ref[size_t(g)].download();
      std::vector<double> mine, theirs;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          mine.push_back(got[size_t(i * ldd[size_t(g)] + j)]);
          theirs.push_back(k > 0 ? want[size_t(i * ldd[size_t(g)] + j)] : 0.0);
        }
      worst = std::max(worst, gg::rt::relative_frobenius_error(mine, theirs));
      for (double v : mine) REQUIRE_FALSE(std::isnan(v));
    }
    std::printf("gemm_pointer_array step %llu: worst error vs cuBLAS %g\n", static_cast<unsigned long long>(step), worst);
    CHECK(worst <= 4e-3);
  }
  CHECK(compiles == 0);  // the first call's kernel served the later sizes
}
