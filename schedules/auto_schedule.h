#pragma once
// The `auto` schedule: a heuristic that picks a config from the problem and the device, kept
// apart from the mechanism. AutoParams is the whole choice (printable, hashable);
// auto_schedule turns it into primitive calls, as a tutorial step does.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/device_limits.h"
#include "dsl/schedule.h"

namespace gg {

// The cost model's parameters: the throughputs and costs it assumes for an H100 SXM, each measured
// where its comment says; `gemmgen model --rates FILE` predicts with others and
// scripts/fit_model.py fits them to `tune` data. The defaults are what `auto` plans with: 989
// dense bf16 TFLOP/s over 132 SMs, HBM3 at 3.35 TB/s, L2 at about 3x that. A CTA's TMA loads
// reach about 2.5 us of latency under load, so one SM streams (bytes in flight across its stages)
// / 2.5 us: measured on an H100, a 1 x 4096 x 4096 problem ran at 22 GB/s per SM with 64 KB in
// flight and 55 GB/s with 128 KB.
struct ModelRates {
  double mma_flops_per_sm = 989e12 / 132;
  double dram_bytes_per_s = 3.35e12;
  double l2_bytes_per_s = 10e12;
  double load_latency_s = 2.5e-6;
  double k_tile_s = 50e-9;
  double launch_s = 3e-6;
  // A tile's epilogue: the last MMAs' wait, the conversions and staging barriers, about 0.5 us,
  // and its output bytes at 50 GB/s per SM (H100, 1000^3 in 64x128 tiles: about 1500 cycles
  // from the last MMA to the store's reads for 16 KB).
  double epilogue_s = 0.5e-6;
  double store_bytes_per_sm_s = 50e9;
  // A column-major output stored from registers one element at a time. H100, 3000 x 5000 x 1032
  // in 128x240 tiles: column-major D straight 0.73x cuBLAS against 0.90x for the row-major
  // output's TMA store: about 15 GB/s per SM.
  double element_store_bytes_per_sm_s = 15e9;
  // A row-major output stored from registers (rows not whole 16-byte pieces, or their length read
  // at run time) is slower again, about a third of that: on an H100 the swapped 3000 x 5000 x 1032
  // (D^T's rows of M) ran 0.50x cuBLAS against the straight column-major store's 0.74x; ragged N
  // (3919 x 2881 x 244, 5453 x 2005 x 273, 7578 x 639 x 249, 128-row ping-pong tiles) 84-86, 80
  // and 41 us straight against 47, 47 and 25 us swapped, where the kernel's D is column-major.
  double row_element_store_bytes_per_sm_s = 5e9;
  // TMA loads of rows that start 16 bytes into a 32-byte sector (a row pitch that is an odd
  // multiple of 16 bytes: K = 7000 or 1032 for K-major bf16) split into about 4x the L2 requests
  // (ncu, H100, 2048 x 3072 x 7000 against x 7168: 21.2M requests against 5.2M). A CTA then
  // issues such rows at about 36 GB/s with every SM loading, whichever tile: 128x256 tiles ran 1.44
  // us a k tile (384 rows issued a CTA), 128x192, 128x128 and a swapped 256x96 in 2-CTA clusters
  // sharing one operand 0.78, 0.65 and 0.79 us (224, 192 and 224 rows issued): about 3.5 ns a
  // 128-byte row. (Per SM, not scaled to fewer CTAs: at 1000^3, 96 64x192 tiles ran 13.9 us and
  // 128 64x128 ones 11.9.)
  double unaligned_row_bytes_per_sm_s = 36e9;
  // Split-K's hand-off: the ticket's atomic and fence round trip.
  double ticket_s = 1e-6;
  // Staged operands' copy kernel: about 4 us, then 2.3 TB/s of bytes read and written (H100: 4444
  // x 555 bf16 rows padded to 560 in 8.9 us, 4097 x 4095 in 32 us, 3005 x 1001 in 9.0 us).
  double stage_s = 4e-6;
  double stage_bytes_per_s = 2.3e12;
};

struct AutoParams {
  int64_t tile_m = 128, tile_n = 256, tile_k = 64;
  int consumers = 2;          // consumer warpgroups splitting the tile's rows (64 or 128 each)
  bool ping_pong = false;     // two consumer warpgroups take whole tiles in turn instead
  int stages = 4;             // pipeline depth (the deepest that fits, up to kMaxAutoStages)
  int cluster = 1;            // CTAs sharing an operand by multicast (1: no cluster)
  bool multicast_a = false;   // the cluster pairs n tiles sharing A (else m tiles sharing B)
  int split_k = 1;            // CTAs sharing one output tile's k loop (1: none)
  bool split_tail = false;    // split only the tiles past the last whole wave (split_k ... tail)
  // with split_tail: those tiles' k tiles dealt stream-K (split_k ... stream). `tune` measures it
  // (tune_candidates); the model's ranking does not offer it until it has run on a GPU.
  bool split_stream = false;
  Raster raster = Raster::RowMajor;  // persistent tile order: bands of `group` tiles
  int64_t group = 8;
  int64_t subtile_cols = 64;  // output store subtile (0: the output is stored from registers)
  int store_buffers = 2;      // staging buffers per consumer (1 when the tile is one subtile)
  // Elements of K between promotions of the accumulator (0: none): follows from the problem and
  // the tile (auto_promotion); kept here for the description.
  int64_t promote = 0;
  double predicted_us = 0;    // the model's time, for explain and bench
  double mainloop_us = 0;     // its waves of tiles alone, before the DRAM bound
  int64_t tiles = 0, waves = 0;
  int64_t k_tiles = 0;        // an unsplit tile's k loop
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
double staging_seconds(const Definition& def, const ModelRates& rates = ModelRates{});

// Each parameter's name, as a rates file writes it ("mma_flops_per_sm 7.49e+12").
const std::vector<std::pair<std::string, double ModelRates::*>>& model_rate_fields();
// A rates file: "name value" lines over `base` ('#' starts a comment). CompileError `model-rates`
// for an unknown name or a value that is not a positive number.
ModelRates parse_model_rates(const std::string& text, ModelRates base = ModelRates{});
std::string print_model_rates(const ModelRates& rates);

// The problem's roofline at the model's rates: its MMAs at peak on every SM, and reading every
// stored operand matrix and writing every D once from DRAM (a masked group's A, B and D, each
// contiguous group's B; an operand a batch shares once).
struct Roofline {
  double mma_us = 0, dram_us = 0, dram_mb = 0;
  bool mma_bound() const { return mma_us >= dram_us; }
};
Roofline problem_roofline(const Definition& def, const DeviceLimits& limits, const ModelRates& rates = {});

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
void predict_auto_params(const Definition& def, const DeviceLimits& limits, AutoParams& p,
                         const ModelRates& rates = ModelRates{});

// The candidate configs for a problem, each with the model's predicted time, best first. A
// candidate is listed only when its schedule validates and lowers.
std::vector<AutoParams> rank_auto_params(const Definition& def, const DeviceLimits& limits);

// The best candidate; CompileError `no-schedule` when none lowers (e.g. K not a multiple of 8:
// `auto` needs TMA loads for its warp roles).
AutoParams choose_auto_params(const Definition& def, const DeviceLimits& limits);

Schedule auto_schedule(const Definition& def, const AutoParams& p, Target target = Target::Sm90a);

// The promotion interval auto_schedule gives a config (0: none). 16-bit operands with an f32
// output: the tensor cores' fp32 accumulation truncates, so one chain's error grows with K, about
// 1e-9 K (on an H100, 1024^2 x K: 8.5e-7 at K = 1024, 4.0e-6 at 4096; 4096^2 x 16384 1.8e-5, over
// the f32 bound of 1e-5, in our kernel and cuBLAS's alike). Promoted every 256 of K (every k tile
// where a consumer holds several 64-row blocks) it is a 256-long chain's, about 2e-7, at any K.
// Promoted where K > 4096, or where the output is at most two waves of 128x256 tiles: there cuBLAS
// splits K (1024^2 x 16384, 64 x 4096 x 8192) or runs split mma.sync kernels (1530 x 1500 x 2040:
// 5.4e-7 where one chain errs 1.8e-6). Elsewhere it runs one chain, as we do without promoting,
// and the promotion would cost the 128x256 tiles (no registers for its accumulator) and its
// waits: 4096^3 ran 625 TFLOP/s promoted against 751 not.
int64_t auto_promotion(const Definition& def, const AutoParams& p, Target target = Target::Sm90a);
inline constexpr int64_t kAutoPromotion = 256;

// The ranking explain prints for `--schedule auto`: the best `top` candidates with the model's
// figures, and which one was chosen (the first that lowers).
std::string explain_auto(const Definition& def, const DeviceLimits& limits, int top = 6);

}  // namespace gg
