#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "dsl/error.h"
#include "error_check.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

using testing::check_error;

void check_round_trip(const Schedule& s) {
  const std::string text = print_schedule(s);
  CAPTURE(text);
  ScheduleFile file = parse_schedule_file(text);
  REQUIRE(file.directives.size() == s.directives().size());
  for (size_t i = 0; i < file.directives.size(); ++i) CHECK(file.directives[i] == s.directives()[i]);
  const Definition& def = s.definition();
  CHECK(file.problem.m == def.m());
  CHECK(file.problem.n == def.n());
  CHECK(file.problem.k == def.k());
  CHECK(file.problem.dtype == def.input_dtype());
  CHECK(file.problem.out == def.output_dtype());
  // Rebuilding from the file gives the same schedule, which prints the same text.
  Definition again = make_definition(*file.problem.m, *file.problem.n, *file.problem.k, *file.problem.dtype,
                                     *file.problem.out, file.epilogue);
  Schedule rebuilt = apply_directives(again, file.directives, file.directive_lines);
  CHECK(print_schedule(rebuilt) == text);
}

}  // namespace

TEST_CASE("every tutorial schedule prints and parses back to the same directives") {
  for (Target t : {Target::Sm90a, Target::Sm100a}) {
    for (auto [m, n, k] : {std::tuple{8192, 8192, 8192}, std::tuple{256, 512, 192}}) {
      Definition def = make_definition(m, n, k, DType::BF16, DType::BF16);
      for (int v = 1; v <= kTutorialSteps; ++v) {
        CAPTURE(v);
        check_round_trip(tutorial_schedule(v, def, t));
      }
    }
  }
}

TEST_CASE("the text form of each directive") {
  CHECK(print_directive(TileD{128, 128, 64}) == "tile 128 128 64");
  CHECK(print_directive(SplitD{"m_i", 64, "m_wg", "m_mma"}) == "split m_i 64 m_wg m_mma");
  CHECK(print_directive(MergeD{"a", "b", "ab"}) == "merge a b ab");
  CHECK(print_directive(ReorderD{{"x", "y", "z"}}) == "reorder x y z");
  CHECK(print_directive(BindD{"k_o", Binding::Serial}) == "bind k_o serial");
  CHECK(print_directive(BindD{"n_o", Binding::BlockX}) == "bind n_o block.x");
  CHECK(print_directive(CacheReadD{"A", CopyMethod::Tma}) == "cache_read A tma");
  CHECK(print_directive(CacheWriteD{"D", Place::Shared, CopyMethod::Tma}) == "cache_write D shared tma");
  CHECK(print_directive(CacheWriteD{"acc", Place::Registers, CopyMethod::Sync}) == "cache_write acc registers");
  CHECK(print_directive(InlineD{"cast"}) == "inline cast");
  CHECK(print_directive(ComputeAtD{"relu", "n_i"}) == "compute_at relu n_i");
  CHECK(print_directive(CircularBufferD{"k_o", 4, 3}) == "circular_buffer k_o 4 3");
  CHECK(print_directive(WarpSpecializeD{40, 232}) == "warp_specialize 40 232");
  CHECK(print_directive(PersistD{"m_o", "n_o", "tile", Raster::RowMajor, 8}) == "persist m_o n_o tile row 8");
  CHECK(print_directive(ClusterD{2, 1, 1}) == "cluster 2 1 1");
  CHECK(print_directive(MulticastD{"B"}) == "multicast B");
  CHECK(print_directive(MmaD{64, 128, 16, Target::Sm90a}) == "mma 64 128 16 sm_90a");
}

TEST_CASE("optional arguments take the primitives' defaults") {
  CHECK(parse_directive("circular_buffer k_o 4") == Directive(CircularBufferD{"k_o", 4, 3}));
  CHECK(parse_directive("persist m_o n_o") == Directive(PersistD{"m_o", "n_o", "tile", Raster::RowMajor, 8}));
  CHECK(parse_directive("persist m_o n_o t column 4") == Directive(PersistD{"m_o", "n_o", "t", Raster::ColumnMajor, 4}));
  CHECK(parse_directive("persist m_o n_o tile hilbert") == Directive(PersistD{"m_o", "n_o", "tile", Raster::Hilbert, 8}));
  CHECK(parse_directive("cluster 2") == Directive(ClusterD{2, 1, 1}));
  CHECK(parse_directive("mma 64 128 16") == Directive(MmaD{64, 128, 16, Target::Sm90a}));
  CHECK(parse_directive("cache_write cast shared") == Directive(CacheWriteD{"cast", Place::Shared, CopyMethod::Sync}));
  CHECK(parse_directive("  tile\t128 128   64  ") == Directive(TileD{128, 128, 64}));
}

