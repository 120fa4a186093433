#pragma once
#include "codegen/kernel.h"

namespace gg {

// Turns the single-stage k loop into a ring of `stages` buffers: a prologue fills the first
// `prefetch` stages, and each iteration loads k tile k+prefetch into the stage the previous
// iteration released before it acquires and computes stage k % stages. One stage (no
// circular_buffer directive) is the degenerate ring: load, acquire, compute, release.
Kernel expand_circular_buffer(Kernel k);

}  // namespace gg
