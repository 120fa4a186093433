// One test per validate_schedule rule id: a schedule that breaks it, and its message pinned.
#include <doctest/doctest.h>

#include "codegen/lower.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "error_check.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

using testing::check_error;

void check_rule(const Schedule& s, const std::string& rule, const std::string& fragment,
                const DeviceLimits& limits = hopper()) {
  check_error([&] { validate_schedule(s, limits); }, rule, fragment);
}

Definition gemm(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::BF16); }

// A schedule from its text form (the directives only).
Schedule sched(const Definition& def, const std::string& text) {
  ScheduleFile f = parse_schedule_file(text);
  return apply_directives(def, f.directives, f.directive_lines);
}

// v3's structure: a grid of 128x128x64 tiles, synchronous copies.
const char* kGrid = "tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\nbind m_o block.y\n"
                    "bind n_o block.x\n";
// v5's: TMA loads, a TMA store, two stages.
const char* kPipelined = "tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\nbind m_o block.y\n"
                         "bind n_o block.x\ncache_read A tma\ncache_read B tma\ncache_write cast shared tma\n"
                         "circular_buffer k_o 2\n";

}  // namespace

TEST_CASE("the tutorial schedules are legal where they cover the problem") {
  for (Target t : {Target::Sm90a, Target::Sm100a}) {
    for (auto [m_, n_, k_] : {std::tuple{8192, 8192, 8192}, std::tuple{256, 256, 128}, std::tuple{4096, 1024, 64}}) {
      const int m = m_, n = n_, k = k_;  // clang 14 cannot capture structured bindings (CHECK_NOTHROW)
      for (int v = 3; v <= kTutorialSteps; ++v) {
        CAPTURE(v);
        CAPTURE(m);
        CHECK_NOTHROW(validate_schedule(tutorial_schedule(v, gemm(m, n, k), t), limits_for(t)));
      }
    }
    // One tile is the whole problem: v1 is complete.
    CHECK_NOTHROW(validate_schedule(tutorial_schedule(1, gemm(128, 128, 64), t), limits_for(t)));
  }
}

// A v4 schedule written with explicit TMA copies; the tutorial itself writes `auto` where TMA cannot.
std::string v4_text(const char* read, const char* write) {
  return std::string("tile 128 128 64\ninline cast\nmma 64 128 16\nbind k_o serial\nbind m_o block.y\n"
                     "bind n_o block.x\ncache_read A ") + read + "\ncache_read B " + read + "\ncache_write cast shared " +
         write + "\n";
}

TEST_CASE("k-alignment") {
  check_rule(sched(gemm(1024, 1024, 1004), v4_text("tma", "tma")), "k-alignment",
             "cache_read A tma: a TMA load needs 16-byte aligned rows, but a row of K=1004 bf16 elements is 2008 bytes; "
             "pad K to a multiple of 8 (1008), stage A through an aligned copy each launch makes (problem ... stage=a, "
             "--stage; `auto` stages it itself), or write cache_read A auto to fall back to a synchronous element copy "
             "with bounds");
  // `auto` takes the fallback, and so does a synchronous copy: one load per element.
  CHECK_NOTHROW(validate_schedule(sched(gemm(1024, 1024, 1004), v4_text("auto", "tma"))));
  CHECK_NOTHROW(validate_schedule(sched(gemm(1024, 1024, 1004), v4_text("sync", "tma"))));
  CHECK_NOTHROW(validate_schedule(tutorial_schedule(5, gemm(1024, 1024, 1004))));
}

TEST_CASE("n-alignment") {
  check_rule(sched(gemm(1024, 1004, 1024), v4_text("tma", "tma")), "n-alignment",
             "cache_write cast shared tma: the TMA store needs 16-byte aligned output rows, but a row of N=1004 bf16 "
             "elements is 2008 bytes; pad N to a multiple of 8 (1008), or write cache_write cast shared auto to fall "
             "back to stores from registers with bounds");
  // A store from registers has no such constraint, and `auto` falls back to it.
  CHECK_NOTHROW(validate_schedule(tutorial_schedule(3, gemm(1024, 1004, 1024))));
  CHECK_NOTHROW(validate_schedule(sched(gemm(1024, 1004, 1024), v4_text("tma", "auto"))));
  for (int v = 4; v <= kTutorialSteps; ++v) CHECK_NOTHROW(validate_schedule(tutorial_schedule(v, gemm(1024, 1004, 1024))));
}

