#include "codegen/validate_schedule.h"

#include <algorithm>
#include <cstdint>

#include "dsl/error.h"

namespace gg {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The operands of the matmul, A then B.
std::vector<std::string> operands(const Definition& def) {
  std::vector<std::string> out;
  for (int id : def.matmul_node().operands) out.push_back(def.node(id).name);
  return out;
}

// Generated kernels count tiles and k tiles in 32-bit ints; a problem past that is refused
// here rather than overflowing in the kernel.
void check_problem_size(const Schedule& s) {
  const Definition& def = s.definition();
  constexpr int64_t kMax = INT32_MAX;  // each extent is already at most this (Definition, `bad-shape`)
  const Domain& dom = s.domain();
  const auto tiles = [&](Root r, int64_t extent) {
    return (extent + dom.tile_extent(r) - 1) / std::max<int64_t>(1, dom.tile_extent(r));
  };
  const int64_t m_tiles = tiles(Root::M, def.m()), n_tiles = tiles(Root::N, def.n()), k_tiles = tiles(Root::K, def.k());
  // The persistent loop counts k tiles across all of a CTA's tiles: tiles x k tiles must fit too.
  if (m_tiles * n_tiles * def.batch() > kMax / std::max<int64_t>(1, k_tiles))
    throw_user_error("problem-too-large", (def.batch() > 1 ? str(def.batch()) + " matrices of " : std::string()) +
                     str(m_tiles) + " x " + str(n_tiles) + " output tiles of " +
                     str(k_tiles) + " k tiles each is over " + str(kMax) +
                     " tile steps, which a generated kernel counts in 32-bit ints; split the problem or use larger tiles");
}

// ", stage A through an aligned copy ..." where staging would let TMA load the operand, else "".
std::string stage_hint(const Definition& def, const Node& n) {
  if (!why_not_staged(def, n).empty()) return "";
  return ", stage " + n.name + " through an aligned copy each launch makes (problem ... stage=" +
         (n.id == def.matmul_node().operands[0] ? "a" : "b") + ", --stage; `auto` stages it itself)";
}

// TMA needs 16-byte aligned row strides. An explicit `tma` on a tensor without them is refused,
// naming the `auto` fallback; `auto` never resolves to TMA there (Schedule::read_method).
void check_alignment(const Schedule& s) {
  const Definition& def = s.definition();
  const Node& out = def.node(def.output());
  auto w = s.write_of(out.name);
  std::vector<std::string> copied = operands(def);
  copied.push_back(out.name);
  for (const auto& op : copied) {
    const Node& n = *def.find(op);
    const bool explicit_tma = op == out.name ? w && w->method == CopyMethod::Tma : s.read_method(op) == CopyMethod::Tma;
    if (!explicit_tma || batch_stride_aligned(def, n) || n.staged) continue;  // a staged copy's matrices are aligned
    const std::string directive = op == out.name ? "cache_write " + op + " shared" : "cache_read " + op;
    throw_user_error("batch-stride-alignment",
                     directive + " tma: a batched tensor map needs its matrices 16-byte aligned, but '" + op +
                     "' has its matrices " + str(batch_stride(def, n)) + " elements (" +
                     str(batch_stride(def, n) * dtype_bytes(n.dtype)) + " bytes) apart; make the batch stride a "
                     "multiple of " + str(16 / dtype_bytes(n.dtype)) + ", or write " + directive +
                     " auto to fall back to " + (op == out.name ? "stores from registers" : "a synchronous element copy") +
                     " with bounds");
  }
  for (const auto& op : operands(def)) {
    const Node& n = *def.find(op);
    if (s.read_method(op) != CopyMethod::Tma || tma_can_load(def, n)) continue;
    const int64_t per16 = 16 / dtype_bytes(n.dtype), row = leading_dim(def, n);
    const std::string extent = n.layout == Layout::KMajor ? "K" : n.id == def.matmul_node().operands[0] ? "M" : "N";
    const std::string pad = n.ld > 0 ? "the leading dimension" : extent;
    throw_user_error(n.layout == Layout::KMajor ? "k-alignment" : "mn-alignment",
                     "cache_read " + op + " tma: a TMA load needs 16-byte aligned rows, but " + row_bytes_text(def, n) +
                     "; pad " + pad + " to a multiple of " + str(per16) + " (" + str((row + per16 - 1) / per16 * per16) +
                     ")" + stage_hint(def, n) + ", or write cache_read " + op +
                     " auto to fall back to a synchronous element copy with bounds");
  }
  // A column-major output is staged transposed by stmatrix.trans: 16-bit values in 16-column steps.
  // (Out of TMEM (sm_100a) each thread writes its row's values down the buffer's columns: any type.)
  const auto acc = s.write_of(def.matmul_node().name);
  const bool tmem = acc ? acc->place == Place::Tmem : s.mma_shape() && s.mma_shape()->target == Target::Sm100a;
  if (w && w->method == CopyMethod::Tma && def.output_layout() == OutputLayout::ColumnMajor && !tmem) {
    const StagingShape st = staging_shape(s);
    if (dtype_bytes(out.dtype) != 2 || st.cols % 16 != 0)
      throw_user_error("column-major-store", "cache_write " + out.name + " shared tma: a column-major output is "
                       "staged transposed by stmatrix.trans, which stores 16-bit values in subtiles of whole 16 "
                       "columns, but the output is " + std::string(dtype_name(out.dtype)) + " in subtiles of " +
                       std::to_string(st.cols) + " columns; write cache_write " + out.name +
                       " shared auto to store from registers with bounds");
  }
  // Rows whose length is read at run time: dense, a launch checks the length (rt::sizes_mismatch:
  // its pitch must stay a 16-byte multiple); with a leading dimension of their own, a launch at a
  // ragged length would write over the padding between the rows.
  if (w && w->method == CopyMethod::Tma && tma_rows_aligned(def, out) && rows_follow_runtime_size(def, out) &&
      out.ld > 0) {
    const std::string extent = def.output_layout() == OutputLayout::ColumnMajor ? "M" : "N";
    throw_user_error("n-alignment", "cache_write " + out.name + " shared tma: a TMA store clips a row's end only to "
                     "whole 16 bytes, and the rows' length " + extent + " is read at run time while their leading "
                     "dimension is fixed: a launch at " + extent + " not a multiple of " +
                     str(16 / dtype_bytes(out.dtype)) + " would overwrite the elements between the rows; compile " +
                     extent + " (problem ... compiled=..., --compiled-dims) or write cache_write " + out.name +
                     " shared auto to store from registers with bounds");
  }
  if (w && w->method == CopyMethod::Tma && tma_rows_aligned(def, out) && !vector_rows(def, out))
    throw_user_error("n-alignment", "cache_write " + out.name + " shared tma: a TMA store clips a row's end only "
                     "to whole 16 bytes, but " + row_bytes_text(def, out) + ": it would overwrite the elements "
                     "between the rows; write cache_write " + out.name +
                     " shared auto to fall back to stores from registers with bounds");
  if (w && w->method == CopyMethod::Tma && !tma_rows_aligned(def, out)) {
    const int64_t per16 = 16 / dtype_bytes(out.dtype), row = leading_dim(def, out);
    throw_user_error("n-alignment", "cache_write " + out.name + " shared tma: the TMA store needs 16-byte aligned "
                     "output rows, but " + row_bytes_text(def, out) + "; pad " + (out.ld > 0 ? "the leading dimension" : def.output_layout() == OutputLayout::ColumnMajor ? "M" : "N") +
                     " to a multiple of " + str(per16) + " (" + str((row + per16 - 1) / per16 * per16) +
                     "), or write cache_write " + out.name +
                     " shared auto to fall back to stores from registers with bounds");
  }
}

void check_coverage(const Schedule& s) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  std::vector<const Axis*> uncovered;
  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level == Level::Tile && a.extent > 1 && a.binding == Binding::None) uncovered.push_back(&a);
  }
  if (uncovered.empty()) return;
  const Axis& a = *uncovered.front();
  std::string also;
  if (uncovered.size() > 1) {
    std::vector<std::string> rest;
    for (size_t i = 1; i < uncovered.size(); ++i) rest.push_back(uncovered[i]->name);
    also = " (also unbound: " + join(rest, ", ") + ")";
  }
  const std::string n = a.name;
  if (a.roots == unsigned(Root::M))
    throw_user_error("coverage", n + ": the schedule covers one " + str(dom.tile_extent(Root::M)) + "-row tile of M=" +
                     str(def.m()) + ", but " + n + " runs over " + str(a.extent) + " tiles and is bound to nothing" +
                     also + "; bind " + n + " to block.y (tutorial v3) or persist the tile axes (v6)");
  if (a.roots == unsigned(Root::N))
    throw_user_error("coverage", n + ": the schedule covers one " + str(dom.tile_extent(Root::N)) +
                     "-column tile of N=" + str(def.n()) + ", but " + n + " runs over " + str(a.extent) +
                     " tiles and is bound to nothing" + also + "; bind " + n +
                     " to block.x (tutorial v3) or persist the tile axes (v6)");
  if (a.roots == unsigned(Root::K))
    throw_user_error("coverage", n + ": the schedule covers one " + str(dom.tile_extent(Root::K)) +
                     "-deep k tile of K=" + str(def.k()) + ", but " + n + " runs over " + str(a.extent) +
                     " k tiles and is bound to nothing" + also + "; bind " + n + " serial (tutorial v2)");
  throw_user_error("coverage", n + ": the tile loop over " + str(a.extent) + " output tiles is bound to nothing" + also +
                   "; bind " + n + " to a block index or make it persistent");
}

