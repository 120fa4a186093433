#pragma once
#include "codegen/kernel.h"

namespace gg {

// First pass: the CTA's loop structure from the domain. Tile coordinates come from the
// grid-bound axes through the split/merge relations (guarded where a split has a tail); the
// serial k loop carries the abstract per-k-tile steps (load, acquire, compute, release) on a
// single stage; the write of the output tile follows the k loop.
Kernel build_loop_nests(const Schedule& s, Kernel k);

}  // namespace gg
