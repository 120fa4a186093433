#include "tools/gemmgen/load.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <algorithm>
#include <array>
#include <charconv>
#include <random>

#include "codegen/pointer_array_check.h"
#include "codegen/work_units.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"

namespace gg::cli {

namespace {

struct Problem {
  int64_t m = kDefaultExtent, n = kDefaultExtent, k = kDefaultExtent;
  DType in = DType::BF16, out = DType::BF16;
  ProblemLayout layout;
};

// An output dtype left unsaid: the operands' (bf16 for FP8, an operand type only).
DType default_output(DType in) { return dtype_is_fp8(in) ? DType::BF16 : in; }

// An FP8 operand's factors: the flag's, else the file's, else DeepGEMM's default; "none": no factors.
// `granularity` and `major` are the layout's fields for the operand.
void scale_flag(const Args& args, const char* flag, const std::optional<std::string>& in_file, DType in,
                const ScaleSpec& fp8_default, std::optional<ScaleGranularity>& granularity, Layout& major,
                ScaleFormat& format) {
  const std::optional<std::string> v = args.value(flag) ? args.value(flag) : in_file;
  granularity.reset();
  format = ScaleFormat::F32;
  if (v && *v == "none") return;
  const std::optional<ScaleSpec> spec = v ? std::optional(parse_scale_spec(*v))
                                          : dtype_is_fp8(in) ? std::optional(fp8_default) : std::nullopt;
  if (!spec) return;
  granularity = spec->granularity;
  format = spec->format;
  if (spec->major) major = *spec->major;
}

// Both operands' factors into `l`.
// The defaults: the target's recipe (fp8_default_scales).
void scale_flags(const Args& args, const ProblemSpec* file, DType in, Target target, ProblemLayout& l) {
  const std::array<ScaleSpec, 2> defaults = fp8_default_scales(target);
  scale_flag(args, "scale-a", file ? file->scale_a : std::nullopt, in, defaults[0], l.scale_a, l.scale_a_major,
             l.scale_a_format);
  scale_flag(args, "scale-b", file ? file->scale_b : std::nullopt, in, defaults[1], l.scale_b, l.scale_b_major,
             l.scale_b_format);
}

// Flags override the file's `problem` line, which overrides the defaults; the output dtype
// defaults to the input dtype.
Problem resolve_problem(const Args& args, const ProblemSpec& file, Target target) {
  Problem p;
  p.m = args.positive("m").value_or(file.m.value_or(kDefaultExtent));
  p.n = args.positive("n").value_or(file.n.value_or(kDefaultExtent));
  p.k = args.positive("k").value_or(file.k.value_or(kDefaultExtent));
  if (auto d = args.value("dtype")) p.in = parse_dtype(*d);
  else if (file.dtype) p.in = *file.dtype;
  if (auto d = args.value("out-dtype")) p.out = parse_dtype(*d);
  else if (file.out) p.out = *file.out;
  else p.out = default_output(p.in);
  if (auto d = args.value("d-major")) p.layout.d = parse_d_major(*d);
  else if (file.d_layout) p.layout.d = *file.d_layout;
  if (auto a = args.value("a-major")) p.layout.a = parse_operand_major(*a, "A", "m");
  else if (file.a_layout) p.layout.a = *file.a_layout;
  if (auto b = args.value("b-major")) p.layout.b = parse_operand_major(*b, "B", "n");
  else if (file.b_layout) p.layout.b = *file.b_layout;
  p.layout.lda = args.positive("lda").value_or(file.lda.value_or(0));
  p.layout.ldb = args.positive("ldb").value_or(file.ldb.value_or(0));
  p.layout.ldd = args.positive("ldd").value_or(file.ldd.value_or(0));
  p.layout.batch = args.positive("batch").value_or(file.batch.value_or(1));
  p.layout.stride_a = args.at_least("stride-a", 0).value_or(file.stride_a.value_or(-1));
  p.layout.stride_b = args.at_least("stride-b", 0).value_or(file.stride_b.value_or(-1));
  p.layout.stride_d = args.positive("stride-d").value_or(file.stride_d.value_or(-1));
  if (auto c = args.value("compiled-dims")) set_compiled_dims(p.layout, *c);
  else if (file.compiled) set_compiled_dims(p.layout, *file.compiled);
  // --expected-m: plan for that M (DeepGEMM's expected_m); the kernel reads the real M at run time.
  if (auto expected = args.positive("expected-m")) {
    if (!p.layout.runtime_m)
      throw_user_error("runtime-size", "--expected-m " + std::to_string(*expected) + " plans for an M the kernel "
                       "reads at run time, but M is compiled (--compiled-dims " + compiled_dims_text(p.layout) + ")");
    p.m = *expected;
  }
  if (auto source = source_flag(args)) p.layout.source = *source;
  else if (file.source) p.layout.source = *file.source;
  p.layout.symmetric = args.has("symmetric") || file.symmetric.value_or(false);
  if (const auto stage = args.value("stage") ? args.value("stage") : file.stage)
    set_staged_operands(p.layout, *stage);
  scale_flags(args, &file, p.in, target, p.layout);
  return p;
}

}  // namespace

void apply_type_flags(const Args& args, GemmOptions& o) {
  if (auto d = args.value("dtype")) o.in = parse_dtype(*d);
  o.out = args.value("out-dtype") ? parse_dtype(*args.value("out-dtype")) : default_output(o.in);
  scale_flags(args, nullptr, o.in, arch_flag(args).value_or(Target::Sm90a), o.layout);
}

namespace {

Schedule from_file(const std::string& path, const Args& args) {
  std::string text = read_text_file(path, "schedule file");
  const std::string shown = path == "-" ? "<stdin>" : path;  // the name messages use
  try {
    ScheduleFile file = parse_schedule_file(text);
    std::optional<Target> target = arch_flag(args);
    for (auto& d : file.directives)
      if (auto* m = std::get_if<MmaD>(&d)) {
        if (target) m->target = *target;
        else target = m->target;  // the file's own: its FP8 factors default to that target's recipe
      }
    Problem p = resolve_problem(args, file.problem, target.value_or(Target::Sm90a));
    Definition def = make_definition(p.m, p.n, p.k, p.in, p.out, file.epilogue, p.layout,
                                     file.problem.swapped.value_or(false));
    return apply_directives(def, file.directives, file.directive_lines);
  } catch (const CompileError& e) {
    // "line 3: ..." becomes "bad.sched: line 3: ...".
    throw CompileError(e.rule(), shown + ": " + e.message());
  }
}

// gg::gemm's planner on the flags' problem: `auto` as gg::gemm runs it (tuned record, orientation,
// fallback), any other name as asked.
GemmPlan builtin_plan(const std::string& name, const Args& args) {
  const Problem p = resolve_problem(args, {}, arch_flag(args).value_or(Target::Sm90a));
  GemmOptions options;
  options.in = p.in;
  options.out = p.out;
  options.layout = p.layout;
  options.schedule = name;
  options.target = arch_flag(args).value_or(Target::Sm90a);
  return plan_gemm(p.m, p.n, p.k, options);
}


std::string read_file_bytes(const std::string& path, const std::string& what) {
  std::ostringstream os;
  if (path == "-") {
    os << std::cin.rdbuf();
    return os.str();
  }
  const auto not_found = [&] { throw_user_error("file-not-found", "cannot read " + what + " '" + path + "'"); };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) not_found();
  if (!std::filesystem::is_regular_file(status))
    throw_user_error("not-a-file", what + " '" + path + "' is not a regular file" +
                                       (std::filesystem::is_directory(status) ? " (it is a directory)" : ""));
  std::ifstream in(path, std::ios::binary);
  if (!in) not_found();
  os << in.rdbuf();
  return os.str();
}

// The file is text: a NUL or another control byte (besides tab, CR, LF) means a binary file,
// refused before its bytes reach a message.
void require_text(const std::string& path, const std::string& text, const std::string& what) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      throw_user_error("not-text", what + " '" + path + "' is not text (byte " + hex + " at offset " +
                                       std::to_string(i) + ")");
    }
  }
}

