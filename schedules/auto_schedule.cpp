#include "schedules/auto_schedule.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "codegen/index_check.h"
#include "codegen/kernel.h"
#include "codegen/lower.h"
#include "codegen/tile_order.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "runtime/device/tile_order.h"
#include "runtime/hash.h"
#include "runtime/launch_spec.h"
#include "schedules/config.h"

namespace gg {

namespace {

// FP8 operands run the tensor cores at twice the bf16 rate (1979 dense TFLOP/s on an H100 SXM).
double mma_flops_per_sm(const Definition& def, const ModelRates& r) {
  return r.mma_flops_per_sm * (dtype_bytes(def.input_dtype()) == 1 ? 2.0 : 1.0);
}

// A narrow wgmma issues as often as a wide one for less work: the share of peak an N-wide
// instruction reaches, by assumption N / (N + 32) (0.89 at 256, 0.67 at 64).
double mma_efficiency(int64_t n) { return double(n) / double(n + 32); }

// Reading A and B once and writing D once, at DRAM's rate: no kernel of the problem is faster.
// Every stored matrix of a batch or of groups counts (a contiguous group's B, a masked group's A,
// B and D); one shared by the batch (stride 0) once.
double dram_bytes(const Definition& def) {
  const double m = double(def.m()), n = double(def.n()), k = double(def.k());
  const rt::MatrixLayouts layouts = matrix_layouts(def);
  const auto matrices = [&](rt::Operand o) {
    return double(rt::stored_matrix(layouts, o, def.m(), def.n(), def.k()).batches);
  };
  return (m * k * matrices(rt::Operand::A) + n * k * matrices(rt::Operand::B)) * dtype_bytes(def.input_dtype()) +
         m * n * matrices(rt::Operand::D) * dtype_bytes(def.output_dtype());
}
double dram_seconds(const Definition& def, const ModelRates& r) { return dram_bytes(def) / r.dram_bytes_per_s; }

// Bytes a CTA's TMA issues per k element for operands whose rows are not 32-byte multiples
// apart (the caller's, or a staged copy's); a multicast operand's rows are shared by the cluster.
double unaligned_row_bytes(const Definition& def, const AutoParams& p) {
  if (def.problem_source() == ProblemSource::PointerArray) return 0;  // each group's own rows
  const auto& ops = def.matmul_node().operands;
  double bytes = 0;
  for (size_t i = 0; i < ops.size() && i < 2; ++i) {
    const Node& n = def.node(ops[i]);
    if (rows_sector_aligned(def, n)) continue;
    const bool shared = p.cluster > 1 && (i == 0) == p.multicast_a;
    bytes += double(i == 0 ? std::min(p.tile_m, def.m()) : std::min(p.tile_n, def.n())) * dtype_bytes(n.dtype) /
             double(shared ? p.cluster : 1);
  }
  return bytes;
}

}  // namespace

double staging_seconds(const Definition& def, const ModelRates& r) {
  double bytes = 0;
  for (int id : def.matmul_node().operands) {
    const Node& n = def.node(id);
    if (n.staged)  // the caller's rows read, the padded rows written, every stored matrix
      bytes += double(stored_matrices(def, n) * stored_rows(def, n) * (row_elems(def, n) + staged_pitch(def, n)) *
                      dtype_bytes(n.dtype));
  }
  return bytes > 0 ? r.stage_s + bytes / r.stage_bytes_per_s : 0.0;
}

namespace {

// The problem's m tiles per matrix: contiguous groups add each group's ragged last tile (half a
// tile each, expected) to M's.
int64_t m_tiles_of(const Definition& def, int64_t tile_m) {
  const int64_t tiles = ceil_div(def.m(), tile_m);
  return def.problem_source() == ProblemSource::Contiguous ? tiles + def.batch() / 2 : tiles;
}
// The matrices whose tiles a kernel computes: contiguous groups share one A and D.
int64_t matrices_of(const Definition& def) {
  return def.problem_source() == ProblemSource::Contiguous ? 1 : def.batch();
}

// The rows of a tile each consumer warpgroup holds (a ping-pong consumer, the whole tile's).
int64_t consumer_rows(const AutoParams& p) { return p.ping_pong ? p.tile_m : p.tile_m / p.consumers; }

// The CTAs a wave holds: every SM, in whole clusters (each inside one GPC).
int64_t wave_ctas(const DeviceLimits& limits, int64_t cluster) { return limits.resident_clusters(cluster) * cluster; }
// The persistent CTAs for `tiles`: a wave's (fewer when there are fewer tiles).
int64_t resident_ctas(int64_t tiles, const DeviceLimits& limits, int64_t cluster) {
  return std::min<int64_t>(tiles, wave_ctas(limits, cluster));
}
// Waves of `tiles` on those CTAs.
int64_t waves_of(int64_t tiles, const DeviceLimits& limits, int64_t cluster) {
  return ceil_div(tiles, resident_ctas(tiles, limits, cluster));
}

// Predicted seconds: the persistent CTAs' waves of tiles, each tile bound by its MMAs or by the
// bytes its CTA loads (rows inside the problem; TMA reads nothing for rows past M or N), then
// its epilogue, and never faster than reading the operands once from DRAM. Ping-pong consumers
// take a CTA's tiles in turn, so one's epilogue runs under the other's mainloop and only the
// last is exposed. Split-K runs each tile's k loop on `split_k` CTAs; the last of them reads
// every split's fp32 partial sums back. On the last wave only (split_tail), whole waves of tiles
// run all of K first and only the tiles past them are split.
double predict_seconds(const Definition& def, const DeviceLimits& limits, AutoParams& p, const ModelRates& r) {
  const int64_t m = def.m(), n = def.n();
  // Variable-K groups share K among them: a unit's k loop is its group's share (expected even).
  const int64_t k = def.problem_source() == ProblemSource::VarlenK ? ceil_div(def.k(), def.batch()) : def.k();
  const int in_b = dtype_bytes(def.input_dtype()), out_b = dtype_bytes(def.output_dtype());
  // Every matrix of a batch has its tiles; a cluster's CTAs take neighbouring tiles, so an odd
  // count rounds up (the extra tile loads zeros and stores nothing, but still takes its turn).
  const int64_t tiles =
      paired_tile_grid(m_tiles_of(def, p.tile_m), ceil_div(n, p.tile_n), p.cluster, !p.multicast_a).tiles() *
      matrices_of(def);
  p.tiles = tiles * p.split_k;
  p.k_tiles = ceil_div(k, p.tile_k);
  const int64_t ctas = resident_ctas(p.tiles, limits, p.cluster);
  // split_tail: the units are the whole waves' tiles, then the rest once per split
  const int64_t whole_tiles = p.split_tail ? tiles / ctas * ctas : 0;
  if (p.split_tail) p.tiles = whole_tiles + (tiles - whole_tiles) * p.split_k;
  const int64_t whole_waves = whole_tiles / ctas;
  p.waves = whole_waves + (p.tiles > whole_tiles ? (p.split_stream ? 1 : waves_of(p.tiles - whole_tiles, limits, p.cluster)) : 0);
  const double row_bytes = double(std::min(p.tile_m, m) + std::min(p.tile_n, n)) * in_b;  // per k element
  const double in_flight = row_bytes * double(p.tile_k * p.stages);
  const double load_rate = std::min(in_flight / r.load_latency_s, r.l2_bytes_per_s / double(ctas));
  // A promotion waits for each k tile's MMAs before its stage is released: on an H100
  // (2026-11-27, 8192^3 to f32) 128x192 tiles promoted every 256 of K ran 712 TFLOP/s against 719
  // unpromoted, and 256x128 tiles, whose consumers promote two 64-row blocks in waves every k
  // tile, 598 against 651 (0.84x the promoted 128x192; at 2048^3 503 against the promoted
  // 128x128's 546, where the model without this had them 9% faster).
  const double promotion = p.promote == 0 ? 1.0 : consumer_rows(p) > 64 ? 1.2 : 1.01;
  const double per_k = promotion * std::max({2.0 * double(p.tile_m * p.tile_n) /
                                                 (mma_flops_per_sm(def, r) * mma_efficiency(p.tile_n)),
                                             row_bytes / load_rate,
                                             unaligned_row_bytes(def, p) / r.unaligned_row_bytes_per_sm_s});
  // Each k tile also costs its barrier round trips, about 50 ns (fit to the H100 sweep of k
  // tiles noted in rank_auto_params).
  const auto k_loop_seconds = [&](int64_t k_per_cta) {
    return double(k_per_cta) * per_k + double(k_per_cta / p.tile_k) * r.k_tile_s;
  };
  // Stream-K's tail: each CTA runs an even share of the tail tiles' k tiles, one wave.
  const int64_t stream_ctas = std::max<int64_t>(1, std::min(ctas, (tiles - whole_tiles) * p.split_k));
  const double tile_loop =
      p.split_stream ? k_loop_seconds(ceil_div((tiles - whole_tiles) * ceil_div(k, p.tile_k), stream_ctas) * p.tile_k)
                     : k_loop_seconds(ceil_div(ceil_div(k, p.tile_k), p.split_k) * p.tile_k);
  const double tile_bytes = double(p.tile_m * p.tile_n);
  const Node& out = def.node(def.output());
  const bool element_stores = p.subtile_cols == 0 && (def.output_layout() == OutputLayout::ColumnMajor ||
                                                      !vector_rows(def, out) || rows_follow_runtime_size(def, out));
  const double epilogue =
      r.epilogue_s + tile_bytes * out_b / (!element_stores ? r.store_bytes_per_sm_s
                                           : def.output_layout() == OutputLayout::ColumnMajor
                                               ? r.element_store_bytes_per_sm_s
                                               : r.row_element_store_bytes_per_sm_s);
  const double split_waves = double(p.waves - whole_waves);
  const double mainloop = p.ping_pong ? double(p.waves) * std::max(tile_loop, epilogue) + epilogue
                                      : double(whole_waves) * (k_loop_seconds(ceil_div(k, p.tile_k) * p.tile_k) + epilogue) +
                                            split_waves * (tile_loop + epilogue);
  // The hand-off follows the last split's k loop: its ticket, then (1 + splits) fp32 tiles
  // through L2 at the store rate, no matter what bound the loop. Fit on an H100: 512x512x16384
  // ran 25.1 us in 64x128 tiles and 4 splits, 28.5 us in 128x128 tiles and 8; 1024x1024x16384
  // 59.5 us in 128x256 tiles and 4, 59.9 us in 128x128 tiles and 2. Where every tile is split,
  // every wave of units pays it: counted once, 3000 x 3000 x 1000 in 128x256 tiles and 2 splits
  // (5 waves) was predicted 59 us and ran 113, 2048 x 14336 x 4096 (19 waves) 397 against 515.
  // Split on the last wave, once: there it matched (1024 x 14336 x 4096, 4 waves, the last in 2
  // splits: predicted 176 us, ran 164-176; 8192^3's 204 tail units ran 0.3% faster than unsplit).
  // Two splits claim the ticket first: the last CTA neither stores nor reloads its own sums, two
  // tiles move instead of three (H100: 1024^2 x 4096 in 128x128 tiles, 24.9 -> 22.7 us).
  const double tiles_moved = p.split_k == 2 && !p.split_stream ? 2.0 : double(1 + p.split_k);
  const double hand_off =
      p.split_k > 1 && split_waves > 0
          ? (p.split_tail ? 1.0 : split_waves) * (r.ticket_s + tile_bytes * 4 * tiles_moved / r.store_bytes_per_sm_s)
          : 0.0;
  p.mainloop_us = (mainloop + hand_off) * 1e6;
  return std::max(mainloop, dram_seconds(def, r)) + hand_off + r.launch_s + staging_seconds(def, r);
}

// Whether the MMAs at peak take longer than reading the operands and writing D once from DRAM
// (the roofline's compute side). Multicasting B pays only there: on an H100, 1000^3 in 64x128
// tiles ran 0.85x cuBLAS with B multicast in 2-CTA clusters and 0.78-0.80x without, while the
// DRAM-bound 256x8192x8192 (128x128 tiles) ran 0.93x with it and 0.97x without, 128x8192x8192
// (64x128) 0.98x with and 1.01x without: a cluster's CTAs wait on each other's releases.
bool compute_bound(const Definition& def, const DeviceLimits& limits) {
  return problem_roofline(def, limits).mma_bound();
}

// A staged output's subtile in a tile of `tile_n` columns: the widest that divides the tile in
// whole 32-byte rows, from one 128-byte swizzle atom (64 16-bit or 32 f32 columns) down to 64
// bytes; past that, the whole tile as one subtile. Many narrow subtiles each wait at their
// barrier (a 128x240 tile in 16-column subtiles ran at 0.80x cuBLAS on 3000x5000x1024 where
// 128x256 in 64-column subtiles ran at 0.93x); on an H100 (2026-11-27) a 128x144 tile stored in
// three 48-column subtiles or in one took the same time, and a 128x176 tile in one 176-column
// subtile 5% less than in eleven of 16.
int64_t store_atom_cols(int out_bytes) { return 128 / out_bytes; }
int64_t store_subtile_cols(int64_t tile_n, int out_bytes) {
  const int64_t atom = store_atom_cols(out_bytes), step = 32 / out_bytes;
  for (int64_t cols = atom; cols >= 2 * step; cols -= step)
    if (tile_n % cols == 0) return cols;
  return tile_n;
}

}  // namespace

Roofline problem_roofline(const Definition& def, const DeviceLimits& limits, const ModelRates& rates) {
  // Variable-K groups share K among them: their K is the whole problem's.
  const double matrices = def.problem_source() == ProblemSource::VarlenK ? 1.0 : double(matrices_of(def));
  const double flops = 2.0 * double(def.m()) * double(def.n()) * double(def.k()) * matrices;
  const double bytes = dram_bytes(def);
  Roofline r;
  r.mma_us = flops / (mma_flops_per_sm(def, rates) * double(limits.sms)) * 1e6;
  r.dram_mb = bytes / 1e6;
  r.dram_us = bytes / rates.dram_bytes_per_s * 1e6;
  return r;
}

const std::vector<std::pair<std::string, double ModelRates::*>>& model_rate_fields() {
  static const std::vector<std::pair<std::string, double ModelRates::*>> fields = {
      {"mma_flops_per_sm", &ModelRates::mma_flops_per_sm},
      {"dram_bytes_per_s", &ModelRates::dram_bytes_per_s},
      {"l2_bytes_per_s", &ModelRates::l2_bytes_per_s},
      {"load_latency_s", &ModelRates::load_latency_s},
      {"k_tile_s", &ModelRates::k_tile_s},
      {"launch_s", &ModelRates::launch_s},
      {"epilogue_s", &ModelRates::epilogue_s},
      {"store_bytes_per_sm_s", &ModelRates::store_bytes_per_sm_s},
      {"element_store_bytes_per_sm_s", &ModelRates::element_store_bytes_per_sm_s},
      {"row_element_store_bytes_per_sm_s", &ModelRates::row_element_store_bytes_per_sm_s},
      {"unaligned_row_bytes_per_sm_s", &ModelRates::unaligned_row_bytes_per_sm_s},
      {"ticket_s", &ModelRates::ticket_s},
      {"stage_s", &ModelRates::stage_s},
      {"stage_bytes_per_s", &ModelRates::stage_bytes_per_s},
  };
  return fields;
}

ModelRates parse_model_rates(const std::string& text, ModelRates rates) {
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string name, value, extra;
    if (!(words >> name)) continue;
    const auto where = "rates line " + std::to_string(number) + ": ";
    const auto& fields = model_rate_fields();
    const auto field = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; });
    if (field == fields.end()) {
      std::string names;
      for (const auto& f : fields) names += (names.empty() ? "" : ", ") + f.first;
      throw_user_error("model-rates", where + "'" + name + "' is not a parameter of the cost model; they are " + names);
    }
    double v = 0;
    size_t used = 0;
    try {
      if (words >> value) v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size() || !(v > 0) || !std::isfinite(v) || (words >> extra)) {
      std::ostringstream example;
      example << name << " " << ModelRates{}.*(field->second);
      throw_user_error("model-rates", where + "'" + name + "' needs one positive number, e.g. '" + example.str() + "'");
    }
    rates.*(field->second) = v;
  }
  return rates;
}

