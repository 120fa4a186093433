// The grouped entry points refuse what they can judge on the host, before any GPU use: no group,
// no row, a null device array. (What the device arrays hold is read by the kernel; the simulator
// tests pin how bad values read.)
#include <doctest/doctest.h>

#include "error_check.h"
#include "schedules/gemm.h"

using namespace gg;
using namespace gg::testing;

TEST_CASE("gemm_masked, gemm_contiguous and gemm_varlen_k: host-side refusals, each with its message") {
  int fake = 0;
  const int* array = &fake;  // never read: each call is refused first
  check_error([&] { gemm_masked(nullptr, nullptr, nullptr, array, 0, 64, 128, 128); }, "bad-group-rows",
              "gemm_masked: 0 groups of at most 64 rows; legal is at least one group of one row");
  check_error([&] { gemm_masked(nullptr, nullptr, nullptr, nullptr, 4, 64, 128, 128); }, "bad-group-rows",
              "gemm_masked: group_rows is null; it holds each group's rows in use (device memory, one int per group)");
  check_error([&] { gemm_contiguous(nullptr, nullptr, nullptr, array, 4, 0, 128, 128); }, "bad-group-rows",
              "gemm_contiguous: 4 groups sharing 0 rows; legal is at least one group and one row");
  check_error([&] { gemm_contiguous(nullptr, nullptr, nullptr, nullptr, 4, 64, 128, 128); }, "bad-group-rows",
              "gemm_contiguous: group_offsets is null; it holds the groups' row offsets (device memory, groups + 1 "
              "ints)");
  check_error([&] { gemm_varlen_k(nullptr, nullptr, nullptr, array, 4, 64, 128, 0); }, "bad-group-rows",
              "gemm_varlen_k: 4 groups sharing 0 rows of K; legal is at least one group and one row");
  check_error([&] { gemm_varlen_k(nullptr, nullptr, nullptr, nullptr, 4, 64, 128, 128); }, "bad-group-rows",
              "gemm_varlen_k: group_offsets is null; it holds the groups' offsets of K (device memory, groups + 1 ints)");
}

TEST_CASE("gemm_pointer_array: host-side refusals, each with its message") {
  int fake = 0;
  void* pointer = &fake;
  const void* input = &fake;
  GroupedPointers arrays;
  arrays.a = &input;  // never read: each call is refused first
  arrays.b = &input;
  arrays.d = &pointer;
  arrays.sizes = &fake;
  check_error([&] { gemm_pointer_array(arrays, 0); }, "bad-group-rows", "gemm_pointer_array: 0 groups; legal is at least one");
  for (int missing = 0; missing < 4; ++missing) {
    GroupedPointers partial = arrays;
    if (missing == 0) partial.a = nullptr;
    if (missing == 1) partial.b = nullptr;
    if (missing == 2) partial.d = nullptr;
    if (missing == 3) partial.sizes = nullptr;
    check_error([&] { gemm_pointer_array(partial, 3); }, "bad-group-rows",
                "gemm_pointer_array: a device array is null; a, b, d (one pointer per group) and sizes (M, N, K per group) "
                "are required");
  }
}

TEST_CASE("gemm_fp8: a batch or a grouped source is refused on the host, with its message") {
  GemmOptions o;
  o.layout.batch = 2;
  check_error([&] { gemm_fp8(nullptr, nullptr, nullptr, nullptr, nullptr, 64, 128, 128, o); }, "not-lowered",
              "gemm_fp8 on a batch or grouped problem source is recorded and checked, but this code generator does "
              "not lower it yet (one dense FP8 problem; gemm_fp8_masked and gemm_fp8_contiguous take groups)");
  o.layout.batch = 1;
  o.layout.source = ProblemSource::Masked;
  check_error([&] { gemm_fp8(nullptr, nullptr, nullptr, nullptr, nullptr, 64, 128, 128, o); }, "not-lowered",
              "gemm_fp8 on a batch or grouped problem source");
}

TEST_CASE("gemm_fp8_masked and gemm_fp8_contiguous: host-side refusals, each with its message") {
  int fake = 0;
  const int* array = &fake;  // never read: each call is refused first
  check_error([&] { gemm_fp8_masked(nullptr, nullptr, nullptr, nullptr, nullptr, array, 0, 64, 128, 128); },
              "bad-group-rows", "gemm_fp8_masked: 0 groups of at most 64 rows; legal is at least one group of one row");
  check_error([&] { gemm_fp8_masked(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 4, 64, 128, 128); },
              "bad-group-rows",
              "gemm_fp8_masked: group_rows is null; it holds each group's rows in use (device memory, one int per group)");
  check_error([&] { gemm_fp8_contiguous(nullptr, nullptr, nullptr, nullptr, nullptr, array, 4, 0, 128, 128); },
              "bad-group-rows", "gemm_fp8_contiguous: 4 groups sharing 0 rows; legal is at least one group and one row");
  check_error([&] { gemm_fp8_contiguous(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 4, 64, 128, 128); },
              "bad-group-rows",
              "gemm_fp8_contiguous: group_offsets is null; it holds the groups' row offsets (device memory, groups + 1 "
              "ints)");
}
