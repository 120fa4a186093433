// One test per user-error rule raised in dsl/ (and the tutorial's unknown-schedule): a call
// through the public API that breaks it, with its rule id and message pinned — what was
// wrong and what would be legal. docs/errors.md catalogs the same ids.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "dsl/error.h"
#include "error_check.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

using testing::check_error;

Definition gemm(int64_t m = 1024, int64_t n = 1024, int64_t k = 1024) {
  return make_definition(m, n, k, DType::BF16, DType::BF16);
}

// tile 128 128 64: loop axes m_o, n_o, k_o, m_i, n_i, k_i.
Schedule tiled(int64_t k = 1024) {
  Schedule s(gemm(1024, 1024, k));
  s.tile(128, 128, 64);
  return s;
}

constexpr int64_t kHuge = int64_t(1) << 62;

}  // namespace

// ---- names: dtypes, bindings, targets, axes --------------------------------------------

TEST_CASE("unknown-dtype") {
  check_error([] { parse_dtype("f8"); }, "unknown-dtype",
              "unknown dtype 'f8': legal dtypes are f16, bf16, f32 (e4m3 and e5m2 for FP8 operands)");
}

TEST_CASE("unknown-binding") {
  check_error([] { parse_binding("sideways"); }, "unknown-binding",
              "unknown binding 'sideways': legal bindings are block.x, block.y, block.z, cluster, warpgroup, warp, "
              "thread, serial, unroll (persistent comes from persist)");
  check_error([] { parse_binding("persistent"); }, "unknown-binding", "unknown binding 'persistent'");
  check_error([] { tiled().bind("m_o", Binding::Persistent); }, "unknown-binding",
              "bind m_o: the persistent tile loop comes from persist, not bind");
}

TEST_CASE("unknown-arch") {
  check_error([] { parse_target("sm_80"); }, "unknown-arch",
              "unknown arch 'sm_80': legal targets are sm_90a (Hopper, WGMMA) and sm_100a (Blackwell, tcgen05)");
}

TEST_CASE("unknown-axis") {
  check_error([] { tiled().split("q", 2, "a", "b"); }, "unknown-axis",
              "unknown axis 'q': the loop axes are m_o, n_o, k_o, m_i, n_i, k_i");
  check_error([] { tiled().bind("m", Binding::BlockY); }, "unknown-axis",
              "axis 'm' was already split or merged away: the loop axes are m_o, n_o, k_o, m_i, n_i, k_i");
  check_error([] { tiled().compute_at("cast", "n_x"); }, "unknown-axis", "unknown axis 'n_x'");
  check_error([] { tiled().reorder({"n_o", "zz"}); }, "unknown-axis", "unknown axis 'zz'");
}

TEST_CASE("bad-axis-name") {
  check_error([] { Schedule(gemm()).split("m", 128, "1m", "m_i"); }, "bad-axis-name",
              "split: '1m' is not a valid axis name (letters, digits and _, not starting with a digit)");
  check_error([] { tiled().merge("m_o", "n_o", "m-n"); }, "bad-axis-name", "merge: 'm-n' is not a valid axis name");
  check_error([] { tiled().persist("m_o", "n_o", Raster::RowMajor, 8, ""); }, "bad-axis-name",
              "persist: '' is not a valid axis name");
}

TEST_CASE("duplicate-axis") {
  check_error([] { Schedule(gemm()).split("m", 128, "n", "m_i"); }, "duplicate-axis",
              "split: an axis named 'n' exists already; pick a new name");
  check_error([] { Schedule(gemm()).split("m", 128, "x", "x"); }, "duplicate-axis",
              "split m: outer and inner need different names");
  // Names of axes split away stay taken.
  check_error([] { tiled().merge("m_o", "n_o", "m"); }, "duplicate-axis", "an axis named 'm' exists already");
}

// ---- split, merge, reorder ------------------------------------------------------------

TEST_CASE("split-factor") {
  check_error([] { Schedule(gemm()).split("m", 0, "m_o", "m_i"); }, "split-factor", "split m: factor 0 must be >= 1");
  check_error([] { Schedule(gemm()).tile(128, -64, 64); }, "split-factor", "split n: factor -64 must be >= 1");
}

TEST_CASE("split-bound") {
  check_error([] { tiled().bind("m_o", Binding::BlockY).split("m_o", 2, "a", "b"); }, "split-bound",
              "split m_o: the axis is bound to block.y; split before binding");
}

TEST_CASE("merge-self") {
  check_error([] { tiled().merge("m_o", "m_o", "mm"); }, "merge-self",
              "merge m_o: an axis cannot be merged with itself");
}

TEST_CASE("merge-adjacent") {
  check_error([] { Schedule(gemm()).merge("m", "k", "mk"); }, "merge-adjacent",
              "merge m k: 'k' must be the loop directly inside 'm' (loop order: m, n, k); reorder first");
}

TEST_CASE("merge-levels") {
  check_error([] { tiled().merge("k_o", "m_i", "f"); }, "merge-levels",
              "merge k_o m_i: 'k_o' iterates over tiles but 'm_i' over one tile; merge axes of the same level");
}

TEST_CASE("merge-intra-roots") {
  check_error([] { tiled().merge("m_i", "n_i", "f"); }, "merge-intra-roots",
              "merge m_i n_i: axes inside a tile map to the MMA and must come from one dimension (m vs n)");
}

TEST_CASE("merge-reduction") {
  check_error([] { tiled().merge("n_o", "k_o", "f"); }, "merge-reduction",
              "merge n_o k_o: the reduction axis k cannot be merged with the output axes m, n");
}