TEST_CASE("column-major-store") {
  // A 16-bit column-major output is staged transposed (stmatrix.trans) and stored by TMA; f32 is not.
  Definition def;
  Tensor a = def.input("A", {256, 128}, DType::BF16), b = def.input("B", {256, 128}, DType::BF16);
  def.set_output(def.cast(def.matmul(a, b), DType::F32), OutputLayout::ColumnMajor);
  check_rule(sched(def, v4_text("tma", "tma")), "column-major-store",
             "cache_write cast shared tma: a column-major output is staged transposed by stmatrix.trans, which stores "
             "16-bit values in subtiles of whole 16 columns, but the output is f32 in subtiles of 128 columns; write "
             "cache_write cast shared auto to store from registers with bounds");
  CHECK_NOTHROW(validate_schedule(sched(def, v4_text("tma", "auto"))));
  Definition half;
  Tensor ha = half.input("A", {256, 128}, DType::BF16), hb = half.input("B", {256, 128}, DType::BF16);
  half.set_output(half.cast(half.matmul(ha, hb), DType::BF16), OutputLayout::ColumnMajor);
  CHECK_NOTHROW(validate_schedule(sched(half, v4_text("tma", "tma"))));
}

TEST_CASE("coverage") {
  check_rule(tutorial_schedule(1, gemm(8192, 8192, 8192)), "coverage",
             "m_o: the schedule covers one 128-row tile of M=8192, but m_o runs over 64 tiles and is bound to nothing "
             "(also unbound: n_o, k_o); bind m_o to block.y (tutorial v3) or persist the tile axes (v6)");
  check_rule(sched(gemm(8192, 8192, 8192), "tile 128 128 64\ninline cast\nmma 64 128 16\nbind m_o block.y\n"
                                           "bind n_o block.x\n"),
             "coverage",
             "k_o: the schedule covers one 64-deep k tile of K=8192, but k_o runs over 128 k tiles and is bound to "
             "nothing; bind k_o serial (tutorial v2)");
  check_rule(sched(gemm(8192, 8192, 8192), "tile 128 128 64\ninline cast\nmma 64 128 16\nbind m_o block.y\n"
                                           "bind k_o serial\n"),
             "coverage", "covers one 128-column tile of N=8192, but n_o runs over 64 tiles and is bound to nothing; "
                         "bind n_o to block.x (tutorial v3)");
}

TEST_CASE("no-mma") {
  check_rule(sched(gemm(1024, 1024, 1024), "tile 128 128 64\ninline cast\nbind k_o serial\nbind m_o block.y\n"
                                           "bind n_o block.x\n"),
             "no-mma", "the schedule has no mma directive: choose the tensor-core instruction, e.g. mma 64 128 16 sm_90a");
}

TEST_CASE("mma-tile") {
  check_rule(sched(gemm(960, 1024, 1024), "tile 96 128 64\ninline cast\nmma 64 128 16\nbind k_o serial\n"
                                          "bind m_o block.y\nbind n_o block.x\n"),
             "mma-tile", "mma m64n128k16: the tile's 96 rows give 96 rows per consumer warpgroup (1 warpgroup(s)), "
                         "not a multiple of the mma's m 64; use a tile m that is a multiple of 64");
  check_rule(sched(gemm(1024, 1024, 1024), "tile 128 128 64\ninline cast\nmma 64 96 16\nbind k_o serial\n"
                                           "bind m_o block.y\nbind n_o block.x\n"),
             "mma-tile", "the tile's 128 columns give 128 per consumer warpgroup, not a multiple of the mma's n 96");
  check_rule(sched(gemm(1024, 1024, 1040), "tile 128 128 40\ninline cast\nmma 64 128 16\nbind k_o serial\n"
                                           "bind m_o block.y\nbind n_o block.x\n"),
             "mma-tile", "the tile's k extent 40 is not a multiple of the mma's k 16; use a tile k that is a multiple of 16");
  Definition def = gemm(1024, 1024, 1024);
  check_rule(sched(def, "tile 256 128 64\ninline cast\nmma 256 128 16 sm_100a\nbind k_o serial\nbind m_o block.y\n"
                        "bind n_o block.x\n"),
             "mma-tile", "mma m256n128k16: an m256 tcgen05.mma spans a CTA pair; add `cluster 2` (an even cluster x) "
                         "or use m128",
             blackwell());
}

