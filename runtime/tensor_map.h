#pragma once
// Encoding a TensorMapSpec into the CUtensorMap bytes a kernel receives in GgGemmArgs.
#include <string>

#include "runtime/device/gemm_args.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

const char* operand_name(Operand operand);  // "A", "B", "C", "D"

// The spec's problems (box too large for the swizzle, unaligned base or row pitch, ...)
// as a sentence, or "" when it can be encoded. Checked on the host, no GPU needed.
std::string tensor_map_spec_problem(const TensorMapSpec& spec, const void* base);

// 2-D tiled map over a row-major matrix at `base` (cols contiguous): elements
// outside the matrix read as zero and are not written. Throws CudaError.
GgTensorMap encode_tensor_map(const TensorMapSpec& spec, const void* base);

}  // namespace gg::rt
