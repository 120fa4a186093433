#include "codegen/roles_and_layouts.h"

#include <algorithm>

namespace gg {

std::vector<RoleShape> role_shapes(const Schedule& s, const DeviceLimits& limits) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  auto mma = s.mma_shape();
  Place acc_place = mma && mma->target == Target::Sm100a ? Place::Tmem : Place::Registers;
  if (auto w = s.write_of(def.matmul_node().name)) acc_place = w->place;
  const int consumers = s.consumer_warpgroups();
  // Accumulator registers per thread: the tile's fp32 elements over the threads that share it.
  // A promotion adds its accumulator (promotion_regs).
  auto accumulator = [&](int sharing_threads) {
    const int64_t elements = dom.tile_extent(Root::M) * dom.tile_extent(Root::N);
    return acc_place == Place::Registers ? static_cast<int>(ceil_div(elements, sharing_threads)) + promotion_regs(s)
                                         : 0;
  };
  std::vector<RoleShape> roles;
  if (auto ws = s.warp_roles()) {
    RoleShape producer{"producer", 0, 1, ws->producer_regs, true, false, true, false, 0};
    RoleShape consumer{"consumer", 1, consumers, ws->consumer_regs, true, true, false, true,
                       accumulator(s.warpgroups_per_tile() * kWarpgroupThreads)};
    roles = {producer, consumer};
  } else {
    const int threads = consumers * kWarpgroupThreads;
    const int cap = std::min(limits.max_regs_per_thread, limits.registers / threads / 8 * 8);
    roles = {RoleShape{"all", 0, consumers, cap, false, false, true, true, accumulator(threads)}};
  }
  return roles;
}

bool cta_pair_mma(const Schedule& s) {
  auto mma = s.mma_shape();
  return mma && mma->target == Target::Sm100a && mma->m == 256;
}

int multicast_ctas(const Schedule& s, int operand) {
  const auto cluster = s.cluster_dims();
  const auto shared = s.multicast_operands();
  const Definition& def = s.definition();
  const std::string& name = def.node(def.matmul_node().operands[size_t(operand)]).name;
  if (!cluster || std::find(shared.begin(), shared.end(), name) == shared.end()) return 1;
  if (shared.size() == 2) return operand == 0 ? cluster->y : cluster->x;
  return cluster->x * cluster->y * cluster->z;
}

bool mma_warp_issues(const Schedule& s) {
  auto mma = s.mma_shape();
  if (!mma || mma->target != Target::Sm100a || !s.warp_roles() || s.consumer_mode() == ConsumerMode::PingPong)
    return false;
  if (auto w = s.write_of(s.definition().matmul_node().name); w && w->place != Place::Tmem) return false;
  return s.accumulator_buffers_of() > 1 || cta_pair_mma(s);
}

int total_threads(const std::vector<RoleShape>& roles) {
  int threads = 0;
  for (const RoleShape& r : roles) threads += r.threads();
  return threads;
}

SmemTileLayout operand_layout(const Schedule& s, int operand) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  SmemTileLayout l;
  l.elem_bytes = dtype_bytes(def.input_dtype());
  l.mn_major = def.node(def.matmul_node().operands[operand]).layout == Layout::MNMajor;
  int64_t mn = dom.tile_extent(operand == 0 ? Root::M : Root::N);
  const int64_t k = dom.tile_extent(Root::K);
  if (operand == 1 && cta_pair_mma(s)) mn /= 2;  // each CTA of the pair holds half of B's tile
  l.rows = l.mn_major ? k : mn;
  l.row_bytes = (l.mn_major ? mn : k) * l.elem_bytes;
  if (l.row_bytes == 32 || l.row_bytes == 64) l.swizzle_bytes = static_cast<int>(l.row_bytes);
  else if (l.row_bytes % 128 == 0) l.swizzle_bytes = 128;
  // Multicast pairs the cluster's CTAs along the other operand's tiles: each loads a slice of
  // this operand's rows into all of them.
  l.box_rows = l.mn_major ? l.rows : l.rows / multicast_ctas(s, operand);
  return l;
}

