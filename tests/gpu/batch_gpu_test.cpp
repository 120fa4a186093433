// gg::gemm on strided batches: 3 and 17 matrices per launch, dense one after another, with gaps
// between them, with one A or B broadcast to every batch (stride 0), and with matrix strides that
// are not 16-byte multiples (the copies fall back from TMA), over all four layouts and a sparse
// grid of ragged shapes. Padding between rows and matrices holds NaN on input and must stay
// poison on output; every matrix is checked against fp64 on the host and against cuBLAS's
// strided-batched GEMM on the same layouts, on random data and exactly on small integers.
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

// 15 crossings of the extents (every extent as M and as N), K cycling; another 15 than the layout grid's.
std::vector<Shape> grid() {
  std::vector<Shape> out;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      if ((2 * a + b) % 7 == 3) out.push_back({kExtents[a], kExtents[b], kExtents[(a + 2 * b + 4) % 10]});
  return out;
}

struct Variant {
  const char* name;
  gg::Layout a, b;
  int64_t batch;
  // Elements between matrices past the dense span (-1: dense; -2: A broadcast; -3: B broadcast).
  int64_t gap;
};

// A matrix's stored span, rows of `inner` elements `ld` apart.
int64_t span(int64_t outer, int64_t inner, int64_t ld) { return (outer - 1) * ld + inner; }

GridOutcome run(const Shape& s, const Variant& v, gg::DType out, bool exact, gg::rt::CublasReference& cublas,
                std::string& schedule) {
  const ElemType in_t = ElemType::BF16, out_t = out == gg::DType::F32 ? ElemType::F32 : ElemType::BF16;
  const bool a_t = v.a == gg::Layout::MNMajor, b_t = v.b == gg::Layout::MNMajor;
  gg::ProblemLayout layout;
  layout.a = v.a;
  layout.b = v.b;
  layout.batch = v.batch;
  Stored sa{a_t, s.m, s.k, a_t ? s.m : s.k}, sb{b_t, s.n, s.k, b_t ? s.n : s.k}, sd{false, s.m, s.n, s.n};
  for (Stored* st : {&sa, &sb, &sd}) {
    st->matrices = v.batch;
    const int64_t dense = span(st->transposed ? st->cols : st->rows, st->transposed ? st->rows : st->cols, st->ld);
    st->batch_stride = v.gap >= 0 ? dense + v.gap : dense;
  }
  if (v.gap == -2) sa.matrices = 1, sa.batch_stride = 0;
  if (v.gap == -3) sb.matrices = 1, sb.batch_stride = 0;
  if (v.gap >= 0 || v.gap == -2) layout.stride_a = sa.batch_stride;
  if (v.gap >= 0 || v.gap == -3) layout.stride_b = sb.batch_stride;
  if (v.gap >= 0) layout.stride_d = sd.batch_stride;

  const uint64_t seed = uint64_t(s.m * 1000003 + s.n * 1009 + s.k + v.batch);
  const size_t a_count = size_t(sa.matrices * s.m * s.k), b_count = size_t(sb.matrices * s.n * s.k);
  const auto ha = exact ? gg::rt::small_integer_values(a_count, seed) : gg::rt::random_uniform_values(in_t, a_count, seed);
  const auto hb = exact ? gg::rt::small_integer_values(b_count, seed + 1)
                        : gg::rt::random_uniform_values(in_t, b_count, seed + 1);
  gg::rt::DeviceBuffer a(in_t, sa.count()), b(in_t, sb.count());
  a.upload(place(ha, sa));
  b.upload(place(hb, sb));
  gg::rt::DeviceBuffer d(out_t, sd.count() + 2 * kGuard), ref(out_t, sd.count());
  gg::rt::fill_poison(d);
  gg::rt::fill_poison(ref);
  gg::GemmOptions options;
  options.out = out;
  options.layout = layout;
  const gg::GemmPlan plan = gg::plan_gemm(s.m, s.n, s.k, options);
  schedule = plan.schedule + (plan.swapped() ? "/swap" : "");
  char* d_out = static_cast<char*>(d.data()) + kGuard * size_t(gg::rt::elem_bytes(out_t));
  gg::gemm(a.data(), b.data(), d_out, s.m, s.n, s.k, options);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cublas.gemm(a.data(), b.data(), ref.data(), in_t, out_t, s.m, s.n, s.k, gg::testing::cublas_layouts(sa, sb, sd));
  GridOutcome o;
  std::vector<float> ours_f, theirs_f;
  gg::testing::gather_output(o, sd, d.download(), ref.download(), ours_f, theirs_f);
  gg::testing::compare_batch_to_fp64(o, ha, hb, s.m, s.n, s.k, v.batch, ours_f, theirs_f, exact);
  return o;
}

}  // namespace

TEST_CASE("gg::gemm on strided batches (3 and 17, gaps, broadcast, unaligned strides) matches fp64 and cuBLAS") {
  using gg::Layout;
  const Variant variants[] = {
      {"NN b3", Layout::KMajor, Layout::KMajor, 3, -1},        {"TT b3+gap", Layout::MNMajor, Layout::MNMajor, 3, 40},
      {"TN b17", Layout::MNMajor, Layout::KMajor, 17, -1},     {"NT b3 A*", Layout::KMajor, Layout::MNMajor, 3, -2},
      {"NN b17 B*", Layout::KMajor, Layout::KMajor, 17, -3},   {"NN b3+3", Layout::KMajor, Layout::KMajor, 3, 3},
  };
  gg::rt::CublasReference cublas;
  int passed = 0, total = 0;
  const std::vector<Shape> shapes = grid();
  for (const Variant& v : variants)
    for (const Shape& s : shapes) {
      if (v.batch > 3 && s.m * s.n * s.k > (int64_t(1) << 27)) continue;  // 17 large matrices: host reference time
      const size_t index = size_t(&s - shapes.data());
      for (bool exact : {false, true}) {
        if (exact && index % 3 != 0) continue;  // exact mode on every third shape (each run is a JIT compile)
        const gg::DType out = exact ? gg::DType::F32 : gg::DType::BF16;
        std::string schedule;
        const GridOutcome o = run(s, v, out, exact, cublas, schedule);
        char label[112];
        std::snprintf(label, sizeof label, "%-10s %5lld x %5lld x %5lld %-9s", v.name, (long long)s.m, (long long)s.n,
                      (long long)s.k, schedule.c_str());
        passed += gg::testing::judge(o, out, exact, label);
        ++total;
      }
    }
  std::printf("batch grid: %d of %d runs passed (%zu shapes x %zu batch variants, random and exact)\n", passed, total,
              shapes.size(), std::size(variants));
  CHECK(total >= 60);
}
