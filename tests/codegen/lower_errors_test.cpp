// The user errors lower() raises beyond validate_schedule's rules (validate_test.cpp):
// `not-lowered` for what is recorded and checked but not generated yet, `unknown-pass` for
// --dump-after, `tile-size` from the resource summary and `persist-hilbert-size` from the tile
// order. Each pins its rule and message.
#include <doctest/doctest.h>

#include <sstream>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/lower.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "error_check.h"
#include "dsl/schedule_text.h"
#include "schedules/auto_schedule.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

using testing::check_error;

Definition gemm(int64_t m = 1024, int64_t n = 1024, int64_t k = 1024) {
  return make_definition(m, n, k, DType::BF16, DType::BF16);
}

// lower() and emit_cuda() (which lowers) both raise it.
void check_not_lowered(const Schedule& s, const std::string& what, const LowerOptions& options = {}) {
  const std::string fragment = what + " is recorded and checked, but this code generator does not lower it yet";
  check_error([&] { lower(s, options); }, "not-lowered", fragment);
  check_error([&] { emit_cuda(s, options); }, "not-lowered", fragment);
}

LowerOptions on(const DeviceLimits& limits) {
  LowerOptions o;
  o.limits = limits;
  return o;
}

}  // namespace

TEST_CASE("not-lowered: a cluster without warp specialization") {
  check_not_lowered(tutorial_schedule(5, gemm()).cluster(1, 2, 1).multicast("B"), "a cluster without warp_specialize");
}

TEST_CASE("not-lowered: multicast the cluster shape cannot carry") {
  // Both operands need a cluster along x and y (cluster 2 2 1: cluster_2d_test); one, a cluster along x.
  check_error([] { lower(tutorial_schedule(8, gemm()).cluster(2, 1, 1).multicast("A").multicast("B")); },
              "multicast-cluster-axis", "multicast of both operands in a 2x1x1 cluster needs at least 2 CTAs along x");
  check_not_lowered(tutorial_schedule(8, gemm()).cluster(1, 2, 1).multicast("B"),
                    "multicast of one operand in a cluster that extends along y or z (use cluster 2 1 1; a cluster X Y 1 "
                    "shares both operands)");
}

TEST_CASE("not-lowered: what sm_100a does not generate yet; v1..v10, ping-pong and split-K lower") {
  // Ping-pong lowers there (each consumer its own TMEM accumulator: ping_pong_tmem_test).
  CHECK_NOTHROW(lower(ping_pong_schedule(gemm(), Target::Sm100a), on(blackwell())));
  // Split-K lowers there (its partial sums leave TMEM a chunk at a time: split_k_tmem_test); stream-K
  // in a cluster does not, on either target.
  Schedule split = tutorial_schedule(10, gemm(), Target::Sm100a);
  split.split_k(2, true, true);
  check_not_lowered(split, "split_k ... stream in a cluster (a CTA's k ranges are its own, not shared with its pair)",
                    on(blackwell()));
  // The same schedules lower on both targets where sm_100a lowers them: retargeting a lowerable
  // sm_90a schedule changes its MMA and accumulator, nothing else it records.
  for (int v : {1, 3, 5, 6, 7, 8, 9, 10}) {
    Schedule s = tutorial_schedule(v, gemm(v == 1 ? 128 : 1024, v == 1 ? 128 : 1024, v == 1 ? 64 : 1024));
    s.retarget(Target::Sm100a);
    CAPTURE(v);
    const Kernel k = lower(s, on(blackwell()));
    CHECK(k.plan.target == Target::Sm100a);
    CHECK(k.plan.accumulator == Place::Tmem);
  }
}

