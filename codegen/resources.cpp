#include "codegen/resources.h"

#include <algorithm>
#include <sstream>

#include "codegen/kernel_ir.h"
#include "codegen/tile_order.h"
#include "dsl/error.h"

namespace gg {

namespace {

// Where one FP8 operand's factors travel and are applied (plan_fp8's lowering, in words).
std::string factor_route(const Definition& def, int operand) {
  const Node* f = def.scale_of(def.matmul_node().operands[size_t(operand)]);
  if (!f) return "";
  const bool a = operand == 0, two_d = f->shape.size() == 2;
  if (f->scale_format == ScaleFormat::Ue8m0)
    return std::string(a ? "A" : "B") + " per 1x128 (UE8M0 atoms): staged by TMA beside " + (a ? "A" : "B") +
           ", copied into TMEM (tcgen05.cp) before each k tile's block-scaled MMAs, which apply them";
  std::string what = std::string(a ? "A" : "B") + " per " + std::string(scale_granularity_name(f->granularity)) +
                     (two_d ? (f->layout == Layout::KMajor ? " (K-major)" : a ? " (M-major)" : " (N-major)") : "");
  if (a && f->granularity == ScaleGranularity::Block1x128 && f->layout == Layout::MNMajor)
    return what + ": staged by TMA beside A, applied in each k tile's promotion";
  if (!a && f->granularity == ScaleGranularity::PerRow)
    return what + ": read once per tile, applied to the finished accumulator's columns after the k loop";
  return what + ": read from memory by the consumers, applied in " +
         (two_d ? "each k tile's promotion" : "every promotion");
}

}  // namespace

std::string fp8_factors_text(const Definition& def) {
  std::string a = factor_route(def, 0), b = factor_route(def, 1);
  return a + (!a.empty() && !b.empty() ? "; " : "") + b;
}

namespace {


int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

std::string x_join(std::initializer_list<int64_t> xs, const char* unit) {
  std::string s;
  for (int64_t x : xs) s += (s.empty() ? "" : " x ") + std::to_string(x);
  return s + " " + unit;
}

}  // namespace

bool stages_c_in_smem(const Schedule& s) {
  const Definition& def = s.definition();
  const auto out_write = s.write_of(def.node(def.output()).name);
  if (!out_write || out_write->place != Place::Shared || out_write->method != CopyMethod::Tma) return false;
  // With a saved output D's store recomputes the ops before the save, C's included: C stays in
  // global memory (the saved store would have overwritten a staged C).
  if (def.saved_output() >= 0) return false;
  for (int id : def.epilogue()) {
    const Node& n = def.node(id);
    if (reads_c(n)) return def.node(n.operands[1]).dtype == def.output_dtype();
  }
  return false;
}

ResourceSummary summarize_resources(const Schedule& s, const std::vector<RoleShape>& roles, const SmemTileLayout& a_tile,
                                    const SmemTileLayout& b_tile, const StagingShape& staging, const DeviceLimits& limits) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  ResourceSummary r;
  r.limits = limits;
  auto mma = s.mma_shape();
  r.target = mma ? mma->target : Target::Sm90a;
  r.tile_m = dom.tile_extent(Root::M);
  r.tile_n = dom.tile_extent(Root::N);
  r.tile_k = dom.tile_extent(Root::K);
  auto cb = s.circular_buffer_of();
  r.stages = cb ? cb->stages : 1;
  const int in_bytes = dtype_bytes(def.input_dtype());
  const int out_bytes = dtype_bytes(def.output_dtype());
  const std::string& out_name = def.node(def.output()).name;
  const std::string& acc_name = def.matmul_node().name;
  auto ws = s.warp_roles();
  const int consumers = staging.owners;
  const bool ping_pong = s.consumer_mode() == ConsumerMode::PingPong;
  const auto& mma_operands = def.matmul_node().operands;
  bool tma_load = false;
  for (int id : mma_operands) tma_load = tma_load || s.read_method(def.node(id).name) == CopyMethod::Tma;
  const auto out_write = s.write_of(out_name);
  const bool staged_out = out_write && out_write->place == Place::Shared;
  Place acc_place = r.target == Target::Sm100a ? Place::Tmem : Place::Registers;
  if (auto w = s.write_of(acc_name)) acc_place = w->place;

