#include "runtime/error_metrics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

TEST_CASE("relative Frobenius error") {
  const std::vector<double> ref = {3, 4};  // norm 5
  CHECK(gg::rt::relative_frobenius_error(ref, ref) == 0.0);
  CHECK(gg::rt::relative_frobenius_error(std::vector<double>{3, 5}, ref) == doctest::Approx(0.2));
  CHECK(gg::rt::relative_frobenius_error(std::vector<double>{0, 0}, ref) == doctest::Approx(1.0));
  // All-zero reference: the absolute error.
  CHECK(gg::rt::relative_frobenius_error(std::vector<double>{3, 4}, std::vector<double>{0, 0}) ==
        doctest::Approx(5.0));
  // A NaN never passes a bound.
  CHECK(std::isnan(gg::rt::relative_frobenius_error(std::vector<double>{NAN, 4}, ref)));
  CHECK_THROWS_AS(gg::rt::relative_frobenius_error(std::vector<double>{1}, ref), std::invalid_argument);
}

TEST_CASE("DeepGEMM's diff: 1 - 2<x,ref>/(|x|^2+|ref|^2)") {
  const std::vector<double> ref = {3, 4};
  CHECK(gg::rt::deepgemm_diff(ref, ref) == 0.0);
  CHECK(gg::rt::deepgemm_diff(std::vector<double>{-3, -4}, ref) == doctest::Approx(2.0));
  CHECK(gg::rt::deepgemm_diff(std::vector<double>{4, -3}, ref) == doctest::Approx(1.0));  // orthogonal
  CHECK(gg::rt::deepgemm_diff(std::vector<double>{0, 0}, ref) == doctest::Approx(1.0));
  CHECK(gg::rt::deepgemm_diff(std::vector<double>{6, 8}, ref) == doctest::Approx(0.2));  // 1 - 2*50/125
  CHECK(gg::rt::deepgemm_diff(std::vector<double>{0, 0}, std::vector<double>{0, 0}) == 0.0);
  CHECK(std::isnan(gg::rt::deepgemm_diff(std::vector<double>{NAN, 4}, ref)));
  CHECK_THROWS_AS(gg::rt::deepgemm_diff(std::vector<double>{1}, ref), std::invalid_argument);
}
