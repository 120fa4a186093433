#pragma once
// The warp roles and the shared-memory tile layouts a schedule fixes, each derived once, here.
// The schedule analysis (analyze_schedule.h) holds them; the resource summary, explain's loop
// nests and the kernel plan are built from these values instead of deriving their own.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/device_limits.h"
#include "dsl/schedule.h"

namespace gg {

// One warp role: the warpgroups that run it, their registers, what they do.
struct RoleShape {
  std::string name;           // "all" without warp specialization, else "producer" or "consumer"
  int first_warpgroup = 0, warpgroups = 1;
  int regs = 0;               // per thread: the setmaxnreg target when declared, else the launch's cap
  bool declared = false;      // setmaxnreg (warp_specialize) sets the count
  bool increase = false;      // setmaxnreg.inc (take registers) or .dec (give them back)
  bool issues_loads = false, computes = false;
  int accumulator_regs = 0;   // fp32 accumulator registers per thread (0 in TMEM or for the producer)
  int threads() const { return warpgroups * kWarpgroupThreads; }
};

// An m256 tcgen05.mma (sm_100a) spans the two CTAs of a cluster pair: each CTA holds 128 rows of
// A and half of B's tile, the even CTA issues, and each CTA's TMEM gets its 128 rows.
bool cta_pair_mma(const Schedule& s);
// The CTAs of the schedule's cluster that share operand `operand`'s tile (0: A, 1: B) by
// multicast: the whole cluster where one operand is multicast; in a cluster X Y 1 multicasting
// both, A's Y CTAs along n and B's X along m; 1 for an operand not multicast.
int multicast_ctas(const Schedule& s, int operand);
// Whether the producer warpgroup's second warp issues the MMAs (an MMA warp) while the consumers
// only write the accumulator back: a TMEM accumulator handed over through mbarriers, where it has
// two buffers (accumulator_buffers 2) or spans a CTA pair (whose peer's writeback the leader's MMAs
// must wait for). Not with ping-pong consumers, which issue their own.
bool mma_warp_issues(const Schedule& s);

// Without warp_specialize one "all" role of every warpgroup loads and computes; with it,
// warpgroup 0 is the TMA producer and warpgroups 1.. the consumers.
std::vector<RoleShape> role_shapes(const Schedule& s, const DeviceLimits& limits);
int total_threads(const std::vector<RoleShape>& roles);

// A tile in shared memory as TMA writes it and WGMMA or a TMA store reads it: each row's
// contiguous bytes are cut into `atoms` swizzle atoms of `swizzle_bytes`, laid out
// [atoms][rows][swizzle_bytes]. A TMA box is one atom wide and `box_rows` tall.
struct SmemTileLayout {
  // An MN-major operand's rows run along K and its rows' bytes along M or N (the WGMMA
  // transpose); otherwise rows run along M or N and bytes along K.
  bool mn_major = false;
  int elem_bytes = 2;
  int64_t rows = 0;
  int64_t row_bytes = 0;
  int swizzle_bytes = 0;      // 32, 64 or 128; 0 when the row is no whole number of atoms
  int64_t box_rows = 0;       // rows one TMA box moves (a multicast slice, a warpgroup's band)
  int atoms() const { return swizzle_bytes > 0 ? static_cast<int>(row_bytes / swizzle_bytes) : 0; }
  int atom_cols() const { return swizzle_bytes / elem_bytes; }
  int64_t atom_bytes() const { return rows * swizzle_bytes; }  // one atom of every row
  int64_t bytes() const { return rows * row_bytes; }
  int64_t offset(int64_t atom, int64_t row) const { return atom * atom_bytes() + row * swizzle_bytes; }
  // The operand tile's extent along M or N (A: tile m, B: tile n) and along K.
  int64_t mn_extent() const { return mn_major ? row_bytes / elem_bytes : rows; }
  int64_t k_extent() const { return mn_major ? rows : row_bytes / elem_bytes; }
};

// An MMA operand's stage (0: A, 1: B): rows along M or N of K elements (K-major), or along K of
// M or N elements (MN-major). Rows of 32 or 64 bytes take that swizzle, longer rows are cut into
// 128-byte atoms; other widths get swizzle 0. Under multicast of a K-major operand each CTA's
// TMA box is its slice of the rows.
SmemTileLayout operand_layout(const Schedule& s, int operand);

// How the output tile is staged for its TMA store. Each consumer warpgroup stages the rows it
// computes (its band of the tile, or under ping-pong whole tiles) on its own, in subtiles of
// `cols` columns, each into the next of its `buffers` buffers. A buffer's layout takes the
// widest of 128, 64, 32-byte atoms dividing a subtile row; each atom column is one TMA box.
// Without store_subtile a subtile is the whole row band and there is one buffer. A column-major
// output is staged transposed (`transposed`): a buffer's rows are the subtile's columns and its
// row bytes the band's rows, as the output lies, written by stmatrix.trans.
struct StagingShape {
  int owners = 1;             // consumer warpgroups, each with its own buffers, barrier and C barriers
  int64_t cols = 0;
  int buffers = 1;
  int64_t subtiles = 1;       // per tile: tile n / cols
  bool transposed = false;
  SmemTileLayout buffer;      // one buffer: rows x cols of the output type (transposed: cols x rows)
  // the tile's rows one warpgroup stages (its band)
  int64_t rows() const { return transposed ? buffer.row_bytes / buffer.elem_bytes : buffer.rows; }
  int64_t bytes() const { return owners * buffers * buffer.bytes(); }
  int count() const { return owners * buffers; }  // buffers in the CTA, each with its C barrier
};
StagingShape staging_shape(const Schedule& s);

// The promotion (DeepGEMM's, for FP8): the MMAs of each interval of K go to a second accumulator,
// added into the fp32 one (FP8: times the k block's scale factors) after the interval. WGMMA's FP8
// accumulation keeps fewer bits than fp32, and its fp32 one truncates, so 16-bit operands with a
// long k loop promote too where the schedule asks. The interval in elements of K, 0 for none
// (FP8's default 128, 16-bit operands' none).
int64_t promotion_interval_of(const Schedule& s);
// The promotion's registers per thread: its accumulator, one 64-row block of the tile's columns over
// a warpgroup's 128 threads (a warpgroup with several blocks promotes them in waves), and with B's
// factors per 1x128 each thread's columns' factors of the k block; 0 without a promotion.
int promotion_regs(const Schedule& s);
// An FP8 A scaled per row and 128 of K, MN-major (DeepGEMM's layout): a stage holds its factors for the tile's rows and the
// stage's k block, one row of tile m fp32 values (one TMA box, unswizzled); nullopt otherwise.
// With UE8M0 factors (ScaleFormat::Ue8m0, sm_100a's block-scaled MMA) it is ue8m0_scale_layout's.
std::optional<SmemTileLayout> scale_a_layout(const Schedule& s);
// B's factors per stage: only UE8M0 ones travel with the stages (ue8m0_scale_layout); nullopt otherwise.
std::optional<SmemTileLayout> scale_b_layout(const Schedule& s);
// An operand's (0: A, 1: B) UE8M0 factors per stage: the atoms of the tile's rows that hold the
// stage's k block, one per 128 rows, 512 bytes each, unswizzled, exactly as tcgen05.cp copies them
// into TMEM (a row of 128 words per atom; nullopt without UE8M0 factors).
std::optional<SmemTileLayout> ue8m0_scale_layout(const Schedule& s, int operand);
// A contiguous group's A factors travel in boxes of this many (128 bytes each; scale_a_layout).
inline constexpr int64_t kScaleBoxCols = 32;

}  // namespace gg