std::string print_model_rates(const ModelRates& rates) {
  std::ostringstream os;
  os.precision(6);
  for (const auto& [name, field] : model_rate_fields()) os << name << " " << rates.*field << "\n";
  return os.str();
}

std::string AutoParams::to_string() const {
  std::ostringstream os;
  os << "tile " << tile_m << "x" << tile_n << "x" << tile_k << ", " << consumers << (ping_pong ? " ping-pong" : "")
     << " consumer" << (consumers > 1 ? "s" : "") << ", " << stages << " stages, ";
  if (split_k > 1)
    os << (split_stream ? "stream-K " : "split-K ") << split_k << (split_tail ? " on the last wave" : "") << ", ";
  os << (cluster > 1 ? "cluster " + std::to_string(cluster) + (multicast_a ? " (A multicast)" : " (B multicast)")
                     : std::string("no cluster"))
     << ", "
     << (raster == Raster::Hilbert ? std::string("hilbert order")
                                   : (raster == Raster::ColumnMajor ? "column " : "") + std::string("group ") + std::to_string(group))
     << ", "
     << (subtile_cols ? "store subtiles of " + std::to_string(subtile_cols) : std::string("stores from registers"));
  if (promote > 0) os << ", promoted every " << promote << " of K";
  return os.str();
}

