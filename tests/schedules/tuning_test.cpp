// gemmgen tune's record, on the CPU: the key names everything a choice depends on, the line
// format round-trips, the last record for a key wins, malformed lines are skipped, and the
// candidate list starts with plan_gemm's own choice.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "runtime/device_info.h"
#include "schedules/tuning.h"

using namespace gg;

namespace {

// Points GEMMGEN_CACHE_DIR (where the record lives) at a scratch directory for one test.
class ScratchRecord {
 public:
  ScratchRecord() : dir_(std::filesystem::temp_directory_path() / ("gemmgen-tuning-test-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    if (const char* old = std::getenv("GEMMGEN_CACHE_DIR")) old_ = old;
    ::setenv("GEMMGEN_CACHE_DIR", dir_.c_str(), 1);
  }
  ~ScratchRecord() {
    if (old_.empty()) ::unsetenv("GEMMGEN_CACHE_DIR");
    else ::setenv("GEMMGEN_CACHE_DIR", old_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }

 private:
  std::filesystem::path dir_;
  std::string old_;
};

AutoParams params(int64_t tile_n, int stages) {
  AutoParams p;
  p.tile_m = 64;
  p.tile_n = tile_n;
  p.tile_k = 256;
  p.consumers = 1;
  p.stages = stages;
  p.cluster = 1;
  p.subtile_cols = 0;
  p.store_buffers = 1;
  return p;
}

}  // namespace

TEST_CASE("tuning key: shape, dtypes, alpha, layout (as plan_gemm reads it), arch and device") {
  GemmOptions o;
  const std::string base = tuning_key(1, 4096, 4096, o, "sm_90a", "NVIDIA H100 80GB HBM3");
  CHECK(base == "1 4096 4096 bf16 bf16 1 | sm_90a | NVIDIA H100 80GB HBM3");
  CHECK(tuning_key(1, 4096, 4096, o, "sm_90a", "NVIDIA H200") != base);
  CHECK(tuning_key(2, 4096, 4096, o, "sm_90a", "NVIDIA H100 80GB HBM3") != base);
  GemmOptions f16 = o;
  f16.in = f16.out = DType::F16;
  CHECK(tuning_key(1, 4096, 4096, f16, "sm_90a", "NVIDIA H100 80GB HBM3") != base);
  GemmOptions tt = o;
  tt.layout.a = tt.layout.b = Layout::MNMajor;
  // M=1: A is read K-major, so only B's layout shows
  CHECK(tuning_key(1, 4096, 4096, tt, "sm_90a", "X") == "1 4096 4096 bf16 bf16 1 [B n-major] | sm_90a | X");
  // K odd: the planner stages A and B, and tune records under that layout (planned_layout): the
  // key tune writes is the key plan_gemm reads, whichever of them is given the staging already
  const std::string staged = "333 4444 555 bf16 bf16 1 [A staged, B staged] | sm_90a | X";
  CHECK(tuning_key(333, 4444, 555, o, "sm_90a", "X") == staged);
  GemmOptions planned = o;
  planned.layout = planned_layout(333, 4444, 555, o);
  CHECK(tuning_key(333, 4444, 555, planned, "sm_90a", "X") == staged);
}

TEST_CASE("tuning record: lines round-trip, the last record for a key wins, malformed lines are skipped") {
  ScratchRecord scratch;
  const TunedChoice first{true, params(16, 5), 0.017, 0.0185};
  const std::string line = format_tuned_line("k1", first);
  CHECK(line == "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 1 row\t0.017\t0.0185");
  const auto parsed = parse_tuned_line(line);
  REQUIRE(parsed);
  CHECK(parsed->first == "k1");
  CHECK(parsed->second.swapped);
  CHECK(parsed->second.params.hash() == first.params.hash());
  CHECK(parsed->second.ms == doctest::Approx(0.017));
  // ping-pong, A multicast, split-K and the tile order are part of the record
  TunedChoice other = first;
  other.params.ping_pong = true;
  other.params.multicast_a = true;
  other.params.split_k = 4;
  other.params.raster = Raster::ColumnMajor;
  other.params.group = 16;
  TunedChoice curve = first;
  curve.params.raster = Raster::Hilbert;
  const auto curve_parsed = parse_tuned_line(format_tuned_line("k1", curve));
  REQUIRE(curve_parsed);
  CHECK(curve_parsed->second.params.raster == Raster::Hilbert);
  const auto other_parsed = parse_tuned_line(format_tuned_line("k1", other));
  REQUIRE(other_parsed);
  CHECK(other_parsed->second.params.hash() == other.params.hash());
  CHECK(other_parsed->second.params.hash() != first.params.hash());
  CHECK(other_parsed->second.params.to_string() == other.params.to_string());
  // the last wave's split (split_k ... tail) is a word after the order
  TunedChoice tail = first;
  tail.params.split_k = 3;
  tail.params.split_tail = true;
  CHECK(format_tuned_line("k1", tail) == "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 3 row tail\t0.017\t0.0185");
  const auto tail_parsed = parse_tuned_line(format_tuned_line("k1", tail));
  REQUIRE(tail_parsed);
  CHECK(tail_parsed->second.params.split_tail);
  CHECK(tail_parsed->second.params.hash() == tail.params.hash());
  CHECK(tail_parsed->second.params.hash() != other_parsed->second.params.hash());
  // stream-K on the last wave (split_k ... stream) in the same place
  TunedChoice stream = tail;
  stream.params.split_stream = true;
  CHECK(format_tuned_line("k1", stream) == "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 3 row stream\t0.017\t0.0185");
  const auto stream_parsed = parse_tuned_line(format_tuned_line("k1", stream));
  REQUIRE(stream_parsed);
  CHECK(stream_parsed->second.params.split_tail);
  CHECK(stream_parsed->second.params.split_stream);
  CHECK(stream_parsed->second.params.hash() != tail.params.hash());
  CHECK(stream_parsed->second.params.to_string().find("stream-K 3 on the last wave") != std::string::npos);
  // a record written before those were choices reads as the defaults
  const auto old = parse_tuned_line("k1\t1\t64 16 256 1 5 1 8 0 1\t0.017\t0.0185");
  REQUIRE(old);
  CHECK(old->second.params.hash() == first.params.hash());
  for (const char* bad : {"", "k1", "k1\t2\t64 16 256 1 5 1 8 0 1\t1\t1", "k1\t1\t64 16 256 1 5\t1\t1",
                          "k1\t1\t64 16 256 1 5 1 8 0 1 9\t1\t1",
                          "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 1 diagonal\t1\t1", "k1\t1\t64 16 256 1 5 1 8 0 1 0 0\t1\t1",
                          "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 1 row 7\t1\t1", "k1\t1\t64 16 256 1 5 1 8 0 1 0 0 3 row last\t1\t1", "k1\t1\t64 16 256 1 5 1 8 0 1\tfast\t1"})
    CHECK_FALSE(parse_tuned_line(bad));

  CHECK_FALSE(lookup_tuned("k1"));
  record_tuned("k1", first);
  record_tuned("k2", {false, params(128, 8), 0.05, 0.05});
  {
    std::ofstream append(*tuning_file(), std::ios::app);
    append << "garbage line\n";
  }
  record_tuned("k1", {true, params(16, 4), 0.016, 0.0185});
  const auto found = lookup_tuned("k1");
  REQUIRE(found);
  CHECK(found->params.stages == 4);  // the later record
  CHECK(lookup_tuned("k2")->params.tile_n == 128);
  CHECK_FALSE(lookup_tuned("k3"));
}

TEST_CASE("tune candidates: plan_gemm's choice first, then each orientation's best by prediction, all lowering") {
  const auto decode = tune_candidates(1, 4096, 4096, GemmOptions{}, 3, hopper());
  // 3 of each orientation, then the first in the 6 other tile orders
  REQUIRE(decode.size() == 12);
  CHECK(decode.front().describe() == plan_gemm(1, 4096, 4096).config);
  CHECK(decode.front().swapped());
  for (size_t i = 2; i < 6; ++i) CHECK(decode[i - 1].params.predicted_us <= decode[i].params.predicted_us);
  std::set<std::string> orders;
  for (size_t i = 6; i < decode.size(); ++i) {
    AutoParams same_order = decode[i].params;
    same_order.raster = decode.front().params.raster;
    same_order.group = decode.front().params.group;
    CHECK(same_order.hash() == decode.front().params.hash());  // only the order differs
    orders.insert(decode[i].describe());
  }
  CHECK(orders.size() == 6);
  CHECK(orders.count("swap A/B; tile 64x16x256, 1 consumer, 5 stages, no cluster, hilbert order, stores from registers") == 1);
  CHECK(orders.count("swap A/B; tile 64x16x256, 1 consumer, 5 stages, no cluster, column group 16, stores from registers") == 1);
  // 4096^3: the straight 128x256 tile, though the swapped one predicts the same time (the swap
  // must win by 3% where both store staged)
  const auto square = tune_candidates(4096, 4096, 4096, GemmOptions{}, 1, hopper());
  REQUIRE(square.size() == 8);
  CHECK_FALSE(square.front().swapped());
  CHECK(square.front().describe() == plan_gemm(4096, 4096, 4096).config);
}

TEST_CASE("plan_gemm reads the record only with a GPU (the key names the device)") {
  if (rt::gpu_available()) return;  // on a GPU machine the record would apply: tests/gpu covers it
  ScratchRecord scratch;
  record_tuned(tuning_key(1, 4096, 4096, GemmOptions{}, "sm_90a", ""), {true, params(16, 3), 1, 1});
  CHECK(plan_gemm(1, 4096, 4096).config.find("tuned") == std::string::npos);
}
