// The `auto` heuristic on the CPU: what it chooses for the shapes it was measured on (each pin
// names the H100 measurement behind it), that every choice lowers, and that the params print and
// hash as the record of the choice.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "error_check.h"
#include "nvcc_compile.h"
#include "schedules/auto_schedule.h"
#include "schedules/bench_report.h"
#include "schedules/gemm.h"

using namespace gg;

namespace {

AutoParams choose(int64_t m, int64_t n, int64_t k, DType out = DType::BF16) {
  GemmOptions o;
  o.out = out;
  return choose_auto_params(gemm_definition(m, n, k, o), hopper());
}

// The ranking's first config of a tile_m x tile_n tile (the test fails if there is none).
const AutoParams& ranked_tile(const std::vector<AutoParams>& ranked, int64_t tile_m, int64_t tile_n) {
  const auto it = std::find_if(ranked.begin(), ranked.end(),
                               [&](const AutoParams& p) { return p.tile_m == tile_m && p.tile_n == tile_n; });
  REQUIRE_MESSAGE(it != ranked.end(), "no " << tile_m << "x" << tile_n << " config in the ranking");
  return *it;
}

}  // namespace

TEST_CASE("auto: large problems take v10's 128x256 tile and a 2-CTA cluster, odd m tile counts padded") {
  const AutoParams p = choose(6144, 6144, 6144);
  CHECK(p.to_string() == "tile 128x256x64, 2 consumers, 4 stages, cluster 2 (B multicast), group 8, store subtiles of 64");
  // 8192^3's last wave is half empty: the last wave's tiles split instead, without the cluster.
  CHECK(choose(8192, 8192, 8192).to_string() ==
        "tile 128x256x64, 2 consumers, 4 stages, split-K 3 on the last wave, no cluster, group 8, store subtiles of 64");
  // 63 m tiles: the last pair takes a tile past M, counted among the tiles the waves hold.
  const AutoParams odd = choose(8000, 6000, 520);
  CHECK(odd.cluster == 2);
  CHECK(odd.tiles == 64 * 24);
  // 3 m tiles would pad a third more: no cluster.
  CHECK(choose(384, 8192, 8192).cluster == 1);
  // 33 x 16 tiles of 128x256 fill 4 waves of 132; padded to 34 x 16 they would take a fifth.
  const AutoParams wave = choose(4097, 4095, 4096);
  CHECK(wave.to_string() == "tile 128x256x64, 2 consumers, 4 stages, no cluster, group 8, stores from registers");
}

TEST_CASE("auto: B multicast only where the MMAs, not DRAM, bound the problem") {
  // H100, one process against cuBLAS: 1000^3 in 64x128 tiles 0.85x with B multicast, 0.78-0.80x
  // without; DRAM-bound 256x8192x8192 in 128x128 tiles 0.97x without, 0.93x with; 128x8192x8192
  // in 64x128 tiles 1.01x without, 0.98x with.
  CHECK(choose(1000, 1000, 1000).cluster == 2);
  CHECK(choose(1000, 1000, 1000).tile_m == 64);
  CHECK(choose(256, 8192, 8192).cluster == 1);
  CHECK(choose(128, 8192, 8192).cluster == 1);
  CHECK(choose(4096, 4096, 4096).cluster == 2);
  // the same tile count either way: the cluster does not change the ranking's figures
  const AutoParams big = choose(256, 8192, 8192);
  CHECK(big.tile_m == 128);
  CHECK(big.tiles == 128);
}

TEST_CASE("auto: skinny M takes 64-row tiles with one consumer and a deep pipeline") {
  // 1x4096x4096 (which gg::gemm runs swapped, see gemm_test): one consumer, the pipeline as deep
  // as the cap allows, since bytes in flight bound it up to there (H100 at 8 stages: 64x128 0.70x
  // cuBLAS, 64x64 0.55x, 64x32 0.49x, 64x16 0.27x) and queue behind DRAM past it.
  const AutoParams m1 = choose(1, 4096, 4096);
  CHECK(m1.tile_m == 64);
  CHECK(m1.consumers == 1);
  CHECK(m1.stages == kMaxAutoStages);
  // Swapped, the decode tile is 64x16 with k tiles of 256, 5 stages (H100 1.05x cuBLAS; 11 stages
  // of 128, which fit in shared memory, 0.97x).
  const AutoParams decode = choose(4096, 1, 4096);
  CHECK(decode.tile_n == 16);
  CHECK(decode.tile_k == 256);
  CHECK(decode.stages == 5);
  // 64x14336x4096: 64x128 1.005x, 64x112 0.998x, 64x144 0.979x, 64x256 0.971x.
  CHECK(choose(64, 14336, 4096).tile_n == 128);
  // 128x8192x8192: 64x128 0.999x, 128x64 0.979x, 128x128 0.933x, 64x64 0.898x.
  const AutoParams m128 = choose(128, 8192, 8192);
  CHECK(m128.tile_m == 64);
  CHECK(m128.tile_n == 128);
  // 256x8192x8192 (with B multicast): 128x128 0.933x, 64x128 0.735x, 128x256 0.680x.
  const AutoParams m256 = choose(256, 8192, 8192);
  CHECK(m256.tile_m == 128);
  CHECK(m256.tile_n == 128);
}

TEST_CASE("auto: the shapes file's choices, as measured (every pin is a config the record ran)") {
  // benchmarks/shapes.txt's shapes and the configs docs/performance.md measured for them; a
  // change to the model that moves one of these needs a new measurement.
  const std::vector<std::pair<std::string, std::string>> pinned = {
      {"4096 4096 4096", "tile 128x256x64, 2 consumers, 4 stages, cluster 2 (B multicast), group 8, store subtiles of 64"},
      {"16384 1536 7168", "tile 128x256x64, 2 consumers, 4 stages, cluster 2 (B multicast), group 8, store subtiles of 64"},
      {"8192 8192 8192", "tile 128x256x64, 2 consumers, 4 stages, split-K 3 on the last wave, no cluster, group 8, store subtiles of 64"},
      {"8192 8192 28672", "tile 128x256x64, 2 consumers, 4 stages, split-K 3 on the last wave, no cluster, group 8, store subtiles of 64"},
      {"64 14336 4096", "tile 64x128x64, 1 consumer, 8 stages, no cluster, group 8, store subtiles of 64"},
      {"128 8192 8192", "tile 64x128x64, 1 consumer, 8 stages, no cluster, group 8, store subtiles of 64"},
      {"256 8192 8192", "tile 128x128x64, 2 consumers, 6 stages, no cluster, group 8, store subtiles of 64"},
      {"1000 1000 1000", "tile 64x128x64, 1 consumer, 8 stages, cluster 2 (B multicast), group 8, store subtiles of 64"},
      {"8000 6000 520", "tile 128x256x64, 2 consumers, 4 stages, cluster 2 (B multicast), group 8, store subtiles of 64"},
      {"255 257 264", "tile 64x16x64, 1 consumer, 5 stages, no cluster, group 8, stores from registers"},
      {"4097 4095 4096", "tile 128x256x64, 2 consumers, 4 stages, no cluster, group 8, stores from registers"}};
  for (const auto& pin : pinned) {
    const std::string& shape = pin.first;  // clang 14 cannot capture structured bindings (CAPTURE)
    const std::string& config = pin.second;
    CAPTURE(shape);
    int64_t m = 0, n = 0, k = 0;
    std::istringstream(shape) >> m >> n >> k;
    for (DType in : {DType::BF16, DType::F16}) {
      GemmOptions o;
      o.in = o.out = in;
      CHECK(choose_auto_params(gemm_definition(m, n, k, o), hopper()).to_string() == config);
    }
  }
  // gg::gemm runs the decode shapes swapped, in 64x16 tiles with k tiles of 256, unsplit.
  for (int64_t m : {1, 16})
    CHECK(plan_gemm(m, 4096, 4096).config ==
          "swap A/B; tile 64x16x256, 1 consumer, 5 stages, no cluster, group 8, stores from registers");
}

