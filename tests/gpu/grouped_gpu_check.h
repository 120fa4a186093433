#pragma once
// Shared by the grouped-GEMM GPU tests (masked, contiguous, variable K): random group offsets,
// and one case checked for the kernel families v7, v8 and `auto`, each on random data and in the
// exact small-integer mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "schedules/gemm.h"

namespace gg::testing {

// Offsets of `groups` groups cutting `rows` rows (of M or K) at uniform random points, the first
// group starting at row `first`.
inline std::vector<int64_t> random_offsets(int64_t groups, int64_t rows, uint64_t seed, int64_t first = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, rows);
  std::vector<int64_t> cuts;
  for (int64_t g = 1; g < groups; ++g) cuts.push_back(pick(rng));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> offsets = {first};
  for (int64_t c : cuts) offsets.push_back(first + c);
  offsets.push_back(first + rows);
  return offsets;
}

// `def`'s problem (its groups' arrays in `base`) for v7, v8 and auto (or `schedules`), random and exact; prints a
// line per run and checks each passed.
inline void check_grouped_families(const char* kind, const char* what, const Definition& def, const CheckOptions& base,
                                   const std::vector<const char*>& schedules = {"v7", "v8", "auto"}) {
  for (const char* schedule : schedules) {
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
