// `gemmgen run` on a GPU: the CLI compiles, runs and checks a kernel against cuBLAS and the
// fp64 reference in one process, prints the report (text or JSON) and exits 0 when it passes.
// The binary is $GEMMGEN_EXE, or the one this build made.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "codegen/emit.h"
#include "schedules/gemm.h"

namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

Result run_gemmgen(const std::string& args) {
  const char* env = std::getenv("GEMMGEN_EXE");
  std::string exe = env ? env : GEMMGEN_BINARY_DIR "/tools/gemmgen/gemmgen";
  Result r;
  FILE* pipe = popen((exe + " " + args + " 2>&1").c_str(), "r");
  REQUIRE_MESSAGE(pipe != nullptr, "cannot start " << exe);
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), static_cast<int>(buf.size()), pipe)) r.output += buf.data();
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST_CASE("gemmgen run --check --json passes on an edge shape, random and exact") {
  for (const char* mode : {"", " --exact"}) {
    Result r = run_gemmgen(std::string("run --schedule v5 --m 300 --n 264 --k 136 --dtype bf16 --check --json") + mode);
    CAPTURE(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("\"unwritten\": 0") != std::string::npos);
    CHECK(r.output.find("\"passed\": true") != std::string::npos);
  }
}

TEST_CASE("gemmgen run --bench reports TFLOP/s and the ratio to cuBLAS") {
  Result r = run_gemmgen("run --schedule v6 --m 2048 --n 2048 --k 2048 --dtype f16 --check --bench --reps 10");
  CAPTURE(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("ratio to cuBLAS:") != std::string::npos);
  CHECK(r.output.find("check:             PASS") != std::string::npos);
}

TEST_CASE("gemmgen run exits 2 for a schedule that does not lower, on a GPU too") {
  Result r = run_gemmgen("run --schedule v1 --m 1024 --n 1024 --k 1024 --check");
  CAPTURE(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("error[coverage]") != std::string::npos);
}

TEST_CASE("gemmgen run exits 2 for a schedule built for another architecture than the GPU's") {
  Result r = run_gemmgen("run --schedule v7 --m 1024 --n 1024 --k 1024 --check --arch sm_100a");
  CAPTURE(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("error[arch-mismatch]: the schedule targets sm_100a but the GPU is") != std::string::npos);
}

// The one planner on a GPU: `run --schedule auto` and `bench` run the plan gg::plan_gemm makes for
// the shape (a tuned record on this machine is read by both), swapped for a skinny M, and the
// fallback where `auto` cannot lower, which `run` refused before.
TEST_CASE("gemmgen run --schedule auto runs gg::plan_gemm's plan: swapped for a skinny M, operands staged where K is odd") {
  for (const auto& shape : {std::array<int64_t, 3>{16, 4096, 4096}, {1, 4096, 4096}, {7, 1000, 264},
                            {333, 4444, 555}, {1000, 1000, 1000}}) {
    const gg::GemmPlan plan = gg::plan_gemm(shape[0], shape[1], shape[2]);
    const std::string kernel = gg::emit_cuda(plan.build()).kernel_name;
    for (const char* mode : {"", " --exact"}) {
      const Result r = run_gemmgen("run --schedule auto --m " + std::to_string(shape[0]) + " --n " +
                                   std::to_string(shape[1]) + " --k " + std::to_string(shape[2]) + " --json" + mode);
      CAPTURE(r.output);
      CHECK(r.exit_code == 0);
      CHECK(r.output.find("\"plan\": \"" + plan.describe() + "\"") != std::string::npos);
      CHECK(r.output.find("\"kernel\": \"" + kernel + "\"") != std::string::npos);
      CHECK(r.output.find(std::string("\"swapped\": ") + (plan.swapped() ? "true" : "false")) != std::string::npos);
      CHECK(r.output.find("\"m\": " + std::to_string(shape[0]) + ",") != std::string::npos);  // the caller's M
      CHECK(r.output.find("\"passed\": true") != std::string::npos);
    }
  }
}

namespace {

// `gemmgen bench FLAGS` over the shapes given: its output, and the JSON it wrote.
struct BenchRun {
  Result result;
  std::string json;
  // Whether the JSON names the plan gg::plan_gemm makes for the shape: schedule, kernel and config.
  bool names(const gg::GemmPlan& plan) const {
    return json.find("\"schedule\": \"" + plan.schedule + "\", \"kernel\": \"" +
                     gg::emit_cuda(plan.build()).kernel_name + "\", \"config\": \"" + plan.config + "\"") !=
           std::string::npos;
  }
};
BenchRun bench(const std::string& name, const std::string& shapes_text, const std::string& flags) {
  const std::string shapes = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/" + name;
  std::ofstream(shapes) << shapes_text;
  BenchRun run;
  run.result = run_gemmgen("bench " + flags + " --shapes " + shapes + " --reps 5 --json " + shapes + ".json");
  std::stringstream text;
  text << std::ifstream(shapes + ".json").rdbuf();
  run.json = text.str();
  return run;
}

}  // namespace