uint64_t AutoParams::hash() const {
  std::ostringstream os;
  os << tile_m << ' ' << tile_n << ' ' << tile_k << ' ' << consumers << ' ' << stages << ' ' << cluster << ' ' << group
     << ' ' << subtile_cols << ' ' << store_buffers << ' ' << ping_pong << ' ' << multicast_a << ' ' << split_k << ' '
     << int(raster) << (split_stream ? " stream" : split_tail ? " tail" : "");
  return rt::fnv1a64(os.str());
}

Schedule auto_schedule(const Definition& def, const AutoParams& p, Target target) {
  Schedule s(def);
  s.tile(p.tile_m, p.tile_n, p.tile_k);
  for (int op : def.epilogue()) s.inline_op(def.node(op).name);
  // FP8 on sm_100a runs the block-scaled MMA, which is m128 on one CTA.
  const bool block_scaled = dtype_is_fp8(def.input_dtype()) && target == Target::Sm100a;
  s.mma(block_scaled ? 128 : 64, static_cast<int>(p.tile_n), 32 / dtype_bytes(s.definition().input_dtype()), target);
  s.bind("k_o", Binding::Serial);
  s.bind("m_o", Binding::BlockY);
  s.bind("n_o", Binding::BlockX);
  cache_read_operands(s);
  const std::string& out = def.node(def.output()).name;
  // A column-major output's subtiles are staged transposed (tma_storable_transposed).
  s.cache_write(out, Place::Shared, p.subtile_cols > 0 ? CopyMethod::Tma : copy_method_for(def, out));
  s.persist("m_o", "n_o", p.raster, p.group);
  s.warp_specialize(40, 232);
  if (p.cluster > 1) {
    s.cluster(p.cluster, 1, 1);
    s.multicast(p.multicast_a ? def.node(def.matmul_node().operands[0]).name : second_operand(def));
  }
  if (p.ping_pong) {
    s.ping_pong();
  } else if (p.consumers > 1) {
    s.split("m_i", p.tile_m / p.consumers, "m_wg", "m_mma");
    s.bind("m_wg", Binding::Warpgroup);
  }
  if (p.split_k > 1) s.split_k(p.split_k, p.split_tail, p.split_stream);
  if (p.subtile_cols > 0) s.store_subtile(p.subtile_cols, p.store_buffers);
  if (const int64_t interval = auto_promotion(def, p, target)) s.promote(interval);
  s.circular_buffer("k_o", p.stages);
  return s;
}

int64_t auto_promotion(const Definition& def, const AutoParams& p, Target target) {
  if (target != Target::Sm90a || dtype_is_fp8(def.input_dtype()) || def.output_dtype() != DType::F32 ||
      def.k() <= kAutoPromotion)
    return 0;
  const int64_t wide_tiles = ceil_div(def.m(), 128) * ceil_div(def.n(), 256) * def.batch();
  if (def.k() <= 4096 && wide_tiles > 2 * hopper().sms) return 0;
  // A consumer holding several 64-row blocks promotes them in waves, one k tile at a time.
  return consumer_rows(p) > 64 ? p.tile_k : std::max(kAutoPromotion, p.tile_k);
}

