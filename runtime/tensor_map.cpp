#include "runtime/tensor_map.h"

#include <cstdint>
#include <cstring>

#include "runtime/cuda_error.h"
#include "runtime/driver_api.h"

namespace gg::rt {
namespace {

static_assert(sizeof(GgTensorMap) == sizeof(CUtensorMap) && alignof(GgTensorMap) >= alignof(CUtensorMap),
              "GgTensorMap must hold a CUtensorMap");

CUtensorMapDataType data_type(ElemType elem) {
  switch (elem) {
    case ElemType::F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ElemType::BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ElemType::F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ElemType::E4M3:
    case ElemType::E5M2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // TMA moves bytes; wgmma reads them as FP8
  }
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

CUtensorMapSwizzle swizzle_mode(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::None: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case Swizzle::B32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case Swizzle::B64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case Swizzle::B128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

uint64_t swizzle_span_bytes(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::None: return 0;
    case Swizzle::B32: return 32;
    case Swizzle::B64: return 64;
    case Swizzle::B128: return 128;
  }
  return 0;
}

std::string describe(const TensorMapSpec& spec) {
  return std::string("tensor map for operand ") + operand_name(spec.operand) + " (" + elem_name(spec.elem) + " " +
         std::to_string(spec.rows) + "x" + std::to_string(spec.cols) + ", box " + std::to_string(spec.box_rows) +
         "x" + std::to_string(spec.box_cols) + ")";
}

}  // namespace

const char* operand_name(Operand operand) {
  switch (operand) {
    case Operand::A: return "A";
    case Operand::B: return "B";
    case Operand::C: return "C";
    case Operand::D: return "D";
    case Operand::ScaleA: return "A's scales";
    case Operand::ScaleB: return "B's scales";
    case Operand::Aux: return "the saved output";
  }
  return "?";
}

std::string tensor_map_spec_problem(const TensorMapSpec& spec, const void* base) {
  const auto elem = static_cast<uint64_t>(elem_bytes(spec.elem));
  const uint64_t row_pitch = (spec.row_stride ? spec.row_stride : spec.cols) * elem;
  const uint64_t box_row_bytes = uint64_t{spec.box_cols} * elem;
  if (base == nullptr) return "its base pointer is null";
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "its base pointer is not 16-byte aligned";
  if (spec.rows == 0 || spec.cols == 0) return "the matrix is empty";
  if (spec.rows > (uint64_t{1} << 32) || spec.cols > (uint64_t{1} << 32)) return "a dimension exceeds 2^32";
  if (spec.rows > 1 && row_pitch % 16 != 0) {
    return "its row pitch (" + std::to_string(row_pitch) + " bytes) is not a multiple of 16";
  }
  if (spec.row_stride != 0 && spec.row_stride < spec.cols) return "its row stride is shorter than a row";
  if (spec.row_limited && spec.batches > 1) return "a row-limited map is one matrix";
  if (spec.batches > 1 && (spec.batch_stride * elem) % 16 != 0) {
    return "its batch stride (" + std::to_string(spec.batch_stride * elem) + " bytes) is not a multiple of 16";
  }
  if (spec.box_rows == 0 || spec.box_cols == 0 || spec.box_rows > 256 || spec.box_cols > 256) {
    return "box dimensions must be in [1, 256]";
  }
  if (box_row_bytes % 16 != 0) return "a box row (" + std::to_string(box_row_bytes) + " bytes) is not a multiple of 16";
  if (const uint64_t span = swizzle_span_bytes(spec.swizzle); span != 0 && box_row_bytes > span) {
    return "a box row (" + std::to_string(box_row_bytes) + " bytes) exceeds the " + std::to_string(span) +
           "-byte swizzle span";
  }
  return "";
}

TiledMapArgs tiled_map_args(const TensorMapSpec& spec) {
  TiledMapArgs a;
  a.data_type = data_type(spec.elem);
  const auto elem = static_cast<cuuint64_t>(elem_bytes(spec.elem));
  a.global_dims[0] = spec.cols;  // innermost first
  a.global_dims[1] = spec.rows;
  a.global_strides[0] = (spec.row_stride ? spec.row_stride : spec.cols) * elem;  // bytes between rows
  a.box_dims[0] = spec.box_cols;
  a.box_dims[1] = spec.box_rows;
  if (spec.row_limited) {  // rows [box_rows - kept, box_rows) of dimension 1, offset by dimension 2
    a.rank = 3;
    a.global_dims[1] = spec.box_rows;
    a.global_dims[2] = spec.rows + spec.box_rows;
    a.global_strides[1] = a.global_strides[0];
  } else if (spec.batches > 1) {
    a.rank = 3;
    a.global_dims[2] = spec.batches;
    a.global_strides[1] = spec.batch_stride * elem;
  }
  a.swizzle = swizzle_mode(spec.swizzle);
  a.l2_promotion = GG_TENSOR_MAP_L2_PROMOTION_BYTES(a.global_strides[0]) == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                                                              : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  return a;
}

GgTensorMap encode_tensor_map(const TensorMapSpec& spec, const void* base) {
  if (std::string problem = tensor_map_spec_problem(spec, base); !problem.empty()) {
    throw CudaError("cannot encode " + describe(spec) + ": " + problem);
  }
  TiledMapArgs a = tiled_map_args(spec);
  // A row-limited map starts box_rows rows before the matrix (its second row dimension's
  // coordinate is the first row plus the rows kept); the hardware addresses only elements inside.
  if (spec.row_limited) base = static_cast<const char*>(base) - uint64_t{spec.box_rows} * a.global_strides[0];
  CUtensorMap map;
  const CUresult status = driver_api().tensor_map_encode_tiled(
      &map, a.data_type, a.rank, const_cast<void*>(base), a.global_dims, a.global_strides, a.box_dims, a.element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, a.swizzle, a.l2_promotion, a.oob_fill);
  if (status != CUDA_SUCCESS) {
    throw CudaError("cuTensorMapEncodeTiled failed for " + describe(spec) + ": " + driver_error_text(status));
  }
  GgTensorMap out;
  std::memcpy(&out, &map, sizeof(out));
  return out;
}

}  // namespace gg::rt
