#pragma once
// How a tile's results are committed (QuACK's EpiloguePlan): plan_kernel chooses the plan,
// lower_epilogue lowers it, explain describes it, and the simulator and the sync checker follow
// what it lowered to.
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"

namespace gg {

struct KernelPlan;

struct EpiloguePlan {
  enum class Commit {
    // Each value through `ops`, then to D: staged in shared memory and stored by TMA, or stored
    // from registers.
    Store,
    // Split-K: each of the tile's CTAs parks its fp32 partial sums in `workspace` and takes a
    // ticket; the tile's last adds them up in split order and alone commits them as Store does.
    // In two splits the ticket comes first and the last keeps its own sums in registers.
    SplitK,
    // D = A * A^T (Schedule::symmetric): the work units below the diagonal compute nothing; a tile
    // off it is stored as Store does, then transposed (staged by stmatrix.trans) at its mirror.
    Symmetric,
  };
  Commit commit = Commit::Store;
  std::vector<kir::EpilogueOp> ops;  // applied to each accumulator value, in order
  // beta*C (or a pre-activation) read through the staging buffer: TMA loads the C tile into it
  // (completing on `c_bar`), each thread reads its elements there and overwrites them with the result.
  bool staged_c = false;
  kir::SplitKWorkspace workspace;  // SplitK
  // A saved second output (Definition::set_saved_output; QuACK's gemm_act keeps the pre-activation):
  // the values after the first `saved_after` ops are stored to Aux too, laid out as D, by a store of
  // their own ahead of D's (-1: none). C is then read from global memory, not staged: D's store
  // recomputes the ops before the save from the accumulator, which the saved store leaves as it was.
  int saved_after = -1;
  bool saves() const { return saved_after >= 0; }
  // Row and column reductions into side vectors (Definition::add_reduction; QuACK's gemm_sq_reduce),
  // at most one each: after the tile is stored, each reduction reads the accumulator again, its
  // sums go to `reduction_workspace` as the tile's partials, and the last tile of each row (column)
  // band, by ticket, adds the band's partials in slot order into the vector.
  std::vector<kir::EpilogueReduction> reductions;
  kir::ReductionWorkspace reduction_workspace;
  const kir::EpilogueReduction* reduction(kir::EpilogueReduction::Along along) const {
    for (const auto& r : reductions)
      if (r.along == along) return &r;
    return nullptr;
  }
};

// "split-K over 4 CTAs: ..." for explain: the plan, where the values go, and the shared memory
// and workspace it takes.
std::string describe_epilogue_plan(const KernelPlan& p);

}  // namespace gg