TEST_CASE("not-lowered: what the sm_90a code generator does not generate yet") {
  check_not_lowered(tutorial_schedule(3, gemm()).bind("n_i", Binding::Thread),
                    "binding intra-tile axis 'n_i' to thread (the MMA instruction maps threads inside a tile)");
  check_not_lowered(tutorial_schedule(3, gemm()).cache_read("A", CopyMethod::Tma),
                    "TMA for one operand and a synchronous copy for the other");
  check_not_lowered(tutorial_schedule(3, gemm()).circular_buffer("k_o", 2),
                    "a circular buffer fed by synchronous copies (use cache_read tma)");
  check_not_lowered(tutorial_schedule(3, gemm()).cache_write("cast", Place::Shared, CopyMethod::Sync),
                    "staging the output in shared memory without a TMA store");
  // A tile loop bound `unroll`: the k loop would cover only its first tile, an m or n loop
  // would have no tile index (these reached an internal check before).
  check_not_lowered(tutorial_schedule(1, gemm()).bind("k_o", Binding::Unroll).bind("m_o", Binding::BlockY)
                        .bind("n_o", Binding::BlockX),
                    "an unrolled loop over k tiles ('k_o'; bind it serial)");
  check_not_lowered(tutorial_schedule(2, gemm()).bind("m_o", Binding::Unroll).bind("n_o", Binding::BlockX),
                    "an unrolled loop over output tiles ('m_o'; bind it to a block index)");
  check_not_lowered(tutorial_schedule(2, gemm()).bind("m_o", Binding::Serial).bind("n_o", Binding::BlockX),
                    "a serial loop over output tiles ('m_o')");
  Definition def = make_definition(1024, 1024, 1024, DType::BF16, DType::BF16,
                                   {{OpKind::AddScaled, 0.5}, {OpKind::AddScaled, 0.25}});
  check_not_lowered(tutorial_schedule(3, def), "an epilogue reading more than one C or bias tensor");
  // v10 with its consumer warpgroups splitting the tile's columns instead of its rows: refused
  // as that, not as a row count or an mma width (as before).
  std::string text = print_schedule(tutorial_schedule(10, gemm()));
  for (auto [from, to] : {std::pair<std::string, std::string>{"split m_i 64 m_wg m_mma", "split n_i 128 n_wg n_mma"},
                          {"bind m_wg warpgroup", "bind n_wg warpgroup"},
                          {"mma 64 256 16", "mma 64 128 16"}}) {
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  }
  check_not_lowered(apply_directives(gemm(), parse_schedule_file(text).directives, {}),
                    "splitting the tile's columns among consumer warpgroups ('n_wg' is split from n; split m_i "
                    "instead, as tutorial v10 does)");
}

// Definitions the Definition API builds but the code generator cannot express: refused, not
// silently generated as something else (each of these emitted a wrong kernel before).
TEST_CASE("not-lowered: definitions beyond A*B -> chain of epilogue ops") {
  auto two_inputs = [](Definition& d, Layout a_layout) {
    return std::pair{d.input("A", {1024, 1024}, DType::BF16, a_layout), d.input("B", {1024, 1024}, DType::BF16)};
  };
  {  // A multicast slice of an MN-major operand is whole swizzle atoms: one atom cannot be split.
    ProblemLayout n_major;
    n_major.b = Layout::MNMajor;
    std::string text = print_schedule(tutorial_schedule(9, make_definition(1024, 1024, 1024, DType::BF16, DType::BF16)));
    for (auto [from, to] : {std::pair<std::string, std::string>{"tile 128 128 64", "tile 128 64 64"},
                            {"mma 64 128 16", "mma 64 64 16"}})
      text.replace(text.find(from), from.size(), to);
    ScheduleFile file = parse_schedule_file(text);
    Schedule s = apply_directives(make_definition(1024, 1024, 1024, DType::BF16, DType::BF16, {}, n_major),
                                  file.directives, {});
    check_not_lowered(s, "multicast of an MN-major tile of 1 swizzle atoms over 2 CTAs (each loads whole atoms: a multiple of 2 atoms of 64 elements)");
  }
  {  // Two branches from the accumulator would be applied one after the other.
    Definition d;
    auto [a, b] = two_inputs(d, Layout::KMajor);
    Tensor acc = d.matmul(a, b);
    Tensor r = d.relu(acc);
    Tensor g = d.gelu(acc);
    d.set_output(d.cast(d.add_scaled(r, g, 1.0), DType::BF16));
    check_not_lowered(tutorial_schedule(5, d),
                      "an epilogue that is not a chain from the accumulator ('gelu' reads 'acc', not 'relu')");
  }
  {  // The C of add_scaled is read from memory, so it must be an input, not relu(A).
    Definition d;
    auto [a, b] = two_inputs(d, Layout::KMajor);
    Tensor acc = d.matmul(a, b);
    Tensor r = d.relu(a);
    d.set_output(d.cast(d.add_scaled(acc, r, 1.0), DType::BF16));
    check_not_lowered(tutorial_schedule(5, d), "an epilogue operand that is not an input tensor ('add_c' reads 'relu')");
  }
}