bool hilbert_fits(const Definition& def, const AutoParams& p) {
  const PairedTileGrid grid =
      paired_tile_grid(ceil_div(def.m(), p.tile_m), ceil_div(def.n(), p.tile_n), p.cluster, !p.multicast_a);
  return grid.groups_m <= gg::dev::kHilbertMaxTiles && grid.groups_n <= gg::dev::kHilbertMaxTiles;
}

double order_operand_bytes(const Definition& def, const DeviceLimits& limits, const AutoParams& p) {
  const int64_t tiles_m = ceil_div(def.m(), p.tile_m), tiles_n = ceil_div(def.n(), p.tile_n);
  const PairedTileGrid grid = paired_tile_grid(tiles_m, tiles_n, p.cluster, !p.multicast_a);
  const int64_t groups = grid.groups_m * grid.groups_n;
  const int64_t per_wave = std::max<int64_t>(1, std::min<int64_t>(groups, limits.resident_clusters(p.cluster)));  // clusters at once
  // Up to 64 waves, spread evenly over the order and scaled to all of them: a huge grid costs
  // the same as a small one.
  const int64_t waves = ceil_div(groups, per_wave), sampled = std::min<int64_t>(waves, 64);
  double rows = 0;
  std::set<int64_t> ms, ns;
  // Contiguous groups (taken as even): each group reads its own B, so a wave reads B's rows once
  // per (group, n tile) its tiles meet.
  const bool contiguous = def.problem_source() == ProblemSource::Contiguous;
  const int64_t m_span = p.multicast_a ? 1 : p.cluster, n_span = p.multicast_a ? p.cluster : 1;
  const int64_t rows_all = std::max<int64_t>(def.m(), 1);
  std::set<std::pair<int64_t, int64_t>> group_cols;
  for (int64_t i = 0; i < sampled; ++i) {
    const int64_t first = i * waves / sampled * per_wave;
    ms.clear();
    ns.clear();
    group_cols.clear();
    for (int64_t t = first; t < std::min(groups, first + per_wave); ++t) {
      const TileCoord c = persistent_tile(t, grid.groups_m, grid.groups_n, p.raster, p.group);
      ms.insert(c.m);
      ns.insert(c.n);
      if (!contiguous) continue;
      const int64_t row0 = std::min(c.m * m_span * p.tile_m, rows_all - 1);
      const int64_t row_last = std::min(rows_all, (c.m + 1) * m_span * p.tile_m) - 1;
      for (int64_t g = row0 * def.batch() / rows_all; g <= row_last * def.batch() / rows_all; ++g)
        for (int64_t j = 0; j < n_span; ++j) group_cols.insert({g, c.n * n_span + j});
    }
    const int64_t m_tiles = int64_t(ms.size()) * m_span;
    const int64_t n_tiles = int64_t(ns.size()) * n_span;
    const int64_t b_rows = contiguous ? int64_t(group_cols.size()) * p.tile_n : std::min(n_tiles * p.tile_n, def.n());
    rows += double(std::min(m_tiles * p.tile_m, def.m()) + b_rows);
  }
  return rows * double(waves) / double(sampled) * double(def.k()) * dtype_bytes(def.input_dtype()) *
         double(matrices_of(def));
}

void choose_tile_order(const Definition& def, const DeviceLimits& limits, AutoParams& p) {
  p.raster = Raster::RowMajor;
  p.group = 8;
  double best = order_operand_bytes(def, limits, p);
  const double default_bytes = best;
  p.operand_mb = best / 1e6;
  // Contiguous groups keep bands of 8 m tiles: on an H200 (2026-11-28, 64 groups of random rows
  // summing to 16384) bands of 8 columns, which this count favours (no group's B read in two
  // bands), ran 518 against 536 TFLOP/s at 4096 x 7168 and 514 against 525 at 7168 x 2048, and
  // bands of 16 m tiles 550 against 571.
  if (compute_bound(def, limits) || def.problem_source() == ProblemSource::Contiguous) return;
  AutoParams trial = p;
  for (Raster raster : {Raster::RowMajor, Raster::ColumnMajor, Raster::Hilbert})
    for (int64_t group : {4, 8, 16}) {
      if (raster == Raster::Hilbert && group != 8) continue;  // the curve takes no group
      trial.raster = raster;
      trial.group = group;
      if (raster == Raster::Hilbert && !hilbert_fits(def, trial)) continue;
      const double bytes = order_operand_bytes(def, limits, trial);
      if (bytes < best && bytes <= 0.9 * default_bytes) {
        best = bytes;
        p.raster = raster;
        p.group = group;
      }
    }
  p.operand_mb = best / 1e6;
}

void predict_auto_params(const Definition& def, const DeviceLimits& limits, AutoParams& p, const ModelRates& rates) {
  p.promote = auto_promotion(def, p);
  p.predicted_us = predict_seconds(def, limits, p, rates) * 1e6;
  p.operand_mb = order_operand_bytes(def, limits, p) / 1e6;
}

namespace {

bool near(double a, double b) { return std::abs(a - b) <= 0.01 * std::min(a, b); }

// The ranking's order: fastest first and, between configs the model puts within 1% of each other,
// the rules below in turn. `explain` names the rule that put its choice first.
class TieBreaks {
 public:
  TieBreaks(const Definition& def, const DeviceLimits& limits)
      : limits_(limits),
        m_(def.m()),
        n_(def.n()),
        k_tiles_(ceil_div(def.k(), 128 / dtype_bytes(def.input_dtype()))),
        mma_bound_(compute_bound(def, limits)) {}