TEST_CASE("auto: between configs the model cannot tell apart, the fuller last wave") {
  // H200 (2026-11-28, two rounds each): 2560^2 x 4096 swapped in 128x240 tiles (220 of them, 1.67
  // waves) 656-657 TFLOP/s, in 128x208 (260, 1.97 waves) 737-740 (bf16; f16 596-602 against
  // 708-710); the model put them 0.4% apart.
  const GemmPlan plan = plan_gemm(2560, 2560, 4096);
  CHECK(plan.config ==
        "swap A/B; tile 128x208x64, 2 consumers, 4 stages, cluster 2 (B multicast), group 8, store subtiles of 208");
  const std::vector<AutoParams> ranked = rank_auto_params(plan.def, hopper());
  REQUIRE(ranked.size() > 1);
  CHECK(ranked.front().tiles == 260);
  CHECK(ranked.front().waves == 2);
  // The 128x240 config is as fast by the model, and ranked behind it.
  const auto wider = std::find_if(ranked.begin(), ranked.end(), [](const AutoParams& p) { return p.tile_n == 240; });
  REQUIRE(wider != ranked.end());
  CHECK(std::abs(wider->predicted_us - ranked.front().predicted_us) <= 0.01 * ranked.front().predicted_us);
  // The record's plans keep theirs (no shape of benchmarks/shapes.txt moved).
  CHECK(choose(4096, 4096, 4096).tile_n == 256);
}

TEST_CASE("auto: within one wave of MMA-bound tiles the model cannot tell apart, the narrower tiles that fill more SMs") {
  // H200 (2026-11-28, the old plan and this one alternating, two rounds, TFLOP/s): 1280^2 x 8192 in
  // 100 128x128 tiles 591, in 120 128x112 607-615; 1024 x 1664 x 4096 523-529 -> 569-574; 512 x
  // 3328 x 8192 605-607 -> 658; the model put them within 0.2%.
  const AutoParams p = choose(1280, 1280, 8192);
  CHECK(p.tile_m == 128);
  CHECK(p.tile_n == 112);
  CHECK(p.tiles == 120);
  CHECK(p.waves == 1);
  CHECK(p.split_k == 1);
  CHECK(p.subtile_cols == 112);  // 112 columns are not whole 64-column atoms: one staged subtile
  const std::vector<AutoParams> ranked = rank_auto_params(gemm_definition(1280, 1280, 8192), hopper());
  const auto square = std::find_if(ranked.begin(), ranked.end(),
                                   [](const AutoParams& c) { return c.tile_m == 128 && c.tile_n == 128 && !c.ping_pong; });
  REQUIRE(square != ranked.end());
  CHECK(square->tiles == 100);
  CHECK(std::abs(square->predicted_us - p.predicted_us) <= 0.01 * p.predicted_us);  // a tie by the model
  // Only between tiles of as many rows (64-row tiles have one consumer: 576 x 2176 x 5120 stays in
  // 128-row tiles), only where the MMAs bound the problem, and no plan of the record moves.
  CHECK(choose(576, 2176, 5120).tile_m == 128);
  // Nor narrower than 112 columns (2712 x 472 x 12816 in 128x80 tiles lost 8% to 128x96), nor under
  // 16 k tiles (2144 x 712 x 688 in 128x112 lost 8% to 128x128).
  CHECK(choose(2712, 472, 12816).tile_n == 96);
  CHECK(choose(2144, 712, 688).tile_n == 128);
  CHECK(choose(1344, 1344, 1024).tile_n == 112);
  CHECK(choose(4096, 4096, 4096).tile_n == 256);
  CHECK(choose(1024, 1024, 4096).tile_m * choose(1024, 1024, 4096).tile_n == 64 * 128);
}

TEST_CASE("auto: within one wave of DRAM-bound tiles the model cannot tell apart, more CTAs loading") {
  // H200 (2026-11-28, the old plan and this one alternating, two rounds, TFLOP/s): FP8 64 x 7168 x
  // 16384 in 56 64x128 tiles 368, in 112 64x64 410-411 (H100: 50.1 against 48.4 us); bf16 128 x
  // 12288 x 4096 in 96 128x128 tiles 400-403, in 128 64x192 411-415; 256 x 5120 x 13824 in 108
  // 128x96 553-555, in 128 128x80 569. The model put each pair within 1%.
  GemmOptions fp8;
  fp8.in = DType::E4M3;
  const GemmPlan plan = plan_gemm(64, 7168, 16384, fp8);
  CHECK(plan.config == "tile 64x64x128, 1 consumer, 8 stages, no cluster, group 8, store subtiles of 64");
  const std::vector<AutoParams> ranked = rank_auto_params(plan.def, hopper());
  REQUIRE(ranked.size() > 1);
  CHECK(ranked.front().tiles == 112);
  const AutoParams& wider = ranked_tile(ranked, 64, 128);
  CHECK(wider.tiles == 56);
  CHECK(std::abs(wider.predicted_us - ranked.front().predicted_us) <= 0.01 * ranked.front().predicted_us);
  CHECK(choose(128, 12288, 4096).tiles == 128);
  CHECK(choose(256, 5120, 13824).tile_n == 80);
  // Not where a tile holds rows past the problem (a decode's 64-row tile over M = 1 reads one row),
  // nor where the MMAs bound it: the record's plans keep theirs.
  CHECK(choose(4096, 4096, 4096).tile_n == 256);
  CHECK(choose(1280, 1280, 8192).tile_n == 112);
}

