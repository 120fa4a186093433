// The GPU watchdog (GG_WATCHDOG, on in gemmgen's GPU checks): every mbarrier wait of an
// emitted kernel names its barrier and role, and with the option the kernel still compiles
// through NVRTC (no GPU needed) and carries the trap; without it, the wait stays a plain loop.
#include <doctest/doctest.h>

#include <string>

#include "codegen/emit.h"
#include "runtime/jit.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

std::string sass_text(const std::vector<char>& cubin) { return std::string(cubin.begin(), cubin.end()); }

}  // namespace

TEST_CASE("mbarrier waits name their barrier and role; GG_WATCHDOG compiles in a bounded wait") {
  Definition def = make_gemm(1024, 1024, 1024, DType::BF16, DType::BF16);
  EmittedKernel e = emit_cuda(tutorial_schedule(10, def));
  CHECK(e.source.find("mbarrier_wait_parity((empty_bar + 8 * ") != std::string::npos);
  CHECK(e.source.find(", \"empty_bar, role producer\");") != std::string::npos);
  CHECK(e.source.find(", \"full_bar, role consumer\");") != std::string::npos);
  rt::JitOptions plain, watchdog;
  plain.use_cache = watchdog.use_cache = false;
  watchdog.extra_options.push_back("-DGG_WATCHDOG");
  rt::CompiledKernel without = rt::compile_kernel(e.source, e.kernel_name, "sm_90a", plain);
  rt::CompiledKernel with = rt::compile_kernel(e.source, e.kernel_name, "sm_90a", watchdog);
  // The watchdog's message is a string constant of the module; the plain kernel has none.
  CHECK(sass_text(with.cubin).find("gemmgen watchdog") != std::string::npos);
  CHECK(sass_text(without.cubin).find("gemmgen watchdog") == std::string::npos);
}