void check_mma(const Schedule& s) {
  auto mma = s.mma_shape();
  if (!mma)
    throw_user_error("no-mma", "the schedule has no mma directive: choose the tensor-core instruction, e.g. "
                     "mma 64 128 16 sm_90a (wgmma m64nNk16) or mma 128 128 16 sm_100a (tcgen05)");
  const Domain& dom = s.domain();
  const int64_t tm = dom.tile_extent(Root::M), tn = dom.tile_extent(Root::N), tk = dom.tile_extent(Root::K);
  const int wgs = s.warpgroups_per_tile();
  const Axis* wg_axis = dom.bound_to(Binding::Warpgroup);
  const bool wg_on_n = wg_axis && wg_axis->roots == unsigned(Root::N);
  const std::string shape = "m" + str(mma->m) + "n" + str(mma->n) + "k" + str(mma->k);
  if (mma->target == Target::Sm90a) {
    // Each consumer warpgroup issues wgmma on its own part of the tile.
    int64_t wm = wg_on_n ? tm : tm / wgs, wn = wg_on_n ? tn / wgs : tn;
    if (wm % mma->m != 0 || (!wg_on_n && tm % wgs != 0))
      throw_user_error("mma-tile", "mma " + shape + ": the tile's " + str(tm) + " rows give " + str(wm) +
                       " rows per consumer warpgroup (" + str(wgs) + " warpgroup(s)), not a multiple of the mma's m " +
                       str(mma->m) + "; use a tile m that is a multiple of " + str(int64_t(mma->m) * (wg_on_n ? 1 : wgs)));
    if (wn % mma->n != 0 || (wg_on_n && tn % wgs != 0))
      throw_user_error("mma-tile", "mma " + shape + ": the tile's " + str(tn) + " columns give " + str(wn) +
                       " per consumer warpgroup, not a multiple of the mma's n " + str(mma->n) +
                       "; use an mma n that divides " + str(wn) + " or a tile n that is a multiple of " +
                       str(int64_t(mma->n) * (wg_on_n ? wgs : 1)));
  } else {
    // tcgen05.mma is issued by one thread for the CTA; m256 spans a CTA pair.
    int64_t per_cta = mma->m == 256 ? 128 : mma->m;
    auto c = s.cluster_dims();
    if (mma->m == 256 && (!c || c->x % 2 != 0))
      throw_user_error("mma-tile", "mma " + shape + ": an m256 tcgen05.mma spans a CTA pair; add `cluster 2` "
                       "(an even cluster x) or use m128");
    if (tm % per_cta != 0)
      throw_user_error("mma-tile", "mma " + shape + ": the tile's " + str(tm) + " rows are not a multiple of the " +
                       str(per_cta) + " rows the mma covers per CTA; use a tile m that is a multiple of " + str(per_cta));
    if (tn % mma->n != 0)
      throw_user_error("mma-tile", "mma " + shape + ": the tile's " + str(tn) + " columns are not a multiple of the "
                       "mma's n " + str(mma->n) + "; use an mma n that divides " + str(tn));
  }
  if (tk % mma->k != 0)
    throw_user_error("mma-tile", "mma " + shape + ": the tile's k extent " + str(tk) + " is not a multiple of the "
                     "mma's k " + str(mma->k) + "; use a tile k that is a multiple of " + str(mma->k) +
                     " (64 fills one 128-byte swizzle row of bf16/f16)");

  const std::string& acc = s.definition().matmul_node().name;
  if (auto w = s.write_of(acc)) {
    if (mma->target == Target::Sm90a && w->place == Place::Tmem)
      throw_user_error("accumulator-place", "cache_write " + acc + " tmem: sm_90a has no tensor memory; the wgmma "
                       "accumulator lives in registers (cache_write " + acc + " registers, or leave it out)");
    if (mma->target == Target::Sm100a && w->place == Place::Registers)
      throw_user_error("accumulator-place", "cache_write " + acc + " registers: tcgen05.mma accumulates in tensor "
                       "memory on sm_100a; use cache_write " + acc + " tmem (or leave it out)");
  }
}

