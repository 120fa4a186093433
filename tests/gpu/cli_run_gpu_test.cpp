// `gemmgen run` on a GPU: the CLI compiles, runs and checks a kernel against cuBLAS and the
// fp64 reference in one process, prints the report (text or JSON) and exits 0 when it passes.
// The binary is $GEMMGEN_EXE, or the one this build made.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/wait.h>

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