int64_t promotion_interval_of(const Schedule& s) {
  return s.promotion_interval().value_or(dtype_is_fp8(s.definition().input_dtype()) ? kScaleBlock : 0);
}

int promotion_regs(const Schedule& s) {
  if (promotion_interval_of(s) == 0) return 0;
  const int64_t tile_n = s.domain().tile_extent(Root::N);
  // B's factors per 1x128: each thread holds its tile_n / 4 columns' factors of the k block too.
  const Definition& def = s.definition();
  const Node* b = def.scale_of(def.matmul_node().operands[1]);
  const int column_factors = b && b->granularity == ScaleGranularity::Block1x128 ? static_cast<int>(tile_n / 4) : 0;
  return static_cast<int>(64 * tile_n / kWarpgroupThreads) + column_factors;
}

std::optional<SmemTileLayout> ue8m0_scale_layout(const Schedule& s, int operand) {
  const Definition& def = s.definition();
  const Node* scales = def.scale_of(def.matmul_node().operands[size_t(operand)]);
  if (!scales || scales->scale_format != ScaleFormat::Ue8m0) return std::nullopt;
  const int64_t tile_rows = s.domain().tile_extent(operand == 0 ? Root::M : Root::N);
  SmemTileLayout l;
  l.elem_bytes = 4;  // the atoms' bytes move as 32-bit words (TMA copies bits)
  l.rows = std::max<int64_t>(1, ceil_div(tile_rows, kUe8m0AtomRows));
  l.row_bytes = kUe8m0AtomBytes;
  l.box_rows = 1;  // one box per atom: a tile's atoms lie a row block's atoms apart
  return l;
}

std::optional<SmemTileLayout> scale_b_layout(const Schedule& s) { return ue8m0_scale_layout(s, 1); }

std::optional<SmemTileLayout> scale_a_layout(const Schedule& s) {
  if (auto atoms = ue8m0_scale_layout(s, 0)) return atoms;
  const Definition& def = s.definition();
  const Node* scales = def.scale_of(def.matmul_node().operands[0]);
  // Staged: DeepGEMM's per 1x128 MN-major (a k block's factors of the tile's rows lie together);
  // the others are read from global memory in the promotion.
  if (!scales || scales->granularity != ScaleGranularity::Block1x128 || scales->layout != Layout::MNMajor)
    return std::nullopt;
  SmemTileLayout l;
  l.mn_major = true;  // its row runs along M
  l.elem_bytes = 4;
  l.rows = 1;
  // A contiguous group's first row may lie anywhere, but a TMA box's first column must be 16-byte
  // aligned (an unaligned one is an illegal instruction): its box starts at the aligned column at or
  // before the row and holds 32 factors more (4 would do; 32 keeps each stage 128-byte aligned, as
  // TMA's shared-memory destination must be).
  const int64_t shift_room = def.problem_source() == ProblemSource::Contiguous ? kScaleBoxCols : 0;
  l.row_bytes = (s.domain().tile_extent(Root::M) + shift_room) * 4;
  l.box_rows = 1;
  return l;
}

StagingShape staging_shape(const Schedule& s) {
  const Domain& dom = s.domain();
  StagingShape st;
  const int64_t tile_m = dom.tile_extent(Root::M), tile_n = dom.tile_extent(Root::N);
  st.owners = s.consumer_warpgroups();
  st.cols = tile_n;
  if (auto sub = s.store_subtile_of()) {
    st.cols = sub->cols;
    st.buffers = sub->buffers;
  }
  st.subtiles = st.cols > 0 ? tile_n / st.cols : 0;
  SmemTileLayout& b = st.buffer;
  b.elem_bytes = dtype_bytes(s.definition().output_dtype());
  const int64_t band = tile_m / s.warpgroups_per_tile();
  st.transposed = s.definition().output_layout() == OutputLayout::ColumnMajor;
  b.rows = st.transposed ? st.cols : band;
  b.row_bytes = (st.transposed ? band : st.cols) * b.elem_bytes;
  for (int sb : {128, 64, 32})
    if (b.swizzle_bytes == 0 && b.row_bytes % sb == 0) b.swizzle_bytes = sb;
  b.box_rows = b.rows;
  return st;
}

}  // namespace gg
