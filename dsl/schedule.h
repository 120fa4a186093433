#pragma once
// Schedule primitives. Each call validates its arguments against the definition and the
// axes that exist at that point, then records a Directive; lowering applies them later.
// A schedule is data: it prints to a small text form and parses back (dsl/schedule_text.h).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "dsl/definition.h"
#include "dsl/domain.h"

namespace gg {

enum class Target { Sm90a, Sm100a };
std::string_view target_name(Target t);      // "sm_90a"
Target parse_target(std::string_view name);  // CompileError `unknown-arch`

// How a tile moves between global and shared memory. `Auto` is TMA where the tensor's rows
// allow it (16-byte aligned strides) and otherwise the fallback: a bounded synchronous copy for
// an operand, stores from registers with bounds for the output. The choice depends on the
// problem, so read_method/write_of answer with the method the kernel uses, and copy_choice says why.
enum class CopyMethod { Sync, Tma, Auto };
// Where cache_write puts a tensor: the accumulator in registers (sm_90a) or TMEM (sm_100a),
// or the output staged in shared memory for the store.
enum class Place { Registers, Tmem, Shared };

struct SplitD { std::string axis; int64_t factor; std::string outer, inner; };
struct MergeD { std::string outer, inner, fused; };
struct ReorderD { std::vector<std::string> order; };
struct BindD { std::string axis; Binding binding; };
struct TileD { int64_t m, n, k; };  // split m, n, k into {m,n,k}_o / _i and reorder tile loops outside
struct CacheReadD { std::string tensor; CopyMethod method; };
struct CacheWriteD { std::string tensor; Place place; CopyMethod method; };
struct InlineD { std::string op; };
struct ComputeAtD { std::string op; std::string axis; };
struct CircularBufferD { std::string axis; int stages; int prefetch; };
struct WarpSpecializeD { int producer_regs; int consumer_regs; };
struct PersistD { std::string m_axis, n_axis, fused; Raster raster; int64_t group; };
struct ClusterD { int x, y, z; };
struct MulticastD { std::string operand; };
struct MmaD { int m, n, k; Target target; };
struct PingPongD {};  // two consumer warpgroups take the persistent loop's tiles in turn
// The output tile leaves in subtiles of `cols` columns through `buffers` staging buffers per
// consumer warpgroup.
struct StoreSubtileD { int64_t cols; int buffers; };
// Split-K: `splits` CTAs share each output tile, each reducing its share of the k tiles; the
// last to finish adds the partial sums in split order (deterministic) and runs the epilogue.
// stream: the tiles past the last whole wave are computed stream-K (implies tail): their k tiles,
// as one run tile after tile, are dealt in even contiguous ranges to min(grid, splits x those tiles)
// CTAs, so a range may end inside one tile and the next begin inside it; a tile's pieces meet as
// split-K's splits do.
struct SplitKD { int splits; bool tail = false; bool stream = false; };
// FP8: the k loop's elements between promotions of the MMAs' accumulator into fp32 (0: none).
struct PromoteD { int64_t interval; };
// D = A * A^T (matmul(A, A)): only the tiles on and above the diagonal are computed; each one off
// it is stored twice, itself and transposed at its mirror (QuACK's gemm_symmetric).
struct SymmetricD {};
// sm_100a: the TMEM accumulators a CTA cycles through (CUTLASS's AccumulatorPipelineStageCount):
// with two, a tile's writeback reads one while the next tile's MMAs fill the other (TIRx step 10's
// mma2ld / ld2mma double buffering).
struct AccumulatorBuffersD { int buffers; };

using Directive = std::variant<SplitD, MergeD, ReorderD, BindD, TileD, CacheReadD, CacheWriteD, InlineD, ComputeAtD,
                               CircularBufferD, WarpSpecializeD, PersistD, ClusterD, MulticastD, MmaD, PingPongD,
                               StoreSubtileD, SplitKD, PromoteD, SymmetricD,
                               AccumulatorBuffersD>;

// How several consumer warpgroups share the work: they split each tile's rows (an intra-tile
// axis bound to warpgroup), or each computes whole tiles, taking the tiles in turn.
enum class ConsumerMode { Cooperative, PingPong };
inline constexpr int kPingPongConsumers = 2;

bool operator==(const Directive& a, const Directive& b);
class Schedule;
// What a `cache_read/cache_write ... auto` directive became for s's problem (Schedule::copy_choice);
// nullopt for any other directive.
std::optional<std::string> copy_choice_of(const Schedule& s, const Directive& d);
std::string directive_name(const Directive& d);  // "split", "cache_read", ...

// Hardware limits the primitives check against.
inline constexpr int kMaxClusterSize = 8;
inline constexpr int kRegisterFile = 65536;
inline constexpr int kMinRegs = 24, kMaxRegs = 256;
inline constexpr int kWarpgroupThreads = 128;
inline constexpr int kMaxStoreBuffers = 4;  // staging buffers per consumer warpgroup (store_subtile)
inline constexpr int kMaxSplitK = 64;         // CTAs sharing one output tile (split_k)

class Schedule {
 public:
  explicit Schedule(Definition def);