TEST_CASE("accumulator-place") {
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kGrid) + "cache_write acc tmem\n"), "accumulator-place",
             "cache_write acc tmem: sm_90a has no tensor memory; the wgmma accumulator lives in registers "
             "(cache_write acc registers, or leave it out)");
  check_rule(tutorial_schedule(3, gemm(1024, 1024, 1024), Target::Sm100a).cache_write("acc", Place::Registers),
             "accumulator-place",
             "cache_write acc registers: tcgen05.mma accumulates in tensor memory on sm_100a; use cache_write acc tmem",
             blackwell());
}

TEST_CASE("not-inlined") {
  Definition def = make_definition(1024, 1024, 1024, DType::BF16, DType::BF16, {{OpKind::Scale, 2.0}, {OpKind::Relu}});
  check_rule(sched(def, kGrid), "not-inlined",
             "epilogue op(s) scale, relu are neither inlined nor computed at a loop, so nothing would compute them; "
             "add `inline scale`, `inline relu` (or compute_at OP AXIS) to apply them in the writeback");
  CHECK_NOTHROW(validate_schedule(sched(def, std::string(kGrid) + "inline scale\ncompute_at relu n_i\n")));
}

TEST_CASE("warp-specialize-needs-tma") {
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kGrid) + "cache_read B tma\ncircular_buffer k_o 2\n"
                                                               "warp_specialize 40 232\n"),
             "warp-specialize-needs-tma",
             "warp_specialize: the producer warpgroup issues the operand loads asynchronously and needs TMA, but A is "
             "copied synchronously; add cache_read A tma (tutorial v4)");
}

TEST_CASE("multicast-without-cluster") {
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "cluster 1 1 1\nmulticast B\n"),
             "multicast-without-cluster",
             "multicast B: multicast shares one TMA load among the CTAs of a cluster, and the cluster is 1x1x1 (one "
             "CTA); use `cluster 2` (C++: cluster(2)) or larger");
}

TEST_CASE("multicast-needs-tma") {
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kGrid) + "cluster 1 2 1\nmulticast B\n"),
             "multicast-needs-tma",
             "multicast B: only a TMA load can be multicast to the cluster, but B is copied synchronously; add "
             "cache_read B tma");
}

TEST_CASE("multicast-cluster-axis") {
  // block.x holds the n tiles: a cluster along x pairs CTAs with different B tiles.
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "cluster 2 1 1\nmulticast B\n"),
             "multicast-cluster-axis",
             "multicast B: the CTAs that can share a tile of B differ only in their m tile, but the cluster 2x1x1 does "
             "not extend along the grid index of the m tiles (block.y (m_o)); shape the cluster along that index");
  CHECK_NOTHROW(validate_schedule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "cluster 1 2 1\nmulticast B\n")));
  CHECK_NOTHROW(validate_schedule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "cluster 2 1 1\nmulticast A\n")));
}

TEST_CASE("cluster-size") {
  DeviceLimits small = hopper();
  small.max_cluster = 2;
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "cluster 2 2 1\n"), "cluster-size",
             "cluster 2x2x1 has 4 CTAs; H100 (sm_90a) allows at most 2", small);
}

TEST_CASE("cluster-grid") {
  check_rule(sched(gemm(1024, 8064, 1024), std::string(kPipelined) + "cluster 2 1 1\n"), "cluster-grid",
             "cluster 2x1x1 does not divide the grid 63 x 8 x 1: block.x is bound to n_o with 63 tiles, not a multiple "
             "of the cluster's x extent 2; use a cluster extent that divides 63, a tile that gives a multiple of 2 "
             "tiles, or persist");
  // Persistent multicast pads an odd tile count with a tile past D's edge; split-K's workspace has a
  // slot for it (slot_tile_counts).
  CHECK_NOTHROW(validate_schedule(tutorial_schedule(8, gemm(8064, 8192, 8192)).cluster(2, 1, 1).multicast("B")));
  Schedule padded_split = tutorial_schedule(8, gemm(8064, 8192, 8192)).cluster(2, 1, 1).multicast("B").split_k(2);
  CHECK_NOTHROW(validate_schedule(padded_split));
  const Kernel split = lower(padded_split);
  CHECK(split.plan.epilogue.workspace.slots == 64 * 64);  // 64 m tiles (63 and the padded one) x 64 n tiles
  // Without multicast the persistent grid is simply chosen as a multiple of the cluster.
  CHECK_NOTHROW(validate_schedule(sched(gemm(8064, 8192, 8192), std::string(kPipelined) + "cluster 2\n")
                                      .persist("m_o", "n_o")));
}