TEST_CASE("merge-bound") {
  check_error([] { tiled().bind("m_o", Binding::BlockY).merge("m_o", "n_o", "f"); }, "merge-bound",
              "merge m_o n_o: 'm_o' is already bound to block.y; merge before binding");
}

TEST_CASE("extent-overflow") {
  // Split factors far beyond the extents make the loops' products overflow 64 bits.
  check_error(
      [] {
        Schedule(gemm()).split("m", kHuge, "mo", "mi").split("mi", kHuge - 1, "a", "b").split("b", kHuge - 2, "c", "d")
            .merge("a", "c", "ac").merge("ac", "d", "acd");
      },
      "extent-overflow",
      "merge ac d: the fused loop would run 4 x 4611686018427387902 times, more than a 64-bit loop counter holds; "
      "split with factors no larger than the extents being split");
  check_error(
      [] {
        Schedule(gemm()).split("m", 64, "m_o", "m_i").split("n", 64, "n_o", "n_i").split("m_o", kHuge, "m_oo", "m_oi")
            .split("n_o", kHuge, "n_oo", "n_oi").persist("m_oi", "n_oi");
      },
      "extent-overflow", "persist m_oi n_oi: the fused loop would run 4611686018427387904 x 4611686018427387904 times");
}

TEST_CASE("reorder-duplicate") {
  check_error([] { tiled().reorder({"m_o", "n_o", "m_o"}); }, "reorder-duplicate",
              "reorder: axis 'm_o' is listed twice");
}

// ---- bind and persist ------------------------------------------------------------------

TEST_CASE("rebind") {
  check_error([] { tiled().bind("k_o", Binding::Serial).bind("k_o", Binding::Unroll); }, "rebind",
              "bind k_o: the axis is already bound to serial");
}

TEST_CASE("duplicate-binding") {
  check_error([] { tiled().bind("m_o", Binding::BlockX).bind("n_o", Binding::BlockX); }, "duplicate-binding",
              "bind n_o block.x: block.x is already bound to axis 'm_o'; one hardware index takes one axis (merge the "
              "two axes first, or pick another index)");
}

TEST_CASE("bind-level") {
  check_error([] { tiled().bind("m_i", Binding::BlockX); }, "bind-level",
              "bind m_i block.x: 'm_i' lies inside one CTA tile; bind a tile-level axis (the outer result of splitting "
              "m, n) to a grid index");
  check_error([] { tiled().bind("m_o", Binding::Warp); }, "bind-level",
              "bind m_o warp: 'm_o' iterates over tiles; only axes inside a tile map to warpgroups, warps and threads");
}

TEST_CASE("bind-reduction") {
  check_error([] { tiled().bind("k_o", Binding::BlockZ); }, "bind-reduction",
              "bind k_o block.z: 'k_o' is a reduction (k) axis; split-K over CTAs is not supported, bind it serial");
  check_error([] { tiled().bind("k_i", Binding::Warpgroup); }, "bind-reduction",
              "bind k_i warpgroup: warpgroups split the tile's m or n, not k");
}

TEST_CASE("persist-axes") {
  check_error([] { tiled().persist("m_i", "n_o"); }, "persist-axes",
              "persist m_i n_o: 'm_i' must be a tile-level axis (the outer result of splitting m or n), unbound or "
              "bound to a block index");
  check_error([] { tiled().persist("n_o", "m_o"); }, "persist-axes",
              "persist n_o m_o: name the tile axis of m first, then the tile axis of n");
  check_error([] { tiled().persist("m_o", "k_o"); }, "persist-axes", "name the tile axis of m first");
}

TEST_CASE("persist-group") {
  check_error([] { tiled().persist("m_o", "n_o", Raster::RowMajor, 0); }, "persist-group",
              "persist: group size 0 is out of range; legal is 1..2147483647 (8 is the default)");
  check_error([] { tiled().persist("m_o", "n_o", Raster::RowMajor, INT64_MAX); }, "persist-group",
              "persist: group size 9223372036854775807 is out of range");
}

TEST_CASE("persist-twice") {
  check_error(
      [] {
        Schedule(gemm()).split("m", 128, "m_o", "m_i").split("n", 128, "n_o", "n_i").split("m_o", 2, "m_oo", "m_oi")
            .split("n_o", 2, "n_oo", "n_oi").persist("m_oo", "n_oo").persist("m_oi", "n_oi", Raster::RowMajor, 8, "tile2");
      },
      "persist-twice", "persist: the schedule is already persistent");
}

// ---- warpgroups and registers ----------------------------------------------------------

TEST_CASE("warpgroup-count") {
  check_error([] { Schedule(gemm()).tile(256, 128, 64).split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup); },
              "warpgroup-count",
              "bind m_wg warpgroup: 4 consumer warpgroups; a CTA holds at most 3 next to the producer (split the axis "
              "so the warpgroup part has extent 1, 2 or 3)");
  // The extent is compared before it is narrowed to int (2^32 must not pass as 0).
  check_error([] { Schedule(gemm()).tile(int64_t(1) << 32, 128, 64).bind("m_i", Binding::Warpgroup); },
              "warpgroup-count", "bind m_i warpgroup: 4294967296 consumer warpgroups; a CTA holds at most 3");
}

TEST_CASE("store-subtile") {
  check_error([] { tiled().store_subtile(0); }, "store-subtile",
              "store_subtile 0 2: a subtile has at least one column and there are 1..4 staging buffers per consumer "
              "warpgroup");
  check_error([] { tiled().store_subtile(64, 5); }, "store-subtile", "store_subtile 64 5: a subtile has");
  check_error([] { tiled().store_subtile(64).store_subtile(32); }, "duplicate-directive",
              "store_subtile: the output subtile is already chosen");
}

