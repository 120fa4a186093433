// split_k S stream on the GPU: the tiles past the persistent grid's whole waves dealt as even
// k ranges that cross tile boundaries, each tile's pieces added by its last CTA in range order.
// Checked against cuBLAS and fp64 (random and exact, poisoned output) where the tail is every tile,
// part of a wave, one tile, and where a tile has fewer k tiles than CTAs share it; bit-identical
// over repeated launches (the reduction's order is fixed); and one loaded kernel at several M, whose
// tail changes with M at run time.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

namespace {

struct Case {
  int version, splits;
  int64_t m, n, k;
};

gg::Schedule stream_k(int version, int splits, int64_t m, int64_t n, int64_t k) {
  gg::Schedule s = gg::tutorial_schedule(version, gg::make_definition(m, n, k, gg::DType::BF16, gg::DType::BF16));
  s.split_k(splits, /*tail=*/true, /*stream=*/true);
  return s;
}

std::string label(const Case& c, const char* mode) {
  return "v" + std::to_string(c.version) + " split_k " + std::to_string(c.splits) + " stream " + std::to_string(c.m) +
         "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + mode;
}

}  // namespace

TEST_CASE("split_k S stream on the GPU: ragged last waves, random and exact, against fp64 and cuBLAS") {
  // v8's 128x128 tiles on 132 SMs: 1408x128 is 11 tiles, all past the whole waves (none); 2000x3000
  // is 384 tiles, 2 whole waves and 120 dealt; 1100x1920 is 135, one wave and 3 dealt to 9 CTAs;
  // K = 128 is two k tiles a tile, as many as S; 129x264x72 and 1x8x136 are edges (S at most a tile's k tiles).
  const std::vector<Case> cases = {{8, 3, 1408, 128, 512},   {8, 2, 2000, 3000, 1000}, {8, 3, 1100, 1920, 2048},
                                   {8, 2, 2000, 3000, 128},   {8, 2, 129, 264, 72},     {8, 2, 1, 8, 136},
                                   {6, 2, 2000, 3000, 1000}, {7, 3, 1100, 1920, 520}};
  for (const Case& c : cases)
    for (bool exact : {false, true}) {
      gg::CheckOptions options;
      options.exact = exact;
      options.seed = uint64_t(c.m + c.n + c.k + c.splits);
      const gg::CheckReport r = gg::check_on_gpu(stream_k(c.version, c.splits, c.m, c.n, c.k), options);
      const std::string what = label(c, exact ? "exact" : "random");
      std::printf("%s: %s", what.c_str(), gg::format_report(r).c_str());
      CAPTURE(what);
      CHECK(r.unwritten == 0);
      CHECK_MESSAGE(r.passed, r.verdict);
    }
}

TEST_CASE("split_k S stream on the GPU: 20 launches bit-identical, and one kernel at M read at run time") {
  gg::CheckOptions options;
  options.repeat = 20;
  const gg::CheckReport r = gg::check_on_gpu(stream_k(8, 3, 2000, 3000, 1000), options);
  std::printf("repeat: %s", gg::format_report(r).c_str());
  CHECK(r.passed);
  CHECK(r.repeats == 20);
  CHECK(r.repeats_differing == 0);

  // The tail's tile count, the CTAs it is dealt to and the ranges all follow the launch's M.
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t m : {1, 129, 1000, 2000, 4097}) sizes.push_back({m, 3000});
  const auto reports = gg::check_sizes_on_gpu(stream_k(8, 3, 2000, 3000, 1000), sizes);
  REQUIRE(reports.size() == sizes.size());
  for (const gg::CheckReport& each : reports) {
    std::printf("at M: %s", gg::format_report(each).c_str());
    CHECK_MESSAGE(each.passed, each.verdict);
    CHECK(each.unwritten == 0);
  }
}