TEST_CASE("tma-box") {
  Schedule s = sched(gemm(1024, 1024, 1024),
                     "tile 128 512 64\ninline cast\nmma 64 256 16\nbind k_o serial\nbind m_o block.y\n"
                     "bind n_o block.x\ncache_read A tma\ncache_read B tma\nsplit m_i 64 m_wg m_mma\n"
                     "bind m_wg warpgroup\n");
  check_rule(s, "tma-box",
             "cache_read B tma: the TMA box for B is 512 x 64 elements, but a box dimension holds at most 256 "
             "elements; use a tile n of at most 256");
}

TEST_CASE("circular-buffer-axis") {
  check_rule(sched(gemm(1024, 1024, 1024), "tile 128 128 64\ninline cast\nmma 64 128 16\nbind m_o block.y\n"
                                           "bind n_o block.x\ncache_read A tma\ncache_read B tma\n"
                                           "circular_buffer k_o 2\nsplit k_o 2 k_oo k_oi\nbind k_oo serial\n"
                                           "bind k_oi serial\n"),
             "circular-buffer-axis",
             "circular_buffer k_o: the circular-buffered k loop 'k_o' was split or merged away afterwards; "
             "circular-buffer the k loop that remains");
}

TEST_CASE("stages-exceed-k-trips") {
  // The primitive rejects it when called; validate re-checks the final schedule with the same words.
  check_error([] { sched(gemm(1024, 1024, 128), std::string(kPipelined) + "circular_buffer k_o 4\n"); },
              "stages-exceed-k-trips",
              "circular_buffer k_o: 4 stages but the k loop runs only 2 time(s) (K = 128); use at most 2 stages");
}

TEST_CASE("stages-too-few") {
  check_rule(tutorial_schedule(4, gemm(1024, 1024, 1024)).warp_specialize(40, 232), "stages-too-few",
             "warp_specialize without circular_buffer: 1 stage under warp specialization leaves the producer nothing "
             "to run ahead into; use >= 2 stages (circular_buffer k_o 2)");
  check_error([] { tutorial_schedule(7, gemm(1024, 1024, 1024)).circular_buffer("k_o", 1); }, "stages-too-few",
              "circular_buffer: 1 stage under warp specialization leaves the producer nothing to run ahead into");
}

TEST_CASE("register-file") {
  check_rule(sched(gemm(1024, 1024, 1024), "tile 128 256 64\ninline cast\nmma 64 256 16\nbind k_o serial\n"
                                           "bind m_o block.y\nbind n_o block.x\n"),
             "register-file",
             "the 1 warpgroup(s) hold a 128 x 256 fp32 accumulator in registers: 256 per thread plus about 64 for "
             "addresses and loop state, over the per-thread cap of 255 (65536 registers / 128 threads, at most 255); "
             "split the tile over more consumer warpgroups");
  check_rule(tutorial_schedule(7, gemm(1024, 1024, 1024)).circular_buffer("k_o", 4), "register-file",
             "1 producer warpgroup x 128 threads x 40 + 1 consumer warpgroup(s) x 128 threads x 232 = 34816 registers, "
             "over the 32768-register file; lower consumer_regs to at most 216",
             [] {
               DeviceLimits d = hopper();
               d.registers = 32768;
               return d;
             }());
}

TEST_CASE("ping-pong-needs-roles") {
  check_rule(tutorial_schedule(6, gemm(1024, 1024, 1024)).ping_pong(), "ping-pong-needs-roles",
             "ping_pong: the two consumer warpgroups take tiles in turn from one producer's pipeline, but the schedule "
             "has no warp roles; add warp_specialize (e.g. warp_specialize 40 232)");
}

TEST_CASE("ping-pong-needs-persist") {
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "warp_specialize 40 232\nping_pong\n"),
             "ping-pong-needs-persist",
             "ping_pong: the consumers take the tiles of a persistent loop in turn, but each CTA computes one tile; "
             "add persist (e.g. persist m_o n_o)");
}