TEST_CASE("auto: within one wave of as many MMA-bound tiles the model ties, the smaller tile") {
  // H200 (2026-11-28, two rounds): 3792 x 800 x 10800 in 120 128x208 tiles 92.1-92.3 us, in 120
  // 128x256 (the old plan) 161.4-161.9, cuBLAS 103-105. The model put them 0.1% apart: its load
  // term sets both tiles' pace, though the wider one computes 224 columns past N in its last tile.
  const Definition def = gemm_definition(3792, 800, 10800, GemmOptions{});
  const std::vector<AutoParams> ranked = rank_auto_params(def, hopper());
  REQUIRE(!ranked.empty());
  CHECK(ranked.front().tile_m == 128);
  CHECK(ranked.front().tile_n == 208);
  CHECK(ranked.front().tiles == 120);
  const AutoParams& wider = ranked_tile(ranked, 128, 256);
  CHECK(wider.tiles == 120);
  CHECK(std::abs(wider.predicted_us - ranked.front().predicted_us) <= 0.01 * ranked.front().predicted_us);
  // Not between different tile counts (the fuller wave decides), nor DRAM-bound ones.
  CHECK(choose(1280, 1280, 8192).tile_n == 112);
  CHECK(choose(4096, 4096, 4096).tile_n == 256);
}

TEST_CASE("auto: rows at half rate take a cluster even where DRAM bounds the roofline") {
  // H200 (2026-11-28, old and new plans alternating, two rounds): 280 x 3136 x 4072 32.5 -> 24.6 us,
  // 856 x 5968 x 472 17.7 -> 15.5, 848 x 992 x 456 8.9 -> 7.8; 568 x 4392 x 632 13.3 -> 12.5 in
  // swapped 128x192 tiles, where 128x208 ones padded from 5 m tiles to 6 ran 14.8.
  for (const std::array<int64_t, 3>& shape : {std::array<int64_t, 3>{280, 3136, 4072}, {856, 5968, 472}, {848, 992, 456}}) {
    CAPTURE(shape[0]);
    const GemmPlan plan = plan_gemm(shape[0], shape[1], shape[2]);
    CHECK_FALSE(problem_roofline(plan.def, hopper()).mma_bound());
    CHECK(plan.config.find("cluster 2") != std::string::npos);
  }
  const GemmPlan padded = plan_gemm(568, 4392, 632);
  CHECK(padded.swapped());
  CHECK(padded.config.find("tile 128x192x64") != std::string::npos);
  CHECK(padded.config.find("cluster 2") != std::string::npos);
  // Rows at full rate where DRAM bounds it, and a k loop of a few tiles, keep no cluster.
  CHECK(plan_gemm(256, 8192, 8192).config.find("no cluster") != std::string::npos);
  CHECK(plan_gemm(77, 129, 72).config.find("no cluster") != std::string::npos);
  CHECK(plan_gemm(255, 257, 264).config.find("no cluster") != std::string::npos);
}

TEST_CASE("auto: a column-major 16-bit output is TMA-stored through a transposed buffer, not from registers") {
  // H200 (2026-11-28), 1280^2 x K in swapped 128x128 tiles: 10.7, 13.1, 18.4 and 47.7 us at K =
  // 512, 1024, 2048 and 8192 stored from registers (7 stages), 8.8, 11.3, 16.3 and 46.0 staged (6).
  // The swapped definition (gg::gemm's D^T = B * A^T) has the column-major output, its rows the
  // caller's N, compiled; the caller's M is read at run time.
  const Definition def = gemm_definition(1280, 1280, 8192, GemmOptions{}, true);
  CHECK_FALSE(tma_storable_output(def));
  CHECK(tma_storable_transposed(def));
  for (const AutoParams& p : rank_auto_params(def, hopper())) {
    CAPTURE(p.to_string());
    CHECK(p.subtile_cols > 0);
    CHECK(p.subtile_cols % 16 == 0);  // stmatrix.trans writes whole 16 columns
  }
  const AutoParams best = choose_auto_params(def, hopper());
  const std::string source = emit_cuda(auto_schedule(def, best)).source;
  CHECK(source.find("gg::dev::stmatrix_x4_trans(") != std::string::npos);
  CHECK(source.find("gg::dev::tma_store_2d(") != std::string::npos);
  // Narrow tiles too (a transposed buffer's box runs along M): 64 x 4096 x 14336 swapped, in 64x32
  // tiles (H200: 208-209 TFLOP/s, 1.04x cuBLAS; 193 straight in 64x128 tiles split in 4). Fewer
  // columns than one atom store their few values sooner from registers (1 x 4096 x 4096 swapped:
  // 13.75-13.81 us so, 14.04 staged).
  CHECK(choose_auto_params(gemm_definition(64, 4096, 14336, GemmOptions{}, true), hopper()).subtile_cols == 32);
  CHECK(plan_gemm(64, 4096, 14336).config.find("swap A/B; tile 64x32x256") == 0);
  CHECK(choose_auto_params(gemm_definition(16, 4096, 4096, GemmOptions{}, true), hopper()).subtile_cols == 0);
  // Not where stmatrix cannot write it (f32), rows of M not whole 16 bytes, a length read at run
  // time (the caller's own column-major D, M unknown until launch), or a row-major output.
  GemmOptions f32_out, col;
  f32_out.out = DType::F32;
  col.layout.d = OutputLayout::ColumnMajor;
  const Definition f32 = gemm_definition(1280, 1280, 8192, f32_out, true),
                   ragged = gemm_definition(1280, 1281, 8192, GemmOptions{}, true);
  CHECK_FALSE(tma_storable_transposed(f32));
  CHECK_FALSE(tma_storable_transposed(ragged));
  CHECK_FALSE(tma_storable_transposed(gemm_definition(1280, 1280, 8192, col)));
  CHECK_FALSE(tma_storable_transposed(gemm_definition(1280, 1280, 8192)));
  CHECK(choose_auto_params(f32, hopper()).subtile_cols == 0);
  CHECK(choose_auto_params(ragged, hopper()).subtile_cols == 0);
}