// Exactly one of --schedule and --schedule-file; usage error otherwise.
void load_source(const Args& args) {
  const bool name = args.has("schedule"), file = args.has("schedule-file");
  if (name && file) usage_error("give one of --schedule and --schedule-file, not both");
  if (!name && !file) usage_error("'gemmgen " + args.command + "' needs --schedule NAME or --schedule-file FILE");
}

}  // namespace

// `-` is standard input; anything else must be a regular file (a directory or /proc entry
// would otherwise read as an empty schedule).
std::string read_text_file(const std::string& path, const std::string& what) {
  const std::string text = read_file_bytes(path, what);
  require_text(path == "-" ? "<stdin>" : path, text, what);
  return text;
}



std::vector<FlagSpec> schedule_flags() {
  return {
      {"schedule", "NAME", "a built-in schedule (see `gemmgen list`)"},
      {"schedule-file", "FILE", "a schedule file (see `gemmgen print`; `-` reads stdin)"},
  };
}

std::vector<FlagSpec> type_flags() {
  return {
      {"dtype", "DTYPE", "operand dtype: bf16 (default), f16, e4m3 or e5m2"},
      {"out-dtype", "DTYPE", "output dtype: bf16, f16 or f32 (default: the operand dtype; bf16 for FP8)"},
      {"scale-a", "GRAN", "FP8: A's scale factors per 1x128 (default), tensor, row, 128x128 or none; "
                          "1x128:k, 128x128:k for K-major factors (default MN-major)"},
      {"scale-b", "GRAN", "FP8: B's scale factors per 128x128 (default), tensor, row, 1x128 or none; "
                          "128x128:mn for N-major factors (default K-major)"},
  };
}

