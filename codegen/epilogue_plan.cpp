#include "codegen/epilogue_plan.h"

#include <sstream>

#include "codegen/kernel.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"

namespace gg {

namespace {

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string op_text(const kir::EpilogueOp& op) {
  using K = kir::EpilogueOp::Kind;
  const auto activation = [](K k) { return k == K::Relu ? "relu" : k == K::Gelu ? "gelu" : "silu"; };
  switch (op.kind) {
    case K::Scale: return "x " + number(op.scalar);
    case K::AddScaled: return "+ " + number(op.scalar) + " x C";
    case K::AddBiasRows: return "+ bias[m]";
    case K::AddBiasCols: return "+ bias[n]";
    case K::Relu:
    case K::Gelu:
    case K::Silu: return activation(op.kind);
    case K::ActGrad: return std::string("x ") + activation(op.activation) + "'(C)";
  }
  GG_INTERNAL_CHECK(false, "unhandled epilogue op");
}

// Where the committed values go: D's tile through the staging buffers and TMA, or from registers.
std::string store_text(const KernelPlan& p) {
  std::ostringstream os;
  if (!p.tma_store) {
    os << "stored from registers (" << (p.layouts.d_column_major ? "column-major D" : "row-major D") << ")";
    return os.str();
  }
  const StagingShape& st = p.staging;
  os << "staged and stored by TMA: " << st.buffers << " buffer(s) of " << st.rows() << " x " << st.cols << " "
     << dtype_name(p.out) << " per consumer warpgroup (" << st.subtiles << " subtile(s) a tile), " << st.bytes()
     << " bytes of shared memory";
  if (p.epilogue.staged_c) os << "; C's tile lands in the same buffers by TMA";
  return os.str();
}

// The sums a thread keeps while it reduces: two per fragment row of its blocks (rows), a column
// pair's two (columns).
int reduction_registers(const KernelPlan& p) {
  int regs = 0;
  for (const kir::EpilogueReduction& r : p.epilogue.reductions)
    regs += r.along == kir::EpilogueReduction::Along::Rows ? 2 * sm90::accumulator_shape(p).blocks : 2;
  return regs;
}

}  // namespace

std::string describe_epilogue_plan(const KernelPlan& p) {
  const EpiloguePlan& e = p.epilogue;
  std::ostringstream os;
  os << "epilogue plan: ";
  switch (e.commit) {
    case EpiloguePlan::Commit::Store: os << "store, " << store_text(p) << "\n"; break;
    case EpiloguePlan::Commit::Symmetric:
      os << "symmetric (D = A * A^T): the tiles below the diagonal compute nothing; each " << p.staging.rows() << "x"
         << p.staging.cols << " subtile on or above it is stored, " << store_text(p)
         << ", and one above it again at its mirror, staged transposed by stmatrix.trans through the next buffer"
         << (p.tile_n > p.tile_m ? " (a subtile below it, in a tile the diagonal crosses, is left to its mirror)" : "")
         << "\n";
      break;
    case EpiloguePlan::Commit::SplitK: {
      // On sm_100a the sums leave TMEM, and come back to it, 16 columns at a time (tcgen05.ld).
      const bool tmem = p.accumulator == Place::Tmem;
      if (p.split_k_stream)
        os << "stream-K on the last wave's tiles, at most " << e.workspace.splits << " CTAs' k ranges a tile";
      else
        os << "split-K over " << e.workspace.splits << " CTAs a tile" << (p.split_k_tail ? " (last wave only)" : "");
      if (e.workspace.splits == 2 && !p.split_k_stream)
        os << ": each takes the tile's ticket as its k loop ends; the first parks its fp32 partial sums in the "
              "workspace ("
           << e.workspace.bytes()
           << " bytes for the planned problem, tickets included" << (tmem ? "; out of TMEM in chunks" : "")
           << ") and counts them stored, the last waits for that count and adds them to its own, "
           << (tmem ? "each TMEM chunk its epilogue loads" : "still in registers") << ", in split order, then store, "
           << store_text(p) << "\n";
      else
        os << ": each parks its fp32 partial sums in the workspace (" << e.workspace.bytes()
           << " bytes for the planned problem, tickets included" << (tmem ? "; out of TMEM in chunks" : "")
           << ") and takes a ticket; the tile's last adds them in " << (p.split_k_stream ? "range" : "split")
           << " order" << (tmem ? " into each TMEM chunk its epilogue loads" : "") << ", then store, " << store_text(p)
           << "\n";
      break;
    }
  }
  if (e.saves())
    os << "  saved output: the values after " << e.saved_after << " op(s) also go to the second output, laid out as D, "
       << (p.tma_store ? "staged and stored by TMA through buffers of their own turn, ahead of D's"
                       : "stored from registers ahead of D's")
       << " (C read from global memory)\n";
  for (const kir::EpilogueReduction& r : e.reductions) {
    const bool rows = r.along == kir::EpilogueReduction::Along::Rows;
    const kir::ReductionWorkspace& ws = e.reduction_workspace;
    os << "  " << (rows ? "row" : "column") << " reduction: the " << (r.squares ? "sum of squares" : "sum")
       << " of the values after " << r.after << " op(s) (fp32, unrounded) over each " << (rows ? "row" : "column")
       << ", into an fp32 vector of " << (rows ? "M" : "N") << "; each thread adds its values, "
       << (rows ? "a quad's lanes (xor 1, 2) theirs, one partial per tile row"
                : "a warp's lanes of a column (xor 4, 8, 16) theirs, one partial per warp and tile column")
       << " to the workspace; the tile's threads meet and take a ticket on the " << (rows ? "row" : "column")
       << " band; its last tile adds the band's " << (rows ? ceil_div(p.n, p.tile_n) : ceil_div(p.m, p.tile_m))
       << " tiles' partials in tile order (the same bits every run)\n";
    if (&r == &e.reductions.back())
      os << "  reduction workspace: " << ws.slot_floats() << " floats a tile (" << ws.row_floats << " row + "
         << ws.col_floats << " column partials) and two ticket counters, " << ws.bytes()
         << " bytes for the planned problem; registers: " << reduction_registers(p)
         << " fp32 sums a thread beside the accumulator\n";
  }
  os << "  per value:";
  if (e.ops.empty()) os << " none (the accumulator, cast to " << dtype_name(p.out) << ")";
  for (size_t i = 0; i < e.ops.size(); ++i) os << (i ? ", " : " ") << op_text(e.ops[i]);
  os << "\n";
  return os.str();
}

}  // namespace gg
