#pragma once
// The MMA instruction shapes a target has: one table per target, in targets/<arch>/. The
// schedule's `mma` primitive (and retargeting) checks against it; lowering for the target
// reads the same table. This library depends on nothing of ours, so dsl/ can use it.
namespace gg::targets {

struct MmaShapes {
  const char* arch;         // "sm_90a"
  const char* instruction;  // "wgmma", "tcgen05.mma"
  bool (*legal)(int m, int n, int k);
  const char* legal_text;   // what is legal, for error messages
};

const MmaShapes& sm90a_mma_shapes();
const MmaShapes& sm100a_mma_shapes();

}  // namespace gg::targets