void check_inlined(const Schedule& s) {
  const Definition& def = s.definition();
  std::vector<std::string> missing, fixes;
  for (int id : def.epilogue()) {
    const std::string& op = def.node(id).name;
    if (!s.is_inlined(op)) {
      missing.push_back(op);
      fixes.push_back("`inline " + op + "`");
    }
  }
  if (!missing.empty())
    throw_user_error("not-inlined", "epilogue op(s) " + join(missing, ", ") + " are neither inlined nor computed at a "
                     "loop, so nothing would compute them; add " + join(fixes, ", ") +
                     " (or compute_at OP AXIS) to apply them in the writeback");
}

// " (cache_read A auto: a synchronous element copy ...)" when `auto` chose the copy.
std::string auto_reason(const Schedule& s, const std::string& tensor) {
  auto why = s.copy_choice(tensor);
  return why ? " (" + *why + ")" : "";
}

void check_copies(const Schedule& s, const ResourceSummary& r) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  std::vector<std::string> not_tma;
  for (const auto& op : operands(def))
    if (s.read_method(op) != CopyMethod::Tma) not_tma.push_back(op);
  if (s.warp_roles() && !not_tma.empty()) {
    std::vector<std::string> adds;
    for (const auto& op : not_tma) adds.push_back("cache_read " + op + " tma");
    // When `auto` fell back, asking for tma would only be refused: the fix is the row itself.
    // The first operand whose own rows keep TMA out (the other may only follow it).
    auto own = std::find_if(not_tma.begin(), not_tma.end(), [&](const std::string& op) { return !tma_can_copy(def, op); });
    const std::string blocker = own != not_tma.end() ? *own : not_tma.front();
    const Node& first = *def.find(blocker);
    const std::string extent = first.layout == Layout::KMajor                ? "K"
                               : first.id == def.matmul_node().operands[0] ? "M"
                                                                             : "N";
    const std::string fix = s.copy_choice(blocker)
                                ? "pad " + (first.ld > 0 ? "the leading dimension" : extent) + " to a multiple of " +
                                      str(16 / dtype_bytes(def.input_dtype())) + " for TMA" + stage_hint(def, first) +
                                      ", or drop warp_specialize"
                                : "add " + join(adds, ", ") + " (tutorial v4)";
    throw_user_error("warp-specialize-needs-tma", "warp_specialize: the producer warpgroup issues the operand loads "
                     "asynchronously and needs TMA, but " + join(not_tma, " and ") + " " +
                     (not_tma.size() > 1 ? "are" : "is") + " copied synchronously" + auto_reason(s, blocker) +
                     "; " + fix);
  }
  for (const auto& op : s.multicast_operands()) {
    if (r.cluster_size < 2)
      throw_user_error("multicast-without-cluster", "multicast " + op + ": multicast shares one TMA load among the "
                       "CTAs of a cluster, and the cluster is " + str(r.cluster.x) + "x" + str(r.cluster.y) + "x" +
                       str(r.cluster.z) + " (one CTA); use `cluster 2` (C++: cluster(2)) or larger");
    if (s.read_method(op) != CopyMethod::Tma)
      throw_user_error("multicast-needs-tma", "multicast " + op + ": only a TMA load can be multicast to the cluster, "
                       "but " + op + " is copied synchronously" + auto_reason(s, op) + "; add cache_read " + op + " tma");
    if (!r.grid.persistent) {
      // CTAs sharing B differ only in their m tile (and sharing A, only in n): the cluster
      // must extend along the grid index bound to that dimension.
      Root along = op == operands(def)[1] ? Root::M : Root::N;
      const char* dim = along == Root::M ? "m" : "n";
      int extent_along = 1;
      std::string index = "none";
      for (Binding b : {Binding::BlockX, Binding::BlockY, Binding::BlockZ}) {
        const Axis* a = dom.bound_to(b);
        if (a && (a->roots & unsigned(along))) {
          extent_along = b == Binding::BlockX ? r.cluster.x : b == Binding::BlockY ? r.cluster.y : r.cluster.z;
          index = std::string(binding_name(b)) + " (" + a->name + ")";
        }
      }
      if (extent_along < 2)
        throw_user_error("multicast-cluster-axis", "multicast " + op + ": the CTAs that can share a tile of " + op +
                         " differ only in their " + dim + " tile, but the cluster " + str(r.cluster.x) + "x" +
                         str(r.cluster.y) + "x" + str(r.cluster.z) + " does not extend along the grid index of the " +
                         dim + " tiles (" + index + "); shape the cluster along that index");
    }
  }
}