TEST_CASE("consumer-mode") {
  check_error([] { tiled().split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup).ping_pong(); },
              "consumer-mode",
              "ping_pong: axis 'm_wg' is bound to warpgroup, so 2 consumer warpgroups already split each tile "
              "(cooperative); a schedule either splits a tile over consumer warpgroups or ping-pongs tiles between "
              "them, not both");
  check_error([] { tiled().ping_pong().split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup); },
              "consumer-mode",
              "bind m_wg warpgroup: the consumers already take whole tiles in turn (ping_pong); a schedule either "
              "splits a tile over consumer warpgroups or ping-pongs tiles between them, not both");
  check_error([] { tiled().ping_pong().ping_pong(); }, "duplicate-directive", "ping_pong: already ping-pong");
  // ping_pong's two consumers count against the register file like bound warpgroups do.
  check_error([] { tiled().warp_specialize(40, 256).ping_pong(); }, "register-file",
              "warp_specialize: 1 producer warpgroup x 128 threads x 40 + 2 consumer warpgroup(s) x 128 threads x 256 = "
              "70656 registers, over the 65536-register file; lower consumer_regs to at most 232");
}

TEST_CASE("register-file") {
  // warp_specialize after two consumer warpgroups ...
  check_error([] { tiled().split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup).warp_specialize(40, 256); },
              "register-file",
              "warp_specialize: 1 producer warpgroup x 128 threads x 40 + 2 consumer warpgroup(s) x 128 threads x 256 = "
              "70656 registers, over the 65536-register file; lower consumer_regs to at most 232");
  // ... and a second consumer warpgroup after warp_specialize.
  check_error([] { tiled().warp_specialize(56, 248).split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup); },
              "register-file",
              "1 producer warpgroup x 128 threads x 56 + 2 consumer warpgroup(s) x 128 threads x 248 = 70656 registers, "
              "over the 65536-register file; lower consumer_regs to at most 224");
}

TEST_CASE("register-range") {
  check_error([] { tiled().warp_specialize(16, 232); }, "register-range",
              "warp_specialize: producer register count 16 is outside setmaxnreg's range 24..256");
  check_error([] { tiled().warp_specialize(40, 264); }, "register-range", "consumer register count 264 is outside");
}

TEST_CASE("register-multiple") {
  check_error([] { tiled().warp_specialize(40, 230); }, "register-multiple",
              "warp_specialize: consumer register count 230 is not a multiple of 8 (setmaxnreg); use 224 or 232");
}

// ---- caching, inlining -----------------------------------------------------------------

TEST_CASE("not-an-operand") {
  check_error([] { tiled().cache_read("C", CopyMethod::Tma); }, "not-an-operand",
              "cache_read C: 'C' is not an operand of the matmul; legal operands are A and B");
  check_error([] { tiled().cluster(2).multicast("acc"); }, "not-an-operand", "multicast acc: 'acc' is not an operand");
}

TEST_CASE("cache-write-place") {
  check_error([] { tiled().cache_write("acc", Place::Shared); }, "cache-write-place",
              "cache_write acc shared: the accumulator lives in registers (sm_90a) or tmem (sm_100a); stage the output "
              "'cast' in shared memory instead");
  check_error([] { tiled().cache_write("cast", Place::Registers); }, "cache-write-place",
              "cache_write cast: the output is staged in shared memory for the store; registers/tmem apply to the "
              "accumulator 'acc'");
}

TEST_CASE("cache-write-tensor") {
  check_error([] { tiled().cache_write("A", Place::Shared); }, "cache-write-tensor",
              "cache_write A: legal tensors are the accumulator 'acc' and the output 'cast'");
}

TEST_CASE("duplicate-directive") {
  check_error([] { tiled().tile(64, 64, 64); }, "duplicate-directive", "tile: the schedule is already tiled");
  check_error([] { tiled().cache_read("A", CopyMethod::Tma).cache_read("A", CopyMethod::Sync); }, "duplicate-directive",
              "cache_read A: the operand is already cached in shared memory");
  check_error([] { tiled().cache_write("cast", Place::Shared, CopyMethod::Tma).cache_write("cast", Place::Shared); },
              "duplicate-directive", "cache_write cast: already placed by an earlier cache_write");
  check_error([] { tiled().inline_op("cast").compute_at("cast", "n_i"); }, "duplicate-directive",
              "compute_at cast: already inlined");
  check_error(
      [] {
        tiled().split("k_o", 2, "k_oo", "k_oi").circular_buffer("k_oo", 2).circular_buffer("k_oi", 2);
      },
      "duplicate-directive",
      "circular_buffer k_oi: the k loop 'k_oo' is already circular-buffered; call circular_buffer on it again to "
      "change its depth");
  check_error([] { tiled().warp_specialize(40, 232).warp_specialize(40, 232); }, "duplicate-directive",
              "warp_specialize: roles are already specialized");
  check_error([] { tiled().cluster(2).cluster(2); }, "duplicate-directive", "cluster: the cluster shape is already set");
  check_error([] { tiled().cluster(2).multicast("B").multicast("B"); }, "duplicate-directive",
              "multicast B: already multicast");
  check_error([] { tiled().mma(64, 128, 16, Target::Sm90a).mma(64, 256, 16, Target::Sm90a); }, "duplicate-directive",
              "mma: the instruction shape is already chosen");
  // Calling circular_buffer again on the same loop is not a duplicate: it changes the depth.
  CHECK(tiled().circular_buffer("k_o", 2).circular_buffer("k_o", 4).circular_buffer_of()->stages == 4);
}

