// Runs the program nvcc built from runtime/nvcc_check/standalone_tma_copy.cu: the
// device headers and host_entry.cuh as an emitted standalone .cu uses them.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

TEST_CASE("a standalone nvcc-built program using host_entry.cuh copies a matrix through TMA") {
  const std::string program = std::string(GEMMGEN_BINARY_DIR) + "/runtime/standalone_tma_copy";
  if (!std::filesystem::exists(program)) {
    MESSAGE("not built (GEMMGEN_NVCC_CHECK=OFF): " << program);
    return;
  }
  const int status = std::system(program.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