  // A problem under one wave whose whole K fits in the pipeline: latency, not throughput, bounds it.
  bool latency_bound(const AutoParams& p) const { return p.waves == 1 && k_tiles_ <= p.stages; }
  // The share of the SMs an unsplit config's waves keep busy. The model's tile times for
  // neighbouring widths are estimates of load latency (L2-resident operands arrive sooner than
  // its DRAM latency says), the SMs a config leaves idle are not. (Split units are not whole
  // tiles, so their count says little of a wave's fill.)
  double sm_fill(const AutoParams& p) const {
    return double(p.tiles) / double(p.waves * wave_ctas(limits_, p.cluster));
  }
  // Between configs of several waves, the fuller last wave: on an H200, 2560^2 x 4096 in 260
  // 128x208 tiles (1.97 waves) ran 73.0 us, in 220 128x240 (1.67 waves) 81.7-83.0, which the
  // model put 0.4% apart.
  bool fuller_last_wave(const AutoParams& a, const AutoParams& b) const {
    return a.waves > 1 && b.waves > 1 && a.split_k == 1 && b.split_k == 1 && sm_fill(a) > sm_fill(b) + 0.05;
  }
  // Within one wave of MMA-bound tiles of as many rows, more and narrower tiles: each SM's k loop
  // is shorter. On an H200 (2026-11-28, the old plan and this one alternating), 1280^2 x 8192 in
  // 120 128x112 tiles ran 43.1-43.8 us, in 100 128x128 45.6, which the model put 0.2% apart
  // (cuBLAS runs 120 112x128 tiles there); 13 such shapes gained 2-9%. Not narrower than 112
  // columns, whose k loop runs slower a flop (2712 x 472 x 12816: 128x96 -> 128x80 lost 8%), nor
  // for fewer than 16 k tiles, where a part-atom tile's narrower stores outweigh its shorter loop
  // (2144 x 712 x 688: 128x128 -> 128x112 lost 8%; 1344^2 x 1024 gained 5%).
  bool fuller_one_wave(const AutoParams& a, const AutoParams& b) const {
    return mma_bound_ && k_tiles_ >= 16 && a.tile_n >= 112 && a.tile_m == b.tile_m && a.waves == 1 &&
           b.waves == 1 && a.split_k == 1 && b.split_k == 1 && !latency_bound(a) && !latency_bound(b) &&
           sm_fill(a) > sm_fill(b) + 0.05;
  }

  // Within one wave of as many MMA-bound tiles, the smaller: the wave takes one tile's k loop, and
  // the larger tile's extra columns (or rows) are padding past N (or M) that its MMAs still
  // compute. The model ties them where its load term, not the MMAs, sets both tiles' pace. On an
  // H200 (2026-11-28) 3792 x 800 x 10800 in 120 128x208 tiles ran 92 us, in 120 128x256 161 (cuBLAS
  // 103-105), which the model put 0.1% apart.
  bool less_padding(const AutoParams& a, const AutoParams& b) const {
    return mma_bound_ && a.waves == 1 && b.waves == 1 && a.split_k == 1 && b.split_k == 1 && a.tiles == b.tiles &&
           !latency_bound(a) && !latency_bound(b) && a.tile_m * a.tile_n < b.tile_m * b.tile_n;
  }

  // Within one wave of DRAM-bound tiles whose rows all lie in the problem, more CTAs loading:
  // every CTA reads its tile's rows of both operands, so one SM's load rate, not DRAM, caps a
  // config of few wide tiles. On an H200 (2026-11-28) FP8 64 x 7168 x 16384 in 112 64x64 tiles ran
  // 36.8 us, in 56 64x128 41.1 (the model: 0.3% apart; on an H100 48.4 against 50.1 us). A tile of
  // rows past M (a decode's 64-row tile over M = 1) loads only the rows there are, so not there.
  bool more_loaders(const AutoParams& a, const AutoParams& b) const {
    const auto whole = [&](const AutoParams& p) { return p.tile_m <= m_ && p.tile_n <= n_; };
    return !mma_bound_ && a.waves == 1 && b.waves == 1 && a.split_k == 1 && b.split_k == 1 && whole(a) &&
           whole(b) && a.tiles > b.tiles;
  }

  // Whether `a` ranks before `b`; where the model ties them, `rule` (if given) names what decided.
  // Within 1%: when DRAM bounds both, the one whose loads leave more slack under that bound; then
  // the config that keeps more SMs busy (the last wave's fill, or one wave's); then, MMA-bound in
  // one wave of as many tiles, the smaller tile; then, DRAM-bound in one wave, more CTAs loading;
  // then, latency-bound,
  // more and smaller tiles (on an H100, 255x257x264 ran at 1.97x cuBLAS in 68 64x16 tiles and
  // 0.65x in 4 128x192 tiles, 77x129x72 1.76x against 0.74x); else the larger tile (less traffic
  // through L2; 1x4096x4096: 64x128 0.70x, 64x64 0.55x), then the wider one.
  bool before(const AutoParams& a, const AutoParams& b, std::string* rule) const {
    const auto decided = [&](bool a_first, const std::string& why) {
      if (rule) *rule = why;
      return a_first;
    };
    if (!near(a.predicted_us, b.predicted_us)) return a.predicted_us < b.predicted_us;
    if (!near(a.mainloop_us, b.mainloop_us))
      return decided(a.mainloop_us < b.mainloop_us, "its loads leave more slack under DRAM's bound");
    const auto busy = [&](const char* what) {
      const auto percent = [&](const AutoParams& p) { return std::to_string(std::lround(100 * sm_fill(p))) + "%"; };
      return std::string(what) + " (" + percent(a) + " of the SMs busy against " + percent(b) + ")";
    };
    if (fuller_last_wave(a, b) || fuller_last_wave(b, a)) return decided(fuller_last_wave(a, b), busy("the fuller last wave"));
    if (fuller_one_wave(a, b) || fuller_one_wave(b, a)) return decided(fuller_one_wave(a, b), busy("the fuller wave"));
    if (less_padding(a, b) || less_padding(b, a))
      return decided(less_padding(a, b), "the smaller tile (one wave of " + std::to_string(a.tiles) +
                                             " tiles either way: less padding computed)");
    if (more_loaders(a, b) || more_loaders(b, a))
      return decided(more_loaders(a, b), "more CTAs loading (DRAM-bound, one wave: " + std::to_string(a.tiles) +
                                             " tiles against " + std::to_string(b.tiles) + ")");
    if (latency_bound(a) && latency_bound(b) && a.tiles != b.tiles)
      return decided(a.tiles > b.tiles, "more tiles (one wave, the whole K in the pipeline)");
    if (a.tile_m * a.tile_n != b.tile_m * b.tile_n)
      return decided(a.tile_m * a.tile_n > b.tile_m * b.tile_n, "the larger tile");
    return decided(a.tile_n > b.tile_n, "the wider tile");
  }

 private:
  const DeviceLimits& limits_;
  int64_t m_, n_;
  int64_t k_tiles_;
  bool mma_bound_;
};

}  // namespace

