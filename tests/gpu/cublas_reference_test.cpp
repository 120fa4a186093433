// The cuBLAS reference against the fp64 host reference, and the buffer helpers
// (upload, download, poison) it relies on.
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include "runtime/reference.h"

using gg::rt::ElemType;

namespace {

struct Inputs {
  gg::rt::DeviceBuffer a, b;
  std::vector<float> host_a, host_b;
};

Inputs random_inputs(ElemType type, int64_t m, int64_t n, int64_t k) {
  Inputs in{gg::rt::DeviceBuffer(type, static_cast<size_t>(m * k)), gg::rt::DeviceBuffer(type, static_cast<size_t>(n * k)),
            {}, {}};
  in.host_a = gg::rt::fill_random_uniform(in.a, 11);
  in.host_b = gg::rt::fill_random_uniform(in.b, 12);
  return in;
}

}  // namespace

TEST_CASE("buffers round-trip values and count poisoned elements") {
  for (ElemType type : {ElemType::F32, ElemType::BF16, ElemType::F16}) {
    CAPTURE(gg::rt::elem_name(type));
    gg::rt::DeviceBuffer buffer(type, 1000);
    gg::rt::fill_poison(buffer);
    CHECK(gg::rt::count_poisoned(buffer) == 1000);
    const auto values = gg::rt::fill_random_uniform(buffer, 3);
    CHECK(buffer.download() == values);
    CHECK(gg::rt::count_poisoned(buffer) == 0);
  }
}

TEST_CASE("cuBLAS reference matches the fp64 host reference on random 256x192x128") {
  const int64_t m = 256, n = 192, k = 128;
  gg::rt::CublasReference cublas;
  for (ElemType in_type : {ElemType::BF16, ElemType::F16}) {
    Inputs in = random_inputs(in_type, m, n, k);
    for (ElemType out_type : {in_type, ElemType::F32}) {
      CAPTURE(gg::rt::elem_name(in_type));
      CAPTURE(gg::rt::elem_name(out_type));
      gg::rt::DeviceBuffer d(out_type, static_cast<size_t>(m * n));
      gg::rt::fill_poison(d);
      cublas.gemm(in.a, in.b, d, m, n, k);
      CHECK(gg::rt::count_poisoned(d) == 0);

      gg::rt::EpilogueRef epilogue;
      epilogue.out = out_type;
      const auto ref = gg::rt::host_gemm_reference(in.host_a, in.host_b, m, n, k, epilogue);
      const double error = gg::rt::relative_frobenius_error(gg::rt::gather_rows(d.download(), n, ref.rows), ref.values);
      std::printf("cuBLAS %s -> %s 256x192x128: relative Frobenius error %.3g\n", gg::rt::elem_name(in_type),
                  gg::rt::elem_name(out_type), error);
      CHECK(error < (out_type == ElemType::F32 ? 1e-5 : 4e-3));
    }
  }
}

TEST_CASE("cuBLAS is exact on small integers") {
  const int64_t m = 128, n = 64, k = 256;
  gg::rt::DeviceBuffer a(ElemType::BF16, m * k), b(ElemType::BF16, n * k), d(ElemType::F32, m * n);
  const auto host_a = gg::rt::fill_small_integers(a, 21);
  const auto host_b = gg::rt::fill_small_integers(b, 22);
  gg::rt::CublasReference().gemm(a, b, d, m, n, k);
  const auto ref = gg::rt::host_gemm_reference(host_a, host_b, m, n, k);
  CHECK(gg::rt::gather_rows(d.download(), n, ref.rows) == ref.values);
}

TEST_CASE("fp32 product from cuBLAS plus a host epilogue matches the fp64 epilogue reference") {
  const int64_t m = 256, n = 192, k = 128;
  Inputs in = random_inputs(ElemType::BF16, m, n, k);
  const auto c = gg::rt::random_uniform_values(ElemType::BF16, static_cast<size_t>(m * n), 13);
  const auto bias = gg::rt::random_uniform_values(ElemType::BF16, static_cast<size_t>(n), 14);
  gg::rt::DeviceBuffer product(ElemType::F32, static_cast<size_t>(m * n));
  gg::rt::CublasReference().gemm(in.a, in.b, product, m, n, k);
  const auto acc = product.download();

  for (gg::rt::Activation activation :
       {gg::rt::Activation::None, gg::rt::Activation::Relu, gg::rt::Activation::GeluTanh, gg::rt::Activation::Silu}) {
    gg::rt::EpilogueRef epilogue;
    epilogue.alpha = 0.5;
    epilogue.beta = 2.0;
    epilogue.bias_along = gg::rt::BiasAlong::Cols;
    epilogue.activation = activation;
    epilogue.out = ElemType::F32;
    const auto ref = gg::rt::host_gemm_reference(in.host_a, in.host_b, m, n, k, epilogue, c, bias);
    std::vector<double> got;
    for (int64_t row : ref.rows) {
      for (int64_t col = 0; col < n; ++col) {
        const auto at = static_cast<size_t>(row * n + col);
        got.push_back(gg::rt::apply_epilogue(epilogue, acc[at], c[at], bias[static_cast<size_t>(col)]));
      }
    }
    CHECK(gg::rt::relative_frobenius_error(got, ref.values) < 1e-5);
  }
}