// CUDA's launch limits: grid x up to 2^31 - 1, y and z up to 65535.
void check_grid(const Schedule& s, const ResourceSummary& r) {
  const int64_t grid[3] = {r.grid.x, r.grid.y, r.grid.z};
  const int64_t limit[3] = {2147483647, 65535, 65535};
  const Binding idx[3] = {Binding::BlockX, Binding::BlockY, Binding::BlockZ};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] <= limit[i]) continue;
    const Axis* a = s.domain().bound_to(idx[i]);
    throw_user_error("grid-limit", std::string(binding_name(idx[i])) + " is bound to " + (a ? a->name : "?") + " with " +
                     str(grid[i]) + " tiles, over CUDA's limit of " + str(limit[i]) + " for grid " +
                     std::string(1, "xyz"[i]) + "; bind the larger tile axis to block.x, use a larger tile, or "
                     "persist the tile axes");
  }
}

void check_cluster(const Schedule& s, const ResourceSummary& r, const DeviceLimits& limits) {
  if (r.cluster_size == 1) return;
  const std::string shape = str(r.cluster.x) + "x" + str(r.cluster.y) + "x" + str(r.cluster.z);
  if (r.cluster_size > limits.max_cluster)
    throw_user_error("cluster-size", "cluster " + shape + " has " + str(r.cluster_size) + " CTAs; " + limits.name +
                     " allows at most " + str(limits.max_cluster));
  const Domain& dom = s.domain();
  if (!r.grid.persistent) {
    const int64_t grid[3] = {r.grid.x, r.grid.y, r.grid.z};
    const int cl[3] = {r.cluster.x, r.cluster.y, r.cluster.z};
    const Binding idx[3] = {Binding::BlockX, Binding::BlockY, Binding::BlockZ};
    for (int i = 0; i < 3; ++i) {
      if (grid[i] % cl[i] == 0) continue;
      const Axis* a = dom.bound_to(idx[i]);
      std::string what = a ? std::string(binding_name(idx[i])) + " is bound to " + a->name + " with " + str(grid[i]) +
                                 " tiles"
                           : std::string(binding_name(idx[i])) + " is 1 (no axis bound to it)";
      throw_user_error("cluster-grid", "cluster " + shape + " does not divide the grid " + str(grid[0]) + " x " +
                       str(grid[1]) + " x " + str(grid[2]) + ": " + what + ", not a multiple of the cluster's " +
                       std::string(1, "xyz"[i]) + " extent " + str(cl[i]) + "; use a cluster extent that divides " +
                       str(grid[i]) + ", a tile that gives a multiple of " + str(cl[i]) + " tiles, or persist");
    }
    return;
  }
  // Persistent: the grid is chosen as a multiple of the cluster; CTAs of a cluster that share
  // a multicast load take neighbouring tiles, the last group of a row padded with a tile past D's
  // edge (split-K's workspace has a slot for it: slot_tile_counts).
}

