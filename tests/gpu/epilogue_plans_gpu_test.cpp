// Epilogue plans on the GPU against cuBLAS plus the epilogue on the host and
// the fp64 reference: the backward of an activation at a saved pre-activation
// (QuACK's gemm_dact), and the unfused epilogue kernel the benchmarks time
// fused epilogues against.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <tuple>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "runtime/device_buffer.h"
#include "runtime/host_reference.h"
#include "runtime/unfused_epilogue.h"
#include "runtime/cuda_error.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

struct Shape {
  int64_t m, n, k;
};

EpilogueSpec grad_of(OpKind activation) {
  EpilogueSpec e;
  e.kind = OpKind::ActGrad;
  e.activation = activation;
  return e;
}

CheckReport check(int step, Shape s, std::vector<EpilogueSpec> epilogue,
                  DType out, bool exact, int repeat = 0) {
  const Definition def =
      make_definition(s.m, s.n, s.k, DType::BF16, out, epilogue, {}, false);
  CheckOptions o;
  o.exact = exact;
  o.repeat = repeat;
  o.seed = uint64_t(step * 131 + s.m + s.n + s.k);
  CheckReport r = check_on_gpu(
      step ? tutorial_schedule(step, def) : ping_pong_schedule(def), o);
  std::cout << (step ? "v" + std::to_string(step) : std::string("pingpong"))
            << " " << s.m << "x" << s.n << "x" << s.k << " " << dtype_name(out)
            << (exact ? " exact" : "") << ": err_vs_host=" << r.error_vs_host
            << " cublas_err=" << r.cublas_error_vs_host << " -> " << r.verdict
            << "\n";
  return r;
}

} // namespace

TEST_CASE("activation gradients at a saved pre-activation match cuBLAS and "
          "fp64 on edge shapes") {
  // v3 reads the pre-activation from global memory; v10 and ping-pong stage it
  // by TMA.
  for (int step : {3, 10, 0})
    for (Shape s : {Shape{300, 200, 136}, Shape{1, 8, 64}, Shape{129, 264, 72},
                    Shape{1000, 1000, 1000}})
      for (OpKind act : {OpKind::Relu, OpKind::Gelu, OpKind::Silu}) {
        CAPTURE(step);
        CAPTURE(s.m);
        CAPTURE(op_name(act));
        const CheckReport r = check(
            step, s, {{OpKind::Scale, 0.5}, grad_of(act)}, DType::BF16, false);
        CAPTURE(r.verdict);
        CHECK(r.passed);
        CHECK(r.unwritten == 0);
      }
}

TEST_CASE("activation gradients: exact small integers (drelu) and 8192^3, "
          "bit-identical over repeats") {
  for (int step : {3, 10, 0}) {
    const CheckReport r =
        check(step, {384, 264, 192}, {grad_of(OpKind::Relu)}, DType::F32, true);
    CAPTURE(r.verdict);
    CHECK(r.passed);
  }
  const CheckReport big = check(10, {8192, 8192, 8192}, {grad_of(OpKind::Gelu)},
                                DType::BF16, false, 5);
  CAPTURE(big.verdict);
  CHECK(big.passed);
  CHECK(big.repeats_differing == 0);
}