TEST_CASE("the Hilbert tile order's text form: printed as hilbert with its (ignored) group, parsed back") {
  CHECK(print_directive(PersistD{"m_o", "n_o", "tile", Raster::Hilbert, 8}) == "persist m_o n_o tile hilbert 8");
  CHECK(parse_directive("persist m_o n_o tile hilbert 3") == Directive(PersistD{"m_o", "n_o", "tile", Raster::Hilbert, 3}));
  // The tutorial's v10 with its persist line turned to hilbert: a whole schedule round-trips and
  // `gemmgen print` (print_schedule) names the order.
  const Definition def = make_definition(1000, 768, 128, DType::BF16, DType::BF16);
  std::string text = print_schedule(tutorial_schedule(10, def));
  const size_t at = text.find("persist m_o n_o tile row 8");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string("persist m_o n_o tile row 8").size(), "persist m_o n_o tile hilbert");
  ScheduleFile file = parse_schedule_file(text);
  const Schedule s = apply_directives(def, file.directives, file.directive_lines);
  REQUIRE(s.persistence().has_value());
  CHECK(s.persistence()->raster == Raster::Hilbert);
  const std::string printed = print_schedule(s);
  CHECK(printed.find("persist m_o n_o tile hilbert 8\n") != std::string::npos);
  check_round_trip(s);
}

TEST_CASE("comments, blank lines, CRLF line ends, problem and epilogue lines") {
  ScheduleFile f = parse_schedule_file(
      "# a schedule\r\n"
      "\n"
      "problem m=1024 k=512 out=f32   # n stays the caller's\r\n"
      "epilogue scale 2.0\n"
      "epilogue add_c 0.5\n"
      "epilogue bias rows\n"
      "epilogue relu\n"
      "tile 128 128 64  # the CTA tile\n"
      "   \n"
      "bind k_o serial");
  CHECK(f.problem.m == 1024);
  CHECK_FALSE(f.problem.n.has_value());
  CHECK(f.problem.k == 512);
  CHECK_FALSE(f.problem.dtype.has_value());
  CHECK(f.problem.out == DType::F32);
  REQUIRE(f.epilogue.size() == 4);
  CHECK(f.epilogue[0] == EpilogueSpec{OpKind::Scale, 2.0, BiasAlong::Cols});
  CHECK(f.epilogue[1] == EpilogueSpec{OpKind::AddScaled, 0.5, BiasAlong::Cols});
  CHECK(f.epilogue[2] == EpilogueSpec{OpKind::AddBias, 0.0, BiasAlong::Rows});
  CHECK(f.epilogue[3] == EpilogueSpec{OpKind::Relu, 0.0, BiasAlong::Cols});
  REQUIRE(f.directives.size() == 2);
  CHECK(f.directive_lines == std::vector<int>{8, 10});
}

TEST_CASE("make_definition builds the epilogue in order with its extra inputs") {
  Definition def = make_definition(256, 512, 128, DType::BF16, DType::F16,
                                   {{OpKind::Scale, 2.0}, {OpKind::AddScaled, 0.5}, {OpKind::AddBias, 0, BiasAlong::Cols},
                                    {OpKind::Gelu}, {OpKind::Relu}, {OpKind::Relu}});
  REQUIRE(def.find("C") != nullptr);
  CHECK(def.find("C")->shape == std::vector<int64_t>{256, 512});
  REQUIRE(def.find("Bias") != nullptr);
  CHECK(def.find("Bias")->shape == std::vector<int64_t>{512});
  std::vector<std::string> names;
  for (int id : def.epilogue()) names.push_back(def.node(id).name);
  CHECK(names == std::vector<std::string>{"scale", "add_c", "bias", "gelu", "relu", "relu1", "cast"});
  CHECK(def.output_dtype() == DType::F16);
  auto specs = epilogue_specs_of(def);
  REQUIRE(specs.has_value());
  CHECK(specs->size() == 6);
  CHECK((*specs)[1].scalar == 0.5);

  Schedule s = tutorial_schedule(10, def);
  check_round_trip(s);
}