TEST_CASE("auto: no tile split where unsplit tiles of 64x128 or more fill a wave") {
  // H100 (2026-11-28, gemmgen bench, the old plan and this one alternating, two rounds), TFLOP/s:
  // 1408^2 x 4096 450 -> 598 and 512 x 4096 x 7168 591 -> 693 (128x256 in 2 splits -> unsplit
  // 128x128), 1024^2 x 4096 383 -> 500 and 256 x 4096 x 14336 461 -> 551 (-> unsplit 64x128),
  // masked groups of 512 of 1024 rows in use at 4096 x 7168 1141-1154 -> 1324-1339.
  for (const auto& shape :
       {std::tuple{1408, 1408, 4096, 128 * 128}, std::tuple{1024, 2048, 8192, 128 * 128}, std::tuple{2048, 1024, 8192, 128 * 128},
        std::tuple{512, 4096, 7168, 128 * 128}, std::tuple{512, 4096, 14336, 128 * 128}, std::tuple{1024, 1024, 4096, 64 * 128},
        std::tuple{1024, 1024, 8192, 64 * 128}, std::tuple{256, 4096, 14336, 64 * 128},
        // 75-85% of the SMs (H200, 2026-11-28): 1280^2 x 8192 (100 tiles) 523 -> 550-568 TFLOP/s
        // (128x256 in 2 splits -> unsplit 128x128, swapped), 1024 x 1664 x 4096 418 -> 493; since
        // then in 128x112 tiles, which fill more of the wave (the next test)
        std::tuple{1280, 1280, 8192, 128 * 112}, std::tuple{1280, 1280, 4096, 128 * 112},
        std::tuple{1024, 1664, 4096, 128 * 112}, std::tuple{2304, 768, 4096, 128 * 112},
        std::tuple{768, 2304, 8192, 128 * 112}, std::tuple{512, 3328, 8192, 128 * 112}}) {
    // (named, not bound: clang 14's lambdas in CAPTURE cannot capture structured bindings)
    const int m = std::get<0>(shape), n = std::get<1>(shape), k = std::get<2>(shape), area = std::get<3>(shape);
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    const AutoParams p = choose(m, n, k);
    CHECK(p.split_k == 1);
    CHECK(p.tile_m * p.tile_n == area);
    CHECK(p.waves == 1);
  }
  GemmOptions masked;
  masked.layout.source = ProblemSource::Masked;
  masked.layout.batch = 2;
  const GemmPlan half = plan_gemm(256, 4096, 7168, masked);  // 256 rows in use of each group
  CHECK(half.describe() == "auto: tile 128x128x64, 2 consumers, 6 stages, no cluster, group 8, store subtiles of 64");
  // The splits stay where no such tile fills three quarters of a wave (512^2 x 16384: 32 64x128
  // tiles), past K = 16384 (512 x 2048 x 32768 ran 646-659 split, 601-648 unsplit), and for FP8
  // (promoted k loops, not measured against it).
  CHECK(choose(512, 512, 16384).split_k == 4);
  CHECK(choose(512, 2048, 32768).split_k == 4);
  GemmOptions fp8;
  fp8.in = DType::E4M3;
  CHECK(plan_gemm(128, 4096, 7168, fp8).describe().find("split-K 2") != std::string::npos);
}

TEST_CASE("auto: the DRAM floor and the tile order's traffic count every matrix a batch or groups read") {
  const double rate = ModelRates{}.dram_bytes_per_s;
  const auto floor_us = [&](double bytes) { return bytes / rate * 1e6; };
  // 16 masked groups of 128 rows at 4096 x 7168: each group's B read once, 940 MB (280 us), where
  // the model once counted one matrix (it predicted 163 us; cuBLAS's strided batch ran 358 us).
  GemmOptions masked;
  masked.layout.batch = 16;
  masked.layout.source = ProblemSource::Masked;
  const double masked_bytes = 16.0 * (128 + 4096) * 7168 * 2 + 16.0 * 128 * 4096 * 2;
  for (const AutoParams& p : rank_auto_params(gemm_definition(128, 4096, 7168, masked), hopper())) {
    CAPTURE(p.to_string());
    CHECK(p.predicted_us >= floor_us(masked_bytes));
  }
  // 64 contiguous groups sharing A's 16384 rows: A and D once, B 64 times (3.76 GB); the tile
  // order's waves read each group's B, so they count at least that much.
  GemmOptions contiguous;
  contiguous.layout.batch = 64;
  contiguous.layout.source = ProblemSource::Contiguous;
  const double b_bytes = 64.0 * 4096 * 7168 * 2;
  for (const AutoParams& p : rank_auto_params(gemm_definition(16384, 4096, 7168, contiguous), hopper())) {
    CAPTURE(p.to_string());
    CHECK(p.predicted_us >= floor_us(b_bytes + 16384.0 * 7168 * 2 + 16384.0 * 4096 * 2));
    CHECK(p.operand_mb * 1e6 >= b_bytes);
  }
  // A batch of 8 sharing one B (stride 0) reads it once: a lower floor than 8 Bs.
  GemmOptions shared, own;
  shared.layout.batch = own.layout.batch = 8;
  shared.layout.stride_b = 0;
  const AutoParams one_b = choose_auto_params(gemm_definition(64, 8192, 8192, shared), hopper());
  const AutoParams eight_b = choose_auto_params(gemm_definition(64, 8192, 8192, own), hopper());
  CHECK(eight_b.predicted_us >= floor_us(8.0 * 8192 * 8192 * 2));
  CHECK(one_b.predicted_us < floor_us(8.0 * 8192 * 8192 * 2));
}

