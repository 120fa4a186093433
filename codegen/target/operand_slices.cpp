#include "codegen/target/operand_slices.h"

namespace gg {

using namespace kir;

ExprPtr k_step_offset(const SmemTileLayout& l, const ExprPtr& mn, int k_elems, int elem_bytes) {
  const int64_t sb = l.swizzle_bytes;
  if (l.mn_major) return var("kk") * imm(k_elems * sb) + mn / imm(l.atom_cols()) * imm(l.atom_bytes());
  ExprPtr k_bytes = var("kk") * imm(int64_t(k_elems) * elem_bytes);
  return k_bytes / imm(sb) * imm(l.atom_bytes()) + mn * imm(sb) + k_bytes % imm(sb);
}

WgmmaLayout mma_operand_layout(const SmemTileLayout& l) {
  return {static_cast<int>(l.swizzle_bytes), l.mn_major, l.mn_major ? l.atom_bytes() : 0};
}

}  // namespace gg
