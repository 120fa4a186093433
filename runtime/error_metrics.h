#pragma once
// How far a result is from its reference.
#include <span>

namespace gg::rt {

// ||x - ref||_F / ||ref||_F; the absolute ||x - ref||_F when the reference is all zero.
// NaN if any element of x is NaN (a poisoned or broken output never passes a bound).
// Throws std::invalid_argument when the sizes differ.
double relative_frobenius_error(std::span<const double> x, std::span<const double> ref);

// DeepGEMM's calc_diff: 1 - 2 <x, ref> / (|x|^2 + |ref|^2). 0 for equal inputs (both all zero
// included), 1 for orthogonal ones, 2 for x = -ref; insensitive to where the error lies, unlike a
// maximum. NaN if any element is NaN; std::invalid_argument when the sizes differ.
double deepgemm_diff(std::span<const double> x, std::span<const double> ref);

}  // namespace gg::rt