void check_tma_boxes(const Schedule& s, const ResourceSummary& r, const DeviceLimits& limits) {
  const Definition& def = s.definition();
  const auto ops = operands(def);
  struct Box {
    std::string directive, tensor;
    int64_t rows, cols;
    const char* row_dim;
  };
  std::vector<Box> boxes;
  if (s.read_method(ops[0]) == CopyMethod::Tma) boxes.push_back({"cache_read " + ops[0] + " tma", ops[0], r.tile_m, r.tile_k, "m"});
  if (s.read_method(ops[1]) == CopyMethod::Tma) boxes.push_back({"cache_read " + ops[1] + " tma", ops[1], r.tile_n, r.tile_k, "n"});
  const std::string& out = def.node(def.output()).name;
  if (auto w = s.write_of(out); w && w->method == CopyMethod::Tma)
    boxes.push_back({"cache_write " + out + " shared tma", out, r.tile_m, r.tile_n, "m"});
  for (const auto& b : boxes) {
    const int64_t limit = limits.max_box_elements;
    if (b.rows <= limit && b.cols <= limit) continue;
    bool rows = b.rows > limit;
    std::string dim = rows ? b.row_dim : (b.tensor == out ? "n" : "k");
    throw_user_error("tma-box", b.directive + ": the TMA box for " + b.tensor + " is " + str(b.rows) + " x " +
                     str(b.cols) + " elements, but a box dimension holds at most " + str(limit) +
                     " elements; use a tile " + dim + " of at most " + str(limit));
  }
}

void check_pipeline(const Schedule& s) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  auto cb = s.circular_buffer_of();
  if (cb) {
    if (!dom.is_leaf(cb->axis))
      throw_user_error("circular-buffer-axis", "circular_buffer " + cb->axis + ": the circular-buffered k loop '" +
                       cb->axis + "' was split or merged away afterwards; circular-buffer the k loop that remains (" +
                       dom.leaves_list() + ")");
    const Axis& a = dom.axis(cb->axis);
    if (cb->stages > a.extent && cb->stages > 2)
      throw_user_error("stages-exceed-k-trips", "circular_buffer " + cb->axis + ": " + str(cb->stages) +
                       " stages but the k loop runs only " + str(a.extent) + " time(s) (K = " + str(def.k()) +
                       "); use at most " + str(std::max<int64_t>(2, a.extent)) + " stages");
  }
  if (s.warp_roles()) {
    int stages = cb ? cb->stages : 1;
    if (stages < 2)
      throw_user_error("stages-too-few", std::string(cb ? "circular_buffer" : "warp_specialize without circular_buffer") +
                       ": " + str(stages) + " stage under warp specialization leaves the producer nothing to run "
                       "ahead into; use >= 2 stages" + (cb ? "" : " (circular_buffer k_o 2)"));
  }
}