std::vector<FlagSpec> problem_flags() {
  std::vector<FlagSpec> flags = {
      {"m", "M", "rows of A and D (default 8192)"},
      {"n", "N", "rows of B, columns of D (default 8192)"},
      {"k", "K", "the reduction extent (default 8192)"},
  };
  for (FlagSpec& f : type_flags()) flags.push_back(std::move(f));
  const std::vector<FlagSpec> rest = {
      {"a-major", "k|m", "A's contiguous dimension: k (default) or m"},
      {"b-major", "k|n", "B's contiguous dimension: k (default) or n"},
      {"d-major", "n|m", "D's contiguous dimension: n (row-major, default) or m (column-major)"},
      {"lda", "L", "elements between A's stored rows (default: dense)"},
      {"ldb", "L", "elements between B's stored rows (default: dense)"},
      {"ldd", "L", "elements between D's stored rows (default: dense)"},
      {"batch", "B", "matrices computed in one launch (default 1)"},
      {"symmetric", "", "D = A * A^T: A is read as both operands (N = M); schedule it with `symmetric`"},
      {"stage", "a|b|ab", "read these operands through an aligned copy each launch makes first (rows TMA cannot "
                          "address; `auto` stages them itself)"},
      {"stride-a", "S", "elements between A's matrices of a batch (default: dense; 0: one A for every batch)"},
      {"stride-b", "S", "elements between B's matrices of a batch (default: dense; 0: one B for every batch)"},
      {"stride-d", "S", "elements between D's matrices of a batch (default: dense)"},
      {"expected-m", "M", "plan the kernel for this M (it reads the real M, --m, at run time): a masked group's expected rows"},
      {"group-m", "LIST", "groups' rows, comma-separated, random:SEED or file:PATH: masked, each batch matrix's rows in use "
                          "(0..M each); contiguous, each group's rows of A and D, one after another (M in all at most); "
                          "pointer arrays, each group's M (0..M each)"},
      {"group-n", "LIST", "pointer-array groups: each group's N (0..N each, D's rows whole 16-byte pieces), "
                          "comma-separated, random:SEED (drawn to such N) or file:PATH"},
      {"group-k", "LIST", "variable-K groups: each group's rows of K in A and B, one after another (K in all at most); "
                          "pointer arrays, each group's K (0..K each); comma-separated, random:SEED or file:PATH"},
      {"source", "SOURCE", "where the batch's matrices come from: dense, masked (the default with --group-m), contiguous "
                           "(groups of rows of one A and D, each with its own B), varlen_k (groups of K ranges of "
                           "one A and B, each its own D) or pointer_array (groups with their own pointers, sizes and "
                           "leading dimensions; --group-m, --group-n and --group-k give each group's M, N and K)"},
      {"compiled-dims", "DIMS", "sizes the kernel has as constants: nk (default: M read at run time), mnk, mk, k"},
      {"arch", "ARCH", "sm_90a (default) or sm_100a"},
  };
  flags.insert(flags.end(), rest.begin(), rest.end());
  return flags;
}

