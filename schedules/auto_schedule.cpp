#include "schedules/auto_schedule.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "codegen/lower.h"
#include "codegen/tile_order.h"
#include "dsl/error.h"
#include "runtime/hash.h"
#include "schedules/config.h"

namespace gg {

namespace {

// Throughputs the model assumes for an H100 SXM: 989 dense bf16 TFLOP/s over 132 SMs, HBM3 at
// 3.35 TB/s, L2 at about 3x that. A CTA's TMA loads reach about 2.5 us of latency under load,
// so one SM streams (bytes in flight across its stages) / 2.5 us: measured on an H100, a 1 x
// 4096 x 4096 problem ran at 22 GB/s per SM with 64 KB in flight and 55 GB/s with 128 KB.
struct Rates {
  double mma_flops_per_sm = 989e12 / 132;
  double dram_bytes_per_s = 3.35e12;
  double l2_bytes_per_s = 10e12;
  double load_latency_s = 2.5e-6;
  double k_tile_s = 50e-9;
  double launch_s = 3e-6;
};

// A narrow wgmma issues as often as a wide one for less work: the share of peak an N-wide
// instruction reaches, by assumption N / (N + 32) (0.89 at 256, 0.67 at 64).
double mma_efficiency(int64_t n) { return double(n) / double(n + 32); }

// Reading A and B once and writing D once, at DRAM's rate: no kernel of the problem is faster.
double dram_seconds(const Definition& def) {
  const double m = double(def.m()), n = double(def.n()), k = double(def.k());
  const double bytes = (m * k + n * k) * dtype_bytes(def.input_dtype()) + m * n * dtype_bytes(def.output_dtype());
  return bytes / Rates{}.dram_bytes_per_s;
}

// Waves of `tiles` on the persistent CTAs: every SM, in whole clusters (fewer CTAs than that when
// there are fewer tiles).
int64_t waves_of(int64_t tiles, const DeviceLimits& limits, int64_t cluster) {
  return ceil_div(tiles, std::min<int64_t>(tiles, limits.sms / cluster * cluster));
}

// Predicted seconds: the persistent CTAs' waves of tiles, each tile bound by its MMAs or by the
// bytes its CTA loads (rows inside the problem; TMA reads nothing for rows past M or N), and
// never faster than reading the operands once from DRAM.
double predict_seconds(const Definition& def, const DeviceLimits& limits, AutoParams& p) {
  const Rates r;
  const int64_t m = def.m(), n = def.n(), k = def.k();
  const int in_b = dtype_bytes(def.input_dtype());
  // Every matrix of a batch has its tiles; a cluster's CTAs take neighbouring m tiles, so an odd
  // count rounds up (the extra tile loads zeros and stores nothing, but still takes its turn).
  p.tiles = paired_tile_grid(ceil_div(m, p.tile_m), ceil_div(n, p.tile_n), p.cluster, true).tiles() * def.batch();
  const int64_t ctas = std::min<int64_t>(p.tiles, limits.sms / p.cluster * p.cluster);
  p.waves = waves_of(p.tiles, limits, p.cluster);
  const double row_bytes = double(std::min(p.tile_m, m) + std::min(p.tile_n, n)) * in_b;  // per k element
  const double in_flight = row_bytes * double(p.tile_k * p.stages);
  const double load_rate = std::min(in_flight / r.load_latency_s, r.l2_bytes_per_s / double(ctas));
  const double per_k = std::max(2.0 * double(p.tile_m * p.tile_n) / (r.mma_flops_per_sm * mma_efficiency(p.tile_n)),
                                row_bytes / load_rate);
  // Each k tile also costs its barrier round trips, about 50 ns (fit to the H100 sweep of k
  // tiles noted in rank_auto_params).
  const double mainloop = double(p.waves) * (double(k) * per_k + double(ceil_div(k, p.tile_k)) * r.k_tile_s);
  p.mainloop_us = mainloop * 1e6;
  return std::max(mainloop, dram_seconds(def)) + r.launch_s;
}

// Whether the MMAs at peak take longer than reading the operands and writing D once from DRAM
// (the roofline's compute side). Multicasting B pays only there: on an H100, 1000^3 in 64x128
// tiles ran 0.85x cuBLAS with B multicast in 2-CTA clusters and 0.78-0.80x without, while the
// DRAM-bound 256x8192x8192 (128x128 tiles) ran 0.93x with it and 0.97x without, 128x8192x8192
// (64x128) 0.98x with and 1.01x without: a cluster's CTAs wait on each other's releases.
bool compute_bound(const Definition& def, const DeviceLimits& limits) {
  const double flops = 2.0 * double(def.m()) * double(def.n()) * double(def.k());
  return flops / (Rates{}.mma_flops_per_sm * limits.sms) >= dram_seconds(def);
}

// A staged output stores subtiles of one 128-byte swizzle atom (64 16-bit or 32 f32 columns):
// narrower atoms made a tile's store many small TMA boxes (a 128x240 tile in 16-column subtiles
// ran at 0.80x cuBLAS on 3000x5000x1024 where 128x256 in 64-column subtiles ran at 0.93x).
int64_t store_subtile_cols(int out_bytes) { return 128 / out_bytes; }

}  // namespace

std::string AutoParams::to_string() const {
  std::ostringstream os;
  os << "tile " << tile_m << "x" << tile_n << "x" << tile_k << ", " << consumers << " consumer"
     << (consumers > 1 ? "s" : "") << ", " << stages << " stages, "
     << (cluster > 1 ? "cluster " + std::to_string(cluster) + " (B multicast)" : std::string("no cluster"))
     << ", group " << group << ", " << (subtile_cols ? "store subtiles of " + std::to_string(subtile_cols) : std::string("stores from registers"));
  return os.str();
}

uint64_t AutoParams::hash() const {
  std::ostringstream os;
  os << tile_m << ' ' << tile_n << ' ' << tile_k << ' ' << consumers << ' ' << stages << ' ' << cluster << ' ' << group
     << ' ' << subtile_cols << ' ' << store_buffers;
  return rt::fnv1a64(os.str());
}

Schedule auto_schedule(const Definition& def, const AutoParams& p, Target target) {
  Schedule s(def);
  s.tile(p.tile_m, p.tile_n, p.tile_k);
  for (int op : def.epilogue()) s.inline_op(def.node(op).name);
  s.mma(64, static_cast<int>(p.tile_n), 16, target);
  s.bind("k_o", Binding::Serial);
  s.bind("m_o", Binding::BlockY);
  s.bind("n_o", Binding::BlockX);
  s.cache_read("A", copy_method_for(def, "A"));
  s.cache_read("B", copy_method_for(def, "B"));
  const std::string& out = def.node(def.output()).name;
  s.cache_write(out, Place::Shared, copy_method_for(def, out));
  s.persist("m_o", "n_o", Raster::RowMajor, p.group);
  s.warp_specialize(40, 232);
  if (p.cluster > 1) {
    s.cluster(p.cluster, 1, 1);
    s.multicast("B");
  }
  if (p.consumers > 1) {
    s.split("m_i", p.tile_m / p.consumers, "m_wg", "m_mma");
    s.bind("m_wg", Binding::Warpgroup);
  }
  if (p.subtile_cols > 0) s.store_subtile(p.subtile_cols, p.store_buffers);
  s.circular_buffer("k_o", p.stages);
  return s;
}

std::vector<AutoParams> rank_auto_params(const Definition& def, const DeviceLimits& limits) {
  std::vector<AutoParams> out;
  const int out_b = dtype_bytes(def.output_dtype());
  const bool staged = tma_storable_output(def);
  const int64_t n_step = staged ? store_subtile_cols(out_b) : 16;  // whole subtiles per tile
  const bool multicast_pays = compute_bound(def, limits);
  for (int64_t tile_m : {64, 128}) {
    if (tile_m > 64 && def.m() <= 64) continue;  // rows past M are padding: no second consumer for them
    for (int64_t tile_n = n_step; tile_n <= 256; tile_n += n_step) {
      if (tile_n - n_step >= def.n()) break;  // wider than N rounded up: padding columns only
      // One 128-byte swizzle atom of K per k tile; narrow tiles (the swapped skinny M) also try 2
      // and 4, since their k loop is bound by its iterations (H100, 4096x1x4096 in 64x16 tiles:
      // k tiles of 64 0.82x cuBLAS, 128 0.95x, 256 0.98x; wide tiles lost: 256x8192x8192 in
      // 128x128x128 tiles 0.84x against 0.93x at 64).
      const int64_t atom_k = 128 / dtype_bytes(def.input_dtype());
      for (int64_t atoms : {1, 2, 4}) {
        if (atoms > 1 && (tile_n > 32 || def.k() < 16 * atom_k * atoms)) break;  // a long k loop only
        AutoParams p;
        p.tile_m = tile_m;
        p.tile_n = tile_n;
        p.tile_k = atom_k * atoms;
        p.consumers = tile_m == 128 ? 2 : 1;
        const int64_t m_tiles = ceil_div(def.m(), tile_m);
        // An odd m tile count pads the last cluster with a tile past M: worth it from 5 tiles on (a
        // sixth more tiles at most) unless the padding adds a wave. On an H100, 8128x6000x520 in
        // 128x256 tiles ran 0.98x cuBLAS with B multicast and 0.72x without, and 8000x6000x520
        // (63 m tiles) 1.20x padded against 0.88x without multicast; 4097x4095x4096 (33 x 16 tiles,
        // 4 waves; padded, 5) ran 537 TFLOP/s in 128x256 tiles without multicast and 497 in the
        // 128x224 padded ones the model then preferred.
        const int64_t n_tiles = ceil_div(def.n(), tile_n) * def.batch();
        const int64_t padded = paired_tile_grid(m_tiles, n_tiles, 2, true).tiles();
        const bool padding_fits = m_tiles >= 5 && waves_of(padded, limits, 2) == waves_of(m_tiles * n_tiles, limits, 2);
        p.cluster = multicast_pays && m_tiles >= 2 && (m_tiles % 2 == 0 || padding_fits) ? 2 : 1;
        p.subtile_cols = staged ? n_step : 0;
        p.store_buffers = staged && (tile_n / n_step) % 2 == 0 ? 2 : 1;
        p.stages = 2;
        try {
          p.stages = std::min(kMaxAutoStages, deepest_pipeline(auto_schedule(def, p), "k_o", kMaxAutoStages));
        } catch (const CompileError&) {
          continue;  // not even a schedule (a primitive refused it)
        }
        p.predicted_us = predict_seconds(def, limits, p) * 1e6;
        out.push_back(p);
      }
    }
  }
  // Fastest first. Within 1%: when DRAM bounds both, the one whose loads leave more slack under
  // that bound; then, for a problem under one wave whose whole K fits in the pipeline (latency,
  // not throughput, bounds it), more and smaller tiles: on an H100, 255x257x264 ran at 1.97x
  // cuBLAS in 68 64x16 tiles and 0.65x in 4 128x192 tiles, 77x129x72 1.76x against 0.74x. Else
  // the larger tile (less traffic through L2; 1x4096x4096: 64x128 0.70x, 64x64 0.55x), then the
  // wider one.
  const auto near = [](double a, double b) { return std::abs(a - b) <= 0.01 * std::min(a, b); };
  const int64_t k_tiles = ceil_div(def.k(), 128 / dtype_bytes(def.input_dtype()));
  const auto latency_bound = [&](const AutoParams& p) { return p.waves == 1 && k_tiles <= p.stages; };
  std::stable_sort(out.begin(), out.end(), [&](const AutoParams& a, const AutoParams& b) {
    if (!near(a.predicted_us, b.predicted_us)) return a.predicted_us < b.predicted_us;
    if (!near(a.mainloop_us, b.mainloop_us)) return a.mainloop_us < b.mainloop_us;
    if (latency_bound(a) && latency_bound(b) && a.tiles != b.tiles) return a.tiles > b.tiles;
    if (a.tile_m * a.tile_n != b.tile_m * b.tile_n) return a.tile_m * a.tile_n > b.tile_m * b.tile_n;
    return a.tile_n > b.tile_n;
  });
  return out;
}

AutoParams choose_auto_params(const Definition& def, const DeviceLimits& limits) {
  std::string last;
  for (const AutoParams& p : rank_auto_params(def, limits)) {
    try {
      LowerOptions options;
      options.limits = limits;
      lower(auto_schedule(def, p), options);
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
    os << p.predicted_us << " us (tiles " << p.mainloop_us << " us), " << p.tiles << " tiles in " << p.waves
       << " wave" << (p.waves > 1 ? "s" : "") << (p.hash() == chosen ? "  <- chosen" : "") << "\n";
  }
  return os.str();
}

}  // namespace gg
