// How a check judges a kernel's values against the fp64 reference and cuBLAS's (judge_errors),
// on the CPU: the bounds, the 2x-cuBLAS rule and exact mode's two ways to pass.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"

using namespace gg;

TEST_CASE("exact mode passes a result equal to cuBLAS's or to the fp64 reference rounded once, nothing else") {
  // fp64 sums of small integers; bf16 holds 257 and 259 only as 256 and 260 (ties to even).
  const std::vector<double> ref = {1, 257, 259, -3, 1000};
  const std::vector<double> rounded = {1, 256, 260, -3, 1000};
  CheckReport r;
  // Equal to cuBLAS's (as every exact check before): passes.
  CHECK(judge_errors(r, rounded, ref, rounded, DType::BF16, true).empty());
  // cuBLAS off by one bf16 step at one element, ours the rounded reference: passes (H100, 1530 x
  // 1500 x 2040: cuBLAS's bf16 result differed from the rounded sums where v10 and auto matched them).
  const std::vector<double> cublas_off = {1, 258, 260, -3, 1000};
  CHECK(judge_errors(r, rounded, ref, cublas_off, DType::BF16, true).empty());
  // Ours one step off both: fails, naming both references.
  const std::vector<double> mine_off = {1, 256, 262, -3, 1000};
  const std::string why = judge_errors(r, mine_off, ref, rounded, DType::BF16, true);
  CHECK(why.find("exact mode: result differs from cuBLAS and from the fp64 reference rounded to bf16") !=
        std::string::npos);
  // Rounded another way (toward zero, 259 -> 258): not the reference rounded to nearest even.
  CHECK_FALSE(equals_rounded({1, 256, 258, -3, 1000}, ref, DType::BF16));
  CHECK(equals_rounded(rounded, ref, DType::BF16));
  CHECK(equals_rounded(ref, ref, DType::F32));
  CHECK_FALSE(equals_rounded({1, 257}, ref, DType::F32));  // a value missing
}

TEST_CASE("a result more than twice cuBLAS's own error from fp64 fails, within the bound or not") {
  const std::vector<double> ref = {1.0, 2.0, 3.0, 4.0};
  const std::vector<double> theirs = {1.0, 2.0, 3.0, 4.0 + 1e-6};
  const std::vector<double> mine = {1.0, 2.0, 3.0, 4.0 + 4e-6};
  CheckReport r;
  const std::string why = judge_errors(r, mine, ref, theirs, DType::F32, false);
  CHECK(r.bound == doctest::Approx(1e-5));
  CHECK(why.find("> 2x cuBLAS's own") != std::string::npos);
  CHECK(judge_errors(r, theirs, ref, theirs, DType::F32, false).empty());
}

TEST_CASE("a failed f32 check of an unpromoted 16-bit kernel says why and names promote") {
  const Definition long_k = make_definition(4096, 4096, 16384, DType::BF16, DType::F32);
  KernelPlan plan;
  CHECK(unpromoted_f32_hint(plan, long_k) ==
        "(an f32 output of one fp32 chain errs about 1e-9 K, here about 1.6e-05, since the tensor cores' "
        "accumulation truncates; `promote 256` bounds it, as `auto` does); ");
  plan.promotion.on = true;
  CHECK(unpromoted_f32_hint(plan, long_k).empty());
  CHECK(unpromoted_f32_hint(KernelPlan{}, make_definition(4096, 4096, 16384, DType::BF16, DType::BF16)).empty());
}
