#include "targets/mma_shapes.h"

namespace gg::targets {

namespace {

// tcgen05.mma kind::f16 (PTX ISA, "tcgen05 matrix shapes"): M 64 or 128 on one CTA, 256 on a
// CTA pair; N a multiple of 16 from 16 to 256; K 16.
bool tcgen05_legal(int m, int n, int k) {
  return (m == 64 || m == 128 || m == 256) && k == 16 && n >= 16 && n <= 256 && n % 16 == 0;
}

}  // namespace

const MmaShapes& sm100a_mma_shapes() {
  static const MmaShapes shapes{
      "sm_100a", "tcgen05.mma", tcgen05_legal,
      "tcgen05.mma with M 64, 128 (one CTA) or 256 (a CTA pair), N a multiple of 16 in 16..256, K 16"};
  return shapes;
}

}  // namespace gg::targets
