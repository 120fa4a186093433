// FP8 with DeepGEMM's fine-grained factors on the GPU: every warp-specialized tutorial step and
// `auto` through check_on_gpu (fp64 over the dequantized operands, cuBLASLt's block-scaled FP8 on
// the same inputs, poisoned D, exact mode) on edge shapes, and gg::gemm_fp8 from decode to large M
// against cuBLASLt.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "runtime/cublaslt_reference.h"
#include "runtime/device_buffer.h"
#include "runtime/error_metrics.h"
#include "runtime/fp8_quantize.h"
#include "runtime/host_dtype.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

namespace {

gg::Definition fp8(int64_t m, int64_t n, int64_t k, gg::DType out = gg::DType::BF16) {
  gg::ProblemLayout l;
  l.scale_a = gg::ScaleGranularity::Block1x128;
  l.scale_b = gg::ScaleGranularity::Block128x128;
  return gg::make_definition(m, n, k, gg::DType::E4M3, out, {}, l);
}

// check_on_gpu's verdict on `s` (random or exact data, launched `repeat` more times): passed, every
// element written, and exact where the data are small integers.
void check_passes(const gg::Schedule& s, bool exact, int repeat, const std::vector<int64_t>& group_rows = {},
                  const std::vector<int64_t>& group_offsets = {}) {
  gg::CheckOptions o;
  o.exact = exact;
  o.repeat = repeat;
  o.group_rows = group_rows;
  o.group_offsets = group_offsets;
  const gg::CheckReport r = gg::check_on_gpu(s, o);
  INFO(gg::format_report(r));
  CHECK(r.passed);
  CHECK(r.unwritten == 0);
  if (exact) CHECK(r.error_vs_host == 0.0);
}

}  // namespace

TEST_CASE("fp8 on the GPU: v8, v10 and auto on edge shapes, random and exact, against fp64 and cuBLASLt") {
  // M = 1, M and N not multiples of the tile, K = 128 and 128 x odd, N = 112 x k.
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 112, 128}, {129, 264, 640}, {200, 224, 384}, {256, 896, 1152}, {1000, 1000, 1024}};
  for (const auto& shape : shapes)  // (not a structured binding: CAPTURE's lambda reads m, n, k)
    for (const char* name : {"v8", "v10", "auto"})
      for (bool exact : {false, true}) {
        const int64_t m = shape[0], n = shape[1], k = shape[2];
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(name);
        CAPTURE(exact);
        // Exact mode with an f32 output: small integers times power-of-two factors, every sum exact.
        const gg::Definition def = fp8(m, n, k, exact ? gg::DType::F32 : gg::DType::BF16);
        const gg::Schedule s = std::string(name) == "auto" ? gg::plan_gemm(m, n, k, [&] {
          gg::GemmOptions o;
          o.in = gg::DType::E4M3;
          o.out = def.output_dtype();
          o.layout.scale_a = gg::ScaleGranularity::Block1x128;
          o.layout.scale_b = gg::ScaleGranularity::Block128x128;
          return o;
        }()).build() : gg::builtin_schedule(name, def);
        check_passes(s, exact, 2);
      }
}

TEST_CASE("gg::gemm_fp8: decode to large M, each against cuBLASLt's block-scaled FP8 on the same inputs") {
  const int64_t n = 512, k = 1024;
  gg::rt::CublasLtFp8 lt;
  for (int64_t m : {4, 64, 1000, 4100}) {
    CAPTURE(m);
    const auto make = [](int64_t rows, int64_t cols, gg::rt::Granularity g, gg::rt::ScaleLayout layout, uint64_t seed) {
      const std::vector<float> x = gg::rt::random_uniform_values(gg::rt::ElemType::F32, size_t(rows * cols), seed);
      gg::rt::Fp8QuantizeOptions q;
      q.layout = layout;
      return gg::rt::quantize(x, rows, cols, g, q);
    };
    const gg::rt::Fp8Quantized qa = make(m, k, gg::rt::Granularity::Row1x128, gg::rt::ScaleLayout::MNMajor, 1 + m);
    const gg::rt::Fp8Quantized qb = make(n, k, gg::rt::Granularity::Block128x128, gg::rt::ScaleLayout::KMajor, 2);
    const gg::rt::DeviceBytes a(qa.values), b(qb.values), sa(qa.scales), sb(qb.scales);
    gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(m * n)), ref(gg::rt::ElemType::BF16, size_t(m * n));
    gg::rt::fill_poison(d);
    gg::GemmOptions o;
    o.in = gg::DType::E4M3;
    gg::gemm_fp8(a.as<void>(), sa.as<float>(), b.as<void>(), sb.as<float>(), d.data(), m, n, k, o);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    gg::rt::Fp8GemmOperands ops;
    ops.a = a.as<void>();
    ops.b = b.as<void>();
    ops.d = ref.data();
    ops.a_scales = sa.as<float>();
    ops.b_scales = sb.as<float>();
    ops.m = m;
    ops.n = n;
    ops.k = k;
    lt.gemm_blockscaled(ops);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<float> got = d.download(), want = ref.download();
    std::vector<double> mine(got.begin(), got.end()), theirs(want.begin(), want.end());
    for (double v : mine) REQUIRE_FALSE(std::isnan(v));
    const double error = gg::rt::relative_frobenius_error(mine, theirs);
    std::printf("gemm_fp8 M=%lld: error vs cuBLASLt %g, DeepGEMM diff %g\n", static_cast<long long>(m), error,
                gg::rt::deepgemm_diff(mine, theirs));
    CHECK(error <= 4e-3);
  }
}