std::vector<AutoParams> rank_auto_params(const Definition& def, const DeviceLimits& limits) {
  std::vector<AutoParams> out;
  const int out_b = dtype_bytes(def.output_dtype());
  // Staged outputs are TMA-stored; a column-major one through a transposed buffer. Its stores from
  // registers (2-byte, one per value) cost a one-wave kernel 2 us: on an H200 (2026-11-28), 1280^2
  // x K in swapped 128x128 tiles ran 10.7, 13.1, 18.4 and 47.7 us at K = 512, 1024, 2048 and 8192
  // from registers in 7 stages, 8.8, 11.3, 16.3 and 46.0 staged in 6. Fewer columns than one atom
  // (a swapped decode's M of 1..32) store their few values sooner from registers: 1 x 4096 x 4096
  // ran 13.75-13.81 us so and 14.04 staged.
  const bool staged_rows = tma_storable_output(def);
  // Tile widths in steps of 16 columns, so a tile can fill the waves where powers of two leave
  // SMs idle (cuBLAS's own picks on an H100: 1536^2 x 2048 in 144-wide tiles, 11 x 12 = 132 of
  // them; ours in 128x144 tiles ran 18.7 us against 21.7 in 96 128x192 tiles).
  const int64_t n_step = 16, store_atom = store_atom_cols(out_b);
  const bool staged = staged_rows || (tma_storable_transposed(def) && def.n() >= store_atom);
  // Contiguous and variable-K groups run without a cluster: measured on an H200 (64 random groups of
  // 16384 rows, 128x256 tiles), contiguous ran 548 TFLOP/s unclustered against 502 with A shared in
  // 2-CTA clusters at 4096 x 7168 and 534 against 522 at 7168 x 2048; 8 variable-K groups 761
  // against 742. (The pair's CTAs wait on each other's releases across units whose rows and k
  // loops differ; masked groups measured the same either way.)
  // Masked groups too, on an H100 (2026-11-26, the plan with and without its 2-CTA cluster
  // sharing A, one process each): full groups of 1 x 1024 and 2 x 512 rows at N x K = 4096 x 7168
  // and 7168 x 2048 ran 0.94-0.96x cuBLAS's strided batch clustered and 0.98-1.00x without; half
  // full, 1.02-1.64x either way.
  // Pointer-array groups lower without a cluster, ping-pong or split-K (each group its own maps and K).
  const bool pointer_array = def.problem_source() == ProblemSource::PointerArray;
  const bool grouped = def.problem_source() != ProblemSource::Dense;
  // FP8 with promotion runs without a cluster: on an H100 (2026-11-26, four processes) 256x128 tiles
  // ran 1101-1233 TFLOP/s at 4096 x 7168 x 16384 and 1180-1216 at 4096 x 4096 x 7168 unclustered,
  // 1143-1194 and 1173-1203 sharing A in 2-CTA clusters (even within that shape's noise), and
  // 1023-1174 and 1148-1186 sharing B: the pair's CTAs would only wait on each other's releases.
  const bool promoted = problem_layout(def).scale_a.has_value() || problem_layout(def).scale_b.has_value();
  // D = A * A^T reads A as both operands: its multicast is not lowered.
  const bool one_operand = def.matmul_node().operands[0] == def.matmul_node().operands[1];
  const bool half_rate_rows = unaligned_row_bytes(def, AutoParams{}) > 0;  // some operand's rows, whatever the tile
  // Rows at half rate bound a CTA by the rows it issues, DRAM or not, and a multicast operand's
  // rows are issued once per cluster: on an H200 (2026-11-28, old and new plans alternating) shapes
  // whose roofline DRAM bounds gained from their clusters, 280 x 3136 x 4072 32.5 -> 24.6 us, 856 x
  // 5968 x 472 17.7 -> 15.5, 848 x 992 x 456 8.9 -> 7.8, 464 x 584 x 6920 23.7 -> 21.7, 256 x 2088
  // x 2984 19.3 -> 17.3, four more 2-5% (409 x 225 x 1768's split tiles lost 3%). Not for a few k
  // tiles, where the pipeline's fill, not the rows' rate, sets the time (77 x 129 x 72 and 255 x 257 x
  // 264 measured within their noise either way).
  const int64_t atom_k = 128 / dtype_bytes(def.input_dtype());
  const int64_t k_tiles_of_atoms = ceil_div(def.k(), atom_k);
  const bool mma_bound = compute_bound(def, limits);
  const bool multicast_pays =
      (mma_bound || (half_rate_rows && k_tiles_of_atoms >= 8)) && !grouped && !promoted && !one_operand;
  // FP8 (every k tile promoted): on an H100 (2026-11-26, one process, B's factors per 128 x 128)
  // 128x192 tiles ran 926-951 TFLOP/s where 256x128 ran 1186-1233 (4096 x 7168 x 16384, 4096 x 4096
  // x 7168); a tile meeting two blocks of B's factors also picks each 8-column group's factor in the
  // promotion. Only tiles on the 128-column grid are tried.
  const bool on_fp8_grid = dtype_bytes(def.input_dtype()) == 1;
  const auto add = [&](AutoParams p) {
    p.stages = 2;
    p.promote = auto_promotion(def, p);
    try {
      const Schedule two_stages = auto_schedule(def, p, limits.target);
      p.stages = std::min(kMaxAutoStages, deepest_pipeline(two_stages, "k_o", kMaxAutoStages));
      // The promotion's second accumulator leaves the widest tiles without registers (128x256 needs
      // 256 a thread): those are not candidates (the stage count does not change the registers).
      if (p.promote > 0) validate_schedule(two_stages, limits);
    } catch (const CompileError&) {
      return;  // not even a schedule (a primitive refused it)
    }
    p.predicted_us = predict_seconds(def, limits, p, ModelRates{}) * 1e6;
    choose_tile_order(def, limits, p);
    out.push_back(p);
  };
  for (int64_t tile_m : {64, 128, 256}) {
    // rows past M are padding: no second consumer (or second 64-row block) for them
    if ((tile_m > 64 && def.m() <= 64) || (tile_m > 128 && def.m() <= 128)) continue;
    for (int64_t tile_n = n_step; tile_n <= 256; tile_n += n_step) {
      // A staged tile narrower than one swizzle atom stays the atom's width (a skinny N pads it)
      // (a transposed buffer's TMA box runs along M: any 16 columns)
      const bool part_atom = staged_rows && tile_n % store_atom != 0;
      if (part_atom && tile_n < store_atom) continue;
      if (tile_n - (part_atom || !staged_rows ? n_step : store_atom) >= def.n()) break;  // padding columns only
      if (on_fp8_grid && tile_n % 128 != 0 && 128 % tile_n != 0) continue;
      // Two consumers' accumulators: at most 128 fp32 registers a thread (128x256, 256x128).
      if (tile_m * tile_n > 32768) break;
      // One 128-byte swizzle atom of K per k tile; narrow tiles (the swapped skinny M) also try 2
      // and 4, since their k loop is bound by its iterations (H100, 4096x1x4096 in 64x16 tiles:
      // k tiles of 64 0.82x cuBLAS, 128 0.95x, 256 0.98x; wide tiles lost: 256x8192x8192 in
      // 128x128x128 tiles 0.84x against 0.93x at 64).
      for (int64_t atoms : {1, 2, 4}) {
        if (atoms > 1 && (tile_n > 32 || def.k() < 16 * atom_k * atoms)) break;  // a long k loop only
        AutoParams p;
        p.tile_m = tile_m;
        p.tile_n = tile_n;
        p.tile_k = atom_k * atoms;
        p.consumers = tile_m >= 128 ? 2 : 1;
        // 256-row tiles pair n tiles and share A, the larger operand tile; the others pair m tiles.
        // Groups (masked, contiguous) begin at their own m tiles, so a cluster may only pair n tiles
        // (share A).
        p.multicast_a = tile_m > tile_n || def.problem_source() != ProblemSource::Dense;
        const int64_t m_tiles = m_tiles_of(def, tile_m), n_tiles = ceil_div(def.n(), tile_n);
        const int64_t paired = p.multicast_a ? n_tiles : m_tiles;
        // An odd count of the paired tiles pads the last cluster with a tile past M (or N): worth it
        // from 5 tiles on (a sixth more tiles at most) unless the padding adds a wave. On an H100,
        // 8128x6000x520 in 128x256 tiles ran 0.98x cuBLAS with B multicast and 0.72x without, and
        // 8000x6000x520 (63 m tiles) 1.20x padded against 0.88x without multicast; 4097x4095x4096
        // (33 x 16 tiles, 4 waves; padded, 5) ran 537 TFLOP/s in 128x256 tiles without multicast
        // and 497 in the 128x224 padded ones the model then preferred.
        const int64_t unpaired_tiles = m_tiles * n_tiles * matrices_of(def);
        const int64_t padded = paired_tile_grid(m_tiles, n_tiles, 2, !p.multicast_a).tiles() * matrices_of(def);
        const bool padding_fits = paired >= 5 && waves_of(padded, limits, 2) == waves_of(unpaired_tiles, limits, 2);
        // One wave of rows TMA loads at full rate: the cluster only ties its CTAs together. On an
        // H100 (2026-11-27, the same tiles with and without a 2-CTA cluster sharing B) 1408^2 x
        // 4096 in 128x128 tiles ran 38.5 us clustered and 27.0 without, 1536^2 x 2048 in 128x144
        // tiles 20.5 and 18.7; rows at half rate gain by the shared requests (1000^3 in 64x128
        // tiles, K = 1000: 11.7 against 14.1 us), as do tiles of several waves.
        const bool one_wave = unpaired_tiles <= limits.sms;
        // Where DRAM bounds the roofline (a cluster for rows at half rate), a tenth more tiles at
        // most: 568 x 4392 x 632 in 132 128x208 tiles of 2-CTA clusters (5 m tiles padded to 6) ran
        // 14.8 us against 13.3 in 115 unclustered 128x192 ones, and 12.5 in the 108 swapped 128x192
        // tiles this leaves it (35 m tiles padded to 36); 280 x 3136 x 4072 (49 padded to 50) gained.
        const bool padding_pays = padding_fits && (mma_bound || paired >= 9);
        p.cluster = multicast_pays && paired >= 2 && (paired % 2 == 0 || padding_pays) &&
                            (!one_wave || half_rate_rows)
                        ? 2
                        : 1;
        p.subtile_cols = staged ? store_subtile_cols(tile_n, out_b) : 0;
        p.store_buffers = staged && (tile_n / p.subtile_cols) % 2 == 0 ? 2 : 1;
        add(p);
        // Ping-pong: each of two consumers computes whole 128-row tiles of up to 128 columns.
        if (tile_m == 128 && tile_n <= 128 && atoms == 1 && !pointer_array) {
          AutoParams pp = p;
          pp.ping_pong = true;
          add(pp);
        }
      }
    }
  }
  const TieBreaks ties(def, limits);
  // A staged tile of part of a swizzle atom's width must earn its place: kept only where the
  // model gives it a twentieth over every tile of whole atoms, which is where it fills waves the
  // whole atoms leave short (1536^2 x 2048, 768 x 3072 x 4096); nearer, the model's choice among
  // widths is noise (DRAM-bound decode shapes tie on every width).
  // Nor where it fills one wave's SMs the whole atoms leave idle, or pads less in as many tiles,
  // and the model ties them (below).
  if (staged_rows) {
    const AutoParams* best_whole = nullptr;
    for (const AutoParams& p : out)
      if (p.tile_n % store_atom == 0 && (!best_whole || p.predicted_us < best_whole->predicted_us)) best_whole = &p;
    if (best_whole) {
      const AutoParams whole = *best_whole;
      out.erase(std::remove_if(out.begin(), out.end(),
                               [&](const AutoParams& p) {
                                 return p.tile_n % store_atom != 0 && p.predicted_us > 0.95 * whole.predicted_us &&
                                        !(near(p.predicted_us, whole.predicted_us) &&
                                          (ties.fuller_one_wave(p, whole) || ties.less_padding(p, whole)));
                               }),
                out.end());
    }
  }
  // Split-K where the k loops, not DRAM, bound even the best unsplit config (its tiles take twice
  // the DRAM floor or more), on configs whose last wave leaves at least half the SMs idle (one
  // wave of few tiles, or a last wave mostly empty): the splits' work units fill the waves more
  // evenly, which the model weighs against the hand-off. Every split keeps at least 4 k tiles
  // (the pipeline's fill). On an H100 split-K made no DRAM-bound shape faster (128x8192x8192,
  // 256x8192x8192, the swapped decode kernels), while 512x512x16384 ran 0.87-0.93x cuBLAS in 4
  // or 8 splits, where its 32 unsplit 64x128 tiles each stream all of K (the model: 96 us
  // against cuBLAS's 25).
  const auto least = [&](double AutoParams::*field) {
    double best = 0;
    for (const AutoParams& p : out) best = best == 0 ? p.*field : std::min(best, p.*field);
    return best;
  };
  if (!pointer_array && least(&AutoParams::mainloop_us) >= 2e6 * dram_seconds(def, ModelRates{})) {
    const std::vector<AutoParams> unsplit = out;
    const double best_unsplit_predicted = least(&AutoParams::predicted_us);
    const auto tiles_of = [&](const AutoParams& p) {
      return m_tiles_of(def, p.tile_m) * ceil_div(def.n(), p.tile_n) * matrices_of(def);
    };
    // `p` split `counts` ways, without a cluster and (where `p` has one) with it; every split keeps
    // 4 k tiles. The cluster's variant comes second, so it wins only where the model gives its
    // multicast something (rows TMA loads at half rate): on an H100 2000 x 3000 x 7000's last wave
    // in 2 splits ran 0.65x cuBLAS without a cluster and 0.92x with B multicast, where at 8192^3
    // (aligned rows) both ran 1.01x.
    const auto add_splits = [&](const AutoParams& p, std::initializer_list<int> counts, bool tail) {
      for (int splits : counts) {
        if (k_tiles_of_atoms < 4 * splits * (p.tile_k / atom_k)) break;
        AutoParams sk = p;
        sk.split_k = splits;
        sk.split_tail = tail;
        sk.cluster = 1;
        sk.multicast_a = false;
        add(sk);
        if (p.cluster > 1) {
          sk.cluster = p.cluster;
          sk.multicast_a = p.multicast_a;
          add(sk);
        }
      }
    };
    // Where unsplit tiles of 64x128 or more fill a wave (75% of the SMs), splitting every tile
    // loses to them by more than the model sees (it charges one wave of such tiles' loads too
    // much and the split's hand-off too little), so no split is offered. On an H100 (2026-11-28,
    // 16-bit operands, the old plan and this one alternating, two rounds; TFLOP/s): 1024^2 x 4096
    // 383 in 128x128 tiles in 2 splits, 500 in unsplit 64x128 (the model: 85.5 against 57.0 us at
    // 256 x 4096 x 14336, where they ran 54.7 against 65.2); 1408^2 x 4096 450 -> 598 and 512 x
    // 4096 x 7168 591 -> 693 (128x256 in 2 splits -> 128x128); 256 x 4096 x 14336 461 -> 551;
    // masked groups at 4096 x 7168, 512 of 1024 rows in use 1141-1154 -> 1324-1339, 4 x 128 of
    // 256 617 -> 666. Not past K = 16384, where the hand-off is a smaller share: 512 x 2048 x 32768
    // ran 646-659 split in 4, 601-648 unsplit. Not for FP8's promoted k loops (not measured
    // against it), nor under 256 rows or columns (the swapped skinny kernels, not measured).
    // First at 85% of the SMs; at 75% (H200, 2026-11-28, two rounds, bf16 and f16 alike) the seven
    // shapes that moved gained: 1280^2 x 8192 (100 128x128 tiles) 523 -> 550-568, 1280^2 x 4096
    // 406 -> 477, 1024 x 1664 x 4096 418 -> 493, 2304 x 768 x 4096 424-429 -> 506-510, 768 x 2304
    // x 8192 556 -> 596-600, 512 x 3328 x 8192 536-540 -> 562-585, 1280^2 x 16384 602 -> 609.
    const auto fills_a_wave = [&](const AutoParams& u) {
      return u.split_k == 1 && u.waves == 1 && u.tile_m * u.tile_n >= 64 * 128 && 100 * u.tiles >= 75 * limits.sms;
    };
    const bool unsplit_wave = !promoted && def.k() <= 16384 && def.m() * matrices_of(def) >= 256 && def.n() >= 256 &&
                              std::any_of(unsplit.begin(), unsplit.end(), fills_a_wave);
    for (const AutoParams& p : unsplit) {
      const int64_t tiles = tiles_of(p);
      const int64_t last_wave = tiles - (ceil_div(tiles, limits.sms) - 1) * limits.sms;
      if (!unsplit_wave && !p.ping_pong && 2 * last_wave <= limits.sms) add_splits(p, {2, 4, 8, 16}, false);
    }
    // Split only the last wave (split_k ... tail) where the tiles run past one wave and the last
    // is at most three quarters full: the whole waves keep their unsplit k loops and the last
    // wave's tiles spread over every SM (2304x2304x16384: 162 128x256 tiles, 132 whole and 30 in
    // 4 splits, where all 162 in 4 splits ran 0.82x cuBLAS on an H100 and 2 unsplit waves 0.70x).
    // Kept only where the model gives it a hundredth over every unsplit config, since it gives up
    // the cluster's multicast, which the model does not weigh. On an H100: 8192^3 (2048 tiles, 68
    // in the last wave; 1.1% by the model) ran 1.031-1.046x cuBLAS with the last wave in 3 splits
    // against 1.019-1.026x for the cluster's unsplit kernel, three rounds each in bf16 and f16;
    // 6144^3 (last wave 73% full; the model gives it nothing) 0.95-0.97x against 0.99x.
    const size_t before_tail = out.size();
    for (const AutoParams& p : unsplit) {
      const int64_t tiles = tiles_of(p), last_wave = tiles % limits.sms;
      // (Not for groups: their units are walked, not split on the last wave.)
      if (def.problem_source() == ProblemSource::Dense && !p.ping_pong && tiles >= limits.sms && last_wave > 0 &&
          4 * last_wave <= 3 * limits.sms)
        add_splits(p, {2, 3, 4, 6, 8, 12, 16}, true);
    }
    out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(before_tail), out.end(),
                             [&](const AutoParams& p) { return p.predicted_us > 0.99 * best_unsplit_predicted; }),
              out.end());
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](const AutoParams& a, const AutoParams& b) { return ties.before(a, b, nullptr); });
  return out;
}

