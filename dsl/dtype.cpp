#include "dsl/dtype.h"

#include "dsl/error.h"

namespace gg {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::E4M3: return "e4m3";
    case DType::E5M2: return "e5m2";
  }
  GG_INTERNAL_CHECK(false, "unhandled dtype");
}

DType parse_dtype(std::string_view name) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::E4M3, DType::E5M2})
    if (dtype_name(t) == name) return t;
  throw_user_error("unknown-dtype", "unknown dtype '" + std::string(name) + "': legal dtypes are f16, bf16, f32 "
                   "(e4m3 and e5m2 for FP8 operands)");
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::E4M3:
    case DType::E5M2: return 1;
  }
  GG_INTERNAL_CHECK(false, "unhandled dtype");
}

bool dtype_is_fp8(DType t) { return t == DType::E4M3 || t == DType::E5M2; }

}  // namespace gg
