#pragma once
// Compiles emitted kernels with nvcc for sm_90a or sm_100a (CPU only) and reads ptxas's verdict: a kernel is
// clean when nvcc succeeds and ptxas reports no stack frame, no spill and no performance-loss note
// (wgmma serialized). Used by the tests that require every kernel of a family (fuzzed schedules,
// the `auto` config space) to compile clean.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace gg::test {

struct NvccResult {
  bool clean = false;
  std::string log;  // nvcc's and ptxas's output
};

// Compiles each source's device code in its own process for `arch` ("90a", "100a"), `jobs` at a
// time, in a scratch folder that one process owns (two suites running at once must not delete each
// other's files). Device code only (--cubin): ptxas's verdict is the point, and the host side of an
// emitted .cu is compiled and linked by the `REQUIRES: nvcc` CLI tests; skipping it makes each
// compile 2.4x faster (0.85 s against 2.1 s for v10's kernel here), which is most of the suites'
// time on a 2-core CI machine.
inline std::vector<NvccResult> compile_for(const std::string& arch, const std::string& nvcc,
                                           const std::vector<std::string>& sources, const std::string& tag,
                                           unsigned jobs = 0) {
  const auto dir = std::filesystem::temp_directory_path() / ("gemmgen_nvcc_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<NvccResult> results(sources.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i; (i = next++) < sources.size();) {
      const auto cu = dir / ("k" + std::to_string(i) + ".cu"), log = dir / ("k" + std::to_string(i) + ".log");
      std::ofstream(cu) << sources[i];
      const std::string cmd = "'" + nvcc + "' -gencode=arch=compute_" + arch + ",code=sm_" + arch + " --cubin -Xptxas -v '" + cu.string() +
                              "' -o /dev/null > '" + log.string() + "' 2>&1";
      const int rc = std::system(cmd.c_str());
      std::stringstream text;
      text << std::ifstream(log).rdbuf();
      results[i].log = text.str();
      // ptxas's "Potential Performance Loss" notes (C7515..C7520: wgmma serialized, e.g. around a
      // branch with MMAs in flight) count as unclean too: such a kernel runs, but slowly.
      results[i].clean = rc == 0 &&
                         results[i].log.find(" 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") !=
                             std::string::npos &&
                         results[i].log.find("Potential Performance Loss") == std::string::npos;
    }
  };
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < jobs; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  std::filesystem::remove_all(dir);
  return results;
}

inline std::vector<NvccResult> compile_sm90a(const std::string& nvcc, const std::vector<std::string>& sources,
                                             const std::string& tag, unsigned jobs = 0) {
  return compile_for("90a", nvcc, sources, tag, jobs);
}

// A test's check that every source compiles clean for `arch` (each failure's ptxas log captured);
// skipped, with a message, where the build found no nvcc.
inline void check_compiles_clean(const std::string& arch, const std::string& nvcc,
                                 const std::vector<std::string>& sources, const std::string& tag) {
  if (nvcc.empty() || !std::filesystem::exists(nvcc)) {
    MESSAGE(tag << ": nvcc compile skipped, no nvcc at '" << nvcc << "'");
    return;
  }
  const std::vector<NvccResult> results = compile_for(arch, nvcc, sources, tag);
  for (size_t i = 0; i < results.size(); ++i) {
    CAPTURE(i);
    CAPTURE(results[i].log);
    CHECK(results[i].clean);
  }
}

}  // namespace gg::test
