#pragma once
// A kernel under lowering: the plan fixed from the schedule, the IR body the passes
// rewrite, and the launch description the runtime needs.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/epilogue_plan.h"
#include "codegen/kernel_ir.h"
#include "codegen/roles_and_layouts.h"
#include "dsl/schedule.h"
#include "runtime/launch_spec.h"

namespace gg {

struct SmemBuffer {
  std::string name;     // "smem_A"
  int64_t offset = 0;   // bytes from the 1024-aligned base
  int64_t bytes = 0;
  std::string purpose;  // which directive asked for it
};

// The operand pipeline (the circular buffer over k tiles): every pass that loads, waits on,
// computes from or releases a stage reads its counts here.
struct PipelinePlan {
  int stages = 1, prefetch = 0;  // 1 and 0 without a circular buffer
  // kir::Barrier::Full: a stage's loads landed. kir::Barrier::Empty, when `empty_barriers`: a
  // stage's readers are done (else a CTA barrier releases it).
  bool empty_barriers = false;
  int full_arrivals = 2;          // one arrive.expect_tx per operand load of a fill
  int empty_arrivals = 0;         // one per consumer warpgroup (or warp) of every CTA reading the stage
  // Each consumer warp releases a stage (it read the stage with its own loads: FP8's factors of A),
  // not one thread of each consumer warpgroup.
  bool release_per_warp = false;
  // FP8 promotion: a k tile's release rides on its ComputeTile, and the MMA selection places it
  // after the MMAs' last wait, before the promotion (which reads registers only), as DeepGEMM does.
  bool release_in_compute = false;
  int64_t tx_bytes = 0;           // bytes landing in one stage of one CTA (multicast slices from peers included)
  int mma_in_flight = 0;          // MMA groups left running after a k step: the release lags by this many
  // Peers' consumers release this CTA's stages (multicast), so a CTA may not exit while their
  // arrivals are on the way: the producer waits for the release of every stage's last fill
  // after its loops (a drain), instead of a cluster barrier that holds every thread at exit.
  bool drain_at_exit = false;
};

// Promotion: the MMAs of `every` k tiles accumulate into a second accumulator that is then added
// into the fp32 one (kir::PromoteAccumulator). FP8 multiplies it by the k block's scale factors
// (WGMMA's FP8 accumulation keeps about 14 bits); 16-bit operands promote as they are, since
// WGMMA's fp32 accumulation truncates and a long k loop's error grows with K.
struct PromotionPlan {
  bool on = false;
  int64_t every = 1;  // k tiles between promotions
};

// FP8 operands' scale factors, applied in the promotion (or after the k loop).
struct Fp8Plan {
  // A's and B's factors, where they have any: A's per row and 128 of K MN-major (DeepGEMM's layout)
  // travel with the operands (the ScaleA stage buffer); the rest are read from args.scale_a and
  // args.scale_b in the promotion (B's per row, constant along K, once after the k loop:
  // kir::ScaleAccumulatorColumns). `*_major`: the two-dimensional factors' layouts.
  std::optional<ScaleGranularity> scale_a, scale_b;
  Layout scale_a_major = Layout::MNMajor, scale_b_major = Layout::KMajor;
  int64_t k_blocks = 0, n_blocks = 0;
  // sm_100a: the block-scaled tcgen05.mma applies both operands' UE8M0 factors (per 1x128, in
  // their atoms, staged beside A and B and copied into TMEM per k tile); nothing is promoted.
  bool block_scaled = false;
  bool stages_scale_a() const {
    return block_scaled || (scale_a == ScaleGranularity::Block1x128 && scale_a_major == Layout::MNMajor);
  }
};

// One operand the pipeline's stages carry (A and B, and an FP8 A's scale factors):
// its tensor map slot and pointer field, its stage buffer and layout, the work unit's coordinate
// its rows follow and the problem extent that bounds them, and whether a cluster multicasts it.
// The loads, the transaction bytes and the checks run over the list.
struct StagedOperand {
  rt::Operand operand = rt::Operand::A;
  kir::Buffer buffer = kir::Buffer::A;
  SmemTileLayout smem;
  std::string tile;    // "m_tile" or "n_tile"
  std::string extent;  // "args.m" or "args.n"
  std::string source;  // the GgGemmArgs pointer a synchronous copy reads: "a" or "b"
  // Its leading dimension, for layout_value: the MatrixLayouts field and the GgGemmArgs one.
  int64_t rt::MatrixLayouts::*ld = nullptr;
  std::string ld_arg;  // "args.lda"
  bool multicast = false;
};

struct KernelPlan {
  Target target = Target::Sm90a;
  DType in = DType::BF16, out = DType::BF16;
  int64_t m = 0, n = 0, k = 0;
  // M or N read from GgGemmArgs at run time (Definition::runtime_m): m or n above is then only the
  // size the kernel is planned for, and tile counts, the persistent loop's end and the
  // leading dimensions and strides that follow the size are expressions of args.m or args.n.
  bool runtime_m = false, runtime_n = false;
  // Masked groups (ProblemSource::Masked): the batch's matrices are groups whose rows in use the
  // kernel reads from args.group_rows; a work unit past them computes nothing.
  bool masked = false;
  // Contiguous groups (ProblemSource::Contiguous): the batch's matrices are groups of rows of one A
  // and D, bounded by args.group_offsets; a unit's rows start at its group's first row and its
  // store stops at the group's last (D's tensor map row-limited).
  bool contiguous = false;
  // Variable-K groups (ProblemSource::VarlenK): the batch's matrices are D's groups, each unit's
  // k tiles the K range of its group (args.group_offsets) of A and B, whose tensor maps are
  // row-limited (the rows past the range read as zero). K is read at run time.
  bool varlen_k = false;
  // Pointer-array groups (ProblemSource::PointerArray): the batch's matrices are groups each with
  // its own tensor maps (args.group_maps, written on the device before the launch) and M, N, K
  // (args.group_sizes); the persistent loop walks every group's tiles, each unit its group's k
  // tiles. M, N and K are read at run time.
  bool pointer_array = false;
  // Each unit runs its own group's k tiles, possibly none (variable K, pointer arrays).
  // A cluster's CTAs take neighbouring tiles of one unit: along m where they share B (B multicast,
  // or a CTA pair's MMA reading B's halves from both), along n where they share A.
  bool pairs_tiles() const { return multicast_a || multicast_b || cta_pair; }
  bool pairs_along_m() const { return multicast_b || cta_pair; }
  // A two-dimensional cluster (cluster X Y 1 sharing both operands): X CTAs along m share B's tile,
  // Y along n share A's. It is launched as a one-dimensional cluster of X * Y CTAs, rank
  // cta_rank_m + X * cta_rank_n.
  bool cluster_2d() const { return multicast_a && multicast_b; }
  // The CTAs of a cluster that take neighbouring m tiles (sharing B) and n tiles (sharing A).
  int cluster_m_ctas() const { return cluster_2d() ? cluster.x : pairs_along_m() ? cluster_size : 1; }
  int cluster_n_ctas() const { return cluster_2d() ? cluster.y : multicast_a ? cluster_size : 1; }
  bool k_per_unit() const { return varlen_k || pointer_array; }
  // Every unit runs the same k tiles, a constant (K is compiled): no group, masked tile or
  // triangle decides a unit's work at run time (WorkUnits' k tile count; the FP8 k loop's unroll).
  bool k_tiles_constant() const {
    return !masked && !contiguous && !k_per_unit() && epilogue.commit != EpiloguePlan::Commit::Symmetric;
  }
  int tile_m = 0, tile_n = 0, tile_k = 0;
  bool tma_load = false;                // operands by TMA (else the synchronous copy)
  bool operand_rows_aligned = true;     // A and B rows are 16-byte multiples (else element copies)
  // A's and B's TMA loads read an aligned copy the launch makes first (Definition::stage_operand).
  bool staged_a = false, staged_b = false;
  bool tma_store = false;               // output staged in shared memory and stored by TMA
  // Where the problem's matrices lie (resolved from the definition: majors, leading dimensions,
  // batch and batch strides); the kernel reads the same values from GgGemmArgs. A column-major
  // D (and C), indexed [n * ldd + m], is stored from registers.
  rt::MatrixLayouts layouts;
  // The same, except that a leading dimension or batch stride that follows a size read at run
  // time (a dense M-major A's lda, ...) keeps its dense placeholder (0, -1): the kernel reads it
  // from GgGemmArgs (layout_value) and the launch checks it against the problem's sizes.
  rt::MatrixLayouts launch_layouts;
  int consumer_warpgroups = 1;
  // Ping-pong: each consumer warpgroup computes whole tiles, taking the persistent loop's
  // tiles in turn; else (cooperative) the consumers split every tile's rows.
  bool ping_pong = false;
  bool warp_specialized = false;        // a producer role apart from the consumer role
  std::vector<RoleShape> roles;         // in warpgroup order; one "all" role without warp specialization
  PipelinePlan pipeline;
  bool persistent = false;              // a grid-strided loop over tiles (persist)
  int threads = 128;
  ClusterD cluster{1, 1, 1};
  int cluster_size = 1;
  // Multicast: the CTAs of a cluster share the tile of this operand; each loads 1/cluster_size
  // of its rows into all of them. Multicast B pairs CTAs along m tiles, A along n tiles.
  bool multicast_a = false, multicast_b = false;
  MmaD mma{64, 128, 16, Target::Sm90a};
  // Where the accumulator lives: registers (sm_90a's wgmma) or Tensor Memory (sm_100a's
  // tcgen05.mma), and the TMEM columns allocated for it (the resource summary's power of two).
  Place accumulator = Place::Registers;
  int tmem_columns = 0;
  int tmem_scale_column0 = 0;  // FP8: the first column of the UE8M0 factors (A's atoms, then B's)
  int tmem_accumulators = 0;  // of them: one, or one per ping-pong consumer (the resource summary's)
  // accumulator_buffers 2: the producer warpgroup's second warp issues the MMAs into the buffers in
  // turn (tile t into buffer t % 2) while the consumers write the other back.
  bool tmem_double_buffered = false;
  // The MMA warp issues every tile's MMAs and the consumers only write back (mma_warp_issues):
  // double-buffered TMEM, or a CTA pair.
  bool mma_warp = false;
  // An m256 tcgen05.mma over the CTA pair of a 2-CTA cluster (cta_group::2): the even CTA (the
  // leader) issues it and commits to both; both CTAs' loads complete on the leader's full
  // barriers; both CTAs' writebacks release the leader's acc_empty.
  bool cta_pair = false;
  std::string k_loop;                   // the serial k loop's axis, empty when K fits one tile
  int64_t k_tiles = 1;
  std::vector<SmemBuffer> smem;
  int64_t smem_bytes = 0;               // dynamic shared memory, 1024 alignment slack included
  // The operands the stages carry, in the order a stage lays them out, and the output staging in
  // shared memory, as the schedule analysis laid them out: the loads, the TMA tensor maps, the MMA
  // descriptors and the epilogue all read these.
  std::vector<StagedOperand> operands;
  const StagedOperand& operand(rt::Operand which) const;  // InternalError when the list lacks it
  int64_t stage_bytes() const;                            // one stage of every operand
  StagingShape staging;
  EpiloguePlan epilogue;
  // Split-K: `split_k` CTAs share each output tile's k loop (1: none); their partial sums meet
  // in the epilogue plan's workspace.
  int split_k = 1;
  // split_k ... tail: only the tiles past the persistent grid's last whole wave are split.
  bool split_k_tail = false;
  // split_k ... stream (with split_k_tail): those tiles' k tiles are dealt stream-K, in even
  // contiguous ranges over min(grid, split_k x those tiles) CTAs (WorkUnits); a tile's pieces,
  // at most `stream_pieces`, meet in the workspace as splits do.
  bool split_k_stream = false;
  int stream_pieces = 0;
  Fp8Plan fp8;
  PromotionPlan promotion;
};

// The runtime's element type for a dtype.
rt::ElemType runtime_elem(DType t);

// The role that computes (the consumer, or the only role).
const RoleShape& compute_role(const KernelPlan& p);

// Warpgroups that hold one tile's accumulator between them: all consumers when they split
// the tile (cooperative), one under ping-pong.
int warpgroups_per_tile(const KernelPlan& p);

// This consumer's band of the tile's rows in units of a warpgroup's share: its index in the
// role when the consumers split the tile, 0 under ping-pong (each owns the whole tile).
kir::ExprPtr consumer_band(const KernelPlan& p);

// The tiled tensor map of `operand` (its stored matrix as plan.layouts has it) landing in (or
// read from) `layout`: its box is one swizzle atom wide and the layout's box rows tall.
rt::TensorMapSpec tiled_tensor_map(const KernelPlan& p, rt::Operand operand, const SmemTileLayout& layout);
// The map of an FP8 A's scale factors (rt::Operand::ScaleA: k blocks as rows of M fp32 values)
// whose box is one stage of `layout`: one k block's factors of a tile's rows, unswizzled.
// With UE8M0 factors (sm_100a), A's or B's atoms: one row of 128 words per atom.
rt::TensorMapSpec scale_tensor_map(const KernelPlan& p, rt::Operand operand, const SmemTileLayout& layout);
// A box of a row-limited map (TensorMapSpec::row_limited) that keeps only its rows before row
// `row_end`: its (row, third) coordinates become (box_rows - kept, first row + kept), kept the box
// rows before row_end (none when the box starts at or past it). The coordinates given are the
// box's first row, and its third coordinate unused.
void limit_box_rows(kir::ExprPtr& row, kir::ExprPtr& third, const kir::ExprPtr& row_end, int64_t box_rows);

// Where matrix `batch` of `operand` starts, in elements from its pointer: batch * stride, or
// nullptr for one matrix or a broadcast one (stride 0). Pointer-addressed copies add it.
kir::ExprPtr batch_offset(const KernelPlan& p, rt::Operand operand, const kir::ExprPtr& batch);
// The third TMA coordinate of `operand`'s tensor map: `batch` where the map spans the batch,
// nullptr for a 2-D map (one matrix, or a broadcast one).
kir::ExprPtr tensor_map_batch(const KernelPlan& p, rt::Operand operand, const kir::ExprPtr& batch);
// Pointer-array groups: the group whose maps (args.group_maps) a box of matrix `batch` goes
// through; nullptr otherwise (the kernel parameter's map).
kir::ExprPtr tensor_map_group(const KernelPlan& p, const kir::ExprPtr& batch);

// The problem's memory layouts, resolved from a definition.
rt::MatrixLayouts matrix_layouts(const Definition& def);
// KernelPlan::launch_layouts of a definition.
rt::MatrixLayouts launch_layouts(const Definition& def);
// A leading dimension or batch stride as the kernel has it: the constant, or GgGemmArgs' field
// `arg` ("args.lda") where it follows a size read at run time.
kir::ExprPtr layout_value(const KernelPlan& p, int64_t rt::MatrixLayouts::*field, const std::string& arg);

struct Kernel {
  std::string name;
  KernelPlan plan;
  kir::StmtPtr body;
  rt::LaunchSpec launch;
};

}  // namespace gg