TEST_CASE("the unfused epilogue kernel matches the host: scale, beta*C, bias, "
          "activation, activation gradient") {
  using K = rt::UnfusedOp::Kind;
  // 1100 columns of f32: whole 16-byte pieces (the vector path); 1101: one
  // element at a time
  for (const int64_t cols : {int64_t{1100}, int64_t{1101}}) {
    CAPTURE(cols);
    const int64_t rows = 70;
    std::vector<float> d(static_cast<size_t>(rows * cols)), c(d.size()),
        bias(static_cast<size_t>(cols));
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] = float(int(i % 17) - 8) * 0.25f;
      c[i] = float(int(i % 13) - 6) * 0.5f;
    }
    for (size_t i = 0; i < bias.size(); ++i)
      bias[i] = float(int(i % 5) - 2);
    rt::DeviceBuffer dd(rt::ElemType::F32, d.size()),
        cd(rt::ElemType::F32, c.size()), bd(rt::ElemType::F32, bias.size());
    dd.upload(d);
    cd.upload(c);
    bd.upload(bias);
    rt::UnfusedEpilogue e;
    e.d = e.c = e.bias = rt::ElemType::F32;
    e.ops = {{K::Scale, 0.5},
             {K::AddC, 0.25},
             {K::BiasCols},
             {K::Activation, 0.0, rt::Activation::Silu},
             {K::ActivationGrad, 0.0, rt::Activation::GeluTanh}};
    rt::run_unfused_epilogue(e, dd.data(), cd.data(), bd.data(), rows, cols,
                             cols, cols);
    const std::vector<float> got = dd.download();
    double worst = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        const size_t i = size_t(r * cols + j);
        double v = 0.5 * d[i] + 0.25 * c[i] + bias[size_t(j)];
        v = rt::apply_activation(rt::Activation::Silu, v) *
            rt::apply_activation_grad(rt::Activation::GeluTanh, c[i]);
        worst = std::max(worst, std::fabs(got[i] - v) / (1.0 + std::fabs(v)));
      }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("the pre-activation saved beside the activation matches cuBLAS and fp64, edge shapes and 8192^3") {
  EpilogueSpec save;
  save.save = true;
  // v3 stores both outputs from registers; v10 and ping-pong stage each by TMA.
  for (int step : {3, 10, 0})
    for (Shape s : {Shape{300, 200, 136}, Shape{1, 8, 64}, Shape{129, 264, 72}, Shape{1000, 1000, 1000}})
      for (const auto& specs : {std::vector<EpilogueSpec>{{OpKind::AddBias}, save, {OpKind::Gelu}},
                                std::vector<EpilogueSpec>{{OpKind::AddScaled, 0.5}, save, {OpKind::Silu}}}) {
        CAPTURE(step);
        CAPTURE(s.m);
        const CheckReport r = check(step, s, specs, DType::BF16, false);
        CAPTURE(r.verdict);
        CHECK(r.passed);
        CHECK(r.unwritten == 0);
      }
  const CheckReport exact = check(10, {384, 264, 192}, {{OpKind::AddBias}, save, {OpKind::Relu}}, DType::F32, true);
  CAPTURE(exact.verdict);
  CHECK(exact.passed);
  const CheckReport big = check(10, {8192, 8192, 8192}, {save, {OpKind::Gelu}}, DType::BF16, false, 5);
  CAPTURE(big.verdict);
  CHECK(big.passed);
  CHECK(big.repeats_differing == 0);
}