  // ---- shared memory: operand stages and output staging, each 1024-aligned for the 128B
  // swizzle, then the mbarriers; the dynamic base is aligned up to 1024 at run time.
  int64_t offset = 0, padding = 0;
  auto region = [&](std::string symbol, std::string what, std::string formula, int64_t bytes, int64_t align,
                    int64_t stage_bytes = 0) {
    int64_t at = align_up(offset, align);
    padding += at - offset;
    r.smem.push_back({std::move(symbol), std::move(what), std::move(formula), at, bytes, stage_bytes});
    offset = at + bytes;
  };
  region(kir::buffer_name(kir::Buffer::A), def.node(mma_operands[0]).name + " stages", x_join({r.stages, a_tile.rows, r.tile_k, in_bytes}, "B"),
         r.stages * a_tile.bytes(), 1024, a_tile.bytes());
  // D = A * A^T: the second operand's tiles are A's too (its other rows)
  const std::string b_name = def.node(mma_operands[1]).name + (mma_operands[1] == mma_operands[0] ? " (as B)" : "");
  region(kir::buffer_name(kir::Buffer::B), b_name + " stages", x_join({r.stages, b_tile.rows, r.tile_k, in_bytes}, "B"),
         r.stages * b_tile.bytes(), 1024, b_tile.bytes());
  if (auto sa = scale_a_layout(s))  // TMA writes 128-byte aligned boxes
    region(kir::buffer_name(kir::Buffer::ScaleA), def.node(mma_operands[0]).name + "'s scale factors",
           x_join({r.stages, sa->rows * sa->row_bytes / 4, 4}, "B"), r.stages * sa->bytes(), 128, sa->bytes());
  if (auto sb = scale_b_layout(s))
    region(kir::buffer_name(kir::Buffer::ScaleB), def.node(mma_operands[1]).name + "'s scale factors",
           x_join({r.stages, sb->rows * sb->row_bytes / 4, 4}, "B"), r.stages * sb->bytes(), 128, sb->bytes());
  if (staged_out) {
    // Per consumer warpgroup (when several) and per buffer (when several): rows x cols x bytes.
    std::string formula;
    if (staging.owners > 1) formula += std::to_string(staging.owners) + " warpgroups x ";
    if (staging.buffers > 1) formula += std::to_string(staging.buffers) + " buffers x ";
    formula += x_join({staging.rows(), staging.cols, out_bytes}, "B");
    region(kir::buffer_name(kir::Buffer::D), "epilogue staging", formula, staging.bytes(), 1024);
  }

