#include "runtime/error_metrics.h"

#include <cmath>
#include <stdexcept>

namespace gg::rt {

double relative_frobenius_error(std::span<const double> x, std::span<const double> ref) {
  if (x.size() != ref.size()) throw std::invalid_argument("relative_frobenius_error: sizes differ");
  double diff_squared = 0.0, ref_squared = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double diff = x[i] - ref[i];
    diff_squared += diff * diff;
    ref_squared += ref[i] * ref[i];
  }
  const double diff_norm = std::sqrt(diff_squared);
  return ref_squared == 0.0 ? diff_norm : diff_norm / std::sqrt(ref_squared);
}

double deepgemm_diff(std::span<const double> x, std::span<const double> ref) {
  if (x.size() != ref.size()) throw std::invalid_argument("deepgemm_diff: sizes differ");
  double dot = 0.0, squares = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * ref[i];
    squares += x[i] * x[i] + ref[i] * ref[i];
  }
  if (squares == 0.0) return 0.0;  // both all zero: equal
  return 1.0 - 2.0 * dot / squares;
}

}  // namespace gg::rt
