#pragma once
#include "codegen/kernel.h"

namespace gg {

// Lowers each abstract LoadTile: a TMA tile load issued by one thread and completing on the
// stage's mbarrier (cache_read tma), or a cooperative synchronous copy of all threads into
// the same 128-byte-swizzled layout (the default). Registers the operands' tensor maps.
Kernel lower_operand_copies(Kernel k);

}  // namespace gg