// Ping-pong deals the persistent loop's tiles to the consumers of a producer.
void check_consumer_mode(const Schedule& s) {
  if (s.consumer_mode() != ConsumerMode::PingPong) return;
  if (!s.warp_roles())
    throw_user_error("ping-pong-needs-roles", "ping_pong: the two consumer warpgroups take tiles in turn from one "
                     "producer's pipeline, but the schedule has no warp roles; add warp_specialize (e.g. "
                     "warp_specialize 40 232)");
  if (!s.persistence())
    throw_user_error("ping-pong-needs-persist", "ping_pong: the consumers take the tiles of a persistent loop in "
                     "turn, but each CTA computes one tile; add persist (e.g. persist m_o n_o)");
}

// TMEM double buffering: a TMEM accumulator (sm_100a), a writeback that runs beside the MMAs (warp
// roles) over tiles that follow one another on a CTA (persist), and not ping-pong, whose consumers
// already own an accumulator each.
void check_accumulator_buffers(const Schedule& s, const ResourceSummary& r) {
  const int buffers = s.accumulator_buffers_of();
  if (buffers == 1) return;
  const std::string head = "accumulator_buffers " + str(buffers) + ": ";
  if (r.tmem_columns == 0)
    throw_user_error("accumulator-buffers", head + "the accumulator lives in registers (wgmma on sm_90a); a second "
                     "buffer is a TMEM accumulator's, on sm_100a (mma ... sm_100a)");
  if (!s.warp_roles())
    throw_user_error("accumulator-buffers", head + "a tile's writeback overlaps the next tile's MMAs only beside "
                     "them, in warp roles; add warp_specialize (e.g. warp_specialize 40 232)");
  if (!s.persistence())
    throw_user_error("accumulator-buffers", head + "each CTA computes one tile, so no next tile's MMAs overlap its "
                     "writeback; add persist (e.g. persist m_o n_o)");
  if (s.consumer_mode() == ConsumerMode::PingPong)
    throw_user_error("accumulator-buffers", head + "each ping-pong consumer already owns an accumulator, and one's "
                     "writeback overlaps the other's MMAs; drop one of the two");
}

// A subtile is whole swizzle atoms of the output tile's rows, and every tile's subtiles go to
// the same buffers in turn.
void check_store_subtile(const Schedule& s, const StagingShape& st) {
  auto sub = s.store_subtile_of();
  if (!sub) return;
  const Definition& def = s.definition();
  const std::string& out = def.node(def.output()).name;
  auto write = s.write_of(out);
  if (!write || write->place != Place::Shared || write->method != CopyMethod::Tma)
    throw_user_error("store-subtile-needs-tma-store", "store_subtile: subtiles are staged in shared memory for a TMA "
                     "store, but the output '" + out + "' is not written that way; add cache_write " + out +
                     " shared tma");
  const int64_t tile_n = s.domain().tile_extent(Root::N);
  const int out_bytes = dtype_bytes(def.output_dtype());
  const int64_t atom = 32 / out_bytes;  // the narrowest swizzle atom, in output elements
  const std::string head = "store_subtile " + str(sub->cols) + " " + str(sub->buffers) + ": ";
  if (sub->cols % atom != 0 || tile_n % sub->cols != 0) {
    // The legal widths, or, when the tile's columns are not whole 32-byte rows, that none is.
    std::string legal;
    for (int64_t cols = atom; cols <= tile_n; cols += atom)
      if (tile_n % cols == 0) legal += (legal.empty() ? "" : ", ") + str(cols);
    const std::string fix = legal.empty() ? "no width fits a tile n of " + str(tile_n) + "; use a tile n that is a "
                                            "multiple of " + str(atom) + ", or drop store_subtile"
                                          : "legal widths are " + legal;
    throw_user_error("store-subtile", head + "the tile's " + str(tile_n) + " columns are not a whole number of " +
                     str(sub->cols) + "-column subtiles of whole 32-byte rows (" + str(atom) + " " +
                     std::string(dtype_name(def.output_dtype())) + " elements); " + fix);
  }
  if (st.subtiles % sub->buffers != 0)
    throw_user_error("store-subtile", head + str(st.subtiles) + " subtile(s) per tile do not cycle evenly through " +
                     str(sub->buffers) + " buffers (each subtile uses the same buffer in every tile); use a buffer "
                     "count dividing " + str(st.subtiles));
}

// Registers a thread needs at its peak: the k loop's (both accumulators beside the loop state) or
// the epilogue's (the fp32 accumulator beside the epilogue's temporaries).
int registers_needed(int accumulator_regs, int promotion_regs) {
  if (promotion_regs == 0) return accumulator_regs + kRegisterOverhead;
  return std::max(accumulator_regs + kPromotionLoopOverhead, accumulator_regs - promotion_regs + kRegisterOverhead);
}

