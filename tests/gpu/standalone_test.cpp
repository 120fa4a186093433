// Runs the program nvcc built from runtime/nvcc_check/standalone_tma_copy.cu: the
// device headers and host_entry.cuh as an emitted standalone .cu uses them. The program is
// $GEMMGEN_STANDALONE_TMA_COPY (a copy carried to a GPU machine), or the one this build made.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

TEST_CASE("a standalone nvcc-built program using host_entry.cuh copies a matrix through TMA") {
  const char* env = std::getenv("GEMMGEN_STANDALONE_TMA_COPY");
  const std::string program =
      env != nullptr ? std::string(env) : std::string(GEMMGEN_BINARY_DIR) + "/runtime/standalone_tma_copy";
  if (!std::filesystem::exists(program)) {
    MESSAGE("skipped: " << program << " is not built (GEMMGEN_NVCC_CHECK=OFF)");
    return;
  }
  const int status = std::system(program.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
