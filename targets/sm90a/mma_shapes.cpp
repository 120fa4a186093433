#include "targets/mma_shapes.h"

namespace gg::targets {

namespace {

// wgmma.mma_async with an f32 accumulator (PTX ISA, "Asynchronous warpgroup level matrix shape"):
// M 64, N a multiple of 8 from 8 to 256, K 16 (f16/bf16 operands) or 32 (e4m3/e5m2): 32 bytes of K.
bool wgmma_legal(int m, int n, int k) { return m == 64 && (k == 16 || k == 32) && n >= 8 && n <= 256 && n % 8 == 0; }

}  // namespace

const MmaShapes& sm90a_mma_shapes() {
  static const MmaShapes shapes{"sm_90a", "wgmma", wgmma_legal,
                                "wgmma m64nNk16 (f16/bf16 operands) or m64nNk32 (e4m3/e5m2) with N a multiple of 8 in 8..256"};
  return shapes;
}

}  // namespace gg::targets
