// The matrix descriptor's byte offsets (kir::smem_desc_offsets), which the printer writes and the
// simulator decodes its wgmma operands from: the PTX ISA's canonical layouts (matrix-descriptor
// format) for each swizzle. (Broken to a stride of 4 rows, v8 fails the simulation: checked when
// the simulator began reading operands through the descriptor.)
#include <doctest/doctest.h>

#include "codegen/kernel_ir.h"
#include "runtime/device/smem_desc.h"

using namespace gg::kir;

TEST_CASE("descriptor offsets: K-major 16 / 8 rows of the swizzle; MN-major the atom distance / 8 rows") {
  for (int swizzle : {32, 64, 128}) {
    CAPTURE(swizzle);
    const SmemDescOffsets k_major = smem_desc_offsets({swizzle, false, 0});
    CHECK(k_major.leading == 16);  // unused for K-major swizzled layouts; 1 (16 bytes) by convention
    CHECK(k_major.stride == 8 * swizzle);  // 1024, 512, 256: one 8-row core-matrix group
    const SmemDescOffsets mn_major = smem_desc_offsets({swizzle, true, 8192});
    CHECK(mn_major.leading == 8192);  // between swizzle atoms along M or N
    CHECK(mn_major.stride == 8 * swizzle);
  }
  // The descriptor they make carries them in 16-byte units, with the mode in bits 62-63.
  const SmemDescOffsets o = smem_desc_offsets({128, false, 0});
  const unsigned long long d = gg::dev::make_smem_desc(0x400u, unsigned(o.leading), unsigned(o.stride),
                                                       gg::dev::descriptor_swizzle_mode(128));
  CHECK(((d >> 16) & 0x3FFF) == 1);
  CHECK(((d >> 32) & 0x3FFF) == 64);
  CHECK((d >> 62) == 1);
}