TEST_CASE("orientation=swapped: the caller's problem on the problem line, the swapped definition built from it") {
  const std::vector<EpilogueSpec> epilogue = {{OpKind::AddBias, 0, BiasAlong::Rows}, {OpKind::AddScaled, 0.5}};
  ProblemLayout layout;
  layout.ldb = 136;
  const Definition def = make_definition(16, 4096, 128, DType::BF16, DType::BF16, epilogue, layout, true);
  CHECK(def.swapped());
  // The kernel's problem: M and N exchanged, A its caller's B (with B's leading dimension), D
  // column-major, and a bias along the caller's rows runs along the kernel's columns.
  CHECK(def.m() == 4096);
  CHECK(def.n() == 16);
  CHECK(def.node(def.matmul_node().operands[0]).ld == 136);
  CHECK(def.output_layout() == OutputLayout::ColumnMajor);
  REQUIRE(def.find("Bias") != nullptr);
  CHECK(def.find("Bias")->shape == std::vector<int64_t>{16});
  for (int id : def.epilogue())
    if (def.node(id).kind == OpKind::AddBias) CHECK(def.node(id).bias_along == BiasAlong::Cols);
  CHECK(def.to_string().rfind("swapped: the caller's D = A * B^T computed as D^T = B * A^T", 0) == 0);

  const Schedule s = tutorial_schedule(4, def);
  const std::string text = print_schedule(s);
  CAPTURE(text);
  CHECK(text.find("problem m=16 n=4096 k=128 dtype=bf16 out=bf16 ldb=136 orientation=swapped\n") != std::string::npos);
  CHECK(text.find("epilogue bias rows\n") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  CHECK(file.problem.swapped == std::optional<bool>(true));
  CHECK(file.problem.m == 16);
  CHECK(file.epilogue == epilogue);
  ProblemLayout read;
  read.ldb = *file.problem.ldb;
  const Definition again = make_definition(*file.problem.m, *file.problem.n, *file.problem.k, *file.problem.dtype,
                                           *file.problem.out, file.epilogue, read, *file.problem.swapped);
  CHECK(again.to_string() == def.to_string());
  CHECK(print_schedule(apply_directives(again, file.directives)) == text);
  // A straight definition says nothing of its orientation.
  CHECK(print_schedule(tutorial_schedule(4, make_gemm(16, 4096, 128, DType::BF16, DType::BF16))).find("orientation") ==
        std::string::npos);
}

TEST_CASE("split_k with and without tail round-trips through the text form") {
  const Definition def = make_definition(1408, 128, 512, DType::BF16, DType::BF16);
  for (bool tail : {false, true}) {
    Schedule s = tutorial_schedule(8, def);
    s.split_k(4, tail);
    CHECK(print_schedule(s).find(tail ? "split_k 4 tail\n" : "split_k 4\n") != std::string::npos);
    check_round_trip(s);
  }
}

TEST_CASE("random schedules round-trip through the text form") {
  std::mt19937 rng(20240611);
  auto pick = [&](auto const& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  auto chance = [&](int pct) { return std::uniform_int_distribution<int>(0, 99)(rng) < pct; };
  const std::vector<int64_t> factors = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256};
  const std::vector<Binding> bindings = {Binding::BlockX, Binding::BlockY, Binding::BlockZ, Binding::Cluster,
                                         Binding::Warpgroup, Binding::Warp, Binding::Thread, Binding::Serial,
                                         Binding::Unroll};
  const std::vector<std::string> tensors = {"A", "B", "acc", "cast", "relu", "C"};
  int accepted = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Definition def = make_definition(pick(std::vector<int64_t>{256, 1024, 4096}), pick(std::vector<int64_t>{256, 2048}),
                                     pick(std::vector<int64_t>{128, 1024, 8192}), DType::BF16,
                                     chance(50) ? DType::BF16 : DType::F32,
                                     chance(50) ? std::vector<EpilogueSpec>{{OpKind::Relu}} : std::vector<EpilogueSpec>{});
    Schedule s(def);
    int fresh = 0;
    for (int step = 0; step < 30; ++step) {
      const auto& leaves = s.domain().leaves();
      Directive d;
      switch (std::uniform_int_distribution<int>(0, 14)(rng)) {
        case 0: {
          std::string n = std::to_string(fresh++);
          d = SplitD{pick(leaves), pick(factors), "o" + n, "i" + n};
          break;
        }
        case 1: d = MergeD{pick(leaves), pick(leaves), "f" + std::to_string(fresh++)}; break;
        case 2: {
          std::vector<std::string> order = leaves;
          std::shuffle(order.begin(), order.end(), rng);
          order.resize(std::uniform_int_distribution<size_t>(1, order.size())(rng));
          d = ReorderD{order};
          break;
        }
        case 3: d = BindD{pick(leaves), pick(bindings)}; break;
        case 4: d = TileD{pick(factors), pick(factors), pick(factors)}; break;
        case 5: d = CacheReadD{pick(tensors), chance(50) ? CopyMethod::Tma : CopyMethod::Sync}; break;
        case 6:
          d = CacheWriteD{pick(tensors), pick(std::vector<Place>{Place::Registers, Place::Tmem, Place::Shared}),
                          chance(50) ? CopyMethod::Tma : CopyMethod::Sync};
          break;
        case 7: d = InlineD{pick(tensors)}; break;
        case 8: d = ComputeAtD{pick(tensors), pick(leaves)}; break;
        case 9: {
          int stages = std::uniform_int_distribution<int>(1, 8)(rng);
          d = CircularBufferD{pick(leaves), stages, std::uniform_int_distribution<int>(0, stages)(rng)};
          break;
        }
        case 10:
          d = WarpSpecializeD{8 * std::uniform_int_distribution<int>(3, 32)(rng),
                              8 * std::uniform_int_distribution<int>(3, 32)(rng)};
          break;
        case 11:
          d = PersistD{pick(leaves), pick(leaves), "t" + std::to_string(fresh++),
                       pick(std::vector<Raster>{Raster::RowMajor, Raster::ColumnMajor, Raster::Hilbert}), pick(factors)};
          break;
        case 12:
          d = ClusterD{std::uniform_int_distribution<int>(1, 4)(rng), std::uniform_int_distribution<int>(1, 2)(rng), 1};
          break;
        case 13: d = MulticastD{pick(tensors)}; break;
        default:
          d = MmaD{pick(std::vector<int>{64, 128, 256}), pick(std::vector<int>{8, 16, 64, 128, 256}), 16,
                   chance(50) ? Target::Sm90a : Target::Sm100a};
          break;
      }
      // Every directive, legal or not, survives its own text form.
      CHECK(parse_directive(print_directive(d)) == d);
      try {
        s.apply(d);
      } catch (const CompileError&) {
      }
    }
    accepted += static_cast<int>(s.directives().size());
    check_round_trip(s);
  }
  CHECK(accepted > 1000);  // the generator exercises real schedules, not just rejected calls
}

