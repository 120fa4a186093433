#pragma once
// `gemmgen tune`'s record, which `auto` reads: per (shape, dtypes, alpha, layout, arch, device) the
// config that measured fastest, appended to a text file beside the kernel cache. This file
// only chooses candidates, keys and stores; timing them needs a GPU (tools/gemmgen/tune.cpp).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "schedules/auto_schedule.h"
#include "schedules/gemm.h"

namespace gg {

// One config `tune` times: `auto`'s params in one orientation of the problem.
struct TuneCandidate {
  Definition def;        // straight, or swapped (D^T = B * A^T, see plan_gemm)
  bool swapped() const { return def.swapped(); }
  AutoParams params;
  std::string describe() const;  // "swap A/B; tile ..." as bench prints a plan's config
};

// The model's best `top` configs of each orientation that lower, best predicted first. Throws
// CompileError `no-schedule`, naming the last refusal, when no config lowers.
std::vector<TuneCandidate> tune_candidates(int64_t m, int64_t n, int64_t k, const GemmOptions& options, int top,
                                           const DeviceLimits& limits);

struct TunedChoice {
  bool swapped = false;
  AutoParams params;           // the choice; the model's figures are not stored
  double ms = 0, cublas_ms = 0;  // as measured when it was recorded
};

// "M N K in out alpha [layout] | arch | device": what a tuned choice is valid for; the layout is
// planned_layout's (canonical, operands staged where they need it), the one plan_gemm plans.
std::string tuning_key(int64_t m, int64_t n, int64_t k, const GemmOptions& options, const std::string& arch,
                       const std::string& device);

// The record's file: `tuned.tsv` in the kernel cache directory (GEMMGEN_CACHE_DIR, else
// $XDG_CACHE_HOME/gemmgen or ~/.cache/gemmgen); none when there is no such directory.
std::optional<std::filesystem::path> tuning_file();

// The last choice recorded for `key`, if any (a malformed line is skipped).
std::optional<TunedChoice> lookup_tuned(const std::string& key);
// Appends the choice; throws CompileError `cannot-write` when the record cannot be written.
void record_tuned(const std::string& key, const TunedChoice& choice);

// A config as the tuning record writes it: "128 256 64 2 4 2 8 64 2 0 0 1 row" (tile m n k,
// consumers, stages, cluster, group, store subtile columns and buffers, ping-pong, A multicast,
// split-K, the order, and "tail" for split-K on the last wave); the tune data set's "params".
std::string params_record(const AutoParams& p);
// The config params_record wrote (also each candidate's "params" in `tune --json`), or nullopt.
std::optional<AutoParams> parse_params_record(const std::string& record);
// The line format, exposed for tests: "key\tswapped\tparams\tms\tcublas_ms".
std::string format_tuned_line(const std::string& key, const TunedChoice& choice);
std::optional<std::pair<std::string, TunedChoice>> parse_tuned_line(const std::string& line);

}  // namespace gg
