// time_jit_compile times what a first use costs: a real NVRTC compile every time, past both
// gemmgen's disk cache and NVRTC's own (which, where a driver is installed, answered repeats of
// a v10 compile in 14-22 ms instead of 409-626 ms on the H100 machine).
#include <doctest/doctest.h>

#include "codegen/gemm_check.h"
#include "runtime/jit.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

using namespace gg;

TEST_CASE("time_jit_compile compiles past the disk cache and NVRTC's own cache") {
  const Schedule s = tutorial_schedule(6, gemm_definition(256, 256, 128));
  const JitCompileTiming t = time_jit_compile(s);
  CHECK_FALSE(t.compiled.from_cache);
  rt::JitOptions first_use;
  first_use.use_cache = false;
  first_use.nvrtc_cache = false;
  const std::string arch(target_name(t.kernel.plan.target));
  CHECK(rt::compile_kernel(t.kernel.source, t.kernel.kernel_name, arch, first_use).cache_key == t.compiled.cache_key);
  rt::JitOptions production;
  production.use_cache = false;
  CHECK(rt::compile_kernel(t.kernel.source, t.kernel.kernel_name, arch, production).cache_key != t.compiled.cache_key);
}
