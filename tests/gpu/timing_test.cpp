// The timing helpers on cuBLAS: medians are positive and TFLOP/s plausible.
#include <doctest/doctest.h>

#include <cstdio>

#include "runtime/reference.h"
#include "runtime/timing.h"

TEST_CASE("median and interleaved timing of cuBLAS 4096^3 bf16") {
  using gg::rt::ElemType;
  const int64_t size = 4096;
  gg::rt::DeviceBuffer a(ElemType::BF16, size * size), b(ElemType::BF16, size * size), d(ElemType::BF16, size * size);
  gg::rt::fill_random_uniform(a, 1);
  gg::rt::fill_random_uniform(b, 2);
  gg::rt::CublasReference cublas;
  auto run = [&] { cublas.gemm(a, b, d, size, size, size); };

  const double ms = gg::rt::median_time_ms(run, 5, 20);
  const auto both = gg::rt::interleaved_median_ms(run, run, 5, 20);
  const double rate = gg::rt::tflops(size, size, size, ms);
  std::printf("cuBLAS 4096^3 bf16: median %.3f ms = %.0f TFLOP/s; interleaved with itself %.3f / %.3f ms\n", ms,
              rate, both.ours_ms, both.reference_ms);
  CHECK(ms > 0);
  CHECK(rate > 50);    // any Hopper GPU is far above this
  CHECK(rate < 2000);  // and far below this
  CHECK(both.ours_ms > 0);
  CHECK(both.reference_ms > 0);
  CHECK(gg::rt::tflops(1000, 1000, 1000, 1.0) == doctest::Approx(2.0));
}
