#pragma once
// Shared by the grouped-GEMM GPU tests (masked, contiguous, variable K): one case checked for the
// kernel families v7, v8 and `auto`, each on random data and in the exact small-integer mode.
#include <doctest/doctest.h>

#include <cstdio>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "schedules/gemm.h"

namespace gg::testing {

// `def`'s problem (its groups' arrays in `base`) for v7, v8 and auto, random and exact; prints a
// line per run and checks each passed.
inline void check_grouped_families(const char* kind, const char* what, const Definition& def, const CheckOptions& base) {
  for (const char* schedule : {"v7", "v8", "auto"}) {
    GemmOptions o;
    o.layout = problem_layout(def);
    o.schedule = schedule;
    const Schedule s = plan_gemm(def.m(), def.n(), def.k(), o).build();
    for (bool exact : {false, true}) {
      CheckOptions check = base;
      check.exact = exact;
      const CheckReport r = check_on_gpu(s, check);
      std::printf("%s %s %s %s: %s\n", kind, what, schedule, exact ? "exact" : "random", r.verdict.c_str());
      CHECK_MESSAGE(r.passed, what << " " << schedule << ": " << r.verdict);
    }
  }
}

}  // namespace gg::testing
