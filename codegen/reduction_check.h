#pragma once
// Judges a kernel's reduction vectors (Definition::add_reduction) on the GPU check: every element
// against the same sums of cuBLAS's fp32 product with the epilogue applied on the host, and the
// elements at a few rows (columns), edges included, against fp64. Needs no GPU itself.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsl/definition.h"

namespace gg {

struct ReductionReport {
  std::string name;
  // The largest error over the elements checked, each relative to the sum of its terms' magnitudes
  // (a sum's cancellation does not shrink it): ours and cuBLAS's sums vs fp64 at the sampled
  // elements, ours vs cuBLAS's at every element.
  double error_vs_host = 0, cublas_error_vs_host = 0, error_vs_cublas = 0;
  int64_t unwritten = 0, sampled = 0;
};

// An element (batch b, row i, column j) of the product before the epilogue: fp64 (`exact`), or
// cuBLAS's fp32; and the value of the reduced node for such a product (the epilogue up to it).
using ProductAt = std::function<double(int64_t b, int64_t i, int64_t j)>;
using ValueAt = std::function<double(int64_t b, int64_t i, int64_t j, double product)>;

// `ours`: the kernel's vector, [batch][M] (rows) or [batch][N]. Returns why it fails ("" when it
// passes): an unwritten element; an error vs fp64 above max(1e-5, 2x cuBLAS's own); an error vs
// cuBLAS's sums above 1e-4; in `exact` mode (small integers) any difference from fp64 where the
// terms' magnitudes stay below 2^24 (fp32 then adds them exactly).
std::string check_reduction(const Reduction& r, int64_t batch, int64_t m, int64_t n, const std::vector<float>& ours,
                            const ProductAt& exact, const ProductAt& cublas, const ValueAt& value, bool exact_mode,
                            ReductionReport& report);

}  // namespace gg
