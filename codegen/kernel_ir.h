#pragma once
// The kernel IR: statements of one CUDA kernel. Hardware operations are nodes; the
// abstract nodes (LoadTile, AcquireStage, ComputeTile, FinishCompute, ReleaseStage,
// WriteTile) are what the first passes build and later passes lower to hardware nodes.
// A WarpRole is the code one role's warpgroups run; a kernel without warp specialization
// is one role. The node list is the
// X-macro below: the visitor, mutator and printers have one handler per node.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/expr.h"
#include "runtime/launch_spec.h"

namespace gg::kir {

// Nodes with child statements, then leaves; GG_KIR_NODES is all of them.
#define GG_KIR_COMPOUND_NODES(X) X(Block) X(For) X(If) X(ElectOne) X(WarpRole)
#define GG_KIR_LEAF_NODES(X)                                                                     \
  X(Comment) X(Let) X(Assign) X(LoadTile) X(AcquireStage) X(ComputeTile) X(FinishCompute) X(AcquireAccumulator) X(ReleaseStage) \
  X(WriteTile) X(SetMaxNReg) X(ClusterSync)                                                     \
  X(MbarrierInit) X(FenceMbarrierInit) X(MbarrierArriveExpectTx) X(MbarrierArrive)              \
  X(MbarrierWait) X(TmaLoad) X(TmaStore) X(AcquireGroupMaps) X(BulkCommit) X(BulkWaitRead) X(SyncCopyTile)          \
  X(FenceProxyAsync) X(SyncThreads) X(NamedBarrierSync) X(NamedBarrierArrive) X(AccumulatorDecl)      \
  X(AccumulatorZero) X(AccumulatorFence)                                                        \
  X(WgmmaFence) X(WgmmaIssue) X(WgmmaCommit) X(WgmmaWait) X(LoadScaleFactors) X(PromoteAccumulator)  \
  X(PrefetchScaleFactors) X(ScaleAccumulatorColumns)                                                                   \
  X(EpilogueStore)                                                                             \
  X(PartialStore) X(TileTicket) X(PartialsStored) X(AwaitPartials) X(PartialReduce) X(ReductionCombine)                                              \
  X(TmemAlloc) X(TmemBaseLoad) X(TmemDealloc) X(Tcgen05Fence) X(Tcgen05Mma) X(Tcgen05Commit) X(TmemLoad) X(Tcgen05Copy)
#define GG_KIR_NODES(X) GG_KIR_COMPOUND_NODES(X) GG_KIR_LEAF_NODES(X)

enum class NodeKind {
#define GG_KIR_ENUM(N) N,
  GG_KIR_NODES(GG_KIR_ENUM)
#undef GG_KIR_ENUM
};

const char* node_kind_name(NodeKind k);

// Not polymorphic: nodes are made by make_shared<T>, whose deleter knows the real type.
struct Node {
  explicit Node(NodeKind k) : kind(k) {}
  const NodeKind kind;
};
using StmtPtr = std::shared_ptr<const Node>;

template <NodeKind K>
struct NodeOf : Node {
  static constexpr NodeKind kKind = K;
  NodeOf() : Node(K) {}
};

// A named mbarrier array in shared memory and one element of it.
// The mbarrier arrays: a stage's loads landed (full), a stage's readers released it (empty),
// C landed in a staging buffer (c), the MMAs into a TMEM accumulator completed (mma_done), the
// writeback read a double-buffered TMEM accumulator buffer (acc_empty).
enum class Barrier { Full, Empty, C, MmaDone, AccEmpty };
// The symbol the kernel declares: "full_bar", "empty_bar", "c_bar", "mma_done_bar", "acc_empty_bar".
std::string barrier_name(Barrier b);

struct BarrierRef {
  Barrier array = Barrier::Full;
  ExprPtr index;
};

// The shared-memory buffers statements address: operand A's and B's stages, the output staging,
// and an FP8 A's scale factors per stage.
enum class Buffer { A, B, D, ScaleA, ScaleB };
std::string buffer_name(Buffer b);  // the symbol the kernel declares: "smem_A", "smem_B", "smem_D", "smem_SA"

// A byte offset into a shared-memory buffer.
struct SmemRef {
  Buffer buffer = Buffer::A;
  ExprPtr offset;  // bytes
};

// What a loop iterates, so passes find the loop they rewrite by its role, not its variable name.
// Drain: the producer's wait, after its last fill, for every stage's last release.
enum class LoopKind { Other, Tiles, KTiles, Subtiles, Drain };
const char* loop_kind_name(LoopKind k);  // "", "tile loop", "k-tile loop", "subtile loop", "drain loop"

// The GgGemmArgs field holding an operand's tensor map: "map_a", "map_b", "map_c", "map_d".
std::string tensor_map_field(rt::Operand o);

struct Block : NodeOf<NodeKind::Block> { std::vector<StmtPtr> body; };
struct For : NodeOf<NodeKind::For> {
  LoopKind kind = LoopKind::Other;
  std::string var;
  ExprPtr begin, end, step;
  bool unroll = false;
  bool rolled = false;  // kept a loop (#pragma unroll 1): unrolled, every trip's registers were live at once
  int unroll_by = 0;    // partly unrolled (#pragma unroll N): the k loop of warp-specialized kernels
  std::string origin;  // the axis / directive this loop comes from
  StmtPtr body;
  // Dealt in turn to the warpgroups of a role (ping-pong): with `dealt` > 1, the one whose
  // index in the role is `dealt_by` runs iterations dealt_by, dealt_by + dealt, ... of
  // [begin, end) step `step`, i.e. from begin + dealt_by * step, step dealt * step.
  int dealt = 1;
  std::string dealt_by;
  // A search: the loop also ends before the first trip where `while_cond` is false (nullptr:
  // it runs to `end`).
  ExprPtr while_cond;
};
struct If : NodeOf<NodeKind::If> { ExprPtr cond; StmtPtr then_body; StmtPtr else_body; };
// One elected lane of warp `warp` (of the block) runs `body` (elect.sync); the other
// threads skip it. `each_warp`: one elected lane of every warp that reaches it (warp unused).
struct ElectOne : NodeOf<NodeKind::ElectOne> { StmtPtr body; ExprPtr warp; bool each_warp = false; };
// The code warpgroups [first_warpgroup, first_warpgroup + warpgroups) of the block run.
struct WarpRole : NodeOf<NodeKind::WarpRole> {
  std::string role;  // "producer", "consumer", "all"
  int first_warpgroup = 0, warpgroups = 1;
  StmtPtr body;
};
struct Comment : NodeOf<NodeKind::Comment> { std::string text; };
// A value bound from here to the end of its scope; `mutable_var`: a variable that Assign may
// change later (the persistent loop's running pipeline count), declared without const.
// `maybe_unused`: a role may not read it (printed [[maybe_unused]], so nvcc does not warn).
struct Let : NodeOf<NodeKind::Let> {
  std::string type, name;
  ExprPtr value;
  bool mutable_var = false, maybe_unused = false;
};
// A new value for a mutable Let's variable.
struct Assign : NodeOf<NodeKind::Assign> { std::string name; ExprPtr value; };

// Abstract: bring operand tile (tile row `tile`, k tile `k_tile`) of batch matrix `batch`
// (nullptr: the problem has one) into pipeline stage `stage`.
// `k_first`: the k tile the loop's first iteration loads (split-K: this split's share), nullptr: 0.
// `first`: the tile's first row (of m or n) where it is not tile * the tile's extent (a contiguous
// group's rows start at its offset); `k_row0` the unit's first row of K where it is not k tile 0's
// and `k_end` the row its loads stop before (a variable-K group's range); nullptr otherwise.
struct LoadTile : NodeOf<NodeKind::LoadTile> {
  rt::Operand operand = rt::Operand::A;
  ExprPtr tile, k_tile, stage, batch, k_first, first, k_row0, k_end;
};
// Abstract: wait until stage `stage` holds its data (`parity`: which fill of the stage), or,
// `to_fill`, until its readers released it so the producer may fill it again (`parity`:
// which release).
struct AcquireStage : NodeOf<NodeKind::AcquireStage> { ExprPtr stage, parity; bool to_fill = false; };
// Abstract: the MMAs of one k tile from stage `stage` into the accumulator; `in_flight`
// groups of MMAs (this one included) may still run when it ends. `k_index`: which k tile of the
// output tile this is (0 for its first; nullptr: not known, the accumulator is zeroed apart) --
// an accumulator in TMEM is not zeroed, the tile's first MMA overwrites it.
// `k_block`: the k tile's index along K (a split's share counted in; nullptr: k_index), whose scale
// factors an FP8 promotion applies.
// `release` (PipelinePlan::release_in_compute): the stage's release, which the MMA selection places
// once the MMAs reading the stage are done. FP8: `k_block` and `batch` (the unit's matrix or group,
// nullptr: one) pick B's factors.
struct ComputeTile : NodeOf<NodeKind::ComputeTile> {
  ExprPtr stage;
  int in_flight = 0;
  ExprPtr k_index, k_block, batch;
  StmtPtr release;
};
// Abstract: wait until every MMA issued so far has completed. `tiles_done` (nullptr: 0): output
// tiles this role finished before, for the phase of a per-tile completion barrier. Where one role
// issues the MMAs and another reads the accumulator (double-buffered TMEM), the issuing role's node
// only says the tile's MMAs are all issued (`waits` false) and the reading role's only waits for
// them (`commits` false).
struct FinishCompute : NodeOf<NodeKind::FinishCompute> {
  ExprPtr tiles_done;
  bool commits = true, waits = true;
};
// Abstract (double-buffered TMEM): the MMAs of the issuing role's tile number `tiles_done` may
// write the accumulator buffer that tile takes, once its previous tile's writeback released it.
struct AcquireAccumulator : NodeOf<NodeKind::AcquireAccumulator> { ExprPtr tiles_done; };
// Abstract: every reader of stage `stage` is done with it; the producer may refill it.
struct ReleaseStage : NodeOf<NodeKind::ReleaseStage> { ExprPtr stage; };
// Abstract: the epilogue and store of the output tile at (m_tile, n_tile) of batch matrix
// `batch` (nullptr: the problem has one).
// `split` (split-K; nullptr: none): which of the CTAs sharing the tile this one is.
// split: which share of the k tiles this CTA reduced (nullptr without split-K); split_when: where
// set, the tile is shared only when it is nonzero (split_k ... tail: the tiles of the last wave).
// `row0`: the tile's first row where it is not m_tile * tile_m, and `row_end` the row its store
// stops before where it is not M (a contiguous group's); nullptr otherwise. `pieces` (stream-K):
// how many CTAs share this tile (`split` is this one's place among them); nullptr: split_k's count.
struct WriteTile : NodeOf<NodeKind::WriteTile> {
  ExprPtr m_tile, n_tile, batch, split, split_when, row0, row_end, pieces;
};

// setmaxnreg: the role's warpgroups give registers back (`increase` false) or take them.
struct SetMaxNReg : NodeOf<NodeKind::SetMaxNReg> { int regs = 0; bool increase = false; };
// Every thread of every CTA of the cluster meets (barrier.cluster arrive + wait), or one half of
// that: every thread arrives (relaxed: a fence.mbarrier_init before it is the release) and later
// waits, with work of its own between the two.
enum class ClusterPart { ArriveAndWait, Arrive, Wait };
struct ClusterSync : NodeOf<NodeKind::ClusterSync> { ClusterPart part = ClusterPart::ArriveAndWait; };

// A named value of a node's index math (an EpilogueStore's, a SyncCopyTile's), printed
// `const type name = value;` where its loop level begins and evaluated there by the simulator
// with the same bindings, so the printed kernel and the simulation compute one index math.
struct IndexLet { std::string type, name; ExprPtr value; };

// A synchronous copy's index math: thread t copies the tile's 16-byte chunks t, t + threads, ...
// below `chunks`; per chunk the lets give its tile row `r` and chunk column `c`, the global `row`
// and `col` of its first element, its swizzle atom `atom` and 16-byte column `chunk16` there, and
// `dst`, its shared address (`tile_smem` is the tile's).
struct CopyIndex {
  int64_t chunks = 0;
  std::vector<IndexLet> chunk;
  ExprPtr inside;   // the chunk is read from global memory (else it stays zero)
  ExprPtr element;  // its first element, counted from the source matrix's first
  ExprPtr valid;    // element loads: elements from `col` to the row's end (the chunk's rest is zero)
};

struct MbarrierInit : NodeOf<NodeKind::MbarrierInit> { BarrierRef bar; int arrivals = 1; };
struct FenceMbarrierInit : NodeOf<NodeKind::FenceMbarrierInit> {};
// `leader_only` (a CTA pair): the pair's even CTA announces `bytes` (both CTAs' loads complete on its
// barrier), the odd one arrives announcing none.
struct MbarrierArriveExpectTx : NodeOf<NodeKind::MbarrierArriveExpectTx> {
  BarrierRef bar;
  int64_t bytes = 0;
  bool leader_only = false;
};
// Arrives on `bar` in this CTA, or (`cta` set) on the barrier at the same offset in CTA
// `cta` of the cluster.
struct MbarrierArrive : NodeOf<NodeKind::MbarrierArrive> { BarrierRef bar; ExprPtr cta; };
struct MbarrierWait : NodeOf<NodeKind::MbarrierWait> { BarrierRef bar; ExprPtr parity; };
// TMA load of one box of tensor map `map` (its box shape is in the launch's tensor maps) at
// (row, col) -- and, for a 3-D map over a batch of matrices, matrix `batch` (nullptr: a 2-D
// map) -- into `dst`; with a `multicast_mask`, into `dst` of every CTA of the cluster whose rank
// bit is set, each completing on its own `bar`.
struct TmaLoad : NodeOf<NodeKind::TmaLoad> {
  rt::Operand map = rt::Operand::A;  // the operand whose tensor map (tensor_map_field) the box comes from
  SmemRef dst;
  ExprPtr row, col;
  BarrierRef bar;
  unsigned multicast_mask = 0;
  // A two-dimensional cluster's multicast: the mask's bits shifted left by this (the receiving
  // CTAs' row or column of the cluster); nullptr: no shift.
  ExprPtr multicast_shift;
  ExprPtr batch;
  ExprPtr group;  // pointer-array groups: the map is this group's of args.group_maps (nullptr: the kernel's own)
  // A CTA pair (cta_group::2): the box lands in this CTA's `dst` but completes on `bar` of the
  // pair's even CTA (the leader, whose MMA reads both CTAs' stages).
  bool to_pair_leader = false;
};
struct TmaStore : NodeOf<NodeKind::TmaStore> {
  rt::Operand map = rt::Operand::D;
  SmemRef src;
  ExprPtr row, col, batch;
  ExprPtr group;  // as TmaLoad's
};
// Pointer-array groups: makes group `group`'s tensor maps (all, or `operand`'s only), written by the
// map builder before the launch, visible to this thread's TMA (fence.proxy.tensormap acquire);
// before their first use.
struct AcquireGroupMaps : NodeOf<NodeKind::AcquireGroupMaps> {
  ExprPtr group;
  std::optional<rt::Operand> operand;
};
struct BulkCommit : NodeOf<NodeKind::BulkCommit> {};
struct BulkWaitRead : NodeOf<NodeKind::BulkWaitRead> { int pending = 0; };
// All threads copy a rows x cols tile (row-major, cols contiguous, 16-byte chunks) from a
// global matrix into the swizzled layout that TMA would write; out-of-bounds elements are
// zero-filled. With 16-byte aligned rows each chunk is one 16-byte load (and a chunk is wholly
// in or out of bounds); otherwise each element is its own load, bounded element by element.
struct SyncCopyTile : NodeOf<NodeKind::SyncCopyTile> {
  std::string source;          // "a" or "b" (GgGemmArgs field)
  SmemRef dst;
  ExprPtr row0, col0;          // first global element
  ExprPtr row_limit, col_limit, ld;  // extents and leading dimension in elements
  int rows = 0, cols = 0, elem_bytes = 2, threads = 128;
  int swizzle_bytes = 128;     // the layout of [cols * elem_bytes / swizzle_bytes][rows][swizzle_bytes]
  int load_bytes = 16;         // bytes per global load: 16, or elem_bytes (rows not 16-byte aligned)
  bool mn_major = false;       // an MN-major operand: the tile's rows run along K
  ExprPtr offset;              // elements from the source pointer to the tile's matrix (batch * stride); nullptr: 0
  CopyIndex index;             // from the fields above (codegen/index_math.h)
};
struct FenceProxyAsync : NodeOf<NodeKind::FenceProxyAsync> {};
struct SyncThreads : NodeOf<NodeKind::SyncThreads> {};
// bar.sync on a named barrier among `threads` threads (a role's warps, not the whole CTA).
// The id may depend on the warpgroup (each ping-pong consumer has its own).
struct NamedBarrierSync : NodeOf<NodeKind::NamedBarrierSync> { ExprPtr id; int threads = 128; };
// bar.arrive: counts this warp's threads toward the barrier's phase without waiting for it
// (a ping-pong consumer passing the turn to the other).
struct NamedBarrierArrive : NodeOf<NodeKind::NamedBarrierArrive> { ExprPtr id; int threads = 128; };
// Per-thread accumulator registers: `blocks` MMA row blocks of `regs` floats each.
struct AccumulatorDecl : NodeOf<NodeKind::AccumulatorDecl> { std::string name; int blocks = 1, regs = 0; };
struct AccumulatorZero : NodeOf<NodeKind::AccumulatorZero> { std::string name; int blocks = 1, regs = 0; };
// wgmma_fence_operand on each accumulator register: the compiler may not move the accumulator's
// reads or writes across it. Before a wgmma fence (the MMAs read what the thread wrote) and after
// a wgmma wait (the thread reads what the MMAs wrote); check_sync requires both.
struct AccumulatorFence : NodeOf<NodeKind::AccumulatorFence> { std::string name; int blocks = 1, regs = 0; };
struct WgmmaFence : NodeOf<NodeKind::WgmmaFence> {};
// How a WGMMA (or tcgen05.mma) operand lies in shared memory: rows swizzled in `swizzle_bytes` (32, 64 or 128),
// 8-row groups 8 x swizzle_bytes apart. K-major: a row per M or N index, K along the row.
// MN-major (the instruction's transpose bit): a row per k, M or N along it in swizzle atoms of
// swizzle_bytes, `atom_bytes` apart (the descriptor's leading byte offset).
struct WgmmaLayout {
  int swizzle_bytes = 128;
  bool mn_major = false;
  int64_t atom_bytes = 0;
};
// The byte offsets of an operand's shared-memory matrix descriptor (wgmma's and tcgen05.mma's
// agree): the leading one (MN-major: between swizzle atoms along M or N; K-major: unused, 16 by
// convention) and the stride one (between 8-row groups: 8 rows of swizzle bytes). The printer
// writes the descriptor from these, and the simulator reads its operands through the descriptor
// they make, so a wrong offset fails the simulation.
struct SmemDescOffsets {
  int64_t leading = 16, stride = 0;
};
SmemDescOffsets smem_desc_offsets(const WgmmaLayout& l);
// One wgmma.mma_async m64nNk16 (k32 for FP8) of one warpgroup; A and B from shared-memory descriptors.
struct WgmmaIssue : NodeOf<NodeKind::WgmmaIssue> {
  int m = 64, n = 0, k = 16;
  std::string dtype;             // "bf16", "f16", "e4m3" or "e5m2"
  std::string accumulator;       // name[block]
  ExprPtr block;
  ExprPtr accumulate;            // nonzero: D += A * B; zero: D = A * B (nullptr: accumulate)
  SmemRef a, b;                  // start of the 64 x 16 A slice and the N x 16 B slice
  WgmmaLayout a_layout, b_layout;
};
// The runtime/device wrapper (wgmma_mma.cuh) an issue calls, "wgmma_m64n256k16_f32_bf16": the
// printer calls it and the emitted file carries that wrapper's section.
std::string wgmma_wrapper_name(const WgmmaIssue& n);
struct WgmmaCommit : NodeOf<NodeKind::WgmmaCommit> {};
struct WgmmaWait : NodeOf<NodeKind::WgmmaWait> { int pending = 0; };
// FP8: a k tile's scale factors into registers before its MMAs, so their loads' latency passes
// while the MMAs run (and the promotion after reads registers only): B's of the tile's (at most
// two) 128-column blocks, args.scale_b[lo] and args.scale_b[hi] (hi nullptr: the tile meets one
// block) into `sb_lo` and `sb_hi`, where `lo` is set; A's of the thread's fragment rows from the
// stage (tile row r's at `row_scales` + 4 r) into `sa[b][h]`, rows as PromoteAccumulator's.
// A's factors that are not staged come from args.scale_a instead (`a_index` set, row_scales not):
// fragment row r's is args.scale_a[a_index + min(a_row + r, a_last) / a_row_block * a_row_stride]
// (per row: a_row_block 1, stride 1; per 1x128 K-major: stride the k blocks; per 128x128: a_row_block
// 128), or the one args.scale_a[a_index] where a_row_block is 0 (per tensor).
struct LoadScaleFactors : NodeOf<NodeKind::LoadScaleFactors> {
  ExprPtr lo, hi;
  std::optional<SmemRef> row_scales;
  ExprPtr row0;
  int blocks = 1;
  ExprPtr a_index, a_row, a_last, a_row_stride;
  int64_t a_row_block = 0;
  // B's factors per column of D and k block (per 1x128; `cols_index` set): tile column c's is
  // args.scale_b[cols_index + min(cols_first + c, cols_last) * cols_stride], each thread's `cols` / 4
  // columns (as PromoteAccumulator's) into sbc[j][e].
  ExprPtr cols_index, cols_first, cols_last, cols_stride;
  int cols = 0;
  // `lo_next` set: sb_lo and sb_hi are the registers the k step before loaded (a k loop's first
  // step: PrefetchScaleFactors before the loop), and this step loads the next step's, args.scale_b
  // [lo_next] and [hi_next], into them, so the global load's latency is a k step's MMAs behind it.
  ExprPtr lo_next, hi_next;
};
// B's factors of a k loop's first step (args.scale_b[lo], [hi]; hi unset: lo's), loaded before the
// loop into the registers its LoadScaleFactors (lo_next) take them from and refill.
struct PrefetchScaleFactors : NodeOf<NodeKind::PrefetchScaleFactors> {
  ExprPtr lo, hi;
};
// FP8 promotion (DeepGEMM; DeepSeek-V3 report 3.3.2): after a k tile's MMAs into `from` completed,
// each register of this thread's wgmma fragment is added into `into` times its row's and its
// column's scale factor. Register i of block b holds tile row row0 + 64 b + 16 (warp % 4) +
// lane / 4 + 8 ((i / 2) % 2) and column 8 (i / 4) + 2 (lane % 4) + i % 2. The factors are
// LoadScaleFactors' registers: sa[b][h] where `row_scaled` (else 1); where `col_split` is set,
// sb_lo for the tile's columns before it and sb_hi from there on (else 1).
// `block` set: one 64-row block (a wave, DeepGEMM's WAVE_BLOCK_M): `from` holds that block alone
// (from[0]) and is added into into[block].
struct PromoteAccumulator : NodeOf<NodeKind::PromoteAccumulator> {
  std::string from = "acc_k", into = "acc";
  int blocks = 1, regs = 0;
  ExprPtr block;
  bool row_scaled = false;
  ExprPtr col_split;
  bool col_scaled = false;  // each column times its own factor, sbc[j][e] (LoadScaleFactors' cols)
};

// FP8 with B's factors per row of B (per column of D): they are constant along K, so the finished
// accumulator's columns are multiplied once after the k loop (the promotion applies A's alone):
// tile column c's factor is args.scale_b[min(first + c, last)]. Columns as PromoteAccumulator's.
struct ScaleAccumulatorColumns : NodeOf<NodeKind::ScaleAccumulatorColumns> {
  std::string name = "acc";
  int blocks = 1, regs = 0;
  ExprPtr first, last;
};

// An epilogue op applied to each accumulator value in registers. ActGrad multiplies by the
// derivative of `activation` (Relu, Gelu or Silu) at the value C's path reads (a pre-activation).
struct EpilogueOp {
  enum class Kind { Scale, AddScaled, AddBiasRows, AddBiasCols, Relu, Gelu, Silu, ActGrad } kind = Kind::Relu;
  double scalar = 0.0;       // Scale: alpha; AddScaled: beta
  std::string operand_type;  // C, pre-activation or bias element type: "bf16", "f16", "f32"
  Kind activation = Kind::Relu;  // ActGrad
  bool reads_c() const { return kind == Kind::AddScaled || kind == Kind::ActGrad; }
};

// A reduction of the epilogue's values into a side vector (Definition::add_reduction): along rows,
// one fp32 per row of D, the sum over its columns (of the values, or of their squares); along
// columns, one per column. The values are those after the first `after` ops, in fp32, unrounded.
struct EpilogueReduction {
  enum class Along { Rows, Cols };
  Along along = Along::Rows;
  bool squares = false;
  int after = 0;
};
// A reduction's global workspace: a record per output tile slot (as split-K's: batch, m tile,
// n tile), each two 32-bit ticket counters (record b's: row band b's, column band b's; zero
// between launches) then `row_floats` partial row sums (one per tile row) and `col_floats`
// partial column sums (one per tile column for each warp holding the tile).
// Records of one size: where M or N is read at run time the slots' count varies between launches
// of one workspace, and a word that is a counter in one launch is a counter in every launch.
struct ReductionWorkspace {
  int64_t slots = 0;      // for the planned problem
  ExprPtr slot_count;     // as the kernel counts them
  int row_floats = 0, col_floats = 0;
  int64_t slot_floats() const { return int64_t(row_floats) + col_floats; }
  int64_t record_words() const { return 2 + slot_floats(); }
  int64_t bytes() const { return slots * record_words() * 4; }
  ExprPtr count() const { return slot_count ? slot_count : imm(slots); }
};
// What an EpilogueStore that reduces (EpilogueStore::reduce) does with its values: each thread sums
// its values of a row (column) in registers, the lanes holding the same row (column) add theirs by
// shuffles over `lane_masks` (xor), and one lane stores the sum at the partial's workspace float.
struct ReduceInto {
  EpilogueReduction::Along along = EpilogueReduction::Along::Rows;
  bool squares = false;
  std::vector<int> lane_masks;  // rows: 1, 2 (a quad holds a row); columns: 4, 8, 16
  ExprPtr tile_floats;          // the workspace float of this tile slot's first partial
  int tile_n = 0;               // columns: the partial rows' length
  int tile_m = 0;               // rows out of TMEM: the partial columns' length (one per chunk of columns)
  int first_thread = 0;         // columns: the warp's partial row is (threadIdx.x - first_thread) / 32
};
// The last CTA of a band adds up the band's partials, in slot order (and warp order), for each of
// its `elements` rows (columns) from `element0` below `limit`, and stores each sum, fp32, at
// `out` + `out_offset` + the row (column). Slot t of the band is `first_slot` + t `slot_stride`,
// t < `slots_in_band`; each holds `parts` partials per element, `part_stride` floats apart, the
// first at `part0` within the slot. Threads [first_thread, first_thread + threads) share the work.
struct ReductionCombine : NodeOf<NodeKind::ReductionCombine> {
  ReductionWorkspace ws;
  EpilogueReduction::Along along = EpilogueReduction::Along::Rows;
  ExprPtr first_slot, slot_stride, slots_in_band;
  int parts = 1, part_stride = 0, part0 = 0;
  int elements = 0;
  ExprPtr element0, limit, out_offset;
  std::string out;  // "args.row_reduction" or "args.col_reduction"
  int threads = 128, first_thread = 0;
};

// Which accumulator values a thread holds in registers. Wgmma: wgmma's fragment (rows lane/4 and
// lane/4 + 8 of each 16-row quarter of a 64-row block, column pairs); all columns of the tile.
// TmemLanes: what tcgen05.ld.32x32b loaded from a TMEM accumulator of `mma_m`-row MMA blocks:
// one row per thread, registers 0.. the store's columns (see sm100::tmem_row).
enum class Fragment { Wgmma, TmemLanes };

// Where an EpilogueStore's values come from and go, as expressions over threadIdx.x, the printed
// loops' variables (Wgmma: group j, then b and h; stmatrix: group jj, then b and q; TmemLanes:
// pair p) and the lets before (index_epilogue_store builds them). The printer declares them; the
// simulator evaluates them and moves values as the hardware does (wgmma's register fragment,
// tcgen05.ld's lanes, stmatrix's row addresses), so a wrong row, column, register, bound or
// address in the printed kernel is a wrong result in simulation. Names read by both:
// `reg` (register of a pair's first value: of block b, or of the TMEM load), `row`, `col`, `col1`
// (global), `dst` (its staging address), `col_g`/`col_g1` (stmatrix's column bias of group half
// g), `row_dst` (stmatrix: this lane's row address). `staging` is the buffer's address. Where each
// value of the pair goes in global memory is printed where it is used, inside the bound's `if`.
struct EpilogueIndex {
  std::vector<IndexLet> thread;      // once per thread
  std::vector<IndexLet> group;       // per column group (8 columns; 16 under stmatrix; a TMEM pair)
  std::vector<IndexLet> bias_group;  // stmatrix with a column bias: per half g of the group
  std::vector<IndexLet> pair;        // per fragment pair: (b, h); (b, q) under stmatrix
  std::vector<IndexLet> matrix_row;  // stmatrix, per block b: this lane's row of the x4 store
  ExprPtr group_begin, group_end;    // the group loop's range
  ExprPtr lane_guard;                // TmemLanes: this thread's row is its warpgroup's (nullptr: all are)
  // Per value e of the pair (after the pair's lets): whether it lies inside D, its element of D
  // (unstaged) and of C (beta * C from global memory); nullptr where not used.
  std::array<ExprPtr, 2> inside, d_element, c_element;
  // A reducing store (EpilogueStore::reduce): the workspace float of this thread's partial sum of
  // its row of block b, half h (over the thread's lets and b, h), or of value e of its column pair
  // (over the group's lets).
  ExprPtr partial_row;
  std::array<ExprPtr, 2> partial_col;
};

// Applies `ops` to the accumulator fragments of this thread in columns [col_begin, col_begin +
// cols) of the tile and stores the results: straight to global memory with bounds predicates,
// or into the swizzled staging buffer that a TMA store then writes out (the store clips at the
// matrix edge).
struct EpilogueStore : NodeOf<NodeKind::EpilogueStore> {
  Fragment fragment = Fragment::Wgmma;
  int lane_row0 = 0;              // TmemLanes: the tile row of the first lane of the TMEM columns read
  ExprPtr staging_col0;           // staged: the tile column at the buffer's column 0 (nullptr: col_begin)
  int staging_cols = 0;           // staged: the buffer's columns when a store writes a chunk of them (0: cols)
  std::string accumulator;
  int blocks = 1, mma_n = 0, mma_m = 64;
  int warpgroup_rows = 0;         // rows of the tile owned by one warpgroup (blocks * 64)
  ExprPtr warpgroup;              // which consumer warpgroup of the role this thread is in
  ExprPtr row0, col0;             // first element of the tile
  ExprPtr row_end;                // unstaged: the row the stores stop before (nullptr: M)
  ExprPtr col_begin;              // first column of the tile this store covers (a subtile)
  int cols = 0;                   // columns it covers
  std::vector<EpilogueOp> ops;
  std::string out_type;           // "bf16", "f16", "f32"
  rt::Operand output = rt::Operand::D;  // D, or Aux (a saved output, laid out as D)
  bool staged = false;
  // staged: this warpgroup's rows of the subtile, as column chunks of
  // [warpgroup_rows][staging_swizzle_bytes] (row and column relative to the warpgroup's band
  // and the subtile)
  SmemRef staging;
  int staging_swizzle_bytes = 128;
  // staged 16-bit output in 16-column steps: each warp writes 16x16 blocks with stmatrix.x4
  // (the fragment pairs are its 8x8 matrices) instead of one st.shared per pair
  bool stmatrix = false;
  // staged transposed (a column-major output, StagingShape::transposed): the buffer's rows are the
  // subtile's columns, [cols][warpgroup_rows] in chunks of swizzle bytes, written by stmatrix.trans
  bool transposed_staging = false;
  // a symmetric product's mirror (D = A * A^T): the tile staged transposed and stored at the
  // mirrored box of the row-major D, where its columns are D's rows
  bool mirror = false;
  bool c_staged = false;          // AddScaled / ActGrad read C from the staging buffer (a TMA load put it there)
  // Set: the values are not stored but reduced into a workspace partial (unstaged, wgmma fragment)
  std::optional<ReduceInto> reduce;
  bool column_major = false;      // unstaged: D and C at [col * ld + row], not [row * ld + col]
  ExprPtr ld, c_ld;               // unstaged: elements between stored rows of D and of C
  ExprPtr d_offset, c_offset;     // elements from args.d / args.c to this tile's matrix; nullptr: 0
  EpilogueIndex index;            // from the fields above, last in lowering
};

// Split-K's global workspace: a record per slot (an output tile of the problem), its 32-bit ticket
// counter (zero between launches) then its fp32 partial sums [splits][per_thread][threads] (each
// thread's accumulator registers strided by `threads` so the stores coalesce). Records of one size,
// as ReductionWorkspace's: a word that is a counter in one launch is one in every launch.
struct SplitKWorkspace {
  int64_t slots = 0;      // for the planned problem
  ExprPtr slot_count;     // as the kernel counts them: `slots`, or of args.m / args.n read at run time
  int splits = 2, per_thread = 0, threads = 128;
  int64_t tile_floats() const { return int64_t(per_thread) * threads; }
  int64_t partial_floats() const { return slots * splits * tile_floats(); }
  // The float holding register `reg` of thread `thread` in split `split` of slot `slot`, from the
  // partials' start.
  int64_t partial(int64_t slot, int64_t split, int64_t reg, int64_t thread) const {
    return (slot * splits + split) * tile_floats() + reg * threads + thread;
  }
  int64_t bytes() const { return partial_floats() * 4 + slots * 4; }
  ExprPtr count() const { return slot_count ? slot_count : imm(slots); }
  int64_t record_words() const { return 1 + splits * tile_floats(); }
};
// The threads holding a tile are threadIdx.x in [first_thread, first_thread + ws.threads).
// This thread's accumulator (`blocks` x `regs` floats) as split `split` of tile slot `slot`,
// fenced: visible device-wide before the ticket.
// A TMEM accumulator (`fragment` TmemLanes) goes a chunk at a time: `accumulator` is the chunk's
// registers (a tcgen05.ld.32x32b's, regs of them, blocks 1) and `element0` the per-thread index of
// its first (column set x tile n + column), where the wgmma fragment's registers start at 0.
struct PartialStore : NodeOf<NodeKind::PartialStore> {
  std::string accumulator;
  int blocks = 1, regs = 0, first_thread = 0;
  SplitKWorkspace ws;
  ExprPtr slot, split;
  Fragment fragment = Fragment::Wgmma;
  ExprPtr element0;  // nullptr: 0
};
// After every thread holding the tile stored its share of a result shared between CTAs (a barrier
// before this), the first thread takes a ticket on the 32-bit counter `counter` (words from the
// workspace's start: in one of `counters` records of `record_words`); all `threads` threads learn at
// named barrier `barrier` (a reduction) whether it was the `arrivals`-th, in `result` (a bool the
// guard after reads). The last resets the counter for the next launch. With `when` (CTA-uniform)
// zero, no ticket is taken and `result` is true: the tile is not shared (split_k ... tail's whole
// tiles). Split-K's counters are per output tile; a reduction's per row (column) band.
// With `claim`, the ticket is taken before anything is stored (split-K in two, `claim_is_last`):
// nothing is reset here; the last waits in AwaitPartials, the others store and count in
// PartialsStored.
struct TileTicket : NodeOf<NodeKind::TileTicket> {
  ExprPtr counter, arrivals;
  ExprPtr counters;       // records, for the simulator's bounds check
  int64_t record_words = 1;
  int threads = 128, first_thread = 0;
  ExprPtr barrier, when;
  std::string result = "split_last";
  bool claim = false;
};
// A CTA that claimed a ticket and is not the last, after its threads stored and fenced their
// partial sums of `slot` as split `split` and met: the first thread counts them stored on the
// counter (its high 16 bits). `slot` and `split` tell the simulator whose sums became visible.
struct PartialsStored : NodeOf<NodeKind::PartialsStored> {
  ExprPtr counter, slot, split;
  int first_thread = 0;
};
// The CTA that claimed the last ticket: the first thread waits until the other `arrivals` - 1
// counted their sums stored and resets the counter; the `threads` threads meet at named barrier
// `barrier` and acquire those stores.
struct AwaitPartials : NodeOf<NodeKind::AwaitPartials> {
  ExprPtr counter, arrivals, barrier;
  int threads = 128, first_thread = 0;
};
// The accumulator becomes the sum of every split's partial sums of the slot, added in split order:
// the first `pieces` splits' (stream-K: the CTAs that shared the tile), or all ws.splits. With `own`
// (two splits, claimed first) the accumulator holds split `own`'s sums, which were never stored: it
// adds the other split's, which gives split order's bits either way (0 + p0 + p1, commuted).
struct PartialReduce : NodeOf<NodeKind::PartialReduce> {
  std::string accumulator;
  int blocks = 1, regs = 0, first_thread = 0;
  SplitKWorkspace ws;
  ExprPtr slot, pieces, own;
  Fragment fragment = Fragment::Wgmma;  // as PartialStore's
  ExprPtr element0;
};

// ---- Blackwell (sm_100a): Tensor Memory and tcgen05. TMEM holds a CTA's accumulator: 128 lanes
// (rows) x 512 columns of 32-bit cells; warp w of a warpgroup may read lanes [32 (w % 4), +32) only.
// The shared-memory word tcgen05.alloc writes the allocated address to: "tmem_slot".
std::string tmem_slot_name();
// Warp `warp` allocates `columns` TMEM columns (whole warp; a power of 2, 32..512), writes their
// address to the slot, and relinquishes the CTA's permit to allocate more.
// `pair`: .cta_group::2, the warp of each CTA of a pair allocating together (a pair's MMAs write both).
struct TmemAlloc : NodeOf<NodeKind::TmemAlloc> { ExprPtr warp; int columns = 32; bool pair = false; };
// Every thread reads the address from the slot into `name` (after a barrier that follows the alloc).
struct TmemBaseLoad : NodeOf<NodeKind::TmemBaseLoad> { std::string name = "tmem_base"; };
// Warp `warp` (the allocating one) frees the `columns` columns at `base`.
struct TmemDealloc : NodeOf<NodeKind::TmemDealloc> {
  ExprPtr warp;
  int columns = 32;
  std::string base = "tmem_base";
  bool pair = false;  // .cta_group::2, as the allocation
};
// tcgen05.fence::before_thread_sync (orders this thread's tcgen05 operations before the barrier
// that follows) or, `after`, ::after_thread_sync (its later ones after the barrier or wait before).
struct Tcgen05Fence : NodeOf<NodeKind::Tcgen05Fence> { bool after = false; };
// One tcgen05.mma.cta_group::1.kind::f16 with an f32 accumulator, issued by one thread: D[m x n] at
// TMEM (lane, column) from `base` (+)= A[m x 16] * B[16 x n], A and B from shared-memory
// descriptors of the given layouts. `accumulate` == 0: D is overwritten (a tile's first MMA).
struct Tcgen05Mma : NodeOf<NodeKind::Tcgen05Mma> {
  int m = 128, n = 0, k = 16;
  std::string dtype;             // "bf16" or "f16"
  std::string base = "tmem_base";
  ExprPtr lane, column;          // where D starts in TMEM
  SmemRef a, b;                  // start of the m x 16 A slice and the n x 16 B slice
  WgmmaLayout a_layout, b_layout;
  ExprPtr accumulate;
  // .cta_group::2 (m 256): issued by the pair's even CTA; A's rows 128.. and B's second half are the
  // odd CTA's, at the same shared-memory offsets; D's rows 128.. land in the odd CTA's TMEM.
  bool pair = false;
  // FP8 (dtype e4m3/e5m2): .kind::mxf8f6f4.block_scale, each row of A and of B times its UE8M0
  // factor: A's row r's in TMEM column scale_a_column + r / 32 (lane r % 32 of every quarter), byte
  // scale_id; B's likewise from scale_b_column (a tcgen05.cp put them there).
  ExprPtr scale_a_column, scale_b_column, scale_id;
  bool block_scaled() const { return scale_a_column != nullptr; }
};
// tcgen05.commit: one arrival on `bar` once every tcgen05.mma the executing thread issued before
// has completed; with a `multicast_mask`, on the barrier at the same offset in every CTA of the
// cluster whose rank bit is set.
// `pair`: .cta_group::2, tracking the pair's MMAs this thread issued.
struct Tcgen05Commit : NodeOf<NodeKind::Tcgen05Commit> { BarrierRef bar; unsigned multicast_mask = 0; bool pair = false; };
// tcgen05.ld.32x32b.x`columns` (+ tcgen05.wait::ld): the warp's 32 lanes from `lane` (the warp's
// quarter), columns [column, column + columns) from `base`, into `float dst[columns]` (thread t:
// lane + t).
struct TmemLoad : NodeOf<NodeKind::TmemLoad> {
  std::string dst = "acc_t", base = "tmem_base";
  ExprPtr lane, column;
  int columns = 32;
  // Where set and true, no MMA wrote the accumulator for this unit (a group with no K): the values
  // are zeros, whatever an earlier unit left in TMEM.
  ExprPtr zero_when;
};
// tcgen05.cp.cta_group::1.32x128b.warpx4: 512 bytes of shared memory from `src` (32 rows of 16
// bytes, unswizzled) into TMEM columns [column, column + 4) of `base`: row i into lane i of every
// 32-lane quarter. Issued by one thread; it runs before that thread's later tcgen05.mma (the PTX
// ISA orders tcgen05.cp -> tcgen05.mma from one thread) and a tcgen05.commit tracks it as an MMA.
// `pair` (.cta_group::2, issued by the pair's even CTA): each CTA's TMEM from its own shared
// memory at `src`'s offset.
struct Tcgen05Copy : NodeOf<NodeKind::Tcgen05Copy> {
  std::string base = "tmem_base";
  SmemRef src;
  ExprPtr column;
  bool pair = false;
};
// True when `s` holds a tcgen05 or TMEM node (the kernel needs the sm_100a helpers).
bool uses_tcgen05(const StmtPtr& s);

// ---- construction
template <class T, class... Args>
StmtPtr make(Args&&... args) {
  auto n = std::make_shared<T>();
  if constexpr (sizeof...(Args) > 0) *n = T{{}, std::forward<Args>(args)...};
  return n;
}
StmtPtr block(std::vector<StmtPtr> body);
StmtPtr comment(std::string text);
// for (var = begin; var < end && cond; ++var) body: a search that stops at the first trip where
// `cond` (of var and what the body assigns) is false.
StmtPtr search_loop(std::string var, ExprPtr begin, ExprPtr end, ExprPtr cond, StmtPtr body, std::string origin);
StmtPtr for_loop(std::string var, ExprPtr begin, ExprPtr end, StmtPtr body, std::string origin = "",
                 bool unroll = false);
StmtPtr if_then(ExprPtr cond, StmtPtr then_body, StmtPtr else_body = nullptr);
StmtPtr let(std::string name, ExprPtr value, std::string type = "int");
StmtPtr mutable_let(std::string name, ExprPtr value, std::string type = "int");
StmtPtr assign(std::string name, ExprPtr value);
StmtPtr elect_one(StmtPtr body, ExprPtr warp = nullptr);  // warp 0 by default
StmtPtr elect_one_each_warp(StmtPtr body);
StmtPtr warp_role(std::string role, int first_warpgroup, int warpgroups, StmtPtr body);
// Where the running warpgroup starts a loop and how far it steps: `begin` and `step`, or for a
// dealt loop its own share (begin + dealt_by * step, dealt * step).
ExprPtr own_begin(const For& f);
ExprPtr own_step(const For& f);

template <class T>
const T* as(const StmtPtr& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

// ---- traversal
class Visitor {
 public:
  virtual ~Visitor() = default;
  void visit(const StmtPtr& s);
#define GG_KIR_VISIT(N) virtual void visit_##N(const N& n);
  GG_KIR_NODES(GG_KIR_VISIT)
#undef GG_KIR_VISIT
};

// Rebuilds a tree bottom-up; a handler returns a replacement (nullptr deletes the statement).
class Mutator {
 public:
  virtual ~Mutator() = default;
  StmtPtr mutate(const StmtPtr& s);
#define GG_KIR_MUTATE(N) virtual StmtPtr mutate_##N(const std::shared_ptr<const N>& n);
  GG_KIR_NODES(GG_KIR_MUTATE)
#undef GG_KIR_MUTATE
};

// A Mutator that knows whether it is inside an ElectOne (code one elected thread runs: a
// producer's or an MMA warp's loop), where a pass must not elect a thread again.
class ElectionAwareMutator : public Mutator {
 public:
  StmtPtr mutate_ElectOne(const std::shared_ptr<const ElectOne>& e) override;

 protected:
  bool elected_ = false;
};

// The IR as indented text (`--dump-after`); structural equality compares these dumps, which
// print every field of every node.
std::string dump(const StmtPtr& s);
bool structurally_equal(const StmtPtr& a, const StmtPtr& b);

}  // namespace gg::kir
