// One planner: every CLI command given `--schedule auto` runs the plan gg::plan_gemm makes for the
// problem (configuration, orientation, fallback), so explain, check, emit and print name the same
// kernel gg::gemm compiles, over benchmarks/shapes.txt and a decode sweep M = 1..256. The commands
// run in this process (run_cli); `run` and `bench` take the same load path and are checked on a GPU
// (tests/gpu/cli_run_gpu_test.cpp).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/emit.h"
#include "dsl/schedule_text.h"
#include "schedules/bench_report.h"
#include "schedules/gemm.h"
#include "tools/gemmgen/commands.h"

using namespace gg;

namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
};

CliResult gemmgen(std::vector<std::string> argv) {
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::run_cli(argv, cli::Io{out, err});
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> problem_args(const std::string& command, const BenchShape& s) {
  return {command, "--schedule", "auto", "--m", std::to_string(s.m), "--n", std::to_string(s.n), "--k",
          std::to_string(s.k)};
}

std::vector<BenchShape> agreement_shapes() {
  std::ifstream in(GEMMGEN_SOURCE_DIR "/benchmarks/shapes.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<BenchShape> shapes = parse_shapes(text.str(), "benchmarks/shapes.txt");
  REQUIRE(shapes.size() >= 18);
  for (int64_t m = 1; m <= 256; ++m) shapes.push_back({m, 4096, 4096, "decode sweep"});
  return shapes;
}

// What the commands print for a plan: its one-line description and the kernel it compiles to.
void check_commands_agree(const BenchShape& s) {
  const GemmPlan plan = plan_gemm(s.m, s.n, s.k);
  const std::string kernel = emit_cuda(plan.build()).kernel_name;
  CAPTURE(s.m);
  CAPTURE(s.n);
  CAPTURE(s.k);
  CAPTURE(plan.describe());

  std::vector<std::string> explain = problem_args("explain", s);
  explain.push_back("--final");
  const CliResult e = gemmgen(explain);
  REQUIRE(e.code == 0);
  CHECK(e.out.rfind("plan for M=" + std::to_string(s.m) + " N=" + std::to_string(s.n), 0) == 0);
  CHECK(e.out.find(": " + plan.describe() + "\n") != std::string::npos);
  CHECK(e.out.find(plan.swapped() ? "orientation: swapped" : "orientation: straight") != std::string::npos);

  const CliResult c = gemmgen(problem_args("check", s));
  REQUIRE(c.code == 0);  // no shape gg::gemm computes is refused
  CHECK(c.out.find("lowers to kernel " + kernel + " ") != std::string::npos);
  CHECK(c.out.find("plan: " + plan.describe() + "\n") != std::string::npos);

  const CliResult emitted = gemmgen(problem_args("emit", s));
  REQUIRE(emitted.code == 0);
  CHECK(emitted.out.find("// kernel: " + kernel + "\n") != std::string::npos);
  CHECK((emitted.out.find("// orientation: swapped") != std::string::npos) == plan.swapped());
}

}  // namespace

TEST_CASE("explain, check and emit --schedule auto take gg::plan_gemm's plan on every shape of shapes.txt and M=1..256") {
  int swapped = 0, fallback = 0;
  for (const BenchShape& s : agreement_shapes()) {
    check_commands_agree(s);
    const GemmPlan plan = plan_gemm(s.m, s.n, s.k);
    swapped += plan.swapped();
    fallback += plan.source == PlanSource::Fallback;
  }
  // The sweep is only a test of the orientation if both occur.
  CHECK(swapped > 0);
  CHECK(swapped < 274);
  MESSAGE("swapped plans: " << swapped << ", fallbacks: " << fallback);
}

TEST_CASE("K odd: run/check --schedule auto stage the operands as gg::gemm does; masked groups take its fallback") {
  const BenchShape ragged{333, 4444, 555, "K not a multiple of 8"};
  const GemmPlan plan = plan_gemm(ragged.m, ragged.n, ragged.k);
  CHECK(plan.source == PlanSource::Auto);
  CHECK(plan.describe().rfind("auto: A staged; B staged; ", 0) == 0);
  check_commands_agree(ragged);
  const CliResult e = gemmgen(problem_args("explain", ragged));
  CHECK(e.out.find("  staged:      B (a row of K=555 bf16 elements is 1110 bytes, copied with rows 560 elements apart: TMA cannot address them); A (") !=
        std::string::npos);
  // Masked groups are not staged: the planner falls back to the furthest step that lowers.
  GemmOptions masked;
  masked.layout.source = ProblemSource::Masked;
  masked.layout.batch = 2;
  const GemmPlan fallback = plan_gemm(ragged.m, ragged.n, ragged.k, masked);
  CHECK(fallback.source == PlanSource::Fallback);
  CHECK(fallback.schedule == "v4");
  CHECK(fallback.describe() == "fallback v4");
  std::vector<std::string> args = problem_args("explain", ragged);
  for (const char* a : {"--batch", "2", "--group-m", "100,200"}) args.push_back(a);
  const CliResult f = gemmgen(args);
  CHECK(f.out.find("source:      fallback (no `auto` config lowers: no-schedule") != std::string::npos);
  CHECK(f.out.find("stage A") == std::string::npos);  // staging does not apply to groups: not offered
}

TEST_CASE("a swapped plan round-trips through print and a schedule file: same kernel, same orientation") {
  const GemmPlan plan = plan_gemm(16, 4096, 4096);
  REQUIRE(plan.swapped());
  const CliResult printed = gemmgen({"print", "--schedule", "auto", "--m", "16", "--n", "4096", "--k", "4096"});
  REQUIRE(printed.code == 0);
  CHECK(printed.out.find("problem m=16 n=4096 k=4096 dtype=bf16 out=bf16 orientation=swapped\n") != std::string::npos);
  const ScheduleFile file = parse_schedule_file(printed.out);
  REQUIRE(file.problem.swapped == std::optional<bool>(true));
  const Definition def = make_definition(*file.problem.m, *file.problem.n, *file.problem.k, *file.problem.dtype,
                                         *file.problem.out, file.epilogue, {}, true);
  CHECK(def.swapped());
  CHECK(def.to_string() == plan.def.to_string());
  CHECK(emit_cuda(apply_directives(def, file.directives)).kernel_name == emit_cuda(plan.build()).kernel_name);
}