TEST_CASE("auto: split-K where long k loops leave most SMs idle, never where DRAM bounds the problem") {
  // H100, tune: 512x512x16384 64x128 in 4 splits 25.1 us (0.93x cuBLAS), 128x128 in 8 28.5 us;
  // unsplit, its 32 tiles each stream all of K (the model: 96 us).
  const AutoParams small = choose(512, 512, 16384);
  CHECK(small.to_string() == "tile 64x128x64, 1 consumer, 8 stages, split-K 4, no cluster, group 8, store subtiles of 64");
  CHECK(small.tiles == 128);
  // 1024x1024x16384: 128x256 in 4 splits 59.5 us (0.94x), 128x128 in 2 59.9 us; 128 unsplit 64x128
  // tiles fill the wave, so no split is offered since 2026-11-28 (not timed there; at 1024^2 x 8192
  // they ran 607-614 TFLOP/s against 531-532 for 128x128 in 2 splits): see "auto: no tile split ...".
  const AutoParams wide = choose(1024, 1024, 16384);
  CHECK(wide.split_k == 1);
  CHECK(wide.to_string() == "tile 64x128x64, 1 consumer, 8 stages, no cluster, group 8, store subtiles of 64");
  // A split is offered only for a config whose last wave leaves half the SMs idle, and each
  // split keeps 4 k tiles: 4096^3 has split candidates only among such tile shapes (64x64: 4096
  // tiles, a last wave of 4), and takes the unsplit 128x256 (512 tiles, a last wave of 116).
  const auto last_wave = [](int64_t tiles) { return tiles - (tiles - 1) / 132 * 132; };
  const Definition square = gemm_definition(4096, 4096, 4096);
  for (const AutoParams& p : rank_auto_params(square, hopper()))
    if (p.split_k > 1) {
      CAPTURE(p.to_string());
      CHECK(2 * last_wave(ceil_div(4096, p.tile_m) * ceil_div(4096, p.tile_n)) <= 132);
    }
  CHECK(choose(4096, 4096, 4096).split_k == 1);
  for (const AutoParams& p : rank_auto_params(gemm_definition(512, 512, 448), hopper())) CHECK(p.split_k == 1);  // 7 k tiles
  // DRAM-bound: no split even for configs that would leave SMs idle (H100: 128x8192x8192 and
  // 256x8192x8192 ran no faster split, nor did the decode kernels).
  for (const auto& [m, n, k] : {std::tuple{128, 8192, 8192}, std::tuple{256, 8192, 8192}, std::tuple{4096, 1, 4096}})
    for (const AutoParams& p : rank_auto_params(gemm_definition(m, n, k), hopper())) CHECK(p.split_k == 1);
  // Every split candidate lowers and deals its tiles' splits as work units.
  for (const AutoParams& p : rank_auto_params(gemm_definition(512, 512, 16384), hopper()))
    if (p.split_k > 1) {
      CHECK(p.tiles == ceil_div(512, p.tile_m) * ceil_div(512, p.tile_n) * p.split_k);
      CHECK_NOTHROW(lower(auto_schedule(gemm_definition(512, 512, 16384), p)));
    }
  // A last wave mostly empty: 2304x2304x16384 in 128x256 tiles is 162 tiles, 2 waves with 30 in
  // the second. All of them in 4 splits (648 units, 5 waves of a quarter the work) ran 0.82x
  // cuBLAS on an H100, 2 unsplit waves 0.70x; the split on the last wave only runs 132 whole
  // tiles and 30 in 4 splits, 252 units in 2 waves (the model: 244 us against 250 and 2 unsplit
  // waves' 320).
  const AutoParams ragged_wave = choose(2304, 2304, 16384);
  CHECK(ragged_wave.to_string() ==
        "tile 128x256x64, 2 consumers, 4 stages, split-K 4 on the last wave, no cluster, group 8, store subtiles of 64");
  CHECK(ragged_wave.tiles == 132 + 30 * 4);
  CHECK(ragged_wave.waves == 2);
  const Kernel tail = lower(auto_schedule(gemm_definition(2304, 2304, 16384), ragged_wave));
  CHECK(tail.plan.split_k_tail);
  // Where the model gains under a hundredth over the cluster's unsplit kernel, no split.
  CHECK(choose(6144, 6144, 6144).split_k == 1);
  // A last wave at least three quarters full, or no wave past the first: no tail split.
  for (const AutoParams& p : rank_auto_params(gemm_definition(4096, 4096, 4096), hopper())) CHECK_FALSE(p.split_tail);
  for (const AutoParams& p : rank_auto_params(gemm_definition(512, 512, 16384), hopper())) CHECK_FALSE(p.split_tail);
}

TEST_CASE("auto: rows 16 bytes into a 32-byte sector cost TMA requests; the cluster's multicast halves a shared operand's") {
  // K = 7000: K-major rows 14000 bytes apart, every other one starting 16 bytes into a sector. On an
  // H100 the unclustered split tail ran 237 us (0.60x cuBLAS) where K = 7168 ran 126 us; with B
  // multicast in 2-CTA clusters (the same split) 0.92x.
  const AutoParams odd = choose(2048, 3072, 7000), even = choose(2048, 3072, 7168);
  CHECK(odd.to_string() ==
        "tile 128x256x64, 2 consumers, 4 stages, split-K 2 on the last wave, cluster 2 (B multicast), group 8, store subtiles of 64");
  CHECK(even.to_string() ==
        "tile 128x256x64, 2 consumers, 4 stages, split-K 2 on the last wave, no cluster, group 8, store subtiles of 64");
  // The model's time for the unclustered config is K = 7168's and more: 384 rows a k tile at about
  // 3.5 ns each against the MMAs' 0.75 us.
  const Definition odd_def = gemm_definition(2048, 3072, 7000);
  AutoParams unclustered = even;
  predict_auto_params(odd_def, hopper(), unclustered);
  CHECK(unclustered.predicted_us > 1.6 * even.predicted_us);
  CHECK(odd.predicted_us < 0.8 * unclustered.predicted_us);
  // Rows a multiple of 32 bytes apart (K = 14000: 28000 bytes) cost nothing more (H100: 1.12x cuBLAS).
  AutoParams long_k = even;
  predict_auto_params(gemm_definition(2048, 3072, 14000), hopper(), long_k);
  AutoParams long_k_odd = even;
  predict_auto_params(gemm_definition(2048, 3072, 14008), hopper(), long_k_odd);
  CHECK(long_k_odd.predicted_us > 1.6 * long_k.predicted_us);
  // The split's cluster lowers: its pair shares each unit's B, whole tile or split.
  CHECK_NOTHROW(lower(auto_schedule(odd_def, odd)));
}

TEST_CASE("auto: D's rows stored from registers cost three times as much row-major as column-major, so ragged N swaps") {
  // H100: 3919 x 2881 x 244 ran 86 us straight (row-major rows of 2881 stored from registers) and
  // 47 us swapped (the kernel's D column-major); 4097 x 4095 x 4096 5.20x cuBLAS straight, 5.84x
  // swapped; 333 x 4444 x 555 1.33x straight, 1.71x swapped.
  for (const auto& shape : {std::tuple{3919, 2881, 244}, std::tuple{4097, 4095, 4096}, std::tuple{333, 4444, 555}}) {
    // (no structured binding: clang 14 refuses one inside CAPTURE's lambda)
    const int m = std::get<0>(shape), n = std::get<1>(shape), k = std::get<2>(shape);
    CAPTURE(m);
    const GemmPlan plan = plan_gemm(m, n, k);
    CHECK(plan.swapped());
    REQUIRE(plan.straight_best.has_value());
    REQUIRE(plan.swapped_best.has_value());
    CHECK(plan.swapped_best->predicted_us < 0.95 * plan.straight_best->predicted_us);
  }
  // Aligned rows store staged either way: 3000 x 5000 x 1024 swaps for 128x240 tiles, its D^T
  // through a transposed buffer (H200: 589-603 TFLOP/s against 591-600 straight in 128x256); tiny
  // ragged problems (one wave, latency-bound) stay straight.
  const GemmPlan aligned = plan_gemm(3000, 5000, 1024);
  CHECK(aligned.swapped());
  CHECK(aligned.config.find("store subtiles of 48") != std::string::npos);
  CHECK_FALSE(plan_gemm(77, 129, 72).swapped());
  CHECK_FALSE(plan_gemm(255, 257, 264).swapped());
}

