#pragma once
// Shared by the GPU shape grids (ragged shapes, layouts): one run's result judged against fp64
// and cuBLAS, printed as one line and checked with the same bounds everywhere.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "dsl/dtype.h"
#include "runtime/launch_spec.h"
#include "runtime/reference.h"

namespace gg::testing {

// The extents the shape grids cross (issue 9: edges of tiles, vectors and 16-byte rows), and the
// poisoned guard elements on either side of an output.
inline constexpr int64_t kExtents[] = {1, 7, 8, 9, 63, 65, 127, 129, 1000, 4097};
inline constexpr size_t kGuard = 256;

struct Shape {
  int64_t m, n, k;
};

// Stored matrices: logical element (r, c) of matrix b of a batch of rows x cols matrices at
// b * batch_stride + r * ld + c, or b * batch_stride + c * ld + r when transposed; `matrices` is 1
// for a broadcast operand.
struct Stored {
  bool transposed = false;
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t matrices = 1, batch_stride = 0;
  int64_t index(int64_t r, int64_t c, int64_t b = 0) const {
    return b * batch_stride + (transposed ? c * ld + r : r * ld + c);
  }
  size_t count() const {
    const int64_t outer = transposed ? cols : rows, inner = transposed ? rows : cols;
    return size_t((matrices - 1) * batch_stride + (outer - 1) * ld + inner);
  }
};

// cuBLAS's description of the problem whose A, B and D lie as `a`, `b` and `d` say (D holds every
// matrix of the batch; a broadcast A or B has one matrix, stride 0).
inline rt::MatrixLayouts cublas_layouts(const Stored& a, const Stored& b, const Stored& d) {
  rt::MatrixLayouts l;
  l.a_mn_major = a.transposed;
  l.b_mn_major = b.transposed;
  l.lda = a.ld;
  l.ldb = b.ld;
  l.ldd = d.ld;
  l.batch = d.matrices;
  if (d.matrices > 1) {
    l.stride_a = a.batch_stride;
    l.stride_b = b.batch_stride;
    l.stride_d = d.batch_stride;
  }
  return l;
}

// The logical values (matrix after matrix, each row-major) placed into a stored layout, NaN elsewhere.
inline std::vector<float> place(const std::vector<float>& logical, const Stored& s) {
  std::vector<float> out(s.count(), std::nanf(""));
  for (int64_t b = 0; b < s.matrices; ++b)
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t c = 0; c < s.cols; ++c)
        out[size_t(s.index(r, c, b))] = logical[size_t((b * s.rows + r) * s.cols + c)];
  return out;
}

struct GridOutcome {
  double error = 0, cublas_error = 0;
  size_t unwritten = 0;        // output elements still poison
  size_t outside_touched = 0;  // guard elements or padding between D's rows no longer poison
  bool exact = true;
};

// Reads our output `all` (D as `d` lays it out, kGuard poisoned elements on either side) and
// cuBLAS's `theirs_stored` into logical values, matrix after matrix, each row-major; counts D's
// elements left poison and the guards, row padding and gaps between matrices no longer poison.
inline void gather_output(GridOutcome& o, const Stored& d, const std::vector<float>& all,
                          const std::vector<float>& theirs_stored, std::vector<float>& ours_f,
                          std::vector<float>& theirs_f) {
  const size_t size = size_t(d.rows * d.cols);
  std::vector<char> element(d.count(), 0);
  ours_f.assign(size * size_t(d.matrices), 0.0f);
  theirs_f.assign(size * size_t(d.matrices), 0.0f);
  for (int64_t bt = 0; bt < d.matrices; ++bt)
    for (int64_t r = 0; r < d.rows; ++r)
      for (int64_t c = 0; c < d.cols; ++c) {
        const size_t at = size_t(d.index(r, c, bt)), logical = size_t(bt) * size + size_t(r * d.cols + c);
        element[at] = 1;
        ours_f[logical] = all[kGuard + at];
        theirs_f[logical] = theirs_stored[at];
      }
  for (size_t i = 0; i < kGuard; ++i) o.outside_touched += !std::isnan(all[i]) + !std::isnan(all[kGuard + d.count() + i]);
  for (size_t i = 0; i < d.count(); ++i) o.outside_touched += !element[i] && !std::isnan(all[kGuard + i]);
  for (float v : ours_f) o.unwritten += std::isnan(v);
}

// compare_to_fp64 over `batch` matrices of results, `a` and `b` each holding one matrix
// (broadcast) or one per batch, matrix after matrix: one error over all of them.
inline void compare_batch_to_fp64(GridOutcome& o, const std::vector<float>& a, const std::vector<float>& b,
                                  int64_t m, int64_t n, int64_t k, int64_t batch, const std::vector<float>& ours_f,
                                  const std::vector<float>& theirs_f, bool exact) {
  std::vector<double> ours, theirs, want;
  const size_t a_size = size_t(m * k), b_size = size_t(n * k), d_size = size_t(m * n);
  for (int64_t bt = 0; bt < batch; ++bt) {
    const auto a_b = std::span<const float>(a).subspan(a.size() > a_size ? size_t(bt) * a_size : 0, a_size);
    const auto b_b = std::span<const float>(b).subspan(b.size() > b_size ? size_t(bt) * b_size : 0, b_size);
    const auto host = rt::host_gemm_reference(a_b, b_b, m, n, k);
    const auto d_b = [&](const std::vector<float>& all) {
      return std::vector<float>(all.begin() + std::ptrdiff_t(size_t(bt) * d_size),
                                all.begin() + std::ptrdiff_t(size_t(bt + 1) * d_size));
    };
    const auto o_b = rt::gather_rows(d_b(ours_f), n, host.rows), t_b = rt::gather_rows(d_b(theirs_f), n, host.rows);
    ours.insert(ours.end(), o_b.begin(), o_b.end());
    theirs.insert(theirs.end(), t_b.begin(), t_b.end());
    want.insert(want.end(), host.values.begin(), host.values.end());
  }
  o.error = rt::relative_frobenius_error(ours, want);
  o.cublas_error = rt::relative_frobenius_error(theirs, want);
  if (exact)
    for (size_t i = 0; i < ours.size(); ++i) o.exact = o.exact && ours[i] == want[i];
}

// Our and cuBLAS's logical [M,N] results (row-major) against fp64 sums of `a` [M,K] and `b` [N,K]
// (not rounded to the output type: both kernels' rounding counts as their error); with `exact`,
// whether ours equals the fp64 value everywhere.
inline void compare_to_fp64(GridOutcome& o, const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                            int64_t n, int64_t k, const std::vector<float>& ours_f,
                            const std::vector<float>& theirs_f, bool exact) {
  compare_batch_to_fp64(o, a, b, m, n, k, 1, ours_f, theirs_f, exact);
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