TEST_CASE("register-file: a ping-pong consumer holds a whole tile") {
  // v9 on v10's 128x256 tile, its two consumers ping-ponging tiles instead of splitting them.
  const Schedule v9 = tutorial_schedule(9, gemm(1024, 1024, 1024));
  Schedule wide(v9.definition());
  for (Directive d : v9.directives()) {
    if (auto* t = std::get_if<TileD>(&d)) t->n = 256;
    if (auto* m = std::get_if<MmaD>(&d)) m->n = 256;
    wide.apply(d);
  }
  wide.ping_pong();
  check_rule(wide, "register-file",
             "the 2 consumer warpgroup(s) hold a 128 x 256 fp32 accumulator in registers (ping-pong: each holds a "
             "whole tile): 256 per thread plus about 64 for addresses and loop state, over the 232 registers "
             "warp_specialize gives them; use a smaller tile, or split each tile over the consumers instead of "
             "ping_pong");
}

TEST_CASE("register-file: FP8's promotion accumulator lives only in the k loop") {
  // v10's 128x256 tile on FP8 with DeepGEMM's factors: 128 fp32 registers of the tile and 128 of a
  // k tile's promotion, beside the k loop's 40: over 232. Its 256x128 (a row block per wave) fits.
  ProblemLayout scaled;
  scaled.scale_a = ScaleGranularity::Block1x128;
  scaled.scale_b = ScaleGranularity::Block128x128;
  const Definition fp8 = make_definition(4096, 4096, 4096, DType::E4M3, DType::BF16, {}, scaled);
  const Schedule v10 = tutorial_schedule(10, fp8);
  Schedule wide(fp8);
  for (Directive d : v10.directives()) {
    if (auto* t = std::get_if<TileD>(&d)) t->n = 256;
    if (auto* m = std::get_if<MmaD>(&d)) m->n = 256;
    wide.apply(d);
  }
  check_rule(wide, "register-file",
             "the 2 consumer warpgroup(s) hold a 128 x 256 fp32 accumulator in registers: 256 per thread (128 of them "
             "the FP8 promotion's) plus about 40 for addresses and loop state, over the 232 registers warp_specialize "
             "gives them; split the tile over more consumer warpgroups (split m_i 64 m_wg m_mma; bind m_wg warpgroup) "
             "or use a smaller tile");
}

TEST_CASE("smem-limit") {
  check_rule(tutorial_schedule(8, gemm(8192, 8192, 8192)).circular_buffer("k_o", 12), "smem-limit",
             "shared memory: the schedule needs 427200 bytes (A stages 12 x 128 x 64 x 2 B = 196608 + B stages 12 x "
             "128 x 64 x 2 B = 196608 + epilogue staging 128 x 128 x 2 B = 32768 + mbarriers 24 x 8 B (full 12, empty "
             "12) = 192 + alignment padding 1024-byte alignment of swizzled tiles = 1024), over the 232448 bytes a CTA "
             "may use on H100 (sm_90a); use at most 6 stages (circular_buffer k_o 6) or a smaller tile");
}

TEST_CASE("tmem-columns") {
  check_rule(sched(gemm(1024, 1024, 1024), "tile 256 512 64\ninline cast\nmma 128 256 16 sm_100a\nbind k_o serial\n"
                                           "bind m_o block.y\nbind n_o block.x\n"),
             "tmem-columns",
             "the 256 x 512 fp32 accumulator needs 1024 TMEM columns, over the 512 an SM has; use a tile n of at most 256",
             blackwell());
}

TEST_CASE("grid-limit") {
  // 10^7 rows in 128-row tiles: 78125 CTAs along block.y, over CUDA's 65535.
  check_rule(sched(gemm(10000000, 256, 64), kGrid), "grid-limit",
             "block.y is bound to m_o with 78125 tiles, over CUDA's limit of 65535 for grid y; bind the larger tile "
             "axis to block.x");
}

TEST_CASE("store-subtile-needs-tma-store") {
  check_rule(tutorial_schedule(3, gemm(1024, 1024, 1024)).store_subtile(64), "store-subtile-needs-tma-store",
             "store_subtile: subtiles are staged in shared memory for a TMA store, but the output 'cast' is not "
             "written that way; add cache_write cast shared tma");
}

