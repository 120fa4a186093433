#pragma once
#include <string>
#include <string_view>

namespace gg {

// Element types. e4m3 and e5m2 (FP8) are MMA operand types only: A and B, never C, bias or the output.
enum class DType { F16, BF16, F32, E4M3, E5M2 };

std::string_view dtype_name(DType t);
DType parse_dtype(std::string_view name);  // CompileError `unknown-dtype`
int dtype_bytes(DType t);
bool dtype_is_fp8(DType t);

}  // namespace gg