TEST_CASE("unknown-op") {
  check_error([] { tiled().inline_op("tanh"); }, "unknown-op", "inline tanh: the definition has no op 'tanh'");
}

TEST_CASE("inline-non-elementwise") {
  check_error([] { tiled().inline_op("acc"); }, "inline-non-elementwise",
              "inline acc: 'acc' is the matmul, a reduction; only elementwise epilogue ops (scale, add_scaled, "
              "add_bias, relu, gelu, silu, cast) can be inlined into the writeback");
  check_error([] { tiled().compute_at("A", "n_i"); }, "inline-non-elementwise", "compute_at A: 'A' is an input");
}

// ---- pipeline --------------------------------------------------------------------------

TEST_CASE("circular-buffer-axis") {
  check_error([] { tiled().circular_buffer("m_o", 2); }, "circular-buffer-axis",
              "circular_buffer m_o: the circular buffer pipelines the k loop over k tiles (the outer result of "
              "splitting k), not 'm_o'");
  check_error([] { tiled().circular_buffer("k_i", 2); }, "circular-buffer-axis", "not 'k_i'");
}

TEST_CASE("stages-range") {
  check_error([] { tiled().circular_buffer("k_o", 17); }, "stages-range", "circular_buffer k_o: 17 stages; legal is 1..16");
  check_error([] { tiled().circular_buffer("k_o", 0); }, "stages-range", "circular_buffer k_o: 0 stages; legal is 1..16");
}

TEST_CASE("prefetch-range") {
  check_error([] { tiled().circular_buffer("k_o", 2, 5); }, "prefetch-range",
              "circular_buffer k_o: prefetch distance 5 needs more than 2 stages; legal is 0..1");
}

TEST_CASE("stages-exceed-k-trips") {
  check_error([] { tiled(128).circular_buffer("k_o", 4); }, "stages-exceed-k-trips",
              "circular_buffer k_o: 4 stages but the k loop runs only 2 time(s) (K = 128); use at most 2 stages");
  // Two stages are always allowed, even for a single k tile.
  CHECK_NOTHROW(tiled(64).circular_buffer("k_o", 2));
}

TEST_CASE("stages-too-few") {
  check_error([] { tiled().warp_specialize(40, 232).circular_buffer("k_o", 1); }, "stages-too-few",
              "circular_buffer: 1 stage under warp specialization leaves the producer nothing to run ahead into; use "
              ">= 2 stages");
  check_error([] { tiled().circular_buffer("k_o", 1).warp_specialize(40, 232); }, "stages-too-few",
              "circular_buffer: 1 stage under warp specialization");
}

// ---- cluster and instruction -----------------------------------------------------------

TEST_CASE("cluster-size") {
  check_error([] { tiled().cluster(0); }, "cluster-size", "cluster 0x1x1: every dimension must be >= 1");
  check_error([] { tiled().cluster(4, 4); }, "cluster-size",
              "cluster 4x4x1 has 16 CTAs; the portable cluster size limit is 8");
  // The product is taken in 64 bits: it must not wrap around to a small count.
  check_error([] { tiled().cluster(65536, 65536, 1); }, "cluster-size", "cluster 65536x65536x1 has 4294967296 CTAs");
  const int big = std::numeric_limits<int>::max();
  check_error([&] { tiled().cluster(big, big, big); }, "cluster-size", "has more than 2^63 CTAs");
}

TEST_CASE("multicast-without-cluster") {
  check_error([] { tiled().multicast("B"); }, "multicast-without-cluster",
              "multicast B: multicast shares one TMA load among the CTAs of a cluster, and the schedule has no "
              "cluster; add `cluster 2` (C++: cluster(2)) or a larger cluster before it");
}

TEST_CASE("mma-shape") {
  check_error([] { tiled().mma(64, 100, 16, Target::Sm90a); }, "mma-shape",
              "mma m64n100k16: sm_90a has no such instruction; legal is wgmma m64nNk16 (f16/bf16 operands) or "
              "m64nNk32 (e4m3/e5m2) with N a multiple of 8 in 8..256");
  // One instruction reads 32 bytes of K: k16 for 16-bit operands, k32 for FP8.
  check_error([] { tiled().mma(64, 128, 32, Target::Sm90a); }, "mma-shape",
              "mma m64n128k32: bf16 operands take k16 (one instruction reads 32 bytes of K)");
  check_error(
      [] {
        Schedule s(make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16));
        s.tile(128, 128, 128);
        s.mma(64, 128, 16, Target::Sm90a);
      },
      "mma-shape", "mma m64n128k16: e4m3 operands take k32 (one instruction reads 32 bytes of K)");
  check_error([] { tiled().mma(32, 128, 16, Target::Sm100a); }, "mma-shape",
              "mma m32n128k16: sm_100a has no such instruction; legal is tcgen05.mma with M 64, 128 (one CTA) or 256 "
              "(a CTA pair), N a multiple of 16 in 16..256, K 16 (f16/bf16) or 32 (e4m3/e5m2)");
  // Retargeting re-checks the instruction: m128 exists on sm_100a only.
  Schedule s = tiled().mma(128, 128, 16, Target::Sm100a);
  check_error([&] { s.retarget(Target::Sm90a); }, "mma-shape", "mma m128n128k16: sm_90a has no such instruction");
  CHECK(s.mma_shape()->target == Target::Sm100a);
}

// ---- the definition a schedule is built on ---------------------------------------------