AutoParams choose_auto_params(const Definition& def, const DeviceLimits& limits) {
  std::string last;
  for (const AutoParams& p : rank_auto_params(def, limits)) {
    try {
      LowerOptions options;
      options.limits = limits;
      lower(auto_schedule(def, p, limits.target), options);
      return p;
    } catch (const CompileError& e) {
      last = e.rule() + ": " + e.message();
    }
  }
  throw_user_error("no-schedule", "the auto heuristic found no config that lowers for M=" + std::to_string(def.m()) +
                   " N=" + std::to_string(def.n()) + " K=" + std::to_string(def.k()) +
                   (last.empty() ? std::string() : " (the last refusal: " + last + ")"));
}

std::string explain_auto(const Definition& def, const DeviceLimits& limits, int top) {
  const std::vector<AutoParams> ranked = rank_auto_params(def, limits);
  std::ostringstream os;
  os << "auto: the heuristic's ranking for M=" << def.m() << " N=" << def.n() << " K=" << def.k() << " on "
     << limits.name << " (" << limits.sms << " SMs), best first:\n";
  uint64_t chosen = 0;
  try {
    chosen = choose_auto_params(def, limits).hash();
  } catch (const CompileError& e) {
    os << "  (no candidate lowers: " << e.rule() << ")\n";
  }
  for (size_t i = 0; i < ranked.size() && i < size_t(top); ++i) {
    const AutoParams& p = ranked[i];
    os << "  " << i + 1 << ". " << p.to_string() << ": predicted " << std::fixed;
    os.precision(1);
    os << p.predicted_us << " us (tiles " << p.mainloop_us << " us), " << p.tiles
       << (p.split_k > 1 ? " work units in " : " tiles in ") << p.waves
       << " wave" << (p.waves > 1 ? "s" : "") << ", the order's waves read " << p.operand_mb << " MB of A and B"
       << (p.hash() == chosen ? "  <- chosen" : "") << "\n";
  }
  // Where the model ties the choice with configs listed after it, the rule that put it first.
  const TieBreaks ties(def, limits);
  for (size_t c = 0; c < ranked.size() && c < size_t(top); ++c) {
    if (ranked[c].hash() != chosen) continue;
    for (size_t i = c + 1; i < ranked.size() && i < size_t(top); ++i) {
      std::string rule;
      if (near(ranked[c].predicted_us, ranked[i].predicted_us) && ties.before(ranked[c], ranked[i], &rule))
        os << "  " << c + 1 << " before " << i + 1 << " (the model puts them within 1%): " << rule << "\n";
    }
  }
  return os.str();
}

}  // namespace gg
