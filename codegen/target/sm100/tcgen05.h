#pragma once
// sm_100a instruction selection and accumulator placement: tcgen05.mma issued by one thread from
// shared-memory descriptors into an accumulator in Tensor Memory, tcgen05.commit onto mbarriers
// (a stage's release, the tile's completion), TMEM allocated for the CTA before the role branch
// and freed after it, and the epilogue's tcgen05.ld of the accumulator into registers.
#include <functional>
#include <memory>

#include "codegen/kernel.h"

namespace gg::sm100 {

inline constexpr int kTcgen05K = 16;   // .kind::f16: K 16 per instruction
inline constexpr int kTcgen05KFp8 = 32;  // .kind::mxf8f6f4: K 32 per instruction
inline constexpr int kTmemLanes = 128;
inline constexpr int kLanesPerWarp = 32;  // tcgen05.ld.32x32b: a warp's quarter of the lanes

// Where the tile's accumulator lies in TMEM: `blocks` MMA blocks of `mma_m` rows by the tile's
// columns. An m128 block fills all 128 lanes (row r in lane r); an m64 block half of each warp's
// 32 lanes (row r in lane 32 (r / 16) + r % 16), and two of them share columns, the second in
// lanes 16..31 of each quarter (PTX ISA, tcgen05 data-path layouts; CUTLASS's tmem_frg for 1-SM
// M=64, TmemAllocMode::Interleaved, cute/atom/mma_traits_sm100_frag.hpp). Blocks that do not fit
// 128 lanes take the next `tile_n` columns: a "column set" of 128 rows.
struct TmemPlacement {
  int mma_m = 128, tile_m = 128, tile_n = 0;
  int blocks() const { return tile_m / mma_m; }
  int blocks_per_set() const { return kTmemLanes / mma_m; }
  int column_sets() const { return (tile_m + kTmemLanes - 1) / kTmemLanes; }
  int columns() const { return column_sets() * tile_n; }
};
TmemPlacement tmem_placement(const KernelPlan& p);

// The warp whose elected thread issues the tile's tcgen05.mma and commits (the computing role's
// first warp) and which allocates and frees TMEM.
int mma_warp(const KernelPlan& p);

// Ping-pong consumers each own an accumulator (its TMEM columns, its mma_done barrier, its first
// warp's thread issuing and committing its MMAs); otherwise the role shares one. As the resource
// summary counted them (summarize_resources decides), so the plan and the summary cannot disagree.
int tmem_accumulators(const KernelPlan& p);
// The warp whose elected thread issues this warpgroup's MMAs (and waits for their stages): the
// role's first, or a ping-pong consumer's own first warp.
kir::ExprPtr issuing_warp(const KernelPlan& p);
// Double-buffered TMEM: the producer warpgroup's warp that issues every tile's MMAs, beside the
// loading warp (TIRx step 10's MMA warp).
int mma_issuing_warp(const KernelPlan& p);

// Replaces ComputeTile by the elected thread's tcgen05.mma sequence over the stage, ReleaseStage
// by its tcgen05.commit onto the stage's empty barrier, FinishCompute by a commit onto mma_done and
// every thread's wait for it; allocates TMEM before `body` and frees it after.
kir::StmtPtr select_tcgen05(const KernelPlan& p, const kir::StmtPtr& body);

// Split-K's reduction of one loaded chunk of a TMEM accumulator into its registers, before the
// chunk is stored: given the load and the chunk's first per-thread partial index (element0).
using ChunkReduce = std::function<kir::StmtPtr(const kir::TmemLoad&, const kir::ExprPtr&)>;

// The epilogue store `store` (its columns, wgmma's fields) reading a TMEM accumulator instead:
// per column set, chunks of columns loaded by tcgen05.ld.32x32b into registers, each (after
// `reduce`, where split-K shares the tile) applied and stored by an EpilogueStore of the TmemLanes
// fragment.
kir::StmtPtr tmem_store(const KernelPlan& p, const kir::EpilogueStore& store, const ChunkReduce& reduce = {});

// The columns one tcgen05.ld of a `cols`-column read takes at a time (the widest of 32, 16, 8 that
// divides them; split-K's at most 16).
int tmem_chunk_columns(const KernelPlan& p, int64_t cols);

// Split-K: this split's partial sums out of a TMEM accumulator, chunk by chunk (each chunk loaded,
// then stored as `prototype` says, at its per-thread partial index); and how many partial sums a
// thread holds (each thread loads its lane's columns of every column set).
kir::StmtPtr tmem_partial_store(const KernelPlan& p, const kir::PartialStore& prototype);
int tmem_partials_per_thread(const KernelPlan& p);

// After a tile's epilogue, when more follow on this CTA: every thread's TMEM reads are ordered
// before the next tile's MMAs overwrite the accumulator (fence, then a barrier of the computing
// role: the CTA's, or with warp roles the consumers' named barrier).
kir::StmtPtr release_accumulator(const KernelPlan& p);

}  // namespace gg::sm100
