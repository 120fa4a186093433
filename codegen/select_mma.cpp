#include "codegen/select_mma.h"

#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"

namespace gg {

Kernel select_mma(Kernel k) {
  GG_INTERNAL_CHECK(k.plan.target == Target::Sm90a, "plan_kernel lets only sm_90a through");
  k.body = sm90::select_wgmma(k.plan, k.body);
  return k;
}

}  // namespace gg
