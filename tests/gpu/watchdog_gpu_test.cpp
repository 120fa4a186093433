// The GPU watchdog on the hardware: a kernel whose consumers never release a stage of the ring
// (a lost arrival, planted into the emitted source) built with GG_WATCHDOG fails its launch within
// seconds, and the message names the block, the barrier, the waiting role and the parity, where
// the same kernel without the watchdog would hang the GPU. (After the trap the context is lost:
// this case runs in its own process, as every GPU case does under ctest.)
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

#include "codegen/emit.h"
#include "runtime/cuda_error.h"
#include "runtime/device_buffer.h"
#include "runtime/launch.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

// `source` without the lines that contain `what`; `dropped` counts them.
std::string without_lines(const std::string& source, const std::string& what, int& dropped) {
  std::istringstream in(source);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find(what) != std::string::npos) {
      ++dropped;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("watchdog: a lost stage release traps within seconds, naming the barrier, role and block") {
  const int64_t m = 512, n = 512, k = 4096;  // 64 k tiles through a 4-stage ring
  const EmittedKernel e = emit_cuda(tutorial_schedule(8, make_gemm(m, n, k, DType::BF16, DType::BF16)));
  int dropped = 0;
  const std::string source = without_lines(e.source, "gg::dev::mbarrier_arrive((empty_bar", dropped);
  REQUIRE(dropped == 2);  // the release inside the k loop and the one after it
  rt::JitOptions options;
  options.use_cache = false;
  options.extra_options.push_back("-DGG_WATCHDOG");
  const rt::LoadedKernel kernel(rt::compile_kernel(source, e.kernel_name, "sm_90a", options), e.launch);
  rt::DeviceBuffer a(rt::ElemType::BF16, size_t(m * k)), b(rt::ElemType::BF16, size_t(n * k)),
      d(rt::ElemType::BF16, size_t(m * n));
  rt::GemmProblem problem;
  problem.a = a.data();
  problem.b = b.data();
  problem.d = d.data();
  problem.m = m;
  problem.n = n;
  problem.k = k;

  // Device printf reaches this process's stdout when the launch is synchronized: catch it.
  std::fflush(stdout);
  const int saved = dup(1);
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  dup2(fileno(capture), 1);
  const auto start = std::chrono::steady_clock::now();
  std::string error = "no error";
  try {
    kernel.launch_and_wait(problem);
  } catch (const rt::CudaError& failure) {
    error = failure.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string printed;
  std::rewind(capture);
  for (int c; (c = std::fgetc(capture)) != EOF;) printed += static_cast<char>(c);
  std::fclose(capture);

  std::printf("watchdog: launch failed after %.2f s with: %s\n", seconds, error.c_str());
  std::printf("watchdog: the kernel printed %zu bytes, first line: %s\n", printed.size(),
              printed.substr(0, printed.find('\n')).c_str());
  CAPTURE(error);
  CAPTURE(printed.substr(0, 400));
  CHECK(error != "no error");
  CHECK(seconds < 30.0);
  CHECK(printed.find("gemmgen watchdog: block (") != std::string::npos);
  CHECK(printed.find("waited over 1 s on empty_bar, role producer (parity ") != std::string::npos);
}