TEST_CASE("auto: D = A * A^T takes no multicast cluster (A is both operands), and a cluster's multicast of it is refused") {
  // Before, every clustered candidate of a symmetric problem hit an internal check while lowering
  // (the shared slice landed in both operands' stages): `explain --schedule auto --symmetric` died.
  GemmOptions o;
  o.layout.symmetric = true;
  o.out = DType::F32;  // the whole product (the symmetric plan's mirror moves 16-bit values)
  for (const int64_t size : {1000, 4096}) {
    CAPTURE(size);
    const GemmPlan plan = plan_gemm(size, size, size, o);
    CHECK(plan.symmetric_refusal.find("which moves 16-bit values, but the output is f32") != std::string::npos);
    REQUIRE(plan.params.has_value());
    CHECK(plan.params->cluster == 1);
    CHECK_NOTHROW(lower(plan.build()));
    for (const AutoParams& p : rank_auto_params(plan.def, hopper())) CHECK(p.cluster == 1);
  }
  AutoParams clustered = choose(4096, 4096, 4096);
  REQUIRE(clustered.cluster == 2);
  clustered.tile_n = 128;  // the f32 output promotes: a 128x256 tile has no registers for that
  testing::check_error([&] { lower(auto_schedule(gemm_definition(4096, 4096, 4096, o), clustered)); }, "not-lowered",
              "multicast in D = A * A^T (A is read as both operands, and the cluster would share it as both)");
}

TEST_CASE("the planner plans D = A * A^T as the symmetric schedule where it lowers and wins, the whole product where not") {
  GemmOptions o;
  o.layout.symmetric = true;
  for (const auto& shape :
       {std::tuple<int64_t, int64_t, int64_t>{8192, 8192, 256}, {6144, 6144, 256}, {4096, 4096, 128}, {3000, 3072, 128},
        {3000, 3000, 128}, {1000, 1000, 128}}) {  // (K = 3000 and 1000: A's rows at half rate; 1000: 36 tiles)
    const int64_t size = std::get<0>(shape), k = std::get<1>(shape), tile_n = std::get<2>(shape);
    CAPTURE(size);
    const GemmPlan plan = plan_gemm(size, size, k, o);
    CHECK(plan.source == PlanSource::Symmetric);
    CHECK(plan.schedule == "symmetric");
    CHECK_FALSE(plan.swapped());
    const Kernel kernel = lower(plan.build());
    CHECK(kernel.plan.epilogue.commit == EpiloguePlan::Commit::Symmetric);
    CHECK(kernel.plan.tile_n == tile_n);  // the wide tile where its waves weigh less
    CHECK(explain_plan(plan).find("source:      symmetric (D = A * A^T: half the tiles") != std::string::npos);
  }
  // The whole product, and explain says why: fewer computing tiles than half the SMs with rows at full
  // rate (1024^3: 36), D's rows 600 bytes apart (TMA cannot store the mirror).
  const auto whole = [&](int64_t size, int64_t k) {
    const GemmPlan plan = plan_gemm(size, size, k, o);
    CHECK(plan.source == PlanSource::Auto);
    return explain_plan(plan);
  };
  CHECK(whole(1024, 1024).find("symmetric:   planned as the whole product: the symmetric plan's 36 computing tiles "
                               "fill less than half of 132 SMs, where the whole product's smaller tiles spread over "
                               "more of them") != std::string::npos);
  CHECK(whole(300, 64).find("symmetric:   planned as the whole product: the symmetric schedule does not lower "
                            "(symmetric: the mirror is stored by TMA from shared memory: write cache_write cast shared "
                            "tma (TMA cannot store here: D's rows are 300 x 2 bytes apart, not a multiple of 16; use "
                            "N a multiple of 8))") != std::string::npos);
  // a named schedule is the one asked for
  GemmOptions named = o;
  named.schedule = "v10";
  CHECK(plan_gemm(4096, 4096, 4096, named).source == PlanSource::Named);
}

TEST_CASE("auto: ping-pong and 256-row tiles are candidates the model ranks, and they lower") {
  const Definition def = gemm_definition(4096, 4096, 4096);
  bool ping_pong = false, rows_256 = false;
  for (const AutoParams& p : rank_auto_params(def, hopper())) {
    if (p.ping_pong) {
      ping_pong = true;
      CHECK(p.tile_m == 128);
      CHECK(p.tile_n <= 128);
      CHECK(p.to_string().find("2 ping-pong consumers") != std::string::npos);
      CHECK_NOTHROW(lower(auto_schedule(def, p)));
    }
    if (p.tile_m == 256) {
      rows_256 = true;
      CHECK(p.tile_n <= 128);  // two consumers of 128 rows: 128 accumulators a thread at most
      CHECK(p.multicast_a);    // the pair shares the 256-row A tile
      CHECK(p.to_string().find("cluster 2 (A multicast)") != std::string::npos);
      CHECK_NOTHROW(lower(auto_schedule(def, p)));
    }
  }
  CHECK(ping_pong);
  CHECK(rows_256);
  // Ping-pong's 128x128 tiles load twice the bytes per FLOP of the cooperative 128x256 one, and
  // the model ranks it behind, as measured (H100 4096^3: pingpong 0.85x cuBLAS, v10 1.00x).
  const std::vector<AutoParams> ranked = rank_auto_params(def, hopper());
  CHECK_FALSE(ranked.front().ping_pong);
  // No 256-row tile for M <= 128 (rows past M are padding).
  for (const AutoParams& p : rank_auto_params(gemm_definition(128, 8192, 8192), hopper())) CHECK(p.tile_m <= 128);
}