// The code generator follows the definition's operands, not the names A and B.
TEST_CASE("operands of other names lower like A and B") {
  Definition d;
  Tensor x = d.input("X", {1024, 1024}, DType::BF16), w = d.input("W", {1024, 1024}, DType::BF16);
  d.set_output(d.cast(d.matmul(x, w), DType::BF16));
  Schedule s(d);
  s.tile(128, 128, 64).inline_op("cast").mma(64, 128, 16, Target::Sm90a).bind("k_o", Binding::Serial)
      .bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX).cache_read("X", CopyMethod::Tma)
      .cache_read("W", CopyMethod::Tma).cache_write("cast", Place::Shared, CopyMethod::Tma).circular_buffer("k_o", 2);
  CHECK(emit_cuda(s).plan.tma_load);
}

TEST_CASE("unknown-pass") {
  std::string passes;
  for (const auto& p : lowering_passes()) passes += (passes.empty() ? "" : ", ") + p;
  std::ostringstream dump;
  LowerOptions o;
  o.dump_after = "select_wgmma";
  o.dump = &dump;
  check_error([&] { lower(tutorial_schedule(5, gemm()), o); }, "unknown-pass",
              "--dump-after select_wgmma: no such pass; passes are " + passes + ", all");
  CHECK(passes.rfind("build_loop_nests, ", 0) == 0);
  // The pass name is checked first, before the schedule.
  check_error([&] { lower(tutorial_schedule(1, gemm(8192, 8192, 8192)), o); }, "unknown-pass", "no such pass");
  // Every listed pass and `all` are accepted.
  for (std::string p : lowering_passes()) {
    o.dump_after = p;
    CHECK_NOTHROW(lower(tutorial_schedule(5, gemm()), o));
  }
  o.dump_after = "all";
  CHECK_NOTHROW(lower(tutorial_schedule(5, gemm()), o));
}

TEST_CASE("persist-hilbert-size: the Hilbert order over more than 32767 tiles along m or n") {
  // v6 over M = 32768 x 128: 32768 m tiles of 128 rows. The same at 32767 tiles lowers, and so do
  // 32768 tiles in row order.
  const auto v6 = [](int64_t m, const std::string& order, bool compiled = true) {
    Definition def = gemm(m, 128, 64);
    if (compiled) def.set_runtime_sizes(false, false);  // M read at run time: a launch's bound instead
    std::string text = print_schedule(tutorial_schedule(6, def));
    const std::string row = "persist m_o n_o tile row 8";
    const size_t at = text.find(row);
    REQUIRE(at != std::string::npos);
    text.replace(at, row.size(), "persist m_o n_o tile " + order);
    ScheduleFile file = parse_schedule_file(text);
    return apply_directives(def, file.directives, file.directive_lines);
  };
  const std::string message = "persist ... hilbert: the tile loop walks 32768 x 1 tiles; the Hilbert order takes at "
                              "most 32767 tiles along m and along n; use row or column order, or larger tiles";
  check_error([&] { lower(v6(32768 * 128, "hilbert")); }, "persist-hilbert-size", message);
  check_error([&] { emit_cuda(v6(32768 * 128, "hilbert")); }, "persist-hilbert-size", message);
  CHECK_NOTHROW(lower(v6(32767 * 128, "hilbert")));
  CHECK_NOTHROW(lower(v6(32768 * 128, "row")));
  // With M read at run time, each launch checks the tile count of its own M.
  const Kernel sized = lower(v6(1024, "hilbert", false));
  CHECK(rt::sizes_mismatch(sized.launch, 32767 * 128, 128, 64) == "");
  CHECK(rt::sizes_mismatch(sized.launch, 32768 * 128, 128, 64) ==
        "M=4194304 N=128 takes 32768 tile groups along m in the Hilbert order, more than the 32767 it may have");
}