TEST_CASE("the unfused epilogue writes the saved output in the same pass") {
  using K = rt::UnfusedOp::Kind;
  const int64_t rows = 33, cols = 264;
  std::vector<float> d(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(int(i % 11) - 5) * 0.5f;
  rt::DeviceBuffer dd(rt::ElemType::BF16, d.size()), aux(rt::ElemType::BF16, d.size());
  dd.upload(d);
  rt::UnfusedEpilogue e;
  e.ops = {{K::Scale, 2.0}, {K::Activation, 0.0, rt::Activation::Relu}};
  e.save_after = 1;
  rt::run_unfused_epilogue(e, dd.data(), nullptr, nullptr, rows, cols, cols, cols, aux.data());
  const std::vector<float> got = dd.download(), saved = aux.download();
  for (size_t i = 0; i < d.size(); ++i) {
    CHECK(saved[i] == 2.0f * d[i]);
    CHECK(got[i] == std::max(0.0f, 2.0f * d[i]));
  }
}

TEST_CASE("a column-major output staged transposed (stmatrix.trans) and stored by TMA matches cuBLAS") {
  // The explicit TMA store on v4, v10 and ping-pong's schedules, D column-major, with a bias along
  // the columns; exact small integers and random data, edge shapes along M and N.
  for (const char* step : {"v4", "v10", "pingpong"})
    for (Shape s : {Shape{304, 264, 256}, Shape{8, 8, 128}, Shape{1000, 1000, 1000}, Shape{4096, 4096, 4096}})
      for (bool exact : {false, true}) {
        CAPTURE(step);
        CAPTURE(s.m);
        CAPTURE(exact);
        ProblemLayout l;
        l.d = OutputLayout::ColumnMajor;
        const Definition def = make_definition(s.m, s.n, s.k, DType::BF16, DType::BF16, {{OpKind::AddBias}}, l, false);
        std::string text = print_schedule(builtin_schedule(step, def));
        const size_t at = text.find("cache_write cast shared auto");
        if (at != std::string::npos) text.replace(at, 28, "cache_write cast shared tma");
        CheckOptions o;
        o.exact = exact;
        o.repeat = 2;
        const CheckReport r = check_on_gpu(apply_directives(def, parse_schedule_file(text).directives), o);
        CAPTURE(r.verdict);
        CHECK(r.passed);
        CHECK(r.unwritten == 0);
      }
}

TEST_CASE("symmetric A * A^T on the tiles on and above the diagonal matches cuBLAS's full product") {
  // Edge shapes (M off the tile, one tile, M = 8) and 8192^3; exact small integers too; the
  // repeats bit-identical (no element written by two CTAs).
  // (no structured bindings where CAPTURE's lambda reads them: clang 14 refuses that)
  for (const auto& [m_, k_] : {std::pair<int64_t, int64_t>{1000, 1000}, {136, 256}, {8, 64}, {2056, 512}, {8192, 8192}})
    for (bool exact : {false, true}) {
      const int64_t m = m_, k = k_;
      CAPTURE(m);
      CAPTURE(exact);
      ProblemLayout l;
      l.symmetric = true;
      // (gelu on random data; exact small integers check the plain product bit for bit)
      const Definition def = make_definition(m, m, k, DType::BF16, DType::BF16,
                                             exact ? std::vector<EpilogueSpec>{} : std::vector<EpilogueSpec>{{OpKind::Gelu}},
                                             l, false);
      CheckOptions o;
      o.exact = exact;
      o.repeat = 3;
      const CheckReport r = check_on_gpu(symmetric_schedule(def), o);
      std::cout << "symmetric " << m << "x" << m << "x" << k << (exact ? " exact" : "") << ": err_vs_host="
                << r.error_vs_host << " cublas_err=" << r.cublas_error_vs_host << " -> " << r.verdict << "\n";
      CAPTURE(r.verdict);
      CHECK(r.passed);
      CHECK(r.unwritten == 0);
      CHECK(r.repeats_differing == 0);
    }
  // Each form at a size the chooser gives the other (1000: square; 2056: wide).
  for (const auto& [m_, tile] : {std::pair<int64_t, SymmetricTile>{1000, SymmetricTile::Wide}, {2056, SymmetricTile::Square}}) {
    const int64_t m = m_;
    CAPTURE(m);
    ProblemLayout l;
    l.symmetric = true;
    const Definition def = make_definition(m, m, 256, DType::BF16, DType::BF16, {}, l, false);
    CheckOptions o;
    o.repeat = 2;
    const CheckReport r = check_on_gpu(symmetric_schedule(def, Target::Sm90a, tile), o);
    std::cout << "symmetric " << m << " (" << (tile == SymmetricTile::Wide ? "wide" : "square") << "): " << r.verdict << "\n";
    CHECK(r.passed);
    CHECK(r.unwritten == 0);
    CHECK(r.repeats_differing == 0);
  }
}

TEST_CASE("gg::gemm plans D = A * A^T (symmetric or whole) and matches the host's product") {
  GemmOptions o;
  o.layout.symmetric = true;
  // 3000: the square form; 4160: the wide one; 1000: the whole product (36 computing tiles)
  for (const auto& [m_, k, source] : {std::tuple<int64_t, int64_t, PlanSource>{3000, 128, PlanSource::Symmetric},
                                     {4160, 64, PlanSource::Symmetric}, {1000, 128, PlanSource::Auto}}) {
    const int64_t m = m_;
    CAPTURE(m);
    REQUIRE(plan_gemm(m, m, k, o).source == source);
    rt::DeviceBuffer a(rt::ElemType::BF16, size_t(m * k)), d(rt::ElemType::BF16, size_t(m * m));
    const std::vector<float> ha = rt::fill_random_uniform(a, 51 + uint64_t(m));
    rt::fill_poison(d);
    gemm(a.data(), a.data(), d.data(), m, m, k, o);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<float> hd = d.download();
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double v = 0;
        for (int64_t kk = 0; kk < k; ++kk) v += double(ha[size_t(i * k + kk)]) * ha[size_t(j * k + kk)];
        const double got = hd[size_t(i * m + j)];
        diff += (got - v) * (got - v);
        norm += v * v;
      }
    const double error = std::sqrt(diff / norm);
    std::cout << "gg::gemm symmetric " << m << "x" << m << "x" << k << ": error vs fp64 " << error << "\n";
    CHECK(error < 4e-3);  // bf16 out (a poisoned element left unwritten is a NaN: the error with it)
  }
}

