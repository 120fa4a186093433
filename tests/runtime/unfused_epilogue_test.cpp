// The unfused epilogue kernel (the baseline a fused epilogue is timed against) compiles without a
// GPU; its results are checked on one by the epilogue-plan GPU tests.
#include <doctest/doctest.h>

#include "runtime/jit.h"
#include "runtime/unfused_epilogue.h"

TEST_CASE("the unfused epilogue's kernel compiles for sm_90a") {
  gg::rt::CompiledKernel kernel;
  REQUIRE_NOTHROW(kernel = gg::rt::compile_unfused_epilogue_kernel("sm_90a"));
  CHECK(!kernel.cubin.empty());
  CHECK(kernel.lowered_name == "gg_unfused_epilogue");
}

TEST_CASE("the unfused epilogue refuses more ops than its kernel holds") {
  gg::rt::UnfusedEpilogue e;
  e.ops.resize(9);
  CHECK_THROWS_WITH_AS(gg::rt::run_unfused_epilogue(e, nullptr, nullptr, nullptr, 1, 1, 1, 1),
                       "run_unfused_epilogue: 9 ops; at most 8", std::invalid_argument);
}