TEST_CASE("tile-size") {
  // A split factor far beyond the problem gives a tile no device holds; its byte and register
  // counts would overflow, so the resource summary refuses it (validate, lower and explain).
  Schedule s(gemm(8192, 8192, 8192));
  s.tile(int64_t(1) << 40, 128, 64).inline_op("cast").mma(64, 128, 16, Target::Sm90a).bind("k_o", Binding::Serial)
      .bind("n_o", Binding::BlockX);
  const std::string message =
      "the CTA tile is 1099511627776 x 128 x 64 (m x n x k); a tile dimension above 65536 cannot fit in shared memory "
      "or registers; split m, n and k with smaller factors (e.g. tile 128 128 64)";
  check_error([&] { validate_schedule(s); }, "tile-size", message);
  check_error([&] { lower(s); }, "tile-size", message);
  ExplainOptions eo;
  eo.steps = false;
  check_error([&] { explain(s, eo); }, "tile-size", message);
  // An unsplit k of more than 65536 is one tile too.
  check_error([] { validate_schedule(Schedule(gemm(64, 64, 131072)).inline_op("cast").mma(64, 64, 16, Target::Sm90a)); },
              "tile-size", "the CTA tile is 64 x 64 x 131072 (m x n x k)");
}

TEST_CASE("not-lowered: FP8 operands and their scale factors") {
  const auto fp8 = [](std::optional<ScaleGranularity> a, std::optional<ScaleGranularity> b, int64_t n = 1024) {
    ProblemLayout l;
    l.scale_a = a;
    l.scale_b = b;
    return make_definition(1024, n, 1024, DType::E4M3, DType::BF16, {}, l);
  };
  const auto deepgemm = [&] { return fp8(ScaleGranularity::Block1x128, ScaleGranularity::Block128x128); };
  // Blackwell's block-scaled MMA is another instruction with other factors: UE8M0 ones per 1x128
  // for both operands, in their atoms (and Hopper's promotion takes none of those).
  Schedule blackwell = tutorial_schedule(10, deepgemm());
  blackwell.retarget(Target::Sm100a);
  check_not_lowered(blackwell, "e4m3 operands on sm_100a with A's factors per 1x128 in fp32 (the block-scaled "
                               "tcgen05.mma takes UE8M0 factors of both operands per 1x128 in their atoms: --scale-a "
                               "1x128:ue8m0 --scale-b 1x128:ue8m0)");
  ProblemLayout ue8m0;
  ue8m0.scale_a = ue8m0.scale_b = ScaleGranularity::Block1x128;
  ue8m0.scale_a_format = ue8m0.scale_b_format = ScaleFormat::Ue8m0;
  const Definition atoms = make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16, {}, ue8m0);
  check_not_lowered(tutorial_schedule(8, atoms), "e4m3 operands on sm_90a with UE8M0 factors (they are sm_100a's "
                                                 "block-scaled MMA's; wgmma's promotion takes fp32 factors: --scale-a "
                                                 "1x128 --scale-b 128x128)");
  // The one-CTA block-scaled MMA is m128, its B factors come in atoms of 128 rows.
  Schedule narrow(atoms), m64(atoms);
  const Schedule v8 = tutorial_schedule(8, atoms, Target::Sm100a);
  for (Directive d : v8.directives()) {
    if (auto* m = std::get_if<MmaD>(&d)) m->m = 64;
    m64.apply(d);
  }
  check_not_lowered(m64, "e4m3 operands on sm_100a with mma m64 (the block-scaled MMA is m128 on one CTA, m256 over a "
                         "CTA pair)");
  for (Directive d : v8.directives()) {
    if (auto* t = std::get_if<TileD>(&d)) t->n = 64;
    if (auto* m = std::get_if<MmaD>(&d)) m->n = 64;
    narrow.apply(d);
  }
  check_not_lowered(narrow, "e4m3 operands on sm_100a with a tile of 64 columns (B's factors come in atoms of 128 rows "
                            "and one MMA takes the tile's columns: tile n 128 or 256)");
  check_not_lowered(tutorial_schedule(3, deepgemm()), "e4m3 operands with synchronous copies (cache_read A and B tma)");
  // B's factors per 1x128 cost the promotion each thread's columns' factors (tile n / 4 registers):
  // the M = 4096 plan's 256x128 tile no longer fits its consumers.
  {
    AutoParams big;
    big.tile_m = 256;
    big.tile_n = 128;
    big.tile_k = 128;
    big.stages = 3;
    const Schedule wide = auto_schedule(fp8(ScaleGranularity::Block1x128, ScaleGranularity::Block1x128, 7168), big);
    check_error([&] { lower(wide); }, "register-file",
                "the 2 consumer warpgroup(s) hold a 256 x 128 fp32 accumulator in registers: 224 per thread (96 of them "
                "the FP8 promotion's) plus about 40 for addresses and loop state, over the 232 registers "
                "warp_specialize gives them");
    CHECK_NOTHROW(lower(tutorial_schedule(10, fp8(ScaleGranularity::Block1x128, ScaleGranularity::Block1x128))));
  }
  // The promotion interval: factors per 128 of K need 128; none with factors is not lowered; a
  // warpgroup of several row blocks promotes in waves, one k tile at a time.
  {
    Schedule s = tutorial_schedule(10, deepgemm());
    s.promote(256);
    check_error([&] { lower(s); }, "promote",
                "promote 256: the scale factors change every 128 elements of K (per 1x128 or 128x128), so each k block "
                "is promoted with its own; use promote 128 (the default)");
    Schedule none = tutorial_schedule(10, fp8(ScaleGranularity::PerTensor, ScaleGranularity::PerTensor));
    none.promote(0);
    check_not_lowered(none, "promote 0 with scale factors (they are applied in the promotion; without one, the "
                            "epilogue would apply them)");
    Schedule waves = tutorial_schedule(8, fp8(ScaleGranularity::PerTensor, ScaleGranularity::PerTensor));
    waves.promote(256);
    check_not_lowered(waves, "promote 256 with 2 64-row blocks per consumer warpgroup (they are promoted in waves "
                             "through one promotion accumulator, which holds one k tile)");
  }
  // A grid of TMA-loaded tiles of the given shape (v4 without the staged store).
  const auto grid = [](const Definition& def, int64_t tile_n, int64_t tile_k) {
    Schedule s(def);
    s.tile(64, tile_n, tile_k);
    s.inline_op("cast");
    s.mma(64, static_cast<int>(tile_n), 32, Target::Sm90a);
    s.bind("k_o", Binding::Serial);
    s.bind("m_o", Binding::BlockY);
    s.bind("n_o", Binding::BlockX);
    s.cache_read("A", CopyMethod::Tma);
    s.cache_read("B", CopyMethod::Tma);
    return s;
  };
  // A k tile of 64 FP8 elements meets half a block of factors.
  check_not_lowered(grid(deepgemm(), 64, 64), "a k tile of 64 with scale factors per 128 of K (each k tile's promotion "
                                              "applies one k block's factors: tile k 128)");
  // Factors per matrix are lowered for batches, masked and contiguous groups; not yet per pointer-array group.
  ProblemLayout scaled;
  scaled.scale_a = ScaleGranularity::Block1x128;
  scaled.scale_b = ScaleGranularity::Block128x128;
  scaled.source = ProblemSource::PointerArray;
  scaled.batch = 4;
  check_not_lowered(tutorial_schedule(8, make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16, {}, scaled)),
                    "FP8 scale factors with pointer-array or variable-K groups (dense, batched, masked and contiguous "
                    "problems take them)");
  check_not_lowered(tutorial_schedule(10, make_definition(1024, 1024, 1024, DType::E4M3, DType::BF16, {}, {}, true)),
                    "e4m3 operands in the swapped orientation (factors are laid out for the straight one; plan FP8 "
                    "straight)");
  // A 152-column tile can start 120 columns into a block of B's factors and meet three.
  check_not_lowered(grid(fp8(std::nullopt, ScaleGranularity::Block128x128, 1216), 152, 128), "a tile of 152 columns with B's factors per 128x128 block (a tile meets three blocks of "
                          "factors; the promotion reads two)");
}

