#pragma once
// What a lowered kernel needs from the runtime to be launched: filled in by codegen,
// consumed by runtime/launch and by the host entry of an emitted .cu. Knows nothing
// of schedules or IR.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gg::rt {

enum class ElemType { F16, BF16, F32 };

int elem_bytes(ElemType t);
const char* elem_name(ElemType t);  // "f16", "bf16", "f32"

enum class Swizzle { None, B32, B64, B128 };

// Which GgGemmArgs slot (runtime/device/gemm_args.h) a tensor map or pointer belongs to.
enum class Operand { A, B, C, D };

// A 2-D tiled tensor map over a row-major matrix of `rows` x `cols` elements, `cols` contiguous.
struct TensorMapSpec {
  Operand operand = Operand::A;
  ElemType elem = ElemType::BF16;
  uint64_t rows = 0, cols = 0;
  uint32_t box_rows = 0, box_cols = 0;
  Swizzle swizzle = Swizzle::B128;
};

struct LaunchSpec {
  std::string kernel_name;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{128, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};  // {1,1,1}: launched without a cluster attribute
  unsigned dynamic_smem_bytes = 0;
  std::vector<TensorMapSpec> tensor_maps;
};

}  // namespace gg::rt
