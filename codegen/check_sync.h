#pragma once
#include "codegen/kernel.h"

namespace gg {

// Last pass, a static check of the lowered kernel: no abstract node is left; every TMA load
// is preceded by an expect-tx on the barrier it completes on; WGMMAs sit between a fence and
// a commit that a wait follows; a staged epilogue fences the async proxy before its TMA store.
// A violation is a gemmgen bug (InternalError), not a user error.
Kernel check_sync(Kernel k);

}  // namespace gg
