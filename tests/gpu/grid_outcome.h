#pragma once
// Shared by the GPU shape grids (ragged shapes, layouts): one run's result judged against fp64
// and cuBLAS, printed as one line and checked with the same bounds everywhere.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dsl/dtype.h"
#include "runtime/reference.h"

namespace gg::testing {

struct GridOutcome {
  double error = 0, cublas_error = 0;
  size_t unwritten = 0;        // output elements still poison
  size_t outside_touched = 0;  // guard elements or padding between D's rows no longer poison
  bool exact = true;
};

// Our and cuBLAS's logical [M,N] results (row-major) against fp64 sums of `a` [M,K] and `b` [N,K]
// (not rounded to the output type: both kernels' rounding counts as their error); with `exact`,
// whether ours equals the fp64 value everywhere.
inline void compare_to_fp64(GridOutcome& o, const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                            int64_t n, int64_t k, const std::vector<float>& ours_f,
                            const std::vector<float>& theirs_f, bool exact) {
  const auto host = rt::host_gemm_reference(a, b, m, n, k);
  const auto ours = rt::gather_rows(ours_f, n, host.rows), theirs = rt::gather_rows(theirs_f, n, host.rows);
  o.error = rt::relative_frobenius_error(ours, host.values);
  o.cublas_error = rt::relative_frobenius_error(theirs, host.values);
  if (exact)
    for (size_t i = 0; i < ours.size(); ++i) o.exact = o.exact && ours[i] == host.values[i];
}

// Prints "<label> rand|exact: error ..., ok|FAIL" and checks the run: every element written,
// nothing outside D touched, within the dtype's bound and 2x cuBLAS's own error, exact when asked.
inline bool judge(const GridOutcome& o, DType out, bool exact, const std::string& label) {
  const double bound = out == DType::F32 ? 1e-5 : 4e-3;
  const bool ok = o.unwritten == 0 && o.outside_touched == 0 && o.error <= bound &&
                  o.error <= 2 * o.cublas_error + 1e-7 && (!exact || o.exact);
  std::printf("%s %-5s: error %.3g (cuBLAS %.3g) unwritten %zu outside %zu%s %s\n", label.c_str(),
              exact ? "exact" : "rand", o.error, o.cublas_error, o.unwritten, o.outside_touched,
              exact ? (o.exact ? " exact" : " NOT EXACT") : "", ok ? "ok" : "FAIL");
  CAPTURE(label);
  CAPTURE(exact);
  CHECK(o.unwritten == 0);
  CHECK(o.outside_touched == 0);
  CHECK(o.error <= bound);
  CHECK(o.error <= 2 * o.cublas_error + 1e-7);
  if (exact) CHECK(o.exact);
  return ok;
}

}  // namespace gg::testing