TEST_CASE("a leading UTF-8 byte order mark is not a word of line 1") {
  const ScheduleFile f = parse_schedule_file("\xEF\xBB\xBFtile 128 128 64\n");
  REQUIRE(f.directives.size() == 1);
  CHECK(print_directive(f.directives[0]) == "tile 128 128 64");
}

TEST_CASE("parse errors name the line, the text and what was expected") {
  check_error([] { parse_schedule_file("tile 128 128 64\ntile 128 x 64\n"); }, "parse-error",
              "line 2: 'tile 128 x 64': expected an integer tile n extent, got 'x' (usage: tile M N K)");
  check_error([] { parse_schedule_file("# header\nfrobnicate 3\n"); }, "parse-error",
              "line 2: 'frobnicate' is not a directive; expected one of split, merge, reorder, bind, tile");
  check_error([] { parse_schedule_file("bind k_o"); }, "parse-error",
              "line 1: 'bind k_o': expected 2 argument(s), got 1 (usage: bind AXIS BINDING)");
  check_error([] { parse_schedule_file("cache_read A dma"); }, "parse-error",
              "expected a copy method (one of sync, tma, auto), got 'dma' (usage: cache_read TENSOR sync|tma|auto)");
  check_error([] { parse_schedule_file("persist m_o n_o tile diagonal"); }, "parse-error",
              "expected a raster order (one of row, column, hilbert, triangle), got 'diagonal'");
  check_error([] { parse_schedule_file("\n\nbind k_o sideways"); }, "unknown-binding",
              "line 3: unknown binding 'sideways': legal bindings are block.x");
  check_error([] { parse_schedule_file("mma 64 128 16 sm_80"); }, "unknown-arch", "line 1: unknown arch 'sm_80'");
  check_error([] { parse_schedule_file("epilogue tanh"); }, "parse-error", "unknown epilogue op 'tanh'");
  check_error([] { parse_schedule_file("# a comment\nproblem m=128\nepilogue relu\n"); }, "empty-schedule",
              "the schedule file holds no directives");
  check_error([] { parse_schedule_file(""); }, "empty-schedule", "the schedule file holds no directives");
  check_error([] { parse_schedule_file("epilogue relu\nepilogue add_c 1e39\ntile 128 128 64"); }, "epilogue-scalar",
              "line 2: epilogue add_c: beta 1e+39 is not a finite fp32 value");
  check_error([] { parse_schedule_file("epilogue scale two"); }, "parse-error", "expected a number alpha, got 'two'");
  check_error([] { parse_schedule_file("problem m=abc"); }, "parse-error",
              "expected a positive integer for m, got 'abc'");
  check_error([] { parse_schedule_file("problem m=128 q=3"); }, "parse-error",
              "unknown key 'q'; legal keys are m, n, k, dtype, out");
  check_error([] { parse_schedule_file("problem m=128\nproblem n=128"); }, "parse-error",
              "line 2: a second 'problem' line");
  check_error([] { parse_schedule_file("problem dtype=f8"); }, "unknown-dtype", "line 1: unknown dtype 'f8'");
  check_error([] { parse_schedule_file("problem m=16 orientation=sideways"); }, "parse-error",
              "expected orientation=straight or orientation=swapped (D^T = B * A^T), got 'sideways'");
  check_error([] { parse_schedule_file("problem orientation=swapped orientation=straight"); }, "parse-error",
              "orientation is given twice");
  check_error([] { parse_schedule_file("circular_buffer k_o 99999999999"); }, "parse-error",
              "stage count 99999999999 is out of range");
}

