#pragma once
// How far a result is from its reference.
#include <span>

namespace gg::rt {

// ||x - ref||_F / ||ref||_F; the absolute ||x - ref||_F when the reference is all zero.
// NaN if any element of x is NaN (a poisoned or broken output never passes a bound).
// Throws std::invalid_argument when the sizes differ.
double relative_frobenius_error(std::span<const double> x, std::span<const double> ref);

}  // namespace gg::rt
