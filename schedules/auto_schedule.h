#pragma once
// The `auto` schedule: a heuristic that picks a config from the problem and the device, kept
// apart from the mechanism. AutoParams is the whole choice (printable, hashable);
// auto_schedule turns it into primitive calls, as a tutorial step does.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/device_limits.h"
#include "dsl/schedule.h"

namespace gg {

struct AutoParams {
  int64_t tile_m = 128, tile_n = 256, tile_k = 64;
  int consumers = 2;          // consumer warpgroups splitting the tile's rows (64 or 128 each)
  bool ping_pong = false;     // two consumer warpgroups take whole tiles in turn instead
  int stages = 4;             // pipeline depth (the deepest that fits, up to kMaxAutoStages)
  int cluster = 1;            // CTAs sharing an operand by multicast (1: no cluster)
  bool multicast_a = false;   // the cluster pairs n tiles sharing A (else m tiles sharing B)
  int split_k = 1;            // CTAs sharing one output tile's k loop (1: none)
  bool split_tail = false;    // split only the tiles past the last whole wave (split_k ... tail)
  Raster raster = Raster::RowMajor;  // persistent tile order: bands of `group` tiles
  int64_t group = 8;
  int64_t subtile_cols = 64;  // output store subtile (0: the output is stored from registers)
  int store_buffers = 2;      // staging buffers per consumer (1 when the tile is one subtile)
  double predicted_us = 0;    // the model's time, for explain and bench
  double mainloop_us = 0;     // its waves of tiles alone, before the DRAM bound
  int64_t tiles = 0, waves = 0;
  double operand_mb = 0;      // operand bytes the tile order fetches wave by wave (order_operand_bytes)

  std::string to_string() const;  // "tile 64x32x64, 1 consumer, 8 stages, no cluster, ..."
  uint64_t hash() const;          // of the choice (not the prediction)
};

// Deeper pipelines only queue more loads behind a saturated DRAM: on an H100, 4096x1x4096 and
// 4096x16x4096 in 64x16x128 tiles ran 17.1-17.6 us with 6 or 8 stages and 18.9-19.1 us with 11
// (64x16x64 with 16 stages: 18.2 us). Wide tiles fit fewer stages and never reach the cap.
inline constexpr int kMaxAutoStages = 8;

// The staged operands' copy (Definition::stage_operand) before the kernel: a launch and the bytes
// read and written at the copy's rate (0 when nothing is staged). Part of every prediction.
double staging_seconds(const Definition& def);

// The operand bytes the persistent tile order fetches: for each wave of tiles (one per CTA), the
// rows of A and B its distinct m and n tiles touch, times K. A wave's CTAs share those rows in
// L2 while they stream K together; the next wave fetches its own. Smaller is friendlier to L2
// and DRAM.
double order_operand_bytes(const Definition& def, const DeviceLimits& limits, const AutoParams& p);

// The tile order for a config: where DRAM, not the MMAs, bounds the problem, of row- and
// column-major bands of 4, 8 or 16 tiles and the Hilbert curve the one whose waves fetch the fewest operand bytes
// (order_operand_bytes), if it saves at least a tenth; else the default, row-major bands of 8
// (on an H100 the orders measured alike where the MMAs bound the time: 8192^3 at 1.020-1.024x
// cuBLAS in row 4, 8, 16 and column 8; 1000^3 at 0.83-0.87x in seven orders; 512x512x16384 and
// 1024x1024x16384 split-K within 1.5% across six orders).
void choose_tile_order(const Definition& def, const DeviceLimits& limits, AutoParams& p);

// Whether the Hilbert order takes the config's tile grid (at most gg::dev::kHilbertMaxTiles
// tiles, or cluster groups, along m and along n).
bool hilbert_fits(const Definition& def, const AutoParams& p);

// The model's figures for one config as it is (its order kept): predicted_us, mainloop_us, tiles,
// waves and operand_mb; what `explain` sets beside a config `tune` measured.
void predict_auto_params(const Definition& def, const DeviceLimits& limits, AutoParams& p);

// The candidate configs for a problem, each with the model's predicted time, best first. A
// candidate is listed only when its schedule validates and lowers.
std::vector<AutoParams> rank_auto_params(const Definition& def, const DeviceLimits& limits);

// The best candidate; CompileError `no-schedule` when none lowers (e.g. K not a multiple of 8:
// `auto` needs TMA loads for its warp roles).
AutoParams choose_auto_params(const Definition& def, const DeviceLimits& limits);

Schedule auto_schedule(const Definition& def, const AutoParams& p, Target target = Target::Sm90a);

// The ranking explain prints for `--schedule auto`: the best `top` candidates with the model's
// figures, and which one was chosen (the first that lowers).
std::string explain_auto(const Definition& def, const DeviceLimits& limits, int top = 6);

}  // namespace gg
