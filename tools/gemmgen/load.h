#pragma once
// Builds the Schedule a command works on from its flags: a built-in schedule (--schedule) or
// a schedule file (--schedule-file), on the problem the size flags, the file's `problem`
// line and the defaults (8192^3, bf16) give, in that order of precedence.
#include <optional>
#include <string>
#include <vector>

#include "dsl/schedule.h"
#include "schedules/gemm.h"
#include "tools/gemmgen/args.h"

namespace gg::cli {

// M, N and K when neither a flag nor the schedule file's `problem` line gives them.
constexpr int64_t kDefaultExtent = 8192;

// --schedule/--schedule-file and the problem flags, for a command's flag table.
std::vector<FlagSpec> schedule_flags();
std::vector<FlagSpec> problem_flags();
// --dtype, --out-dtype, --scale-a, --scale-b (apply_type_flags reads them).
std::vector<FlagSpec> type_flags();

// Masked groups (--group-m): each of the batch's matrices' rows in use, for a definition of masked
// groups: a comma-separated list of `batch` values in 0..M, `random:SEED` (uniform in 0..M), or
// `file:PATH` (the list in a file, separated by commas, spaces or newlines).
// Empty when the definition is not masked. CompileError `bad-group-rows` for a list of another
// length or a value past M.
std::vector<int64_t> group_rows_flag(const Args& args, const Definition& def);
// The same for `groups` groups of at most `most` rows (bench: each shape's M).
std::vector<int64_t> group_rows_flag(const Args& args, int64_t groups, int64_t most);
// Contiguous groups (--source contiguous, --group-m): the batch + 1 row offsets of groups of the
// listed sizes one after another from row 0 (random:SEED: M cut at batch - 1 uniform points;
// without --group-m, M split evenly). Empty when the definition is not contiguous.
// CompileError `bad-group-rows` for sizes past M in all.
// Variable-K groups (--source varlen_k, --group-k): the same along K.
std::vector<int64_t> group_offsets_flag(const Args& args, const Definition& def);
// Pointer-array groups: each group's M, N and K, 3 per group (--group-m, --group-n, --group-k; the
// planned sizes where absent); empty for other sources. CompileError `bad-group-rows`.
std::vector<int64_t> group_shapes_flag(const Args& args, const Definition& def);
std::vector<int64_t> group_offsets_flag(const Args& args, ProblemSource source, int64_t groups, int64_t extent);
// --source, or masked where --group-m is given; nullopt where neither says.
std::optional<ProblemSource> source_flag(const Args& args);

// --dtype, --out-dtype, --scale-a and --scale-b over `o`'s values: the output defaults to the
// operand dtype (bf16 for FP8), and FP8 operands to DeepGEMM's factors (A per 1x128, B per 128x128)
// unless a flag says `none` or another granularity. CompileError `unknown-dtype`, `bad-scale`.
void apply_type_flags(const Args& args, GemmOptions& o);

// The schedule the flags name; usage error when neither or both sources are given.
Schedule load_schedule(const Args& args);

// The plan for --schedule NAME on the flags' problem, as gg::gemm makes it (plan_gemm: for `auto`
// the tuned record, the orientation and the fallback); nullopt for --schedule-file, whose file is
// the plan. load_schedule builds this plan's schedule.
std::optional<GemmPlan> load_plan(const Args& args);
// The schedule of `plan` (load_plan's, so a command that prints the plan plans once), or of the
// --schedule-file when there is none.
Schedule load_schedule(const Args& args, const std::optional<GemmPlan>& plan);

// A schedule by name or path: a name of a built-in, or a path (containing '/' or ending in
// .sched) to a schedule file. Problem flags apply as for load_schedule.
Schedule load_schedule_named(const std::string& name_or_path, const Args& args);

// The text of a file (`-`: standard input); CompileError `file-not-found`, `not-a-file` or
// `not-text` naming it as `what` ("schedule file", "shapes file").
std::string read_text_file(const std::string& path, const std::string& what);

// The --arch flag, when given.
std::optional<Target> arch_flag(const Args& args);

}  // namespace gg::cli
