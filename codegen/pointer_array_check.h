#pragma once
// gemm_check for pointer-array groups: every group in allocations of its own (a padded leading
// dimension on every other group, but in timed runs), the device arrays of pointers, sizes and leading dimensions a
// caller passes, one cuBLAS call per group and an fp64 reference per group; D's padding between a
// group's rows must stay poison.
#include <cstdint>
#include <vector>

#include "codegen/emit.h"
#include "codegen/gemm_check.h"
#include "runtime/launch.h"

namespace gg {

// The M, N, K of each group: `given` (3 per group), the definition's planned sizes for the rest.
std::vector<int64_t> group_sizes_or_planned(const std::vector<int64_t>& given, const Definition& def);

// Needs a GPU. One launch (and the options' repeats and timing) of a loaded pointer-array kernel.
CheckReport check_pointer_array(const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                                const CheckOptions& o);

}  // namespace gg