namespace {

gg::Definition fp8_groups(gg::ProblemSource source, int64_t groups, int64_t m, int64_t n, int64_t k,
                          gg::DType out = gg::DType::BF16) {
  gg::ProblemLayout l;
  l.scale_a = gg::ScaleGranularity::Block1x128;
  l.scale_b = gg::ScaleGranularity::Block128x128;
  l.batch = groups;
  l.source = source;
  return gg::make_definition(m, n, k, gg::DType::E4M3, out, {}, l);
}

}  // namespace

TEST_CASE("fp8 on the GPU: masked and contiguous groups and batches, each matrix with its own factors") {
  struct Case {
    const char* name;
    gg::Definition def;
    std::vector<int64_t> group_rows, group_offsets;
  };
  const std::vector<Case> cases = {
      // full, empty, ragged groups; a tile past a group's rows untouched
      {"masked", fp8_groups(gg::ProblemSource::Masked, 3, 200, 264, 640), {200, 0, 77}, {}},
      {"masked, multiples of 4 (cuBLASLt compares each group)", fp8_groups(gg::ProblemSource::Masked, 4, 256, 384, 1152),
       {256, 4, 0, 100}, {}},
      // an empty group, groups of 3 and 190 rows; rows outside every group untouched
      {"contiguous", fp8_groups(gg::ProblemSource::Contiguous, 4, 400, 264, 384), {}, {0, 0, 190, 193, 400}},
      {"contiguous, multiples of 4", fp8_groups(gg::ProblemSource::Contiguous, 4, 512, 896, 1024), {}, {8, 136, 136, 300, 500}},
      {"batch", fp8_groups(gg::ProblemSource::Dense, 3, 129, 264, 384), {}, {}},
  };
  for (const Case& c : cases)
    for (const char* name : {"v8", "auto"})
      for (bool exact : {false, true}) {
        CAPTURE(c.name);
        CAPTURE(name);
        CAPTURE(exact);
        const gg::Definition def =
            exact ? fp8_groups(c.def.problem_source(), c.def.batch(), c.def.m(), c.def.n(), c.def.k(), gg::DType::F32) : c.def;
        check_passes(gg::builtin_schedule(name, def), exact, 2, c.group_rows, c.group_offsets);
      }
}