std::optional<Target> arch_flag(const Args& args) {
  if (auto a = args.value("arch")) return parse_target(*a);
  return std::nullopt;
}

std::vector<int64_t> group_rows_flag(const Args& args, const Definition& def) {
  if (def.problem_source() != ProblemSource::Masked) return {};
  // The groups' rows are the kernel's M (a masked definition is never swapped): --m, which
  // --expected-m may have planned for less.
  return group_rows_flag(args, def.batch(), args.positive("m").value_or(def.m()));
}

std::optional<ProblemSource> source_flag(const Args& args) {
  if (auto v = args.value("source")) {
    if (*v == "dense") return ProblemSource::Dense;
    if (*v == "masked") return ProblemSource::Masked;
    if (*v == "contiguous") return ProblemSource::Contiguous;
    if (*v == "varlen_k") return ProblemSource::VarlenK;
    if (*v == "pointer_array") return ProblemSource::PointerArray;
    usage_error("--source " + *v + ": expected dense, masked, contiguous, varlen_k or pointer_array");
  }
  if (args.has("group-m")) return ProblemSource::Masked;
  if (args.has("group-k")) return ProblemSource::VarlenK;
  return std::nullopt;
}

namespace {

// --group-m's (or --group-k's: `flag`) counts for `groups` groups of at most `most` rows each;
// random:SEED draws each uniformly in 0..most, or with `sum_to`, cuts 0..most at groups - 1
// uniform points (`extent` names what `most` is: "M", "K").
std::vector<int64_t> group_sizes(const Args& args, const std::string& flag, int64_t groups, int64_t most, bool sum_to,
                                 const std::string& extent = "M") {
  std::vector<int64_t> rows;
  const std::string text = args.value(flag).value_or("");
  if (text.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    const std::string digits = text.substr(7);
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (res.ec != std::errc() || res.ptr != digits.data() + digits.size() || digits.empty())
      throw_user_error("bad-group-rows", "--" + flag + " " + text + ": expected random:SEED with a non-negative integer seed");
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> pick(0, most);
    for (int64_t g = 0; g < groups; ++g) rows.push_back(pick(rng));
    if (!sum_to) return rows;
    rows.back() = most;  // the cut points, sorted, then the rows between them
    std::sort(rows.begin(), rows.end());
    for (size_t g = rows.size(); g-- > 1;) rows[g] -= rows[g - 1];
    return rows;
  }
  // A list, or the counts from a file separated by commas, spaces or newlines.
  const bool from_file = text.rfind("file:", 0) == 0;
  const std::vector<std::string> words =
      from_file ? split_list(read_text_file(text.substr(5), "group sizes file"), ", \t\r\n", true)
                : split_list(text, ",", false);
  if (words.empty()) throw_user_error("bad-group-rows", "--" + flag + " " + text + ": the file lists no group");
  for (const std::string& word : words) {
    int64_t v = -1;
    auto res = std::from_chars(word.data(), word.data() + word.size(), v);
    if (res.ec != std::errc() || res.ptr != word.data() + word.size() || v < 0)
      throw_user_error("bad-group-rows", "--" + flag + ": '" + word + "' is not a count of rows (a non-negative integer)");
    if (v > most && sum_to)
      throw_user_error("bad-group-rows", "--" + flag + ": a group of " + std::to_string(v) + " rows, more than " +
                                             extent + "=" + std::to_string(most) + " in all");
    if (v > most) {
      const std::string unit = extent == "N" ? " columns" : " rows";
      throw_user_error("bad-group-rows", "--" + flag + ": a group of " + std::to_string(v) + unit + " in a buffer of " +
                                             extent + "=" + std::to_string(most) + unit + " per group; legal is 0.." +
                                             std::to_string(most));
    }
    rows.push_back(v);
  }
  if (static_cast<int64_t>(rows.size()) != groups)
    throw_user_error("bad-group-rows", "--" + flag + " lists " + std::to_string(rows.size()) + " group(s) for a batch of " +
                                           std::to_string(groups) + " (one per matrix, or random:SEED)");
  return rows;
}

}  // namespace