TEST_CASE("fp8-operand") {
  check_error([] { Schedule(make_definition(1024, 1024, 1024, DType::BF16, DType::E5M2)); }, "fp8-operand",
              "the output is e5m2; FP8 is an MMA operand type (A and B): the output is f16, bf16 or f32");
  // An FP8 epilogue input is refused too (the epilogue has no FP8 loads).
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        Tensor c = d.input("C", {64, 64}, DType::E4M3);
        d.set_output(d.cast(d.add_scaled(d.matmul(a, b), c, 1.0), DType::BF16));
        Schedule s(d);
      },
      "fp8-operand", "input 'C': dtype e4m3 is an MMA operand type (A and B); C and bias are f16, bf16 or f32");
  // FP8 operands themselves are taken.
  CHECK_NOTHROW(Schedule(make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16)));
}

TEST_CASE("bad-scale") {
  check_error([] { parse_scale_granularity("1x64"); }, "bad-scale",
              "unknown scale granularity '1x64': legal are tensor, row, 1x128 (per row and 128 of K) and 128x128 (per "
              "block)");
  // A two-dimensional granularity's major after a colon; one-dimensional ones have none.
  check_error([] { parse_scale_spec("row:k"); }, "bad-scale",
              "scale factors 'row:k': factors per row are one-dimensional and have no major");
  check_error([] { parse_scale_spec("1x128:m"); }, "bad-scale",
              "scale factors '1x128:m': unknown major 'm'; legal are k ([rows][k blocks]), mn ([k blocks][rows "
              "rounded up to 4], DeepGEMM's) and ue8m0 (1x128 only: UE8M0 bytes in sm_100a's block-scaled atoms)");
  // UE8M0 factors (sm_100a's block-scaled MMA) come per 1x128 only.
  check_error([] { parse_scale_spec("128x128:ue8m0"); }, "bad-scale",
              "scale factors '128x128:ue8m0': UE8M0 factors are per 1x128 (one per row and 128 of K, in sm_100a's "
              "block-scaled atoms); give 1x128:ue8m0");
  CHECK(parse_scale_spec("1x128:ue8m0").format == ScaleFormat::Ue8m0);
  CHECK(parse_scale_spec("1x128").format == ScaleFormat::F32);
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 256}, DType::E4M3);
        d.scale_input("SA", a, ScaleGranularity::PerRow, Layout::KMajor, ScaleFormat::Ue8m0);
      },
      "bad-scale", "scale_input 'SA': UE8M0 factors are per 1x128 (sm_100a's block-scaled atoms), not per row");
  CHECK(parse_scale_spec("128x128:mn").major == Layout::MNMajor);
  CHECK(parse_scale_spec("1x128:k").major == Layout::KMajor);
  CHECK_FALSE(parse_scale_spec("1x128").major.has_value());
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 256}, DType::BF16);
        d.scale_input("SA", a, ScaleGranularity::Block1x128);
      },
      "bad-scale", "scale_input 'SA': 'A' is not an FP8 (e4m3, e5m2) 2-D input; scale factors belong to FP8 MMA operands");
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 256}, DType::E4M3);
        d.scale_input("SA", a, ScaleGranularity::Block1x128);
        d.scale_input("SA2", a, ScaleGranularity::PerRow);
      },
      "bad-scale", "scale_input 'SA2': 'A' already has scale factors ('SA')");
  // The shapes the granularities give a [200, 300] operand: ceil(300 / 128) = 3 k blocks.
  Definition d;
  Tensor a = d.input("A", {200, 300}, DType::E4M3);
  Tensor b = d.input("B", {300, 300}, DType::E4M3);
  const Node sa = d.scale_input("SA", a, ScaleGranularity::Block1x128).node();
  CHECK(sa.shape == std::vector<int64_t>{200, 3});
  CHECK(sa.ld == 0);  // MN-major rows of 200 factors are 16-byte multiples already: dense
  Tensor ragged = d.input("A2", {201, 300}, DType::E4M3);
  CHECK(d.scale_input("SA3", ragged, ScaleGranularity::Block1x128).node().ld == 204);  // TMA-aligned
  const Node sb = d.scale_input("SB", b, ScaleGranularity::Block128x128, Layout::KMajor).node();
  CHECK(sb.shape == std::vector<int64_t>{3, 3});
  CHECK(d.scale_of(a.id())->name == "SA");
}

TEST_CASE("operand-dtype") {
  check_error([] { Schedule(make_definition(1024, 1024, 1024, DType::F32, DType::F32)); }, "operand-dtype",
              "operands A and B are f32; the tensor cores take f16, bf16, e4m3 or e5m2 operands");
}

TEST_CASE("foreign-tensor") {
  check_error(
      [] {
        Definition d1 = gemm(), d2;
        d2.relu(Tensor(&d1, 0));
      },
      "foreign-tensor", "relu: the tensor operand does not belong to this definition");
  check_error([] { Definition().set_output(Tensor()); }, "foreign-tensor",
              "set_output: the tensor operand does not belong to this definition");
}

TEST_CASE("duplicate-name") {
  check_error(
      [] {
        Definition d;
        d.input("A", {64, 64}, DType::BF16);
        d.input("A", {64, 64}, DType::BF16);
      },
      "duplicate-name", "input 'A': tensor names must be unique and non-empty");
  check_error([] { Definition().input("", {64, 64}, DType::BF16); }, "duplicate-name", "input '': tensor names must be");
}