TEST_CASE("gg::gemm_fp8_masked and gg::gemm_fp8_contiguous against cuBLASLt's block-scaled FP8, group by group") {
  const int64_t groups = 3, n = 384, k = 1024, m_max = 256;
  gg::rt::CublasLtFp8 lt;
  const auto quantize = [](int64_t rows, int64_t cols, gg::rt::Granularity g, gg::rt::ScaleLayout layout, uint64_t seed) {
    const std::vector<float> x = gg::rt::random_uniform_values(gg::rt::ElemType::F32, size_t(rows * cols), seed);
    gg::rt::Fp8QuantizeOptions q;
    q.layout = layout;
    return gg::rt::quantize(x, rows, cols, g, q);
  };
  // B and its factors per group, one after another.
  std::vector<uint8_t> b_values;
  std::vector<float> b_scales;
  for (int64_t g = 0; g < groups; ++g) {
    const gg::rt::Fp8Quantized q = quantize(n, k, gg::rt::Granularity::Block128x128, gg::rt::ScaleLayout::KMajor, 50 + g);
    b_values.insert(b_values.end(), q.values.begin(), q.values.end());
    b_scales.insert(b_scales.end(), q.scales.begin(), q.scales.end());
  }
  const gg::rt::DeviceBytes b(b_values), sb(b_scales);
  const int64_t sb_per_group = int64_t(b_scales.size()) / groups;
  // Each group's product by cuBLASLt on its own A rows and factors; `d_rows` is D's row of its first.
  const auto compare = [&](const char* what, const gg::rt::DeviceBuffer& d, int64_t g, const gg::rt::Fp8Quantized& qa,
                           int64_t d_row) {
    CAPTURE(what);
    CAPTURE(g);
    const gg::rt::DeviceBytes a(qa.values), sa(qa.scales);
    gg::rt::DeviceBuffer ref(gg::rt::ElemType::BF16, size_t(qa.rows * n));
    gg::rt::Fp8GemmOperands ops;
    ops.a = a.as<void>();
    ops.b = b.as<char>() + g * n * k;
    ops.d = ref.data();
    ops.a_scales = sa.as<float>();
    ops.b_scales = sb.as<float>() + g * sb_per_group;
    ops.m = qa.rows;
    ops.n = n;
    ops.k = k;
    lt.gemm_blockscaled(ops);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<float> all = d.download(), want = ref.download();
    std::vector<double> mine(all.begin() + d_row * n, all.begin() + (d_row + qa.rows) * n), theirs(want.begin(), want.end());
    for (double v : mine) REQUIRE_FALSE(std::isnan(v));
    CHECK(gg::rt::relative_frobenius_error(mine, theirs) <= 4e-3);
  };
  gg::GemmOptions o;
  o.in = gg::DType::E4M3;
  SUBCASE("masked: A and its factors per group, rows in use 256, 0 and 100") {
    const std::vector<int> rows = {256, 0, 100};
    std::vector<gg::rt::Fp8Quantized> qa;
    std::vector<uint8_t> a_values;
    std::vector<float> a_scales;
    for (int64_t g = 0; g < groups; ++g) {
      qa.push_back(quantize(m_max, k, gg::rt::Granularity::Row1x128, gg::rt::ScaleLayout::MNMajor, 10 + g));
      a_values.insert(a_values.end(), qa.back().values.begin(), qa.back().values.end());
      a_scales.insert(a_scales.end(), qa.back().scales.begin(), qa.back().scales.end());
    }
    const gg::rt::DeviceBytes a(a_values), sa(a_scales);
    const gg::rt::DeviceInts group_rows(rows);
    gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(groups * m_max * n));
    gg::rt::fill_poison(d);
    gg::gemm_fp8_masked(a.as<void>(), sa.as<float>(), b.as<void>(), sb.as<float>(), d.data(), group_rows.data(), groups,
                        m_max, n, k, o);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    for (int64_t g = 0; g < groups; ++g) {
      if (rows[size_t(g)] == 0) continue;
      // the group's first rows in use: the whole matrix quantized, compared on them
      gg::rt::Fp8Quantized part = qa[size_t(g)];
      part.rows = rows[size_t(g)];
      part.values.resize(size_t(part.rows * k));
      const int64_t ld = (m_max + 3) / 4 * 4, part_ld = (part.rows + 3) / 4 * 4;
      std::vector<float> packed(size_t((k / 128) * part_ld), 0.0f);
      for (int64_t kb = 0; kb < k / 128; ++kb)
        for (int64_t r = 0; r < part.rows; ++r) packed[size_t(kb * part_ld + r)] = qa[size_t(g)].scales[size_t(kb * ld + r)];
      part.scales = packed;
      compare("masked", d, g, part, g * m_max);
    }
  }
  SUBCASE("contiguous: the groups share A and its factors, offsets 0, 128, 128, 384") {
    const std::vector<int> offsets = {0, 128, 128, 384};
    const int64_t m = 384;
    const gg::rt::Fp8Quantized qa = quantize(m, k, gg::rt::Granularity::Row1x128, gg::rt::ScaleLayout::MNMajor, 20);
    const gg::rt::DeviceBytes a(qa.values), sa(qa.scales);
    const gg::rt::DeviceInts group_offsets(offsets);
    gg::rt::DeviceBuffer d(gg::rt::ElemType::BF16, size_t(m * n));
    gg::rt::fill_poison(d);
    gg::gemm_fp8_contiguous(a.as<void>(), sa.as<float>(), b.as<void>(), sb.as<float>(), d.data(), group_offsets.data(),
                            groups, m, n, k, o);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t row0 = offsets[size_t(g)], rows = offsets[size_t(g) + 1] - row0;
      if (rows == 0) continue;
      gg::rt::Fp8Quantized part = qa;
      part.rows = rows;
      part.values.assign(qa.values.begin() + row0 * k, qa.values.begin() + (row0 + rows) * k);
      const int64_t ld = (m + 3) / 4 * 4, part_ld = (rows + 3) / 4 * 4;
      std::vector<float> packed(size_t((k / 128) * part_ld), 0.0f);
      for (int64_t kb = 0; kb < k / 128; ++kb)
        for (int64_t r = 0; r < rows; ++r) packed[size_t(kb * part_ld + r)] = qa.scales[size_t(kb * ld + row0 + r)];
      part.scales = packed;
      compare("contiguous", d, g, part, row0);
    }
  }
}

