#include "targets/mma_shapes.h"

namespace gg::targets {

namespace {

// wgmma.mma_async with f16/bf16 operands and an f32 accumulator (PTX ISA, "Asynchronous
// warpgroup level matrix shape"): M 64, K 16, N a multiple of 8 from 8 to 256.
bool wgmma_legal(int m, int n, int k) { return m == 64 && k == 16 && n >= 8 && n <= 256 && n % 8 == 0; }

}  // namespace

const MmaShapes& sm90a_mma_shapes() {
  static const MmaShapes shapes{"sm_90a", "wgmma", wgmma_legal,
                                "wgmma m64nNk16 with N a multiple of 8 in 8..256 (f16/bf16 operands)"};
  return shapes;
}

}  // namespace gg::targets