  Schedule& split(const std::string& axis, int64_t factor, const std::string& outer, const std::string& inner);
  Schedule& merge(const std::string& outer, const std::string& inner, const std::string& fused);
  Schedule& reorder(const std::vector<std::string>& order);
  Schedule& bind(const std::string& axis, Binding binding);
  Schedule& tile(int64_t m, int64_t n, int64_t k);
  Schedule& cache_read(const std::string& tensor, CopyMethod method);
  Schedule& cache_write(const std::string& tensor, Place place, CopyMethod method = CopyMethod::Sync);
  Schedule& inline_op(const std::string& op);
  Schedule& compute_at(const std::string& op, const std::string& axis);
  // Calling it again on the same loop changes the depth: the last call wins.
  Schedule& circular_buffer(const std::string& axis, int stages, int prefetch = -1);  // -1: stages - 1
  Schedule& warp_specialize(int producer_regs, int consumer_regs);
  Schedule& persist(const std::string& m_axis, const std::string& n_axis, Raster raster = Raster::RowMajor,
                    int64_t group = 8, const std::string& fused = "tile");
  Schedule& cluster(int x, int y = 1, int z = 1);
  Schedule& multicast(const std::string& operand);
  Schedule& mma(int m, int n, int k, Target target);
  // Ping-pong consumers: two consumer warpgroups, each computing whole tiles of the
  // persistent loop in turn, so that one's epilogue runs under the other's MMAs. Needs
  // warp_specialize and persist; excludes splitting a tile over warpgroups (cooperative).
  Schedule& ping_pong();
  // Splits the k loop over `splits` (2..64) CTAs per output tile: for skinny problems whose
  // tiles alone leave SMs idle. Partial sums go through a global workspace in fp32 and are added
  // in split order, so the result does not depend on which CTA finishes first.
  // tail: split only the tiles of the last, partial wave of the persistent grid; the whole waves
  // before it run unsplit (stream-K's data-parallel and split hybrid), so a tile count a little
  // over a multiple of the SMs pays for a fraction of a tile instead of a whole one.
  // stream: the last wave's tiles stream-K (CUTLASS's PersistentTileSchedulerSm90StreamK,
  // data-parallel whole waves): their k tiles in even contiguous ranges over min(grid, splits x
  // those tiles) CTAs, a CTA's range crossing tile boundaries; each tile's pieces (at most about
  // splits + 1) are added in range order by the last to finish, as split-K's are.
  Schedule& split_k(int splits, bool tail = false, bool stream = false);
  int split_k_of() const;       // 1 without split_k
  bool split_k_tail() const;    // split_k ... tail, or ... stream
  bool split_k_stream() const;  // split_k ... stream
  // Stores the output tile in subtiles of `cols` columns, each staged in one of `buffers`
  // shared-memory buffers per consumer warpgroup: a subtile's TMA store runs while the next is
  // staged, and the staging needs buffers x rows x cols elements instead of the whole tile,
  // which leaves room for pipeline stages. Needs the output written by TMA (cache_write ... tma).
  Schedule& store_subtile(int64_t cols, int buffers = 2);
  // How many elements of K the MMAs accumulate before the sum is promoted into the fp32
  // accumulator; 0 never promotes (one accumulator, as cuBLASLt's fast accumulation). FP8
  // (WGMMA's FP8 accumulation keeps about 14 bits): default 128, a k tile; factors per 128 of K
  // (DeepGEMM's) need exactly that. 16-bit operands: default never; WGMMA's fp32 accumulation
  // truncates, so an f32 output of a long k loop gains from it (`auto` promotes every 256 there).
  // A multiple of the k tile.
  Schedule& promote(int64_t interval);
  std::optional<int64_t> promotion_interval() const;  // nullopt: not said (128 for FP8)
  // D = A * A^T computed on the tiles on and above the diagonal, each off-diagonal tile stored
  // with its mirror (a transposed staging of the same values). The matmul must read one tensor
  // as both operands (rule `symmetric`); the tile must be square (validation).
  Schedule& symmetric();
  bool is_symmetric() const;
  // sm_100a: the TMEM accumulators the tiles cycle through, 1 or 2 (TMEM double buffering: a
  // tile's writeback overlaps the next tile's MMAs). Validation: a TMEM accumulator, warp roles,
  // not ping-pong, and every buffer within the SM's 512 TMEM columns.
  Schedule& accumulator_buffers(int buffers);
  int accumulator_buffers_of() const;  // 1 unless said

