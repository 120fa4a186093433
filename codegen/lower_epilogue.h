#pragma once
#include "codegen/kernel.h"

namespace gg {

// Lowers WriteTile: the inlined epilogue ops applied to the accumulator in registers, then
// either predicated stores straight to global memory, or (cache_write of the output to
// shared memory with TMA) stores into a 128-byte-swizzled staging buffer followed by a proxy
// fence, a CTA barrier and one thread's TMA stores, which clip at the matrix edge.
Kernel lower_epilogue(Kernel k);

}  // namespace gg