void check_registers(const Schedule& s, const ResourceSummary& r, const DeviceLimits& limits) {
  if (auto ws = s.warp_roles()) {
    int consumers = s.consumer_warpgroups();
    if (r.total_registers > limits.registers)
      throw_user_error("register-file", "warp_specialize: 1 producer warpgroup x 128 threads x " +
                       str(ws->producer_regs) + " + " + str(consumers) + " consumer warpgroup(s) x 128 threads x " +
                       str(ws->consumer_regs) + " = " + str(r.total_registers) + " registers, over the " +
                       str(limits.registers) + "-register file; lower consumer_regs to at most " +
                       str(((limits.registers - kWarpgroupThreads * ws->producer_regs) / (consumers * kWarpgroupThreads)) /
                           8 * 8));
  }
  for (const auto& role : r.roles) {
    if (role.accumulator_regs == 0 || registers_needed(role.accumulator_regs, r.promotion_regs) <= role.regs) continue;
    std::string who = role.name == "all" ? "the " + str(role.warpgroups) + " warpgroup(s)"
                                         : "the " + str(role.warpgroups) + " consumer warpgroup(s)";
    std::string budget = role.declared ? "the " + str(role.regs) + " registers warp_specialize gives them"
                                       : "the per-thread cap of " + str(role.regs) + " (" +
                                             str(limits.registers) + " registers / " + str(role.threads()) +
                                             " threads, at most " + str(limits.max_regs_per_thread) + ")";
    const bool ping_pong = s.consumer_mode() == ConsumerMode::PingPong;
    throw_user_error("register-file", who + " hold a " + str(r.tile_m) + " x " + str(r.tile_n) +
                     " fp32 accumulator in registers" + (ping_pong ? " (ping-pong: each holds a whole tile)" : "") +
                     ": " + str(role.accumulator_regs) + " per thread" +
                     (r.promotion_regs > 0 ? " (" + str(r.promotion_regs) + " of them the " + (r.fp8_operands ? "FP8 " : "") +
                                                  "promotion's)"
                                            : "") +
                     " plus about " + str(registers_needed(role.accumulator_regs, r.promotion_regs) - role.accumulator_regs) +
                     " for addresses and loop state, over " + budget +
                     (ping_pong ? "; use a smaller tile, or split each tile over the consumers instead of ping_pong"
                                : "; split the tile over more consumer warpgroups (split m_i 64 m_wg m_mma; bind m_wg "
                                  "warpgroup) or use a smaller tile"));
  }
}

void check_memory(const Schedule& s, const ResourceSummary& r, const DeviceLimits& limits) {
  if (r.smem_bytes > limits.smem_bytes) {
    // What would fit: the largest stage count, given everything else stays.
    int64_t per_stage = 0;
    for (const auto& item : r.smem) per_stage += item.stage_bytes;
    int64_t fixed = r.smem_bytes - per_stage * r.stages;
    int64_t fit = per_stage > 0 ? (limits.smem_bytes - fixed) / per_stage : 0;
    std::string legal = fit >= 2 && s.circular_buffer_of()
                            ? "use at most " + str(fit) + " stages (circular_buffer " + s.circular_buffer_of()->axis +
                                  " " + str(fit) + ") or a smaller tile"
                            : "use a smaller tile";
    throw_user_error("smem-limit", "shared memory: the schedule needs " + str(r.smem_bytes) + " bytes (" +
                     r.smem_breakdown() + "), over the " + str(limits.smem_bytes) + " bytes a CTA may use on " +
                     limits.name + "; " + legal);
  }
  if (r.tmem_columns > limits.tmem_columns) {
    const int accumulators = std::max(1, r.tmem_accumulators);
    const std::string what = accumulators > 1 ? str(accumulators) + " " + str(r.tile_m) + " x " + str(r.tile_n) +
                                                    " fp32 accumulators (" +
                                                    (r.tmem_double_buffered ? "accumulator_buffers" : "ping-pong") +
                                                    ") need "
                                              : "the " + str(r.tile_m) + " x " + str(r.tile_n) + " fp32 accumulator needs ";
    const std::string factors =
        r.tmem_scale_columns ? " (with " + str(r.tmem_scale_columns) + " for the FP8 scale factors)" : "";
    throw_user_error("tmem-columns", what + str(r.tmem_columns) + " TMEM columns" + factors + ", over the " +
                     str(limits.tmem_columns) + " an SM has; use a tile n of at most " +
                     str((limits.tmem_columns - r.tmem_scale_columns) / accumulators /
                         std::max<int64_t>(1, (r.tile_m + 127) / 128)));
  }
}

