// Tutorial kernels v1..v6 on the GPU against cuBLAS and the fp64 host reference: random and
// exact small-integer data, bf16 and f16, poisoned outputs, edge shapes (M and N off the
// tile, M = 1, N = 8, K = 8, K below the pipeline depth) and large ones.
#include <doctest/doctest.h>

#include <iostream>

#include "codegen/gemm_check.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

struct Shape {
  int64_t m, n, k;
};

// Shapes each step can run: v1 is one tile, v2 one tile of M and N, v4+ store by TMA (N % 8).
std::vector<Shape> edge_shapes(int version) {
  switch (version) {
    case 1: return {{128, 128, 64}, {1, 8, 8}, {100, 72, 40}, {128, 1, 64}, {37, 128, 16}};
    case 2: return {{128, 128, 512}, {77, 128, 200}, {1, 8, 8}, {128, 3, 1024}};
    case 3: return {{300, 200, 136}, {1, 8, 8}, {1, 1000, 1000}, {129, 257, 72}, {513, 255, 64}};
    default: return {{300, 200, 136}, {1, 8, 8}, {129, 264, 72}, {64, 8, 1024}, {129, 264, 64}, {1000, 1000, 1000}};
  }
}

constexpr int kPingPong = 0;  // in place of a tutorial step: ping_pong_schedule

void check(int version, Shape s, DType dtype, bool exact, int repeat = 0) {
  Definition def = make_gemm(s.m, s.n, s.k, dtype, dtype);
  CheckOptions options;
  options.exact = exact;
  options.repeat = repeat;
  options.seed = static_cast<uint64_t>(version * 1000 + s.m + s.n + s.k);
  CheckReport r = check_on_gpu(version == kPingPong ? ping_pong_schedule(def) : tutorial_schedule(version, def), options);
  std::string label = (version == kPingPong ? "pingpong" : "v" + std::to_string(version)) + " " +
                      std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                      std::to_string(s.k) + " " + std::string(dtype_name(dtype)) + (exact ? " exact" : " random");
  std::cout << label << ": err_vs_host=" << r.error_vs_host << " cublas_err=" << r.cublas_error_vs_host
            << " err_vs_cublas=" << r.error_vs_cublas << " unwritten=" << r.unwritten
            << (repeat ? " repeats_differing=" + std::to_string(r.repeats_differing) + "/" + std::to_string(r.repeats) : "")
            << " -> "
            << (r.passed ? "ok" : r.verdict) << "\n";
  CAPTURE(label);
  CAPTURE(r.verdict);
  CHECK(r.unwritten == 0);
  CHECK(r.passed);
}

}  // namespace

TEST_CASE("tutorial v1..v10 match cuBLAS and the fp64 reference on edge shapes") {
  for (int v = 1; v <= 10; ++v)
    for (Shape s : edge_shapes(v))
      for (DType t : {DType::BF16, DType::F16})
        for (bool exact : {false, true}) check(v, s, t, exact);
}

// Two cases so that each fits one lent-GPU command (the 8192^3 host references take minutes).
TEST_CASE("tutorial v3..v10 at 4096^3") {
  for (int v = 3; v <= 10; ++v)
    for (DType t : {DType::BF16, DType::F16}) check(v, {4096, 4096, 4096}, t, false);
}

TEST_CASE("tutorial v5..v10 at 8192^3") {
  for (int v = 5; v <= 10; ++v) {
    check(v, {8192, 8192, 8192}, DType::BF16, false);
    check(v, {8192, 8192, 8192}, DType::BF16, true);
  }
}

TEST_CASE("ping-pong consumers match cuBLAS and the fp64 reference on edge shapes and at 4096^3") {
  // Beside the tutorial's edge shapes: odd tile counts per CTA (one consumer takes one tile more)
  // and more tiles than CTAs (both consumers take several).
  std::vector<Shape> shapes = edge_shapes(kPingPong);
  shapes.push_back({384, 384, 192});
  shapes.push_back({2048, 2048, 512});
  for (Shape s : shapes)
    for (DType t : {DType::BF16, DType::F16})
      for (bool exact : {false, true}) check(kPingPong, s, t, exact);
  check(kPingPong, {4096, 4096, 4096}, DType::BF16, false);
}

TEST_CASE("v7..v10 and ping-pong: 100 launches on the same inputs are bit-identical") {
  // 2048x2048: more tiles than CTAs, so persistent CTAs, their pipelines and the staging buffers
  // all wrap; random data, so a race that changes the order of any sum changes bits.
  for (int v : {7, 8, 9, 10, kPingPong}) check(v, {2048, 2048, 512}, DType::BF16, false, 100);
}

TEST_CASE("a fused epilogue: alpha, beta*C, bias, activation, f32 and f16 outputs") {
  for (int act = 0; act < 3; ++act)
    for (DType out : {DType::F32, DType::F16, DType::BF16}) {
      Definition def;
      Tensor a = def.input("A", {300, 136}, DType::BF16);
      Tensor b = def.input("B", {264, 136}, DType::BF16);
      Tensor c = def.input("C", {300, 264}, out);
      Tensor bias = def.input("bias", {264}, out);
      Tensor y = def.add_bias(def.add_scaled(def.scale(def.matmul(a, b), 0.5), c, 0.25), bias, BiasAlong::Cols);
      y = act == 0 ? def.relu(y) : act == 1 ? def.gelu(y) : def.silu(y);
      def.set_output(def.cast(y, out));
      for (int v : {3, 5, 6, 8, 10, kPingPong}) {
        CheckReport r = check_on_gpu(v == kPingPong ? ping_pong_schedule(def) : tutorial_schedule(v, def));
        std::cout << "epilogue act=" << act << " out=" << dtype_name(out) << " "
                  << (v == kPingPong ? std::string("pingpong") : "v" + std::to_string(v)) << ": err_vs_host="
                  << r.error_vs_host << " cublas_err=" << r.cublas_error_vs_host << " -> "
                  << (r.passed ? "ok" : r.verdict) << "\n";
        CAPTURE(r.verdict);
        CHECK(r.passed);
      }
    }
}
