#pragma once
// Encoding a TensorMapSpec into the CUtensorMap bytes a kernel receives in GgGemmArgs.
#include <cuda.h>

#include <string>

#include "runtime/device/gemm_args.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

const char* operand_name(Operand operand);  // "A", "B", "C", "D"

// The spec's problems (box too large for the swizzle, unaligned base or row pitch, ...)
// as a sentence, or "" when it can be encoded. Checked on the host, no GPU needed.
std::string tensor_map_spec_problem(const TensorMapSpec& spec, const void* base);

// The arguments cuTensorMapEncodeTiled receives for a spec, in the driver's terms: dimensions
// innermost (contiguous) first, the row (and batch) stride in bytes, the box (one matrix deep
// along the batch), the swizzle. Pure: the unit tests check it against the driver API's
// documented layout without a GPU.
struct TiledMapArgs {
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 2;  // 3 with a batch dimension
  cuuint64_t global_dims[3] = {0, 0, 1};
  cuuint64_t global_strides[2] = {0, 0};
  cuuint32_t box_dims[3] = {0, 0, 1};
  cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;  // GG_TENSOR_MAP_L2_PROMOTION_BYTES
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;  // NONE reads zeros outside
};
TiledMapArgs tiled_map_args(const TensorMapSpec& spec);

// Tiled map over the stored matrices at `base` (cols contiguous): elements outside a matrix read
// as zero and are not written; a row-limited map (TensorMapSpec::row_limited) is encoded over a
// base box_rows rows before `base`. Throws CudaError.
GgTensorMap encode_tensor_map(const TensorMapSpec& spec, const void* base);

}  // namespace gg::rt