namespace {
EpilogueSpec reduction(ReduceAlong along, ReduceOp op) { return EpilogueSpec::reduction(along, op); }
}  // namespace

TEST_CASE("row and column reductions match fp64 and cuBLAS's sums on edge shapes, exact small integers") {
  const EpilogueSpec row_sq = reduction(ReduceAlong::Rows, ReduceOp::SumSquares),
                     col_sum = reduction(ReduceAlong::Cols, ReduceOp::Sum),
                     row_sum = reduction(ReduceAlong::Rows, ReduceOp::Sum),
                     col_sq = reduction(ReduceAlong::Cols, ReduceOp::SumSquares);
  // v3 stores from registers, v10 stages by TMA (two consumers, a persistent CTA's several tiles);
  // the reductions of the output, of a value mid-chain, and both directions at once.
  for (int step : {3, 10})
    for (Shape s : {Shape{300, 200, 136}, Shape{1, 8, 64}, Shape{129, 264, 72}, Shape{1000, 1000, 1000}})
      for (const auto& specs : {std::vector<EpilogueSpec>{{OpKind::Gelu}, row_sq},
                                std::vector<EpilogueSpec>{{OpKind::AddBias}, col_sum, {OpKind::Silu}},
                                std::vector<EpilogueSpec>{row_sum, col_sq}}) {
        CAPTURE(step);
        CAPTURE(s.m);
        CAPTURE(specs.size());
        const CheckReport r = check(step, s, specs, DType::BF16, false, 2);
        CAPTURE(r.verdict);
        CHECK(r.passed);
        CHECK(r.reductions.size() == (specs.size() == 2 && specs[0].reduce ? 2u : 1u));
        CHECK(r.repeats_differing == 0);
        for (const ReductionReport& red : r.reductions) std::cout << "  " << red.name << ": err_vs_host=" << red.error_vs_host << " vs_cublas=" << red.error_vs_cublas << "\n";
      }
  for (int step : {3, 10}) {
    const CheckReport exact = check(step, {384, 264, 192}, {row_sum, col_sq}, DType::F32, true);
    CAPTURE(exact.verdict);
    CHECK(exact.passed);
  }
}