TEST_CASE("bad-leading-dim, bad-batch, bad-batch-stride") {
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {}, {.lda = 32}); }, "bad-leading-dim",
              "'A': a leading dimension of 32 elements is shorter than its rows of 64 (the leading dimension is the "
              "distance from one stored row to the next)");
  check_error([] { make_definition(64, 96, 64, DType::BF16, DType::BF16, {}, {.b = Layout::MNMajor, .ldb = 80}); },
              "bad-leading-dim", "'B': a leading dimension of 80 elements is shorter than its rows of 96");
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {}, {.batch = 0}); }, "bad-batch",
              "set_batch: 0 matrices; legal is 1..65535");
  Definition def = make_definition(64, 64, 64, DType::BF16, DType::BF16);
  check_error([&] { def.set_batch_stride(def.tensor(def.output()), 0); }, "bad-batch-stride",
              "set_batch_stride: 'cast': a stride of 0 would write every batch's output to one matrix");
  check_error([&] { def.set_leading_dim(def.tensor(def.matmul_node().id), 128); }, "bad-leading-dim",
              "set_leading_dim: 'acc' is not a 2-D input or the output");
}

TEST_CASE("bad-batch-stride: a batch stride is bounded as a leading dimension is") {
  // 2^63-1 elements apart: the kernel's byte offset batch * stride * 2 overflowed.
  check_error([] { make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 2, .stride_a = INT64_MAX}); },
              "bad-batch-stride",
              "set_batch_stride: 'A': 9223372036854775807 is out of range; legal is 0..1099511627776 (2^40) elements");
  check_error([] { make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 2, .stride_d = (int64_t(1) << 40) + 1}); },
              "bad-batch-stride", "set_batch_stride: 'cast': 1099511627777 is out of range; legal is 1..1099511627776");
  CHECK(make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 2, .stride_b = int64_t(1) << 40}).batch() == 2);
}

TEST_CASE("overlapping-output: two matrices of a batched output may not share an element") {
  const char* overlap = "'cast': a batch stride of 100 elements makes the output's 4 matrices overlap: one spans 16384 "
                        "elements (128 rows of 128, 128 apart); legal is a stride of at least 16384";
  // The builders (the problem line, the CLI, gg::gemm_definition): batch and stride together.
  check_error([] { make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 4, .stride_d = 100}); },
              "overlapping-output", overlap);
  // The stored extent counts the leading dimension up to the last row's end, not past it.
  check_error([] { make_definition(128, 64, 128, DType::BF16, DType::BF16, {}, {.ldd = 80, .batch = 2, .stride_d = 10223}); },
              "overlapping-output", "one spans 10224 elements (128 rows of 64, 80 apart)");
  CHECK(make_definition(128, 64, 128, DType::BF16, DType::BF16, {}, {.ldd = 80, .batch = 2, .stride_d = 10224}).batch() == 2);
  // Column-major: 64 stored rows (N) of 128 (M).
  check_error([] { make_definition(128, 64, 128, DType::BF16, DType::BF16, {},
                                   {.d = OutputLayout::ColumnMajor, .batch = 2, .stride_d = 8000}); },
              "overlapping-output", "one spans 8192 elements (64 rows of 128, 128 apart)");
  // Inputs are only read: overlapping (even equal) matrices are legal.
  CHECK(make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 4, .stride_a = 100, .stride_b = 1}).batch() == 4);

  // The C++ API in any order: whichever call completes the picture refuses, and changes nothing.
  Definition stride_first = make_definition(128, 128, 128, DType::BF16, DType::BF16);
  const Tensor out = stride_first.tensor(stride_first.output());
  stride_first.set_batch_stride(out, 100);  // one matrix: nothing can overlap yet
  check_error([&] { stride_first.set_batch(4); }, "overlapping-output", overlap);
  CHECK(stride_first.batch() == 1);
  Definition batch_first = make_definition(128, 128, 128, DType::BF16, DType::BF16);
  batch_first.set_batch(4);
  check_error([&] { batch_first.set_batch_stride(batch_first.tensor(batch_first.output()), 100); }, "overlapping-output",
              overlap);
  CHECK(batch_first.node(batch_first.output()).batch_stride == -1);
  Definition ld_last = make_definition(128, 128, 128, DType::BF16, DType::BF16, {}, {.batch = 2, .stride_d = 16384});
  check_error([&] { ld_last.set_leading_dim(ld_last.tensor(ld_last.output()), 136); }, "overlapping-output",
              "one spans 17400 elements (128 rows of 128, 136 apart)");
}

TEST_CASE("bad-shape") {
  check_error([] { Definition().input("A", {64, 64, 64}, DType::BF16); }, "bad-shape",
              "input 'A': shape must have 1 or 2 extents");
  check_error([] { Definition().input("A", {0, 64}, DType::BF16); }, "bad-shape",
              "input 'A': extent 0 is out of range; legal is 1..2147483647 (2^31-1)");
  check_error([] { make_definition(int64_t(1) << 31, 1024, 1024, DType::BF16, DType::BF16); }, "bad-shape",
              "input 'A': extent 2147483648 is out of range; legal is 1..2147483647 (2^31-1)");
}

TEST_CASE("matmul-operand") {
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("Bias", {64}, DType::BF16);
        d.matmul(a, b);
      },
      "matmul-operand", "matmul: operand 'Bias' must be a 2-D input tensor");
}

TEST_CASE("one-matmul") {
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        d.matmul(a, b);
        d.matmul(a, b);
      },
      "one-matmul", "matmul: a definition holds one matmul");
}

TEST_CASE("matmul-shape") {
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 32}, DType::BF16), b = d.input("B", {64, 48}, DType::BF16);
        d.matmul(a, b);
      },
      "matmul-shape", "matmul: A is [64,32] and B is [64,48]; B must be [N,K] with the same K as A [M,K]");
}