  const bool tmem = acc_place == Place::Tmem;
  if (tma_load) r.mbarriers.push_back({"full", r.stages, "the producer's TMA loads of a stage landed (expect_tx)"});
  if (tmem)  // with or without roles: the MMAs read a stage asynchronously, their commit releases it
    r.mbarriers.push_back({"empty", r.stages, "tcgen05.commit: the MMAs reading a stage completed, it may be refilled"});
  else if (tma_load && ws)
    r.mbarriers.push_back({"empty", r.stages, "the consumers released a stage for the next load"});
  if (stages_c_in_smem(s))
    r.mbarriers.push_back({"c", staging.count(),
                           "the TMA load of C into a staging buffer landed (one per consumer warpgroup and buffer)"});
  // Ping-pong consumers each own an accumulator in TMEM: its columns, its completion barrier.
  // Double-buffered (accumulator_buffers 2), the tiles take the buffers in turn: the MMAs' commit
  // says a buffer is complete (mma2ld), the writeback's arrivals that it is read (ld2mma).
  const bool double_buffered = tmem && !ping_pong && s.accumulator_buffers_of() > 1;
  const bool mma_warp = mma_warp_issues(s);
  const int accumulators = ping_pong ? s.consumer_warpgroups() : double_buffered ? s.accumulator_buffers_of() : 1;
  if (tmem)
    r.mbarriers.push_back({"mma_done", accumulators,
                           double_buffered ? "tcgen05.commit: an accumulator buffer in TMEM is complete (mma2ld)"
                           : accumulators > 1 ? "tcgen05.commit: a consumer's accumulator in TMEM is complete"
                                              : "tcgen05.commit: the accumulator in TMEM is complete"});
  if (mma_warp)
    r.mbarriers.push_back({"acc_empty", accumulators,
                           cta_pair_mma(s) ? "the writeback warpgroups of both CTAs of the pair read an accumulator "
                                             "buffer; the leader's next MMAs may refill it (ld2mma)"
                                           : "the writeback warpgroups read an accumulator buffer; the next MMAs may "
                                             "refill it (ld2mma)"});
  for (const auto& b : r.mbarriers) r.mbarrier_count += b.count;
  if (r.mbarrier_count > 0) {
    std::string names;
    for (const auto& b : r.mbarriers) names += (names.empty() ? "" : ", ") + b.name + " " + std::to_string(b.count);
    region("mbarriers", "mbarriers", std::to_string(r.mbarrier_count) + " x 8 B (" + names + ")", int64_t(r.mbarrier_count) * 8, 8);
  }
  if (tmem) region(kir::tmem_slot_name(), "TMEM address", "tcgen05.alloc writes it: 4 B", 4, 4);
  // Padding: the gaps that align each swizzled buffer, plus the slack that lets the kernel
  // align the dynamic shared-memory base (only 16-byte aligned) up to 1024.
  padding += 1024;
  r.smem.push_back({"", "alignment padding", "1024-byte alignment of swizzled tiles", -1, padding, 0});
  r.smem_bytes = offset + 1024;

  // ---- threads and registers
  r.roles = roles;
  r.promotion_regs = promotion_regs(s);
  r.promotion_interval = r.promotion_regs > 0 ? promotion_interval_of(s) : 0;
  r.fp8_factors = fp8_factors_text(s.definition());
  r.fp8_operands = dtype_is_fp8(s.definition().input_dtype());
  r.threads = total_threads(roles);
  for (const auto& role : r.roles) r.total_registers += int64_t(role.threads()) * role.regs;

  // ---- named barriers: 0 is __syncthreads; the warpgroups that compute sync among
  // themselves (never the producer) around the staging of an output tile.
  r.named_barriers.push_back({0, r.threads, "__syncthreads: all warpgroups (setup, and stage release without roles)"});
  if (staged_out)
    for (int c = 0; c < consumers; ++c)
      r.named_barriers.push_back({kStagingBarrier + c, kWarpgroupThreads,
                                  "consumer " + std::to_string(c) + ": its staging buffer free, then written"});
  if (ping_pong)
    for (int c = 0; c < consumers; ++c)
      r.named_barriers.push_back({kTurnBarrier + c, 2 * kWarpgroupThreads,
                                  "consumer " + std::to_string(c) + "'s turn for the tensor cores"});
  if (s.split_k_of() > 1)
    r.named_barriers.push_back({kSplitKBarrier, s.warpgroups_per_tile() * kWarpgroupThreads,
                                "split-K: the threads holding a tile take its ticket"});
  else if (!s.definition().reductions().empty())
    r.named_barriers.push_back({kSplitKBarrier, s.warpgroups_per_tile() * kWarpgroupThreads,
                                "reductions: the threads holding a tile stored its partial sums and take a band's ticket"});
  // (With an MMA warp, the acc_empty mbarriers order the writeback's reads before a buffer's next MMAs.)
  const bool tmem_barrier = tmem && ws && dom.bound_to(Binding::Persistent) && !mma_warp;
  if (tmem_barrier && accumulators > 1)
    for (int c = 0; c < accumulators; ++c)
      r.named_barriers.push_back({kTmemBarrier + c, kWarpgroupThreads,
                                  "consumer " + std::to_string(c) + " read its tile's TMEM accumulator; its next "
                                  "tile's MMAs may overwrite it"});
  else if (tmem_barrier)
    r.named_barriers.push_back({kTmemBarrier, consumers * kWarpgroupThreads,
                                "the consumer read a tile's TMEM accumulator; the next tile's MMAs may overwrite it"});