TEST_CASE("a directive that parses but cannot apply keeps its rule and gains the line") {
  ScheduleFile f = parse_schedule_file("tile 128 128 64\n\n# bind\nbind q serial\n");
  Definition def = make_definition(1024, 1024, 1024, DType::BF16, DType::BF16);
  check_error([&] { apply_directives(def, f.directives, f.directive_lines); }, "unknown-axis",
              "line 4: unknown axis 'q': the loop axes are m_o, n_o, k_o, m_i, n_i, k_i");
  // Without line numbers the primitive's message is unchanged.
  check_error([&] { apply_directives(def, f.directives); }, "unknown-axis", "unknown axis 'q'");
}

TEST_CASE("an FP8 problem line names both operands' scale factors, and parses them back") {
  ProblemLayout l;
  l.scale_a = ScaleGranularity::Block1x128;
  const Definition def = make_definition(256, 256, 384, DType::E4M3, DType::BF16, {}, l);
  const std::string text = print_schedule(tutorial_schedule(10, def));
  CAPTURE(text);
  CHECK(text.find("problem m=256 n=256 k=384 dtype=e4m3 out=bf16 scale_a=1x128 scale_b=none\n") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  CHECK(file.problem.scale_a == std::optional<std::string>("1x128"));
  CHECK(file.problem.scale_b == std::optional<std::string>("none"));
  // A bf16 problem has no factors to name.
  CHECK(print_schedule(tutorial_schedule(10, make_definition(256, 256, 384, DType::BF16, DType::BF16))).find("scale_") ==
        std::string::npos);
  check_error([] { parse_schedule_file("problem m=64 scale_a=1x64\ntile 64 64 128"); }, "bad-scale",
              "line 1: unknown scale granularity '1x64'");
  check_error([] { parse_schedule_file("problem scale_b=128x128 scale_b=none\ntile 64 64 128"); }, "parse-error",
              "scale_b is given twice");
}

TEST_CASE("promote: the FP8 promotion interval prints and parses back") {
  const Definition def = make_definition(256, 256, 1024, DType::E4M3, DType::BF16);
  Schedule s = tutorial_schedule(10, def);
  s.promote(512);
  const std::string text = print_schedule(s);
  CHECK(text.find("\npromote 512\n") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE_FALSE(file.directives.empty());
  CHECK(std::get<PromoteD>(file.directives.back()).interval == 512);
  check_error([] { parse_schedule_file("problem m=64\ntile 64 64 128\npromote"); }, "parse-error",
              "line 3: 'promote': expected 1 argument(s), got 0 (usage: promote K_ELEMENTS (0: never))");
}

TEST_CASE("accumulator_buffers prints and parses back") {
  // v10 on sm_100a asks for two buffers (TIRx's step 10)
  const Schedule s = tutorial_schedule(10, make_definition(256, 256, 1024, DType::BF16, DType::BF16), Target::Sm100a);
  const std::string text = print_schedule(s);
  CHECK(text.find("\naccumulator_buffers 2\n") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(text);
  REQUIRE_FALSE(file.directives.empty());
  CHECK(std::get<AccumulatorBuffersD>(file.directives.back()).buffers == 2);
}