TEST_CASE("matmul-dtype") {
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 32}, DType::BF16), b = d.input("B", {64, 32}, DType::F16);
        d.matmul(a, b);
      },
      "matmul-dtype", "matmul: A is bf16 but B is f16; both operands must share one dtype");
}

TEST_CASE("epilogue-shape") {
  Definition d;
  Tensor a = d.input("A", {64, 32}, DType::BF16), b = d.input("B", {128, 32}, DType::BF16);
  Tensor acc = d.matmul(a, b);
  Tensor c = d.input("C", {64, 64}, DType::BF16), bias = d.input("Bias", {64}, DType::BF16);
  check_error([&] { d.add_scaled(acc, c, 1.0); }, "epilogue-shape", "add_scaled: 'C' must have the output's shape [M,N]");
  check_error([&] { d.add_bias(acc, bias, BiasAlong::Cols); }, "epilogue-shape",
              "add_bias: 'Bias' must be 1-D of length 128 (N: one value per column)");
  CHECK_NOTHROW(d.add_bias(acc, bias, BiasAlong::Rows));
  check_error([&] { d.add_bias(bias, bias, BiasAlong::Cols); }, "epilogue-shape",
              "add_bias: 'Bias' is 1-D; a bias is added to a 2-D [M,N] result");
}

TEST_CASE("epilogue-scalar") {
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {{OpKind::Scale, std::nan("")}}); },
              "epilogue-scalar",
              "scale: alpha nan is not a finite fp32 value; legal is a finite number of magnitude at most 3.4e38");
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {{OpKind::AddScaled, 1e300}}); },
              "epilogue-scalar", "add_scaled: beta 1e+300 is not a finite fp32 value");
  // The text form reaches the same check.
  check_error(
      [] {
        ScheduleFile f = parse_schedule_file("epilogue scale inf\n");
        make_definition(64, 64, 64, DType::BF16, DType::BF16, f.epilogue);
      },
      "epilogue-scalar", "scale: alpha inf is not a finite fp32 value");
}

TEST_CASE("epilogue-op") {
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {{OpKind::Cast}}); }, "epilogue-op",
              "epilogue cast: legal epilogue ops are scale, add_c, bias, relu, gelu, silu, drelu, dgelu, dsilu");
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        d.activation_grad(d.matmul(a, b), d.input("P", {64, 64}, DType::BF16), OpKind::Scale);
      },
      "epilogue-op", "activation_grad: 'scale' is not an activation; legal are relu, gelu and silu");
}

TEST_CASE("bad-saved-output") {
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        d.set_output(d.cast(d.matmul(a, b), DType::BF16));
        d.set_saved_output(a);
      },
      "bad-saved-output", "set_saved_output: 'A' is an input, not a result");
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        Tensor out = d.cast(d.matmul(a, b), DType::BF16);
        d.set_output(out);
        d.set_saved_output(out);
      },
      "bad-saved-output", "set_saved_output: 'cast' is the output itself");
  check_error(
      [] {
        Definition d;
        Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
        Tensor x = d.matmul(a, b);
        Tensor y = d.relu(x);
        d.set_output(d.cast(y, DType::BF16));
        d.set_saved_output(x);
        d.set_saved_output(y, "Y");
      },
      "bad-saved-output", "set_saved_output: 'acc' is saved already (as 'PreAct'); a definition saves one value");
}

TEST_CASE("bad-output") {
  check_error(
      [] {
        Definition d;
        d.set_output(d.input("A", {64, 64}, DType::BF16));
      },
      "bad-output", "set_output: 'A' is an input, not a result");
}

TEST_CASE("no-output") {
  check_error(
      [] {
        Definition d;
        d.matmul(d.input("A", {64, 64}, DType::BF16), d.input("B", {64, 64}, DType::BF16));
        Schedule s(d);
      },
      "no-output", "the definition has no output: call set_output(tensor)");
}

TEST_CASE("no-matmul") {
  check_error(
      [] {
        Definition d;
        d.set_output(d.relu(d.input("A", {64, 64}, DType::BF16)));
        Schedule s(d);
      },
      "no-matmul", "the definition has no matmul: call matmul(A, B)");
}

// ---- built-in schedules and the text form -----------------------------------------------

TEST_CASE("unknown-schedule") {
  check_error([] { tutorial_schedule(11, gemm()); }, "unknown-schedule",
              "tutorial step v11 does not exist; steps are v1..v10");
  check_error([] { builtin_schedule("v12", gemm()); }, "unknown-schedule",
              "unknown schedule 'v12': built-in schedules are v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, pingpong, symmetric, auto (or pass "
              "--schedule-file FILE)");
}