// Each split reduces at least one k tile: a split past the last k tile would only add zeros.
void check_split_k(const Schedule& s) {
  const int splits = s.split_k_of();
  if (splits == 1) return;
  const Axis* k_loop = s.k_loop();
  const int64_t k_tiles = k_loop ? k_loop->extent : 1;
  if (splits > k_tiles)
    throw_user_error("bad-split-k", "split_k " + str(splits) + ": the k loop runs " + str(k_tiles) + " k tile(s) (K=" +
                     str(s.definition().k()) + " in tiles of " + str(s.domain().tile_extent(Root::K)) +
                     "), fewer than the splits; use at most " + str(k_tiles) + " splits or smaller k tiles");
  // The waves are the persistent grid's: without it every tile has a CTA of its own.
  if (s.split_k_tail() && !s.domain().bound_to(Binding::Persistent)) {
    const std::string extent = s.split_k_stream() ? "stream" : "tail";
    throw_user_error("split-k-tail", "split_k " + str(splits) + " " + extent + ": splits the tiles past the last whole "
                     "wave of a persistent tile loop, and this schedule has none; add persist (or drop " + extent +
                     " to split every tile)");
  }
}

// D = A * A^T on the tiles on and above the diagonal: a subtile's mirror is the same staging
// written transposed (stmatrix.trans) and stored through D's map at the mirrored box, so the
// output is 16-bit and TMA-stored, a subtile as wide as a warpgroup's rows (the mirror's box is the
// subtile's), and a tile a whole number of subtiles along the diagonal's grid (as wide as it is
// tall, or a whole number of times wider). What the mirror cannot carry is refused.
void check_symmetric(const Schedule& s, const StagingShape& st) {
  for (const Relation& r : s.domain().relations())
    if (r.kind == Relation::Kind::Persist && r.raster == Raster::Triangle && !s.is_symmetric())
      throw_user_error("symmetric", "persist ... triangle walks the tiles on and above the diagonal first, "
                                    "which only D = A * A^T (the symmetric directive) computes alone; use row, column "
                                    "or hilbert");
  if (!s.is_symmetric()) return;
  const Definition& def = s.definition();
  const Node& out = def.node(def.output());
  const int64_t tm = s.domain().tile_extent(Root::M), tn = s.domain().tile_extent(Root::N);
  const auto refuse = [](const std::string& why) { throw_user_error("symmetric", "symmetric: " + why); };
  if (tn % tm != 0 || tn / tm >= 16)
    refuse("the diagonal crosses a tile's square subtiles, so a tile is as wide as it is tall or a whole number of "
           "times wider (below 16), but the tile is " + str(tm) + "x" + str(tn) + "; use e.g. tile 128 128 64 or "
           "tile 128 256 64");
  if (dtype_bytes(out.dtype) != 2)
    refuse("the mirror is staged transposed by stmatrix.trans, which moves 16-bit values, but the output is " +
           std::string(dtype_name(out.dtype)) + "; use bf16 or f16");
  auto w = s.write_of(out.name);
  if (!w || w->method != CopyMethod::Tma)
    refuse("the mirror is stored by TMA from shared memory: write cache_write " + out.name + " shared tma" +
           (tma_rows_aligned(def, out) ? std::string()
                                       : " (TMA cannot store here: D's rows are " + str(def.n()) + " x " +
                                             str(dtype_bytes(out.dtype)) + " bytes apart, not a multiple of 16; "
                                             "use N a multiple of 8)"));
  if (st.cols != st.rows())
    refuse("the mirror of a subtile of " + str(st.cols) + " columns is " + str(st.cols) + " rows tall, but a "
           "warpgroup's box is " + str(st.rows()) + " rows; use store_subtile " + str(st.rows()));
  if (def.output_layout() != OutputLayout::RowMajor || def.swapped())
    refuse("D is stored row-major here (D = A * A^T is its own transpose: a column-major D is the same memory)");
  if (s.split_k_of() > 1) refuse("with split_k (the mirror is stored by the tile's last split; not lowered)");
  if (s.cluster_dims()) refuse("in a cluster (a CTA of a pair may skip a tile below the diagonal its peer computes)");
  if (def.saved_output() >= 0) refuse("with a saved output");
  for (int id : def.epilogue()) {
    const Node& n = def.node(id);
    if (reads_c(n) || n.kind == OpKind::AddBias)
      refuse("with '" + n.name + "': the mirror's values come from the tile's own rows and columns, and a C or a "
             "bias is not symmetric (elementwise scale and activations are)");
  }
  if (def.problem_source() != ProblemSource::Dense) refuse("with grouped problems");
}

}  // namespace

ScheduleAnalysis validate_schedule(const Schedule& s, const DeviceLimits& limits) {
  check_problem_size(s);
  check_alignment(s);
  check_coverage(s);
  check_mma(s);
  check_inlined(s);
  ScheduleAnalysis analysis = analyze_schedule(s, limits);
  const ResourceSummary& r = analysis.resources;
  check_copies(s, r);
  check_grid(s, r);
  check_cluster(s, r, limits);
  check_tma_boxes(s, r, limits);
  check_pipeline(s);
  check_consumer_mode(s);
  check_accumulator_buffers(s, r);
  check_store_subtile(s, analysis.staging);
  check_split_k(s);
  check_symmetric(s, analysis.staging);
  check_registers(s, r, limits);
  check_memory(s, r, limits);
  return analysis;
}

}  // namespace gg
