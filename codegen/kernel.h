#pragma once
// A kernel under lowering: the plan fixed from the schedule, the IR body the passes
// rewrite, and the launch description the runtime needs.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "dsl/schedule.h"
#include "runtime/launch_spec.h"

namespace gg {

struct SmemBuffer {
  std::string name;     // "smem_A"
  int64_t offset = 0;   // bytes from the 1024-aligned base
  int64_t bytes = 0;
  std::string purpose;  // which directive asked for it
};

// A warp role: the warpgroups that run it and the registers setmaxnreg gives them.
struct RolePlan {
  std::string name;         // "producer", "consumer", or "all" without warp specialization
  int first_warpgroup = 0, warpgroups = 1;
  int regs = 0;             // setmaxnreg target; 0 keeps the launch's allocation
  bool increase = false;    // setmaxnreg.inc (take registers) or .dec (give them back)
  bool issues_loads = false, computes = false;
};

// The operand pipeline (the circular buffer over k tiles): every pass that loads, waits on,
// computes from or releases a stage reads its counts here.
struct PipelinePlan {
  int stages = 1, prefetch = 0;  // 1 and 0 without a circular buffer
  std::string full = "full_bar";  // mbarrier array: a stage's loads landed
  std::string empty;              // mbarrier array: a stage's readers are done; empty when a CTA barrier releases
  int full_arrivals = 2;          // one arrive.expect_tx per operand load of a fill
  int empty_arrivals = 0;         // one per consumer warpgroup of every CTA reading the stage
  int64_t tx_bytes = 0;           // bytes landing in one stage of one CTA (multicast slices from peers included)
  int mma_in_flight = 0;          // MMA groups left running after a k step: the release lags by this many
};

inline constexpr const char* kCBarrier = "c_bar";  // the mbarrier C's staged tile completes on

struct KernelPlan {
  Target target = Target::Sm90a;
  DType in = DType::BF16, out = DType::BF16;
  int64_t m = 0, n = 0, k = 0;
  int tile_m = 0, tile_n = 0, tile_k = 0;
  bool tma_load = false;                // operands by TMA (else the synchronous copy)
  bool tma_store = false;               // output staged in shared memory and stored by TMA
  int consumer_warpgroups = 1;
  // Ping-pong: each consumer warpgroup computes whole tiles, taking the persistent loop's
  // tiles in turn; else (cooperative) the consumers split every tile's rows.
  bool ping_pong = false;
  bool warp_specialized = false;        // a producer role apart from the consumer role
  std::vector<RolePlan> roles;          // in warpgroup order; one "all" role without warp specialization
  PipelinePlan pipeline;
  bool persistent = false;              // a grid-strided loop over tiles (persist)
  int threads = 128;
  ClusterD cluster{1, 1, 1};
  int cluster_size = 1;
  // Multicast: the CTAs of a cluster share the tile of this operand; each loads 1/cluster_size
  // of its rows into all of them. Multicast B pairs CTAs along m tiles, A along n tiles.
  bool multicast_a = false, multicast_b = false;
  MmaD mma{64, 128, 16, Target::Sm90a};
  std::string k_loop;                   // the serial k loop's axis, empty when K fits one tile
  int64_t k_tiles = 1;
  std::vector<SmemBuffer> smem;
  int64_t smem_bytes = 0;               // dynamic shared memory, 1024 alignment slack included
  int64_t a_stage_bytes = 0, b_stage_bytes = 0;
  // Operand tiles in shared memory: K-major rows split into `k_atoms` swizzle atoms of
  // `swizzle_bytes` (32, 64 or 128) each, laid out [k_atoms][rows][swizzle_bytes].
  int swizzle_bytes = 128;
  int k_atoms = 1;
  // The output staging (see StagingShape): each consumer warpgroup stages its rows in subtiles
  // of `store_cols` columns, cycling through `store_buffers` buffers; a buffer is column
  // chunks of `store_swizzle_bytes` (the widest of 128, 64, 32 dividing a subtile row), each
  // [staging rows][store_swizzle_bytes] and one TMA store box.
  int store_swizzle_bytes = 128;
  int store_cols = 0, store_buffers = 1;
  std::vector<kir::EpilogueOp> epilogue;
  // beta*C read through the staging buffer: TMA loads the C tile into it (completing on
  // `c_bar`), each thread reads its elements there and overwrites them with the result.
  bool staged_c = false;
};

// The runtime's element type for a (non-reserved) dtype.
rt::ElemType runtime_elem(DType t);

// The role that computes (the consumer, or the only role).
const RolePlan& compute_role(const KernelPlan& p);

// Warpgroups that hold one tile's accumulator between them: all consumers when they split
// the tile (cooperative), one under ping-pong.
int warpgroups_per_tile(const KernelPlan& p);

// Rows a consumer warpgroup stages: its band of the tile, or under ping-pong the whole tile.
int staging_rows(const KernelPlan& p);
// Bytes of one staging buffer (one subtile of one warpgroup's rows).
int64_t staging_buffer_bytes(const KernelPlan& p);
// Staging buffers of the CTA, each with its C barrier: store_buffers per consumer warpgroup.
int staging_buffer_count(const KernelPlan& p);
// Subtiles per output tile.
int store_subtiles(const KernelPlan& p);

// This consumer's band of the tile's rows in units of a warpgroup's share: its index in the
// role when the consumers split the tile, 0 under ping-pong (each owns the whole tile).
kir::ExprPtr consumer_band(const KernelPlan& p);

// A 2-D tiled tensor map over a rows x cols matrix whose box is one swizzle atom wide
// (`swizzle_bytes` of 32, 64 or 128) and `box_rows` tall.
rt::TensorMapSpec tiled_tensor_map(rt::Operand operand, DType elem, int64_t rows, int64_t cols, int box_rows,
                                   int swizzle_bytes);

struct Kernel {
  std::string name;
  KernelPlan plan;
  kir::StmtPtr body;
  rt::LaunchSpec launch;
};

}  // namespace gg
