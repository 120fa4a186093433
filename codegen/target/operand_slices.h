#pragma once
// The shared-memory operand slices an MMA instruction reads from a stage, for both targets:
// wgmma (sm_90a) and tcgen05.mma (sm_100a) read the same K-major or MN-major swizzled layouts
// through descriptors whose start address points at the slice.
#include "codegen/kernel_ir.h"
#include "codegen/roles_and_layouts.h"

namespace gg {

// Where the slice of k step `kk` (the loop variable "kk", `k_elems` elements deep) starting at M or
// N index `mn` begins within a stage. K-major: kk * k_elems * elem_bytes bytes into row mn, i.e. in
// atom (that) / sb at byte (that) % sb. MN-major: row k_elems * kk, in the atom holding index mn
// (mn is a whole number of atoms).
kir::ExprPtr k_step_offset(const SmemTileLayout& l, const kir::ExprPtr& mn, int k_elems, int elem_bytes);

// The layout a descriptor describes: the stage's swizzle, its major, and for MN-major the
// distance between swizzle atoms along M or N.
kir::WgmmaLayout mma_operand_layout(const SmemTileLayout& l);

}  // namespace gg
