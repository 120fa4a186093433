// gg::gemm on every layout: A K- or M-major, B K- or N-major (NN, NT, TN, TT), dense or strided
// (leading dimensions past the extent, 16-byte aligned or not), over a sparse grid of ragged
// shapes. The inputs' padding holds NaN, so a kernel reading past a row's end poisons its result;
// D is poisoned first, with guard elements on either side, and the elements between its rows
// (its padding) must stay poison. Each result is checked against fp64 on the host and against
// cuBLAS run on the same layouts, on random data and exactly on small integers (f32 out).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "grid_outcome.h"
#include "runtime/launch_spec.h"
#include "runtime/reference.h"
#include "schedules/gemm.h"

using gg::rt::ElemType;
using gg::testing::GridOutcome;
using gg::testing::kExtents;
using gg::testing::kGuard;
using gg::testing::Shape;
using gg::testing::place;
using gg::testing::Stored;

namespace {

// 15 crossings of the extents (every extent as M and as N), K cycling.
std::vector<Shape> grid() {
  std::vector<Shape> out;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      if ((a + 3 * b) % 7 == 0) out.push_back({kExtents[a], kExtents[b], kExtents[(2 * a + b + 1) % 10]});
  return out;
}

GridOutcome run(const Shape& s, const gg::ProblemLayout& layout, gg::DType out, bool exact,
            gg::rt::CublasReference& cublas) {
  const ElemType in_t = ElemType::BF16, out_t = out == gg::DType::F32 ? ElemType::F32 : ElemType::BF16;
  const bool a_t = layout.a == gg::Layout::MNMajor, b_t = layout.b == gg::Layout::MNMajor;
  const Stored sa{a_t, s.m, s.k, layout.lda ? layout.lda : (a_t ? s.m : s.k)};
  const Stored sb{b_t, s.n, s.k, layout.ldb ? layout.ldb : (b_t ? s.n : s.k)};
  const Stored sd{false, s.m, s.n, layout.ldd ? layout.ldd : s.n};
  const uint64_t seed = uint64_t(s.m * 1000003 + s.n * 1009 + s.k);
  const auto ha = exact ? gg::rt::small_integer_values(size_t(s.m * s.k), seed)
                        : gg::rt::random_uniform_values(in_t, size_t(s.m * s.k), seed);
  const auto hb = exact ? gg::rt::small_integer_values(size_t(s.n * s.k), seed + 1)
                        : gg::rt::random_uniform_values(in_t, size_t(s.n * s.k), seed + 1);
  gg::rt::DeviceBuffer a(in_t, sa.count()), b(in_t, sb.count());
  a.upload(place(ha, sa));
  b.upload(place(hb, sb));
  gg::rt::DeviceBuffer d(out_t, sd.count() + 2 * kGuard), ref(out_t, sd.count());
  gg::rt::fill_poison(d);
  gg::GemmOptions options;
  options.out = out;
  options.layout = layout;
  char* d_out = static_cast<char*>(d.data()) + kGuard * size_t(gg::rt::elem_bytes(out_t));
  gg::gemm(a.data(), b.data(), d_out, s.m, s.n, s.k, options);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cublas.gemm(a.data(), b.data(), ref.data(), in_t, out_t, s.m, s.n, s.k, gg::testing::cublas_layouts(sa, sb, sd));
  GridOutcome o;
  std::vector<float> ours_f, theirs_f;
  gg::testing::gather_output(o, sd, d.download(), ref.download(), ours_f, theirs_f);
  gg::testing::compare_to_fp64(o, ha, hb, s.m, s.n, s.k, ours_f, theirs_f, exact);
  return o;
}

struct Variant {
  const char* name;
  gg::Layout a, b;
  int64_t pad_a, pad_b, pad_d;  // added to the dense leading dimension (0: dense; -1: up to the next multiple of 8)
};

// The leading dimension for a row of `extent` elements and a pad; 0 when dense.
int64_t leading(int64_t extent, int64_t pad) {
  if (pad == 0) return 0;
  return pad > 0 ? extent + pad : (extent + 8) / 8 * 8;  // 16-byte aligned rows of a ragged extent
}

}  // namespace

TEST_CASE("gg::gemm on NN, NT, TN and TT layouts, dense and strided, matches fp64 and cuBLAS and touches nothing else") {
  using gg::Layout;
  const Variant variants[] = {
      {"NN", Layout::KMajor, Layout::KMajor, 0, 0, 0},        {"TN", Layout::MNMajor, Layout::KMajor, 0, 0, 0},
      {"NT", Layout::KMajor, Layout::MNMajor, 0, 0, 0},       {"TT", Layout::MNMajor, Layout::MNMajor, 0, 0, 0},
      {"NN+ld8", Layout::KMajor, Layout::KMajor, 8, 16, 8},   {"TT+ld8", Layout::MNMajor, Layout::MNMajor, 8, 8, 24},
      {"TN+ld3", Layout::MNMajor, Layout::KMajor, 3, 5, 1},   {"NT+ld3", Layout::KMajor, Layout::MNMajor, 5, 3, 7},
      {"NN+ld16B", Layout::KMajor, Layout::KMajor, -1, -1, -1}, {"TT+ld16B", Layout::MNMajor, Layout::MNMajor, -1, -1, -1},
  };
  gg::rt::CublasReference cublas;
  int passed = 0, total = 0;
  const std::vector<Shape> grid_shapes = grid();
  for (const Variant& v : variants)
    for (const Shape& s : grid_shapes) {
      gg::ProblemLayout layout;
      layout.a = v.a;
      layout.b = v.b;
      layout.lda = leading(v.a == Layout::MNMajor ? s.m : s.k, v.pad_a);
      layout.ldb = leading(v.b == Layout::MNMajor ? s.n : s.k, v.pad_b);
      layout.ldd = leading(s.n, v.pad_d);
      gg::GemmOptions plan_options;
      plan_options.layout = layout;
      const gg::GemmPlan plan = gg::plan_gemm(s.m, s.n, s.k, plan_options);
      const std::string schedule = plan.schedule + (plan.swapped() ? "/swap" : "");
      const bool odd_shape = (&s - grid_shapes.data()) % 2 == 1;
      for (bool exact : {false, true}) {
        if (exact && odd_shape) continue;  // exact mode on every other shape (each run is a JIT compile)
        const gg::DType out = exact ? gg::DType::F32 : gg::DType::BF16;
        const GridOutcome o = run(s, layout, out, exact, cublas);
        char label[96];
        std::snprintf(label, sizeof label, "%-8s %5lld x %5lld x %5lld %-9s", v.name, (long long)s.m, (long long)s.n,
                      (long long)s.k, schedule.c_str());
        const bool ok = gg::testing::judge(o, out, exact, label);
        passed += ok;
        ++total;
      }
    }
  std::printf("layout grid: %d of %d runs passed (%zu shapes x %zu layouts, random and exact)\n", passed, total,
              grid().size(), std::size(variants));
  CHECK(grid().size() >= 15);
}