TEST_CASE("promote on 16-bit operands: whole k tiles, sm_90a's warp-specialized TMA kernels, one row block per consumer") {
  const Definition f32_out = make_definition(1024, 1024, 4096, DType::BF16, DType::F32);
  Schedule ragged = tutorial_schedule(8, f32_out);
  ragged.promote(96);
  check_error([&] { lower(ragged); }, "promote", "promote 96: the interval is a whole number of k tiles (64 elements of K each)");
  Schedule wide = tutorial_schedule(10, f32_out);  // v10's tile is 128 x 256: no registers for a promotion
  wide.promote(256);
  check_error([&] { lower(wide); }, "register-file",
              "the 2 consumer warpgroup(s) hold a 128 x 256 fp32 accumulator in registers: 256 per thread (128 of "
              "them the promotion's) plus about 40 for addresses and loop state, over the 232 registers "
              "warp_specialize gives them");
  Schedule synchronous = tutorial_schedule(5, f32_out);
  synchronous.promote(256);
  check_not_lowered(synchronous, "promote 256 without warp-specialized TMA loads (the promoted k loop releases its "
                                 "stages from the consumers)");
  Schedule blackwell_v8 = tutorial_schedule(8, f32_out, Target::Sm100a);
  blackwell_v8.promote(256);
  check_not_lowered(blackwell_v8, "promote 256 on sm_100a (tcgen05.mma accumulates in TMEM; a second accumulator "
                                  "there and its adds are not built)", on(blackwell()));
  Schedule waves = tutorial_schedule(8, f32_out);  // one consumer of 128 rows: two 64-row blocks
  waves.promote(256);
  check_not_lowered(waves, "promote 256 with 2 64-row blocks per consumer warpgroup (they are promoted in waves "
                           "through one promotion accumulator, which holds one k tile)");
  Schedule every_tile = tutorial_schedule(8, f32_out);
  every_tile.promote(64);
  const Kernel k = lower(every_tile);
  CHECK(k.plan.promotion.on);
  CHECK(k.plan.promotion.every == 1);
}

TEST_CASE("accumulator_buffers 2 on sm_100a (v10): explained, checked and lowered with an MMA warp") {
  const Schedule v10 = tutorial_schedule(10, gemm(), Target::Sm100a);
  CHECK(v10.accumulator_buffers_of() == 2);
  const Kernel k = lower(v10, on(blackwell()));
  CHECK(k.plan.tmem_double_buffered);
  CHECK(k.plan.tmem_columns == 512);
  ExplainOptions options;
  options.limits = blackwell();
  const std::string text = explain(v10, options);
  CHECK(text.find("tmem: 512 fp32 columns (allocating 512) of 512: 2 accumulators of 256, double-buffered: a tile's "
                  "writeback reads one while the next tile's MMAs fill the other") != std::string::npos);
  CHECK(text.find("mma_done 2, acc_empty 2") != std::string::npos);
}