  // Records any directive (the text parser and explain's replay use this).
  Schedule& apply(const Directive& d);

  const Definition& definition() const { return def_; }
  const Domain& domain() const { return domain_; }
  const std::vector<Directive>& directives() const { return directives_; }

  // What the directives recorded so far say; nullopt/empty where nothing was asked for.
  // read_method and write_of give the copy the kernel uses: `auto` resolved for this problem
  // (an output whose `auto` store falls back is not staged: write_of is nullopt).
  std::optional<CopyMethod> read_method(const std::string& tensor) const;
  std::optional<CacheWriteD> write_of(const std::string& tensor) const;
  // For a tensor whose cache_read/cache_write says `auto`: what it became and why, e.g.
  // "cache_read A auto: a synchronous element copy with bounds, since a row of K=71 bf16
  // elements is 142 bytes, not the 16-byte multiple TMA needs".
  std::optional<std::string> copy_choice(const std::string& tensor) const;
  // store_subtile, unless the output's `auto` store fell back to registers (then it lapses).
  std::optional<CircularBufferD> circular_buffer_of() const;
  std::optional<WarpSpecializeD> warp_roles() const;
  std::optional<PersistD> persistence() const;
  std::optional<ClusterD> cluster_dims() const;
  std::vector<std::string> multicast_operands() const;
  std::optional<MmaD> mma_shape() const;
  std::optional<StoreSubtileD> store_subtile_of() const;
  bool is_inlined(const std::string& op) const;
  // Consumer warpgroups: two for ping_pong, else the extent of the axis bound to warpgroup,
  // else 1.
  int consumer_warpgroups() const;
  ConsumerMode consumer_mode() const;
  // Consumer warpgroups that split one tile (and its accumulator): all of them when they
  // cooperate, one under ping-pong.
  int warpgroups_per_tile() const;
  // The serial k loop over k tiles, or nullptr when the tile covers all of K.
  const Axis* k_loop() const;
  // Retarget: replaces the mma directive's target (the CLI's --arch); CompileError `mma-shape`
  // when the instruction does not exist on t.
  void retarget(Target t);

 private:
  template <class D> const D* last() const;
  const CacheReadD* declared_read(const std::string& tensor) const;
  const CacheWriteD* declared_write(const std::string& tensor) const;
  bool partner_blocks_tma(const std::string& tensor) const;
  const Node& operand(const std::string& tensor, const char* primitive) const;
  const Node& epilogue_op(const std::string& op, const char* primitive) const;
  void record(Directive d);

  Definition def_;
  Domain domain_;
  std::vector<Directive> directives_;
  // Per directive kind (the variant's index), the position of the last one recorded, -1 for
  // none: primitives ask what came before them, and a scan for each would make a schedule of
  // n directives quadratic.
  std::array<int, std::variant_size_v<Directive>> last_at_ = filled(-1);
  std::unordered_set<std::string> inlined_;  // ops named by inline or compute_at
  static std::array<int, std::variant_size_v<Directive>> filled(int v) {
    std::array<int, std::variant_size_v<Directive>> a;
    a.fill(v);
    return a;
  }
};

}  // namespace gg
