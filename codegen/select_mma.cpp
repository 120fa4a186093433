#include "codegen/select_mma.h"

#include "codegen/target/sm100/tcgen05.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"

namespace gg {

Kernel select_mma(Kernel k) {
  switch (k.plan.target) {
    case Target::Sm90a:
      GG_INTERNAL_CHECK(k.plan.accumulator == Place::Registers, "sm_90a accumulates in registers");
      k.body = sm90::select_wgmma(k.plan, k.body);
      break;
    case Target::Sm100a:
      GG_INTERNAL_CHECK(k.plan.accumulator == Place::Tmem, "sm_100a accumulates in TMEM");
      k.body = sm100::select_tcgen05(k.plan, k.body);
      break;
  }
  return k;
}

}  // namespace gg
