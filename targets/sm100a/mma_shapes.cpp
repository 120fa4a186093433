#include "targets/mma_shapes.h"

namespace gg::targets {

namespace {

// tcgen05.mma kind::f16 and kind::f8f6f4 (PTX ISA, "tcgen05 matrix shapes"): M 64 or 128 on one
// CTA, 256 on a CTA pair; N a multiple of 16 from 16 to 256; K 16 (16-bit operands) or 32 (FP8).
// (Lowering takes kind::f16 only; FP8 on sm_100a is refused there.)
bool tcgen05_legal(int m, int n, int k) {
  return (m == 64 || m == 128 || m == 256) && (k == 16 || k == 32) && n >= 16 && n <= 256 && n % 16 == 0;
}

}  // namespace

const MmaShapes& sm100a_mma_shapes() {
  static const MmaShapes shapes{
      "sm_100a", "tcgen05.mma", tcgen05_legal,
      "tcgen05.mma with M 64, 128 (one CTA) or 256 (a CTA pair), N a multiple of 16 in 16..256, K 16 (f16/bf16) "
      "or 32 (e4m3/e5m2)"};
  return shapes;
}

}  // namespace gg::targets
