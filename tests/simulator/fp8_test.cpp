// FP8 operands with DeepGEMM's scale factors (A per 1 x 128, MN-major, staged by TMA beside A; B per
// 128 x 128 block, read by the consumers) and the promotion of each k tile's MMAs into the fp32
// accumulator: the simulator runs the kernels on small integers and power-of-two factors, exactly.
#include <doctest/doctest.h>

#include <string>

#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;

namespace {

Definition fp8(int64_t m, int64_t n, int64_t k, bool scale_a = true, bool scale_b = true, DType in = DType::E4M3) {
  ProblemLayout l;
  if (scale_a) l.scale_a = ScaleGranularity::Block1x128;
  if (scale_b) l.scale_b = ScaleGranularity::Block128x128;
  return make_definition(m, n, k, in, DType::BF16, {}, l);
}

}  // namespace

TEST_CASE("fp8: the tutorial's warp-specialized steps simulate exactly with both operands' scale factors") {
  for (int step : {7, 8, 10}) {
    CAPTURE(step);
    const Schedule s = tutorial_schedule(step, fp8(200, 264, 384));
    const SimulationReport r = simulate(s);
    INFO(r.to_string());
    CHECK(r.passed);
  }
}