TEST_CASE("a row sum of squares reduction at 8192^3 is bit-identical over 20 launches") {
  const CheckReport big =
      check(10, {8192, 8192, 8192}, {reduction(ReduceAlong::Rows, ReduceOp::SumSquares)}, DType::BF16, false, 20);
  CAPTURE(big.verdict);
  CHECK(big.passed);
  CHECK(big.repeats == 20);
  CHECK(big.repeats_differing == 0);
  REQUIRE(big.reductions.size() == 1);
  std::cout << "8192^3 RowSumSq: err_vs_host=" << big.reductions[0].error_vs_host
            << " cublas_err=" << big.reductions[0].cublas_error_vs_host << "\n";
}

TEST_CASE("reductions over a batch and at M read at run time") {
  // A batch of 3: each matrix's vector after the last; M at run time: the kernel's bands follow args.m.
  ProblemLayout batched;
  batched.batch = 3;
  const Definition def = make_definition(200, 328, 128, DType::BF16, DType::BF16,
                                         {reduction(ReduceAlong::Rows, ReduceOp::SumSquares),
                                          reduction(ReduceAlong::Cols, ReduceOp::Sum)},
                                         batched, false);
  CheckOptions o;
  o.repeat = 2;
  const CheckReport r = check_on_gpu(tutorial_schedule(10, def), o);
  CAPTURE(r.verdict);
  CHECK(r.passed);
  ProblemLayout sized;
  sized.runtime_m = true;  // (the default) one kernel for every M
  const Definition at_any_m = make_definition(512, 512, 256, DType::BF16, DType::BF16,
                                              {reduction(ReduceAlong::Rows, ReduceOp::Sum)}, sized, false);
  for (const CheckReport& each : check_sizes_on_gpu(tutorial_schedule(10, at_any_m), {{1, 512}, {700, 512}, {129, 512}}, o)) {
    CAPTURE(each.m);
    CAPTURE(each.verdict);
    CHECK(each.passed);
  }
}

