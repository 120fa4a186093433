#include "codegen/reduction_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gg {

namespace {

// A few elements of a vector of `length`: both edges, their neighbours and the thirds.
std::vector<int64_t> sampled_elements(int64_t length) {
  std::vector<int64_t> at;
  for (int64_t x : {int64_t(0), int64_t(1), length / 3, length / 2, 2 * length / 3, length - 2, length - 1})
    if (x >= 0 && x < length && std::find(at.begin(), at.end(), x) == at.end()) at.push_back(x);
  return at;
}

struct Sum {
  double value = 0, magnitude = 0;
};

}  // namespace

std::string check_reduction(const Reduction& r, int64_t batch, int64_t m, int64_t n, const std::vector<float>& ours,
                            const ProductAt& exact, const ProductAt& cublas, const ValueAt& value, bool exact_mode,
                            ReductionReport& report) {
  const bool rows = r.along == ReduceAlong::Rows;
  const int64_t length = rows ? m : n, across = rows ? n : m;
  report = ReductionReport{};
  report.name = r.name;
  const auto sum_of = [&](int64_t b, int64_t x, const ProductAt& product) {
    Sum s;
    for (int64_t y = 0; y < across; ++y) {
      const int64_t i = rows ? x : y, j = rows ? y : x;
      const double v = value(b, i, j, product(b, i, j));
      const double term = r.op == ReduceOp::SumSquares ? v * v : v;
      s.value += term;
      s.magnitude += std::fabs(term);
    }
    return s;
  };
  const auto error = [](double got, const Sum& want) {
    return want.magnitude > 0 ? std::fabs(got - want.value) / want.magnitude : std::fabs(got - want.value);
  };
  bool inexact = false;
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int64_t> sampled = b == 0 || b == batch - 1 ? sampled_elements(length) : std::vector<int64_t>{};
    for (int64_t x = 0; x < length; ++x) {
      const float got = ours[static_cast<size_t>(b * length + x)];
      if (std::isnan(got)) {
        ++report.unwritten;
        continue;
      }
      const Sum theirs = sum_of(b, x, cublas);
      report.error_vs_cublas = std::max(report.error_vs_cublas, error(got, theirs));
      if (std::find(sampled.begin(), sampled.end(), x) == sampled.end()) continue;
      const Sum want = sum_of(b, x, exact);
      ++report.sampled;
      report.error_vs_host = std::max(report.error_vs_host, error(got, want));
      report.cublas_error_vs_host = std::max(report.cublas_error_vs_host, error(theirs.value, want));
      inexact = inexact || (want.magnitude < 16777216.0 && double(got) != want.value);
    }
  }
  std::ostringstream why;
  if (report.unwritten) why << report.unwritten << " elements of " << r.name << " never written; ";
  const double bound = std::max(1e-5, 2 * report.cublas_error_vs_host);
  if (!(report.error_vs_host <= bound))
    why << r.name << ": error vs fp64 " << report.error_vs_host << " > " << bound << " (1e-5 or 2x cuBLAS's own); ";
  if (!(report.error_vs_cublas <= 1e-4)) why << r.name << ": error vs cuBLAS's sums " << report.error_vs_cublas << " > 1e-4; ";
  if (exact_mode && inexact) why << r.name << ": exact mode: a sum differs from fp64; ";
  return why.str();
}

}  // namespace gg