TEST_CASE("fp8 on the GPU: factors per tensor and per row of A, per tensor of B") {
  using G = gg::ScaleGranularity;
  const std::vector<std::pair<std::optional<G>, std::optional<G>>> pairs = {
      {G::PerTensor, G::PerTensor},  {G::PerRow, G::PerTensor},     {G::PerRow, G::Block128x128},
      {G::Block1x128, G::PerTensor}, {G::PerTensor, std::nullopt}, {std::nullopt, G::PerTensor}};
  for (const auto& pair : pairs)  // (not a structured binding: CAPTURE's lambda reads ga, gb)
    for (const char* name : {"v8", "auto"})
      for (bool exact : {false, true}) {
        const auto ga = pair.first, gb = pair.second;
        CAPTURE(ga ? gg::scale_granularity_name(*ga) : "none");
        CAPTURE(gb ? gg::scale_granularity_name(*gb) : "none");
        CAPTURE(name);
        CAPTURE(exact);
        gg::ProblemLayout l;
        l.scale_a = ga;
        l.scale_b = gb;
        const gg::Definition def = gg::make_definition(129, 264, 640, gg::DType::E4M3, exact ? gg::DType::F32 : gg::DType::BF16, {}, l);
        check_passes(gg::builtin_schedule(name, def), exact, 1);
      }
}

TEST_CASE("fp8 on the GPU: factors K-major per 1x128, per 128x128 of A, N-major of B, per row and per 1x128 of B") {
  using G = gg::ScaleGranularity;
  const gg::Layout K = gg::Layout::KMajor, MN = gg::Layout::MNMajor;
  struct Pair {
    G a;
    gg::Layout a_major;
    G b;
    gg::Layout b_major;
  };
  // The first: DeepGEMM's granularities in the other majors (cuBLASLt's block-scaled baseline
  // takes them repacked); the rest have no cuBLASLt baseline (fp64 only).
  const std::vector<Pair> pairs = {{G::Block1x128, K, G::Block128x128, MN},  {G::Block128x128, MN, G::Block128x128, K},
                                   {G::Block128x128, K, G::PerRow, K},        {G::Block1x128, MN, G::PerRow, K},
                                   {G::PerRow, MN, G::PerRow, K},             {G::Block1x128, MN, G::Block1x128, K},
                                   {G::Block1x128, K, G::Block1x128, MN}};
  for (const Pair& pr : pairs)
    for (const char* name : {"v8", "auto"})
      for (bool exact : {false, true}) {
        gg::ProblemLayout l;
        l.scale_a = pr.a;
        l.scale_b = pr.b;
        l.scale_a_major = pr.a_major;
        l.scale_b_major = pr.b_major;
        CAPTURE(gg::problem_layout_text(l));
        CAPTURE(name);
        CAPTURE(exact);
        const gg::Definition def =
            gg::make_definition(300, 264, 640, gg::DType::E4M3, exact ? gg::DType::F32 : gg::DType::BF16, {}, l);
        check_passes(gg::builtin_schedule(name, def), exact, 1);
      }
  // a masked batch of groups, each with its own factors read from memory
  gg::ProblemLayout grouped;
  grouped.scale_a = G::Block128x128;
  grouped.scale_a_major = K;
  grouped.scale_b = G::PerRow;
  grouped.batch = 3;
  grouped.source = gg::ProblemSource::Masked;
  check_passes(gg::builtin_schedule("auto", gg::make_definition(200, 264, 640, gg::DType::E4M3, gg::DType::BF16, {}, grouped)),
               false, 1, {200, 0, 77});
}

TEST_CASE("fp8 on the GPU: promotion every 512 of K, and none (one accumulator)") {
  using G = gg::ScaleGranularity;
  for (bool exact : {false, true})
    for (int64_t interval : {512, 0})
      for (const char* name : {"v10", "auto"}) {
        gg::ProblemLayout l;
        if (interval > 0) l.scale_a = l.scale_b = G::PerTensor;  // none takes no factors
        const gg::Definition def =
            gg::make_definition(256, 264, 1920, gg::DType::E4M3, exact ? gg::DType::F32 : gg::DType::BF16, {}, l);
        gg::Schedule s = gg::builtin_schedule(name, def);
        if (interval > 0 && std::string(name) == "auto") continue;  // auto's 256-row tiles promote in waves
        s.promote(interval);
        CAPTURE(name);
        CAPTURE(interval);
        CAPTURE(exact);
        check_passes(s, exact, 1);
      }
}
