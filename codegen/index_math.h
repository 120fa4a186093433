#pragma once
// The index math of epilogue stores (kir::EpilogueIndex) and synchronous copies (kir::CopyIndex)
// as IR expressions: built from the node's fields in lowering, printed by cuda_printer and
// evaluated by the simulator.
#include "codegen/kernel_ir.h"

namespace gg {

// What a store's ops read besides the accumulator, and so which global coordinates it needs.
struct EpilogueInputs {
  const kir::EpilogueOp* col_bias = nullptr;
  const kir::EpilogueOp* row_bias = nullptr;
  bool c_global = false;  // beta * C read from global memory (not staged by TMA)
  bool needs_row = false, needs_col = false;
};
EpilogueInputs epilogue_inputs(const kir::EpilogueStore& n);

// Fills n.index from the store's fragment, tile, staging and layout fields.
void index_epilogue_store(kir::EpilogueStore& n);

// The index math of a synchronous copy, from its fields.
kir::CopyIndex copy_index(const kir::SyncCopyTile& n);

// Runs index_epilogue_store on every EpilogueStore of `body`.
kir::StmtPtr index_epilogue_stores(const kir::StmtPtr& body);

}  // namespace gg