TEST_CASE("the unfused epilogue reduces rows and columns in the same pass") {
  using K = rt::UnfusedOp::Kind;
  const int64_t rows = 37, cols = 264;
  std::vector<float> d(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(int(i % 11) - 5) * 0.5f;
  rt::DeviceBuffer dd(rt::ElemType::BF16, d.size()), row_sums(rt::ElemType::F32, size_t(rows)),
      col_sums(rt::ElemType::F32, size_t(cols));
  dd.upload(d);
  rt::UnfusedEpilogue e;
  e.ops = {{K::Scale, 2.0}};
  e.rows = {1, true};   // of the scaled values, squared
  e.cols = {0, false};  // of D as it was
  rt::run_unfused_epilogue(e, dd.data(), nullptr, nullptr, rows, cols, cols, cols, nullptr, nullptr,
                           static_cast<float*>(row_sums.data()), static_cast<float*>(col_sums.data()));
  const std::vector<float> r = row_sums.download(), c = col_sums.download();
  for (int64_t i = 0; i < rows; ++i) {
    double want = 0;
    for (int64_t j = 0; j < cols; ++j) want += 4.0 * d[size_t(i * cols + j)] * d[size_t(i * cols + j)];
    CHECK(r[size_t(i)] == doctest::Approx(want));
  }
  for (int64_t j = 0; j < cols; ++j) {
    double want = 0;
    for (int64_t i = 0; i < rows; ++i) want += d[size_t(i * cols + j)];
    CHECK(c[size_t(j)] == doctest::Approx(want));
  }
}

TEST_CASE("one workspace over launches of falling M: split-K's and the reductions' ticket counters stay counters") {
  // M read at run time: a smaller M has fewer slots, and a region that held a larger M's partial
  // sums must not be read as a counter (the counters lie first).
  CheckOptions o;
  o.repeat = 1;
  const Definition plain = make_definition(1024, 512, 1024, DType::BF16, DType::BF16, {}, {}, false);
  Schedule split = tutorial_schedule(8, plain);
  split.split_k(2);
  for (const CheckReport& r : check_sizes_on_gpu(split, {{1024, 512}, {700, 512}, {129, 512}, {1, 512}}, o)) {
    CAPTURE(r.m);
    CAPTURE(r.verdict);
    CHECK(r.passed);
  }
  const Definition rows = make_definition(1024, 512, 256, DType::BF16, DType::BF16,
                                          {reduction(ReduceAlong::Rows, ReduceOp::Sum)}, {}, false);
  for (const CheckReport& r : check_sizes_on_gpu(tutorial_schedule(10, rows), {{1024, 512}, {700, 512}, {129, 512}}, o)) {
    CAPTURE(r.m);
    CAPTURE(r.verdict);
    CHECK(r.passed);
  }
}

TEST_CASE("gg::gemm takes the epilogue plans as options: bias, a saved pre-activation, gelu, a row sum of squares") {
  // Exact small integers, f32 out: D = gelu(A B^T + bias) with the pre-activation saved and the row
  // sums of gelu's values' squares, each against the host in double from the same inputs.
  const int64_t m = 300, n = 264, k = 128;
  rt::DeviceBuffer a(rt::ElemType::BF16, size_t(m * k)), b(rt::ElemType::BF16, size_t(n * k)),
      bias(rt::ElemType::F32, size_t(n)), d(rt::ElemType::F32, size_t(m * n)), aux(rt::ElemType::F32, size_t(m * n)),
      row_sums(rt::ElemType::F32, size_t(m));
  const std::vector<float> ha = rt::fill_small_integers(a, 41), hb = rt::fill_small_integers(b, 42),
                           hbias = rt::fill_small_integers(bias, 43);
  for (rt::DeviceBuffer* out : {&d, &aux, &row_sums}) rt::fill_poison(*out);
  GemmOptions o;
  o.out = DType::F32;
  EpilogueSpec add_bias;
  add_bias.kind = OpKind::AddBias;
  EpilogueSpec save;
  save.save = true;
  EpilogueSpec gelu;
  gelu.kind = OpKind::Gelu;
  o.epilogue = {add_bias, save, gelu, reduction(ReduceAlong::Rows, ReduceOp::SumSquares)};
  o.bias = bias.data();
  o.aux = aux.data();
  o.row_reduction = static_cast<float*>(row_sums.data());
  gemm(a.data(), b.data(), d.data(), m, n, k, o);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const std::vector<float> hd = d.download(), haux = aux.download(), hrows = row_sums.download();
  double worst = 0, worst_row = 0;
  for (int64_t i = 0; i < m; ++i) {
    double sum = 0, magnitude = 0;
    for (int64_t j = 0; j < n; ++j) {
      double pre = hbias[size_t(j)];
      for (int64_t kk = 0; kk < k; ++kk) pre += double(ha[size_t(i * k + kk)]) * hb[size_t(j * k + kk)];
      const double v = rt::apply_activation(rt::Activation::GeluTanh, pre);
      CHECK(haux[size_t(i * n + j)] == float(pre));  // small integers: exact
      worst = std::max(worst, std::fabs(hd[size_t(i * n + j)] - v) / (1.0 + std::fabs(v)));
      sum += v * v;
      magnitude += v * v;
    }
    worst_row = std::max(worst_row, std::fabs(hrows[size_t(i)] - sum) / (magnitude + 1e-30));
  }
  std::cout << "gg::gemm bias+save+gelu+rowsumsq: D worst " << worst << ", RowSumSq worst " << worst_row << "\n";
  CHECK(worst < 1e-5);
  CHECK(worst_row < 1e-5);
  // The vector the plan writes is required.
  o.row_reduction = nullptr;
  CHECK_THROWS_WITH_AS(gemm(a.data(), b.data(), d.data(), m, n, k, o),
                       doctest::Contains("the kernel reduces along rows (GemmProblem::row_reduction"), rt::CudaError);
}