TEST_CASE("store-subtile") {
  // Columns: whole 32-byte rows (16 bf16 elements) that divide the tile's 128 columns.
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "store_subtile 48 2\n"), "store-subtile",
             "store_subtile 48 2: the tile's 128 columns are not a whole number of 48-column subtiles of whole "
             "32-byte rows (16 bf16 elements); legal widths are 16, 32, 64, 128");
  // A tile of 56 columns is not whole 32-byte rows: no width fits, and the message says so.
  std::string narrow = kPipelined;
  narrow.replace(narrow.find("tile 128 128 64"), 15, "tile 128 56 64");
  narrow.replace(narrow.find("mma 64 128 16"), 13, "mma 64 56 16");
  check_rule(sched(gemm(1024, 1024, 1024), narrow + "store_subtile 16 2\n"), "store-subtile",
             "store_subtile 16 2: the tile's 56 columns are not a whole number of 16-column subtiles of whole 32-byte "
             "rows (16 bf16 elements); no width fits a tile n of 56; use a tile n that is a multiple of 16, or drop "
             "store_subtile");
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "store_subtile 8 2\n"), "store-subtile",
             "store_subtile 8 2: the tile's 128 columns are not a whole number of 8-column subtiles");
  // Buffers: every tile's subtiles go to the same buffers, so they cycle evenly.
  check_rule(sched(gemm(1024, 1024, 1024), std::string(kPipelined) + "store_subtile 32 3\n"), "store-subtile",
             "store_subtile 32 3: 4 subtile(s) per tile do not cycle evenly through 3 buffers (each subtile uses the "
             "same buffer in every tile); use a buffer count dividing 4");
}

TEST_CASE("accumulator-buffers: a TMEM accumulator, warp roles, a persistent loop, not ping-pong; TMEM's 512 columns") {
  const Definition def = gemm(1024, 1024, 1024);
  Schedule hopper_v10 = tutorial_schedule(10, def);
  hopper_v10.accumulator_buffers(2);
  check_rule(hopper_v10, "accumulator-buffers",
             "accumulator_buffers 2: the accumulator lives in registers (wgmma on sm_90a); a second buffer is a TMEM "
             "accumulator's, on sm_100a (mma ... sm_100a)");
  Schedule one_role = tutorial_schedule(6, def, Target::Sm100a);
  one_role.accumulator_buffers(2);
  check_rule(one_role, "accumulator-buffers",
             "accumulator_buffers 2: a tile's writeback overlaps the next tile's MMAs only beside them, in warp roles; "
             "add warp_specialize (e.g. warp_specialize 40 232)",
             blackwell());
  Schedule pp = ping_pong_schedule(def, Target::Sm100a);
  pp.accumulator_buffers(2);
  check_rule(pp, "accumulator-buffers",
             "accumulator_buffers 2: each ping-pong consumer already owns an accumulator, and one's writeback overlaps "
             "the other's MMAs; drop one of the two",
             blackwell());
  check_rule(sched(def, "tile 128 256 64\ninline cast\nmma 128 256 16 sm_100a\nbind k_o serial\nbind m_o block.y\n"
                        "bind n_o block.x\ncache_read A tma\ncache_read B tma\nwarp_specialize 40 232\n"
                        "circular_buffer k_o 2\naccumulator_buffers 2\n"),
             "accumulator-buffers",
             "accumulator_buffers 2: each CTA computes one tile, so no next tile's MMAs overlap its writeback; add "
             "persist (e.g. persist m_o n_o)",
             blackwell());
  // Two 128 x 256 accumulators fill the 512 columns; two of a 256-row tile's (two column sets) do not.
  const Schedule v10 = tutorial_schedule(10, def, Target::Sm100a);  // v10 on sm_100a takes two
  CHECK(v10.accumulator_buffers_of() == 2);
  CHECK_NOTHROW(validate_schedule(v10, blackwell()));
  check_rule(sched(def, "tile 256 256 64\ninline cast\nmma 128 256 16 sm_100a\nbind k_o serial\nbind m_o block.y\n"
                        "bind n_o block.x\ncache_read A tma\ncache_read B tma\npersist m_o n_o\nwarp_specialize 40 232\n"
                        "circular_buffer k_o 2\naccumulator_buffers 2\n"),
             "tmem-columns",
             "2 256 x 256 fp32 accumulators (accumulator_buffers) need 1024 TMEM columns, over the 512 an SM has; use a "
             "tile n of at most 128",
             blackwell());
}