TEST_CASE("auto: the tile order fetching the fewest operand bytes where DRAM bounds the problem") {
  const auto bytes = [](const Definition& def, AutoParams p, Raster raster, int64_t group) {
    p.raster = raster;
    p.group = group;
    return order_operand_bytes(def, hopper(), p);
  };
  AutoParams p;
  p.tile_m = 128;
  p.tile_n = 256;
  p.cluster = 2;
  // 8192^3 in B-multicast pairs is a square grid of 32 x 32 pairs: row and column bands fetch
  // the same, and bands of 8 fetch less than single rows (a wave of 66 pairs: 8 pair rows and
  // 9 columns, against 3 rows and all 32 columns).
  const Definition square = gemm_definition(8192, 8192, 8192);
  for (int64_t group : {1, 4, 8, 16})
    CHECK(bytes(square, p, Raster::RowMajor, group) == bytes(square, p, Raster::ColumnMajor, group));
  CHECK(bytes(square, p, Raster::RowMajor, 8) < 0.6 * bytes(square, p, Raster::RowMajor, 1));
  // Each wave reads its own tiles' rows at least once: never less than the operands once.
  const double once = (8192.0 + 8192.0) * 8192 * 2;
  for (int64_t group : {1, 4, 8, 16}) CHECK(bytes(square, p, Raster::RowMajor, group) >= once);
  // 16384x1536x7168 (64 pairs x 6 n tiles): column bands walk the pairs under all 6 n tiles and
  // fetch about a quarter less than row bands of 8; the problem is compute-bound, where orders
  // measured alike, so auto keeps the default (pinned with the shapes file above).
  const Definition tall = gemm_definition(16384, 1536, 7168);
  CHECK(bytes(tall, p, Raster::ColumnMajor, 8) < 0.8 * bytes(tall, p, Raster::RowMajor, 8));
  CHECK(choose(16384, 1536, 7168).raster == Raster::RowMajor);
  // DRAM-bound (a short K writes a large D): 16384x2048x256 takes column bands of 8, which fetch
  // at least a tenth less than the default.
  const AutoParams short_k = choose(16384, 2048, 256);
  CHECK(short_k.raster == Raster::ColumnMajor);
  CHECK(short_k.group == 8);
  const Definition short_def = gemm_definition(16384, 2048, 256);
  CHECK(order_operand_bytes(short_def, hopper(), short_k) <= 0.9 * bytes(short_def, short_k, Raster::RowMajor, 8));
  CHECK(short_k.operand_mb == doctest::Approx(order_operand_bytes(short_def, hopper(), short_k) / 1e6));
  // The Hilbert curve is one of the orders weighed: on this grid its waves fetch more than
  // column bands of 8, which is why they are chosen.
  CHECK(bytes(short_def, short_k, Raster::Hilbert, 8) > order_operand_bytes(short_def, hopper(), short_k));
  // Every candidate's order is the default or saves a tenth, and never fetches more.
  for (const AutoParams& c : rank_auto_params(short_def, hopper())) {
    const double fallback = bytes(short_def, c, Raster::RowMajor, 8);
    CHECK(order_operand_bytes(short_def, hopper(), c) <= fallback);
    if (c.raster != Raster::RowMajor || c.group != 8) CHECK(order_operand_bytes(short_def, hopper(), c) <= 0.9 * fallback);
  }
}

TEST_CASE("auto: a problem under one wave whose K fits in the pipeline takes more, smaller tiles") {
  // H100: 255x257x264 1.97x cuBLAS in 64x16 tiles, 0.65x in 128x192; 77x129x72 1.76x against 0.74x.
  const AutoParams small = choose(255, 257, 264);
  CHECK(small.tile_m == 64);
  CHECK(small.tile_n == 16);
  CHECK(choose(77, 129, 72).tile_n == 16);
  // A K longer than the pipeline streams instead, and keeps the larger tile.
  CHECK(choose(1000, 1000, 1000).tile_n == 128);
}

TEST_CASE("auto: an output TMA cannot store is written from registers, with no staging") {
  const AutoParams p = choose(4097, 4095, 4096);
  CHECK(p.subtile_cols == 0);
  CHECK(p.to_string().find("stores from registers") != std::string::npos);
  // f32 out: 128-byte subtiles are 32 columns
  CHECK(choose(4096, 4096, 4096, DType::F32).subtile_cols == 32);
}

TEST_CASE("auto: every candidate is ranked by the model, and the chosen one lowers") {
  const Definition def = gemm_definition(1, 4096, 4096);
  const std::vector<AutoParams> ranked = rank_auto_params(def, hopper());
  REQUIRE(ranked.size() >= 4);
  for (size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].predicted_us <= ranked[i].predicted_us * 1.01);
  for (const AutoParams& p : ranked) {
    CHECK(p.stages >= 2);
    CHECK(p.stages <= kMaxAutoStages);
    CHECK(p.tiles > 0);
  }
  // the shapes file's every shape: a choice that lowers (choose lowers it), K-aligned or not
  for (const BenchShape& s : parse_shapes("4096 4096 4096\n1 4096 4096\n64 14336 4096\n77 129 72\n1000 1000 1000\n"
                                          "255 257 264\n8192 28672 4096\n16384 1536 7168\n",
                                          "inline")) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CHECK_NOTHROW(lower(auto_schedule(gemm_definition(s.m, s.n, s.k), choose(s.m, s.n, s.k))));
  }
}

TEST_CASE("auto: params print and hash as the record of the choice") {
  std::set<uint64_t> hashes;
  std::set<std::string> texts;
  for (const AutoParams& p : rank_auto_params(gemm_definition(1000, 1000, 1000), hopper())) {
    hashes.insert(p.hash());
    texts.insert(p.to_string());
    AutoParams same = p;
    same.predicted_us += 1;  // the prediction is not part of the choice
    CHECK(same.hash() == p.hash());
  }
  CHECK(hashes.size() == texts.size());
}

TEST_CASE("auto: K that TMA cannot take leaves auto without a config; gg::gemm falls back to a tutorial step") {
  try {
    choose(128, 128, 100);
    FAIL("expected no-schedule");
  } catch (const CompileError& e) {
    CHECK(e.rule() == "no-schedule");
    CHECK(std::string(e.message()).find("the auto heuristic found no config that lowers for M=128 N=128 K=100 (the "
                                        "last refusal: warp-specialize-needs-tma") != std::string::npos);
  }
  CHECK(pick_schedule(gemm_definition(128, 128, 100)) == "v4");
}