std::vector<int64_t> group_rows_flag(const Args& args, int64_t groups, int64_t most) {
  if (!args.has("group-m")) return std::vector<int64_t>(static_cast<size_t>(groups), most);
  return group_sizes(args, "group-m", groups, most, false);
}

std::vector<int64_t> group_shapes_flag(const Args& args, const Definition& def) {
  if (def.problem_source() != ProblemSource::PointerArray) return {};
  // Each group's M, N and K: --group-m, --group-n, --group-k (each at most the planned size, which
  // the buffers of `simulate` hold), every group of the planned sizes where a flag is absent.
  const int64_t groups = def.batch();
  const auto sizes = [&](const char* flag, int64_t most, const char* extent) {
    if (!args.has(flag)) return std::vector<int64_t>(static_cast<size_t>(groups), most);
    return group_sizes(args, flag, groups, most, false, extent);
  };
  const std::vector<int64_t> m = sizes("group-m", args.positive("m").value_or(def.m()), "M"),
                             k = sizes("group-k", def.k(), "K");
  std::vector<int64_t> n = sizes("group-n", def.n(), "N");
  // random:SEED draws each N down to a whole 16-byte row end of D (the rule group_sizes_or_planned
  // checks); a list must keep it itself.
  if (args.value("group-n").value_or("").rfind("random:", 0) == 0)
    for (int64_t& cols : n) cols -= cols % (16 / dtype_bytes(def.output_dtype()));
  std::vector<int64_t> out;
  for (size_t g = 0; g < size_t(groups); ++g) out.insert(out.end(), {m[g], n[g], k[g]});
  return group_sizes_or_planned(out, def);  // checks each N
}

std::vector<int64_t> group_offsets_flag(const Args& args, const Definition& def) {
  if (def.problem_source() == ProblemSource::Contiguous)
    return group_offsets_flag(args, ProblemSource::Contiguous, def.batch(), args.positive("m").value_or(def.m()));
  if (def.problem_source() == ProblemSource::VarlenK)
    return group_offsets_flag(args, ProblemSource::VarlenK, def.batch(), def.k());
  return {};
}

std::vector<int64_t> group_offsets_flag(const Args& args, ProblemSource source, int64_t groups, int64_t extent) {
  const bool k = source == ProblemSource::VarlenK;
  const std::string flag = k ? "group-k" : "group-m";
  if (!args.has(flag)) return group_offsets_or_even({}, groups, extent);  // split evenly
  std::vector<int64_t> offsets = {0};
  for (int64_t rows : group_sizes(args, flag, groups, extent, true, k ? "K" : "M"))
    offsets.push_back(offsets.back() + rows);
  if (offsets.back() > extent)
    throw_user_error("bad-group-rows", "--" + flag + ": the " + (k ? "variable-K groups take " : "contiguous groups take ") +
                                           std::to_string(offsets.back()) +
                                           (k ? " rows of K in A and B, which have K=" : " rows of A and D, which have M=") +
                                           std::to_string(extent));
  return offsets;
}

Schedule load_schedule_named(const std::string& name_or_path, const Args& args) {
  bool is_path = name_or_path.find('/') != std::string::npos ||
                 (name_or_path.size() > 6 && name_or_path.compare(name_or_path.size() - 6, 6, ".sched") == 0);
  return is_path ? from_file(name_or_path, args) : builtin_plan(name_or_path, args).build();
}

std::optional<GemmPlan> load_plan(const Args& args) {
  load_source(args);
  if (auto name = args.value("schedule")) return builtin_plan(*name, args);
  return std::nullopt;
}

Schedule load_schedule(const Args& args, const std::optional<GemmPlan>& plan) {
  Schedule s = plan ? plan->build() : from_file(*args.value("schedule-file"), args);
  group_rows_flag(args, s.definition());  // a bad --group-m is refused by every command
  group_offsets_flag(args, s.definition());
  return s;
}

Schedule load_schedule(const Args& args) { return load_schedule(args, load_plan(args)); }

}  // namespace gg::cli
