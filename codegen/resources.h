#pragma once
// What a schedule asks of the device: shared memory (with its breakdown), registers per
// warp role, barriers, threads, cluster and grid shape, TMEM columns. Computed from the
// directives alone, before any code is generated; validate_schedule() checks it against
// DeviceLimits and explain() prints it.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/device_limits.h"
#include "codegen/roles_and_layouts.h"
#include "dsl/schedule.h"

namespace gg {


// Registers a thread keeps besides its accumulator fragment: addresses, loop counters,
// descriptors, epilogue temporaries.
// 32 was too few: a 256x96 tile on one warpgroup (192 accumulator registers of the 255 cap)
// spilled 28 bytes with an f32 staged epilogue (found by the fuzzer's nvcc sample).
inline constexpr int kRegisterOverhead = 64;
// FP8: the promotion's accumulator lives only in the k loop, where beside both accumulators a
// thread keeps the k loop's addresses and scale factors; the epilogue after it has
// kRegisterOverhead beside the fp32 accumulator alone. 40 is DeepGEMM's budget for its 256x128
// tiles (192 accumulator registers of 232); ptxas compiles our 256x128 and 128x192 FP8 tiles at
// 232 with no spills.
inline constexpr int kPromotionLoopOverhead = 40;

struct SmemItem {
  std::string symbol;   // the buffer's name in emitted code: "smem_A", "smem_B", "smem_D", "mbarriers"; empty for padding
  std::string what;     // "A stages", "B stages", "epilogue staging", "mbarriers", "alignment padding"
  std::string formula;  // "4 x 128 x 64 x 2 B"
  int64_t offset = 0;   // bytes from the 1024-aligned base (padding: -1)
  int64_t bytes = 0;
  int64_t stage_bytes = 0;  // circular-buffered items: bytes of one stage (bytes = stages x stage_bytes)
};


// Named barrier ids: 0 is __syncthreads; each computing warpgroup meets its own threads around
// its output staging at kStagingBarrier + consumer; ping-pong consumer c waits for its turn to
// run MMAs at kTurnBarrier + c.
inline constexpr int kStagingBarrier = 1;
inline constexpr int kTurnBarrier = 1 + kPingPongConsumers;
// Split-K: the threads holding a tile meet here to take the tile's ticket.
inline constexpr int kSplitKBarrier = kTurnBarrier + kPingPongConsumers;
// sm_100a with warp roles: the consumer's threads meet here after a tile's last read of the TMEM
// accumulator, before its MMA thread overwrites it with the next tile's (ping-pong consumer c, which
// owns its accumulator, at kTmemBarrier + c).
inline constexpr int kTmemBarrier = kSplitKBarrier + 1;

struct NamedBarrier {
  int id = 0;
  int threads = 0;
  std::string purpose;
};

struct Mbarrier {
  std::string name;    // "full", "empty", "mma_done"
  int count = 0;       // one per stage
  std::string purpose;
};

struct GridShape {
  int64_t x = 1, y = 1, z = 1;
  bool persistent = false;
  int64_t tiles = 1;  // output tiles (M tiles x N tiles x batches); persistent: the tiles the loop walks
  int64_t overhang_tiles = 0;  // of those, past D's edge: multicast groups rounded up (paired_tile_grid)
  int64_t batches = 1;  // matrices of a batched problem
  ProblemSource source = ProblemSource::Dense;  // groups (masked, contiguous): the batch's matrices are groups
  int64_t splits = 1;   // split-K: CTAs per output tile
  int64_t whole_wave_tiles = -1;  // split_k ... tail: the tiles of whole waves, which are not split
  bool stream = false;            // split_k ... stream: the later tiles' k tiles are dealt stream-K
  int ctas_per_sm = 1;  // CTAs of this kernel an SM holds at once (shared memory, registers, threads)
  int64_t ctas() const { return x * y * z; }
};

struct ResourceSummary {
  DeviceLimits limits;  // what the summary was computed against
  Target target = Target::Sm90a;
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  int stages = 1;
  int64_t smem_bytes = 0;
  std::vector<SmemItem> smem;
  std::vector<RoleShape> roles;  // threads and registers per warp role
  int64_t total_registers = 0;  // threads x regs per thread, summed over the roles
  std::vector<Mbarrier> mbarriers;
  int mbarrier_count = 0;
  std::vector<NamedBarrier> named_barriers;
  int threads = 0;
  ClusterD cluster{1, 1, 1};
  int cluster_size = 1;
  GridShape grid;
  // The promotion every `promotion_interval` elements of K holds a second accumulator of the
  // consumers' rows: these registers per thread of the accumulator_regs (0 without a promotion).
  int promotion_regs = 0;
  int64_t promotion_interval = 0;
  bool fp8_operands = false;  // the promotion applies scale factors (else it bounds fp32's truncation)
  // FP8: where each operand's scale factors come from and where they are applied ("" without):
  // "A per 1x128 (MN-major): staged by TMA beside A; B per row: read once after the k loop".
  std::string fp8_factors;
  int tmem_columns = 0;          // sm_100a: accumulator columns (fp32) in use
  int tmem_alloc_columns = 0;    // sm_100a: allocated (a power of two >= 32)
  int tmem_accumulators = 0;     // sm_100a: accumulators among them (one per ping-pong consumer, or buffer)
  int tmem_scale_columns = 0;    // sm_100a FP8: the block-scaled MMAs' UE8M0 factors among them
  bool tmem_double_buffered = false;  // accumulator_buffers 2: the tiles take the accumulators in turn
  bool mma_warp = false;         // sm_100a: the producer warpgroup's MMA warp issues (mma_warp_issues)

  std::string smem_breakdown() const;  // "A stages 4 x 128 x 64 x 2 B = 65536, ..."
  std::string to_string() const;       // the multi-line summary explain prints
};

// FP8: what ResourceSummary::fp8_factors says for a definition's operands ("" without factors).
std::string fp8_factors_text(const Definition& def);

// From the directives and the roles and layouts they fix (analyze_schedule passes its own).
ResourceSummary summarize_resources(const Schedule& s, const std::vector<RoleShape>& roles,
                                    const SmemTileLayout& a, const SmemTileLayout& b, const StagingShape& staging,
                                    const DeviceLimits& limits);
// The summary of analyze_schedule(s, limits).
ResourceSummary summarize_resources(const Schedule& s, const DeviceLimits& limits = hopper());

// True when the epilogue's beta*C term is read through the output staging buffer: the output
// is staged for a TMA store and C has the output's dtype, so one TMA load brings C's tile into
// the buffer the results then overwrite (no per-element global loads in the epilogue).
bool stages_c_in_smem(const Schedule& s);

}  // namespace gg