// parse-error's common cases are pinned in schedule_text_test.cpp; these are the numbers and
// lines it does not cover.
TEST_CASE("parse-error") {
  check_error([] { parse_directive("   "); }, "parse-error",
              "empty line: expected a directive (split, merge, reorder, bind, tile, cache_read, cache_write, inline, "
              "compute_at, circular_buffer, warp_specialize, persist, cluster, multicast, mma, ping_pong, store_subtile, split_k, promote, "
              "symmetric, accumulator_buffers)");
  check_error([] { parse_directive("split m 99999999999999999999 m_o m_i"); }, "parse-error",
              "'split m 99999999999999999999 m_o m_i': expected an integer split factor, got '99999999999999999999' "
              "(usage: split AXIS FACTOR OUTER INNER)");
  check_error([] { parse_directive("mma 64 128 2147483648"); }, "parse-error",
              "'mma 64 128 2147483648': mma k 2147483648 is out of range (usage: mma M N K [sm_90a|sm_100a])");
  check_error([] { parse_directive("warp_specialize 40 -2147483649"); }, "parse-error",
              "consumer register count -2147483649 is out of range");
  check_error([] { parse_directive("tile +128 128 64"); }, "parse-error", "expected an integer tile m extent, got '+128'");
  check_error([] { parse_directive("cluster 0x2"); }, "parse-error", "expected an integer cluster x, got '0x2'");
  check_error([] { parse_directive("circular_buffer k_o 2.5"); }, "parse-error",
              "expected an integer stage count, got '2.5'");
  check_error([] { parse_directive("reorder"); }, "parse-error",
              "'reorder': expected at least 1 argument(s), got 0 (usage: reorder AXIS AXIS...)");
  check_error([] { parse_directive("persist m_o n_o tile row 8 9"); }, "parse-error",
              "expected 2 to 5 argument(s), got 6");
  check_error([] { parse_directive("epilogue relu"); }, "parse-error",
              "'epilogue' is not a directive; expected one of split, merge");
  check_error([] { parse_schedule_file("epilogue scale 1e999"); }, "parse-error",
              "line 1: 'epilogue scale 1e999': expected a number alpha, got '1e999'");
  check_error([] { parse_schedule_file("problem m=99999999999999999999"); }, "parse-error",
              "line 1: 'problem m=99999999999999999999': expected a positive integer for m, got '99999999999999999999'");
  check_error([] { parse_schedule_file("problem m=0"); }, "parse-error", "expected a positive integer for m, got '0'");
  check_error([] { parse_schedule_file("problem m=128 m=256"); }, "parse-error", "m is given twice");
  check_error([] { parse_schedule_file("epilogue"); }, "parse-error", "line 1: 'epilogue': expected an epilogue op");
}

// A refused call records nothing: the schedule is as it was before the call.
TEST_CASE("a refused primitive leaves the schedule unchanged") {
  Schedule s = tiled();
  const auto leaves = s.domain().leaves();
  const size_t n = s.directives().size();
  CHECK_THROWS_AS(s.split("m_i", 0, "a", "b"), CompileError);
  CHECK_THROWS_AS(s.bind("m_o", Binding::Warp), CompileError);
  CHECK_THROWS_AS(s.cluster(4, 4), CompileError);
  CHECK_THROWS_AS(s.circular_buffer("k_o", 99), CompileError);
  CHECK(s.domain().leaves() == leaves);
  CHECK(s.directives().size() == n);
}

TEST_CASE("symmetric") {
  check_error([] { Schedule(make_definition(256, 256, 64, DType::BF16, DType::BF16)).symmetric(); }, "symmetric",
              "symmetric: D = A * A^T reads one tensor as both operands, but the matmul reads 'A' and 'B'; write "
              "matmul(A, A) (problem ... symmetric=1, --symmetric)");
  check_error(
      [] {
        ProblemLayout l;
        l.symmetric = true;
        make_definition(256, 128, 64, DType::BF16, DType::BF16, {}, l, false);
      },
      "symmetric", "D = A * A^T is M x M, but N=128 and M=256; give N = M");
  check_error(
      [] {
        ProblemLayout l;
        l.symmetric = true;
        l.ldb = 80;
        make_definition(256, 256, 64, DType::BF16, DType::BF16, {}, l, false);
      },
      "symmetric", "D = A * A^T reads A as both operands: B's layout, leading dimension, batch stride and scale "
                   "factors are A's; give none of B's own");
}

TEST_CASE("promote") {
  Definition fp8 = make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16);
  // 16-bit operands promote any whole number of k tiles (lowering checks that against the tile).
  const Definition bf16 = make_definition(1024, 1024, 4096, DType::BF16, DType::F32);
  check_error([&] { Schedule(bf16).promote(-64); }, "promote",
              "promote -64: the interval is a number of elements of K, or 0 (never promote)");
  CHECK(Schedule(bf16).promote(192).promotion_interval() == std::optional<int64_t>(192));
  CHECK_FALSE(Schedule(bf16).promotion_interval().has_value());
  check_error([&] { Schedule(fp8).promote(192); }, "promote",
              "promote 192: the interval is a multiple of 128 elements of K, or 0 (never promote)");
  check_error([&] { Schedule(fp8).promote(-128); }, "promote",
              "promote -128: the interval is a multiple of 128 elements of K, or 0 (never promote)");
  check_error([&] { Schedule(fp8).promote(256).promote(512); }, "duplicate-directive",
              "promote: the promotion interval is already chosen");
  CHECK(Schedule(fp8).promote(0).promotion_interval() == std::optional<int64_t>(0));
  CHECK_FALSE(Schedule(fp8).promotion_interval().has_value());
}

TEST_CASE("accumulator-buffers") {
  const Definition def = make_definition(1024, 1024, 1024, DType::BF16, DType::BF16);
  check_error([&] { Schedule(def).accumulator_buffers(3); }, "accumulator-buffers",
              "accumulator_buffers 3: one TMEM accumulator or two (a tile's writeback reading one while the next "
              "tile's MMAs fill the other)");
  check_error([&] { Schedule(def).accumulator_buffers(0); }, "accumulator-buffers", "accumulator_buffers 0: one TMEM");
  check_error([&] { Schedule(def).accumulator_buffers(2).accumulator_buffers(2); }, "duplicate-directive",
              "accumulator_buffers: the accumulator buffers are already chosen");
  CHECK(Schedule(def).accumulator_buffers_of() == 1);
  CHECK(Schedule(def).accumulator_buffers(2).accumulator_buffers_of() == 2);
}