TEST_CASE("auto: staged tiles in 16-column steps fill the waves, stored in subtiles that divide them") {
  // H100 (2026-11-27): 1536^2 x 2048 ran 21.7 us in 96 128x192 tiles, 18.7 in 132 128x144 and
  // 19.3 in 120 128x160 (1.05x cuBLAS); 768 x 3072 x 4096 35.8 us in 128x192, 31.4 in 128x160.
  for (const auto& shape : {std::tuple<int64_t, int64_t, int64_t>{1536, 1536, 2048}, {768, 3072, 4096}, {1536, 1536, 1536}}) {
    const int64_t m = std::get<0>(shape), n = std::get<1>(shape), k = std::get<2>(shape);
    CAPTURE(m);
    CAPTURE(n);
    const AutoParams p = choose(m, n, k);
    CHECK(p.tile_n % 64 != 0);
    CHECK(p.tile_n % p.subtile_cols == 0);
    CHECK(p.subtile_cols % 16 == 0);
    CHECK(p.tiles > 96);  // more of the 132 SMs than the whole-atom tiles' 96
    CHECK(p.waves == 1);
    CHECK(emit_cuda(auto_schedule(gemm_definition(m, n, k), p)).source.find("store_subtile") != std::string::npos);
  }
  // The subtile: the widest whole-32-byte divisor up to one 128-byte atom, down to 64 bytes, else the
  // whole tile; each such width lowers.
  for (const auto& width : {std::pair<int64_t, int64_t>{144, 48}, {160, 32}, {176, 176}, {240, 48}, {208, 208}}) {
    const int64_t tile_n = width.first;
    CAPTURE(tile_n);
    AutoParams p = choose(1536, 1536, 2048);
    p.tile_n = tile_n;
    p.subtile_cols = width.second;
    p.store_buffers = 1;
    p.stages = 4;
    CHECK_NOTHROW(lower(auto_schedule(gemm_definition(1536, 1536, 2048), p)));
  }
  // Where whole atoms already fill the waves, they stay (the record's plans): a narrower tile must
  // be predicted a twentieth faster.
  CHECK(choose(4096, 4096, 4096).tile_n == 256);
  CHECK(choose(64, 14336, 4096).tile_n == 128);
  CHECK(choose(256, 8192, 8192).tile_n == 128);
  // A staged tile is never narrower than one atom (a skinny N pads one).
  for (const AutoParams& p : rank_auto_params(gemm_definition(4096, 16, 4096), hopper()))
    if (p.subtile_cols > 0) CHECK(p.tile_n >= 64);
}

TEST_CASE("auto: one wave of rows at full rate takes no cluster; rows at half rate and several waves keep it") {
  // H100 (2026-11-27), the same tiles with and without a 2-CTA cluster sharing B: 1408^2 x 4096 in
  // 128x128 tiles 38.5 us clustered, 27.0 without; 1536^2 x 2048 in 128x144 20.5 against 18.7;
  // 1000^3 (K = 1000: rows 16 bytes into a sector) 11.7 against 14.1; 4096^3 (4 waves) level.
  for (const AutoParams& p : rank_auto_params(gemm_definition(1408, 1408, 4096), hopper()))
    if (((1408 + p.tile_m - 1) / p.tile_m) * ((1408 + p.tile_n - 1) / p.tile_n) <= 132) CHECK(p.cluster == 1);
  CHECK(choose(1536, 1536, 2048).cluster == 1);
  CHECK(choose(2048, 1408, 4096).cluster == 1);
  CHECK(choose(1000, 1000, 1000).cluster == 2);
  CHECK(choose(3000, 3000, 1000).cluster == 2);
  CHECK(choose(4096, 4096, 4096).cluster == 2);
}

// Every config `auto` can choose compiles for sm_90a with no spill and no stack frame: the whole
// space rank_auto_params enumerates (tile m x tile n, with and without the 2-CTA cluster, the
// output staged or stored from registers, 16-bit and f32 outputs), each at the deepest pipeline
// that fits. f16 inputs share bf16's code but for the conversions, so bf16 stands for both.
// GEMMGEN_AUTO_NVCC=0 skips it.
TEST_CASE("auto: every config in the space compiles with nvcc, without spills") {
  const std::string nvcc = GEMMGEN_NVCC;
  const char* env = std::getenv("GEMMGEN_AUTO_NVCC");
  if ((env && std::string(env) == "0") || nvcc.empty() || !std::filesystem::exists(nvcc)) {
    MESSAGE("auto config space skipped: GEMMGEN_AUTO_NVCC=0 or no nvcc at '" << nvcc << "'");
    return;
  }
  struct Problem {
    int64_t m, n;
    DType out;
    ProblemLayout layout = {};
    int64_t k = 4096;
  };
  // 4096 rows pair their 64- and 128-row tiles into clusters, 384 rows only the 64-row ones; N=4095 is not
  // TMA-storable (stores from registers, 16-column steps).
  std::vector<std::string> sources, names;
  std::set<std::string> seen;
  for (Problem pr : {Problem{4096, 4096, DType::BF16}, Problem{384, 4096, DType::BF16}, Problem{4096, 4095, DType::BF16},
                     Problem{384, 4095, DType::BF16}, Problem{4096, 4096, DType::F32}, Problem{384, 4096, DType::F32},
                     Problem{128, 4096, DType::BF16},  // DRAM-bound: 64-row tiles without the cluster
                     Problem{4096, 64, DType::BF16, {.d = OutputLayout::ColumnMajor}},  // gg::gemm's swapped skinny M
                     Problem{4096, 4096, DType::BF16, {.a = Layout::MNMajor, .b = Layout::MNMajor}},  // TT
                     Problem{512, 512, DType::BF16, {}, 16384},    // split-K
                     Problem{512, 512, DType::F32, {}, 16384},     // split-K, f32 out
                     Problem{2304, 2304, DType::BF16, {}, 16384},  // split-K on the last wave
                     Problem{2304, 2304, DType::F32, {}, 16384},   // split-K on the last wave, f32 out
                     Problem{1536, 1536, DType::BF16, {}, 2048}}) {  // staged tiles of part of an atom's width
    GemmOptions o;
    o.out = pr.out;
    o.layout = pr.layout;
    const Definition def = gemm_definition(pr.m, pr.n, pr.k, o);
    for (const AutoParams& p : rank_auto_params(def, hopper())) {
      const std::string name = p.to_string() + (pr.out == DType::F32 ? ", f32 out" : "") +
                               (pr.layout == ProblemLayout{} ? "" : ", " + problem_layout_text(pr.layout));
      // The split count and the tile order are constants in the same code: one of each config.
      AutoParams shape = p;
      shape.split_k = std::min(p.split_k, 2);  // "on the last wave" stays: other code
      shape.raster = Raster::RowMajor;
      shape.group = 8;
      if (!seen.insert(name).second || !seen.insert("code: " + shape.to_string() + name.substr(p.to_string().size())).second)
        continue;
      try {
        sources.push_back(emit_cuda(auto_schedule(def, p)).source);
        names.push_back(name);
      } catch (const CompileError&) {  // a candidate that does not lower is never chosen
      }
    }
  }
  std::cout << "auto config space: " << sources.size() << " configs to compile\n";
  const std::vector<test::NvccResult> results = test::compile_sm90a(nvcc, sources, "auto");
  int failures = 0;
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].clean) {
      ++failures;
      std::cout << names[i] << ": nvcc failed or spilled\n" << results[i].log << "\n";
    }
  std::cout << "  " << results.size() - size_t(failures) << " of " << results.size() << " compiled clean\n";
  CHECK(sources.size() >= 60);
  for (const char* kind : {"ping-pong", "split-K", "(A multicast)", "tile 256x"})
    CHECK_MESSAGE(std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.find(kind) != std::string::npos; }),
                  "no config of kind " << kind);
  CHECK(failures == 0);
}