  // ---- cluster and grid
  if (auto c = s.cluster_dims()) r.cluster = *c;
  r.cluster_size = r.cluster.x * r.cluster.y * r.cluster.z;
  const int64_t batches = r.grid.batches = def.batch();  // each matrix of a batch has its own tiles
  r.grid.source = def.problem_source();
  const int64_t splits = r.grid.splits = s.split_k_of();  // and split-K gives each tile to `splits` CTAs
  r.grid.tiles = dom.tile_count(Root::M) * dom.tile_count(Root::N) * batches * splits;
  // ---- TMEM (sm_100a): fp32 accumulator columns, one set per 128 rows of the tile.
  if (acc_place == Place::Tmem) {
    r.tmem_columns = static_cast<int>(r.tile_n * std::max<int64_t>(1, ceil_div(r.tile_m, 128))) * accumulators;
    // UE8M0 factors: each 128 rows' factors of a k tile in 4 columns (a row's in byte k block % 4
    // of column row / 32), A's then B's, after the accumulators; a set per issuing thread (each
    // ping-pong consumer issues its own), each k tile's copy following that thread's previous MMAs.
    const auto a_atoms = ue8m0_scale_layout(s, 0), b_atoms = ue8m0_scale_layout(s, 1);
    const int scale_sets = double_buffered ? 1 : accumulators;
    r.tmem_scale_columns = a_atoms && b_atoms ? static_cast<int>(4 * (a_atoms->rows + b_atoms->rows)) * scale_sets : 0;
    r.tmem_columns += r.tmem_scale_columns;
    r.tmem_accumulators = accumulators;
    r.tmem_double_buffered = double_buffered;
    r.mma_warp = mma_warp;
    int alloc = 32;
    while (alloc < r.tmem_columns) alloc *= 2;
    r.tmem_alloc_columns = alloc;
  }
  // Resident CTAs per SM: a persistent grid fills every slot, so that (without warp
  // specialization) one CTA's loads and epilogue overlap another's MMAs. On sm_100a each holds its
  // TMEM columns (a CTA's tcgen05.alloc waits while others hold the rest).
  int64_t by_smem = limits.smem_per_sm / (r.smem_bytes + limits.smem_reserved_per_cta);
  int64_t by_regs = r.total_registers > 0 ? limits.registers / r.total_registers : 1;
  int64_t by_threads = limits.max_threads_per_sm / std::max(1, r.threads);
  int64_t by_tmem = r.tmem_alloc_columns > 0 ? limits.tmem_columns / r.tmem_alloc_columns : by_threads;
  r.grid.ctas_per_sm = static_cast<int>(std::max<int64_t>(1, std::min({by_smem, by_regs, by_threads, by_tmem})));
  if (const Axis* p = dom.bound_to(Binding::Persistent)) {
    r.grid.persistent = true;
    int64_t cs = r.cluster_size;
    int64_t per_matrix = p->extent;
    // A cluster X Y 1 multicasting both operands is launched along x: its CTAs' ranks are their
    // block indices.
    const bool flat = s.multicast_operands().size() == 2;
    if ((!s.multicast_operands().empty() || cta_pair_mma(s)) && cs > 1) {
      // The CTAs sharing B (multicast, or a CTA pair's MMA; as the lowering pairs them) differ in
      // their m tile, those sharing A in their n tile.
      per_matrix = cluster_tile_grid(dom.tile_count(Root::M), dom.tile_count(Root::N),
                                     cta_pair_mma(s) ? cs : multicast_ctas(s, 1), multicast_ctas(s, 0))
                       .tiles();
      r.grid.overhang_tiles = (per_matrix - p->extent) * batches * splits;
    }
    r.grid.tiles = per_matrix * batches * splits;
    // Clusters live inside one GPC each: fewer of 4 fit than the SMs over 4.
    int64_t clusters = std::max<int64_t>(1, std::min(ceil_div(r.grid.tiles, cs), limits.resident_clusters(cs, r.grid.ctas_per_sm)));
    if (s.split_k_tail()) {  // the work units: whole waves' tiles, then the rest once per split
      const int64_t tiles = per_matrix * batches;
      r.grid.whole_wave_tiles = tiles / clusters * clusters;
      r.grid.tiles = r.grid.whole_wave_tiles + (tiles - r.grid.whole_wave_tiles) * splits;
      r.grid.stream = s.split_k_stream();
    }
    r.grid.x = clusters * (flat ? cs : r.cluster.x);
    r.grid.y = flat ? 1 : r.cluster.y;
    r.grid.z = flat ? 1 : r.cluster.z;
  } else {
    for (Binding b : {Binding::BlockX, Binding::BlockY, Binding::BlockZ}) {
      const Axis* a = dom.bound_to(b);
      int64_t e = a ? a->extent : 1;
      (b == Binding::BlockX ? r.grid.x : b == Binding::BlockY ? r.grid.y : r.grid.z) = e;
    }
    // The batch index and the split (plan_kernel refuses a taken z).
    if (!dom.bound_to(Binding::BlockZ)) r.grid.z = batches * splits;
  }

