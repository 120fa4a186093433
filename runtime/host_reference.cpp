#include "runtime/host_reference.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "runtime/host_dtype.h"
#include "runtime/parallel_chunks.h"

namespace gg::rt {

double apply_activation(Activation activation, double x) {
  switch (activation) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0.0 ? x : 0.0;
    case Activation::GeluTanh: {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case Activation::Silu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

double apply_activation_grad(Activation activation, double x) {
  switch (activation) {
    case Activation::None: return 1.0;
    case Activation::Relu: return x > 0.0 ? 1.0 : 0.0;
    case Activation::GeluTanh: {
      const double k = std::sqrt(2.0 / std::numbers::pi), c = 0.044715;
      const double t = std::tanh(k * (x + c * x * x * x));
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
    }
    case Activation::Silu: {
      const double s = 1.0 / (1.0 + std::exp(-x));
      return s * (1.0 + x * (1.0 - s));
    }
  }
  return 1.0;
}

double apply_epilogue(const EpilogueRef& epilogue, double acc, double c, double bias) {
  double y = epilogue.alpha * acc + epilogue.beta * c + bias;
  y = apply_activation(epilogue.activation, y);
  return round_to(epilogue.out, y);
}

std::vector<int64_t> reference_rows(int64_t m, int64_t n, int64_t k) {
  std::vector<int64_t> rows;
  if (m * n * k <= (int64_t{1} << 24)) {
    for (int64_t r = 0; r < m; ++r) rows.push_back(r);
    return rows;
  }
  for (int64_t r = 0; r < std::min<int64_t>(8, m); ++r) rows.push_back(r);
  for (int64_t r = std::max<int64_t>(0, m - 8); r < m; ++r) rows.push_back(r);
  for (int64_t i = 0; i < 48; ++i) rows.push_back(std::min(m - 1, i * (m / 48) + i % 8));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

HostReference host_gemm_reference(std::span<const float> a, std::span<const float> b, int64_t m, int64_t n,
                                  int64_t k, const EpilogueRef& epilogue, std::span<const float> c,
                                  std::span<const float> bias, std::vector<int64_t> rows) {
  if (a.size() != static_cast<size_t>(m * k) || b.size() != static_cast<size_t>(n * k)) {
    throw std::invalid_argument("host_gemm_reference: A or B does not match M, N, K");
  }
  if (epilogue.beta != 0.0 && c.size() != static_cast<size_t>(m * n)) {
    throw std::invalid_argument("host_gemm_reference: beta != 0 needs C of M x N");
  }
  const size_t bias_size = epilogue.bias_along == BiasAlong::Rows   ? static_cast<size_t>(m)
                           : epilogue.bias_along == BiasAlong::Cols ? static_cast<size_t>(n)
                                                                    : 0;
  if (bias.size() != bias_size) {
    throw std::invalid_argument("host_gemm_reference: bias has " + std::to_string(bias.size()) +
                                " values, expected " + std::to_string(bias_size));
  }
  HostReference ref;
  ref.rows = rows.empty() ? reference_rows(m, n, k) : std::move(rows);
  ref.n = n;
  ref.values.resize(ref.rows.size() * static_cast<size_t>(n));
  const auto compute = [&](size_t first, size_t last) {  // flat indices into ref.values
    for (size_t at = first; at < last; ++at) {
      const int64_t row = ref.rows[at / static_cast<size_t>(n)], col = static_cast<int64_t>(at % static_cast<size_t>(n));
      const float* a_row = &a[static_cast<size_t>(row * k)];
      const float* b_row = &b[static_cast<size_t>(col * k)];
      double acc = 0.0;
      for (int64_t i = 0; i < k; ++i) acc += static_cast<double>(a_row[i]) * static_cast<double>(b_row[i]);
      const double c_value = epilogue.beta != 0.0 ? c[static_cast<size_t>(row * n + col)] : 0.0;
      const double bias_value = epilogue.bias_along == BiasAlong::Rows   ? bias[static_cast<size_t>(row)]
                                : epilogue.bias_along == BiasAlong::Cols ? bias[static_cast<size_t>(col)]
                                                                         : 0.0;
      ref.values[at] = apply_epilogue(epilogue, acc, c_value, bias_value);
    }
  };
  // Each value is one serial fp64 sum, so splitting the values over threads changes no bit; a
  // large problem's sampled rows are billions of multiply-adds, which one core takes seconds for.
  const size_t min_values = std::max<size_t>(1, (size_t{1} << 22) / static_cast<size_t>(std::max<int64_t>(k, 1)));
  for_each_chunk(ref.values.size(), min_values, compute);
  return ref;
}

std::vector<double> gather_rows(std::span<const float> full, int64_t n, const std::vector<int64_t>& rows) {
  std::vector<double> out;
  out.reserve(rows.size() * static_cast<size_t>(n));
  for (int64_t row : rows) {
    for (int64_t col = 0; col < n; ++col) out.push_back(full[static_cast<size_t>(row * n + col)]);
  }
  return out;
}

}  // namespace gg::rt
