#include "codegen/explain.h"

#include <optional>
#include <sstream>

#include "codegen/analyze_schedule.h"
#include "codegen/emit.h"
#include "codegen/validate_schedule.h"
#include "codegen/work_units.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"

namespace gg {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

DeviceLimits pick_limits(const Schedule& s, const std::optional<DeviceLimits>& limits) {
  if (limits) return *limits;
  auto m = s.mma_shape();
  return limits_for(m ? m->target : Target::Sm90a);
}

std::string problem_line(const Schedule& s) {
  const Definition& def = s.definition();
  std::ostringstream os;
  os << "problem M=" << def.m() << " N=" << def.n() << " K=" << def.k() << ", " << dtype_name(def.input_dtype())
     << " -> " << dtype_name(def.output_dtype());
  if (def.swapped())
    os << " (swapped: the caller's M=" << def.n() << " N=" << def.m() << " computed as D^T = B * A^T)";
  return os.str();
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  for (const auto& l : lines_of(text)) out += pad + l + "\n";
  return out;
}

// The legality check, then (for a legal schedule) whether this code generator lowers it: a
// schedule can be legal and still refused by `emit` with `not-lowered`.
std::string check_line(const Schedule& s, const DeviceLimits& limits) {
  try {
    validate_schedule(s, limits);
  } catch (const CompileError& e) {
    return "check: error[" + e.rule() + "]: " + e.message() + "\n";
  }
  std::string out = "check: ok on " + limits.name + "\n";
  try {
    LowerOptions options;
    options.limits = limits;
    const EmittedKernel e = emit_cuda(s, options);
    out += "lowers: yes, to kernel " + e.kernel_name + "\n";
    out += describe_work_units(s, e.plan, e.launch);
    out += describe_epilogue_plan(e.plan);
    out += describe_runtime_sizes(e.launch);
  } catch (const CompileError& e) {
    out += "lowers: no, error[" + e.rule() + "]: " + e.message() + "\n";
  }
  return out;
}

}  // namespace

std::string line_diff(const std::string& before, const std::string& after) {
  auto a = lines_of(before), b = lines_of(after);
  const size_t n = a.size(), m = b.size();
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out += "  " + b[j] + "\n";
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "- " + a[i++] + "\n";
    } else {
      out += "+ " + b[j++] + "\n";
    }
  }
  return out;
}

// The nests of a schedule prefix: explain replays the directives one at a time, and a prefix
// may not yet be a whole analysis (a problem-sized tile before `tile`).
std::string prefix_nests(const Schedule& prefix, const DeviceLimits& limits) {
  return print_loop_nests(make_loop_nests(prefix, role_shapes(prefix, limits)));
}

std::string explain(const Schedule& s, const ExplainOptions& options) {
  const DeviceLimits limits = pick_limits(s, options.limits);
  std::ostringstream os;
  os << problem_line(s) << "\n";
  os << "definition:\n" << indent(s.definition().to_string(), "  ");
  if (options.steps) {
    Schedule replay(s.definition());
    std::string previous = prefix_nests(replay, limits);
    os << "\n[0] no directives: one tile covers the whole problem\n" << indent(previous, "  ");
    const auto& ds = s.directives();
    for (size_t i = 0; i < ds.size(); ++i) {
      replay.apply(ds[i]);
      std::string now = prefix_nests(replay, limits);
      os << "\n[" << i + 1 << "] " << print_directive(ds[i]) << "\n";
      if (auto why = copy_choice_of(replay, ds[i])) os << "    " << *why << "\n";
      if (now == previous)
        os << "    (the loop nests do not change; the directive takes effect in the resources or the check)\n";
      else
        os << line_diff(previous, now);
      previous = std::move(now);
    }
  } else {
    os << "\ndirectives:\n" << indent(print_directives(s.directives()), "  ");
    for (const auto& d : s.directives())
      if (auto why = copy_choice_of(s, d)) os << "  " << *why << "\n";
  }
  if (!options.resources && !options.check && options.steps) return os.str();
  const ScheduleAnalysis analysis = analyze_schedule(s, limits);
  if (!options.steps) os << "\nloop nests:\n" << indent(print_loop_nests(analysis.nests), "  ");
  if (options.resources) os << "\n" << analysis.resources.to_string();
  if (options.check) os << "\n" << check_line(s, limits);
  return os.str();
}

std::string explain_diff(const Schedule& a, const Schedule& b, const std::optional<DeviceLimits>& limits) {
  const DeviceLimits la = pick_limits(a, limits), lb = pick_limits(b, limits);
  std::ostringstream os;
  os << "a: " << a.directives().size() << " directive(s), " << problem_line(a) << "\n";
  os << "b: " << b.directives().size() << " directive(s), " << problem_line(b) << "\n";
  const std::string da = print_directives(a.directives()), db = print_directives(b.directives());
  os << "\ndirectives (+ in b only, - in a only):\n";
  std::string changed;
  for (const auto& l : lines_of(line_diff(da, db)))
    if (l.rfind("  ", 0) != 0) changed += "  " + l + "\n";
  os << (changed.empty() ? "  (the same directives)\n" : changed);
  const ScheduleAnalysis aa = analyze_schedule(a, la), ab = analyze_schedule(b, lb);
  const std::string na = print_loop_nests(aa.nests), nb = print_loop_nests(ab.nests);
  os << "\nloop nests:\n" << (na == nb ? "  (unchanged)\n" + indent(nb, "  ") : line_diff(na, nb));
  const std::string ra = aa.resources.to_string(), rb = ab.resources.to_string();
  os << "\n" << (ra == rb ? "resources unchanged:\n" + indent(rb, "  ") : line_diff(ra, rb));
  const std::string ca = check_line(a, la), cb = check_line(b, lb);
  os << "\n" << (ca == cb ? "  " + cb : line_diff(ca, cb));
  return os.str();
}

}  // namespace gg