  return r;
}

std::string ResourceSummary::smem_breakdown() const {
  std::string s;
  for (const auto& item : smem)
    s += (s.empty() ? "" : " + ") + item.what + " " + item.formula + " = " + std::to_string(item.bytes);
  return s;
}

std::string ResourceSummary::to_string() const {
  std::ostringstream os;
  auto pct = [](int64_t a, int64_t b) { return b > 0 ? (a * 100 + b / 2) / b : 0; };
  os << "resources (" << target_name(target) << ", limits of " << limits.name << "):\n";
  os << "  tile " << tile_m << " x " << tile_n << " x " << tile_k << ", " << stages << " stage(s)\n";
  os << "  shared memory: " << smem_bytes << " B of " << limits.smem_bytes << " (" << pct(smem_bytes, limits.smem_bytes)
     << "%)\n";
  size_t what_w = 0, formula_w = 0;
  for (const auto& item : smem) {
    what_w = std::max(what_w, item.what.size());
    formula_w = std::max(formula_w, item.formula.size());
  }
  for (const auto& item : smem) {
    os << "    " << item.what << std::string(what_w - item.what.size() + 2, ' ') << item.formula
       << std::string(formula_w - item.formula.size() + 1, ' ') << "= " << item.bytes;
    if (item.offset >= 0) os << " @ " << item.offset;
    os << "\n";
  }
  os << "  registers: " << total_registers << " of " << limits.registers << "\n";
  for (const auto& role : roles) {
    os << "    " << role.name << ": " << role.warpgroups << " warpgroup(s) x 128 threads x " << role.regs
       << " regs" << (role.declared ? " (setmaxnreg)" : " (per-thread cap)");
    if (role.accumulator_regs > 0) os << ", accumulator " << role.accumulator_regs << " fp32 regs/thread";
    if (role.accumulator_regs > 0 && promotion_regs > 0)
      os << " (" << promotion_regs << " of them the " << (fp8_operands ? "FP8 " : "") << "promotion's: every "
         << promotion_interval << " of K accumulate apart, then add in"
         << (fp8_operands ? " times their scale factors)"
                          : ", which bounds the error of a long k loop's truncating fp32 accumulation)");
    os << "\n";
  }
  if (!fp8_factors.empty()) os << "  FP8 factors: " << fp8_factors << "\n";
  os << "  barriers: " << mbarrier_count << " mbarrier(s)";
  if (!mbarriers.empty()) {
    os << " (";
    for (size_t i = 0; i < mbarriers.size(); ++i)
      os << (i ? ", " : "") << mbarriers[i].name << " x" << mbarriers[i].count;
    os << ")";
  }
  os << "; named barrier ids";
  for (const auto& b : named_barriers) os << " " << b.id << " (" << b.threads << " threads)";
  os << "\n";
  os << "  threads: " << threads << " per CTA (" << threads / kWarpgroupThreads << " warpgroup(s))\n";
  os << "  cluster: " << cluster.x << " x " << cluster.y << " x " << cluster.z << " (" << cluster_size
     << (cluster_size == 1 ? " CTA)\n" : " CTAs)\n");
  os << "  grid: " << grid.x << " x " << grid.y << " x " << grid.z << " = " << grid.ctas() << " CTA(s)";
  if (grid.persistent) {
    os << ", persistent over " << grid.tiles << (grid.whole_wave_tiles >= 0 ? " work units (" : " tiles (") << limits.sms << " SMs x " << grid.ctas_per_sm
       << " resident)";
    const int64_t held = limits.resident_clusters(cluster_size, grid.ctas_per_sm);
    if (cluster_size > 1 && held * cluster_size < int64_t(limits.sms) * grid.ctas_per_sm)
      os << "; the device holds " << held << " clusters of " << cluster_size << " at once (" << held * cluster_size
         << " CTAs: a cluster stays inside one GPC), so no more are launched";
    if (grid.overhang_tiles > 0)
      os << ", " << grid.overhang_tiles << " of them past the edge of D so that each cluster's CTAs get "
         << "neighbouring tiles (they load zeros for their peers' multicast and store nothing)";
  } else
    os << ", one per tile (" << grid.tiles << " tiles)";
  if (grid.source == ProblemSource::PointerArray)
    os << "; " << grid.batches << " pointer-array groups of the planned sizes (a launch runs a full wave: each group's "
       << "tiles are counted on the device)";
  else if (grid.batches > 1 && grid.source != ProblemSource::Dense)
    os << "; " << grid.batches << " " << problem_source_name(grid.source)
       << " groups, whose tiles in use a persistent loop walks (the count above bounds them)";
  else if (grid.batches > 1)
    os << "; " << grid.batches << " matrices, the batch index the outermost tile coordinate";
  if (grid.splits > 1 && grid.stream)
    os << "; stream-K on the last wave: " << grid.whole_wave_tiles << " tiles in whole waves run all of K, the later "
       << "tiles' k tiles are dealt in even contiguous ranges to at most " << grid.splits << " CTAs a tile";
  else if (grid.splits > 1 && grid.whole_wave_tiles >= 0)
    os << "; split-K on the last wave: " << grid.whole_wave_tiles << " tiles in whole waves run all of K, each later "
       << "tile is shared by " << grid.splits << " CTAs, each a share of the k tiles";
  else if (grid.splits > 1)
    os << "; split-K: " << grid.splits << " CTAs per output tile, each a share of the k tiles";
  os << "\n";
  if (tmem_columns > 0)
    os << "  tmem: " << tmem_columns << " fp32 columns (allocating " << tmem_alloc_columns << ") of "
       << limits.tmem_columns
       << (tmem_accumulators > 1 ? ": " + std::to_string(tmem_accumulators) + " accumulators of " +
                                       std::to_string(tmem_columns / tmem_accumulators) +
                                       (tmem_double_buffered
                                            ? ", double-buffered: a tile's writeback reads one while the next tile's "
                                              "MMAs fill the other"
                                            : ", one per ping-pong consumer")
                                 : std::string())
       << (tmem_scale_columns > 0 ? "; " + std::to_string(tmem_scale_columns) +
                                        " of them the k tile's UE8M0 scale factors (tcgen05.cp)"
                                  : std::string())
       << "\n";
  return os.str();
}

}  // namespace gg