TEST_CASE("gemmgen bench names, for each shape, the plan gg::plan_gemm makes") {
  const BenchRun run = bench("gg_plan_shapes.txt", "16 4096 4096 decode\n333 4444 555 ragged k\n2048 2048 2048 square\n", "");
  CAPTURE(run.result.output);
  CHECK(run.result.exit_code == 0);
  for (const auto& shape : {std::array<int64_t, 3>{16, 4096, 4096}, {333, 4444, 555}, {2048, 2048, 2048}}) {
    const gg::GemmPlan plan = gg::plan_gemm(shape[0], shape[1], shape[2]);
    CAPTURE(plan.describe());
    CHECK(run.names(plan));
  }
}

TEST_CASE("gemmgen bench --symmetric plans each shape's D = A * A^T as gg::plan_gemm does, and refuses N other than M") {
  const BenchRun run = bench("gg_symmetric_shapes.txt",
                             "4096 4096 4096 square\n1024 1024 1024 small\n300 200 64 not square\n", "--symmetric");
  CAPTURE(run.result.output);
  CHECK(run.result.exit_code == 0);
  gg::GemmOptions o;
  o.layout.symmetric = true;
  for (const int64_t size : {4096, 1024}) {
    const gg::GemmPlan plan = gg::plan_gemm(size, size, size, o);
    CAPTURE(plan.describe());
    CHECK(run.names(plan));
  }
  CHECK(run.json.find("\"schedule\": \"symmetric\"") != std::string::npos);  // 4096^3 (1024^3 is planned whole)
  CHECK(run.result.output.find("D = A * A^T is M x M, but N=200 and M=300") != std::string::npos);
}

// A two-dimensional cluster sharing both operands (cluster 2 2 1, multicast A and B): every CTA's
// slices reach its row and column, random and exact, at shapes whose last clusters overhang D,
// one kernel launched at several M (M is read at run time).
TEST_CASE("gemmgen run: a 2x2 cluster sharing A and B passes, random and exact, at edge shapes") {
  const std::string sched = "/tmp/gemmgen_cluster_2d_test.sched";
  for (const char* problem : {"problem m=300 n=400 k=320 dtype=bf16 out=bf16",
                              "problem m=392 n=5752 k=1000 dtype=bf16 out=bf16"}) {
    std::ofstream(sched) << problem << "\n"
                         << "tile 128 192 64\ninline cast\nmma 64 192 16 sm_90a\nbind k_o serial\nbind m_o block.y\n"
                            "bind n_o block.x\ncache_read A tma\ncache_read B tma\ncache_write cast shared tma\n"
                            "persist m_o n_o tile row 8\nwarp_specialize 40 232\nsplit m_i 64 m_wg m_mma\n"
                            "bind m_wg warpgroup\nstore_subtile 64 1\ncircular_buffer k_o 4 3\ncluster 2 2 1\n"
                            "multicast A\nmulticast B\n";
    for (const char* mode : {"", " --exact", " --at-m 1,129,300,777"}) {
      Result r = run_gemmgen("run --schedule-file " + sched + " --check --json" + mode);
      CAPTURE(problem);
      CAPTURE(mode);
      CAPTURE(r.output);
      CHECK(r.exit_code == 0);
      CHECK(r.output.find("FAIL") == std::string::npos);
    }
  }
}

// A persistent grid planned past the clusters this GPU holds at once (planned for 264 SMs: 66
// clusters of 4, where an H100 holds about 30) is launched at what the GPU holds, and its loop
// covers every tile: each CTA strides over the clusters actually launched.
TEST_CASE("gemmgen run --sms 264: a persistent grid past the GPU's resident clusters launches what it holds") {
  const std::string sched = "/tmp/gemmgen_resident_clusters_test.sched";
  std::ofstream(sched) << "problem m=4096 n=2560 k=512 dtype=bf16 out=bf16\n"
                       << "tile 128 192 64\ninline cast\nmma 64 192 16 sm_90a\nbind k_o serial\nbind m_o block.y\n"
                          "bind n_o block.x\ncache_read A tma\ncache_read B tma\ncache_write cast shared tma\n"
                          "persist m_o n_o tile row 8\nwarp_specialize 40 232\nsplit m_i 64 m_wg m_mma\n"
                          "bind m_wg warpgroup\nstore_subtile 64 1\ncircular_buffer k_o 4 3\ncluster 2 2 1\n"
                          "multicast A\nmulticast B\n";
  const auto field = [](const std::string& json, const std::string& name) {
    const size_t at = json.find("\"" + name + "\": ");
    REQUIRE_MESSAGE(at != std::string::npos, name << " missing from " << json);
    return std::stol(json.substr(at + name.size() + 4));
  };
  for (const char* mode : {"", " --exact"}) {
    const Result r = run_gemmgen("run --schedule-file " + sched + " --sms 264 --check --json" + mode);
    CAPTURE(r.output);
    CHECK(r.exit_code == 0);
    const long planned = field(r.output, "planned_grid_ctas"), launched = field(r.output, "grid_ctas");
    CHECK(planned == 264);  // 32 x 14 tiles in 2x2 groups: 112 clusters of 4 wanted, 66 allowed
    CHECK(launched < planned);
    CHECK(launched % 4 == 0);
    CHECK(launched == field(r.output, "resident_ctas"));
  }
  const Result text = run_gemmgen("run --schedule-file " + sched + " --sms 264 --check");
  CAPTURE(text.output);
  CHECK(text.exit_code == 0);
  CHECK(text.output.find("note:              the plan's 264 persistent CTAs exceed the") != std::string::npos);
}
