#include "tools/gemmgen/simulate_budget.h"

#include <string>
#include <vector>

#include "dsl/error.h"
#include "tools/gemmgen/load.h"

namespace gg::cli {

namespace {

std::string str(double v) { return std::to_string(static_cast<long long>(v)); }

// "; M and K are the default 8192 (--m and --k not given)": a user who left the sizes out may
// not know the defaults are large. Empty when every extent was given.
std::string defaults_text(const Definition& def, const Args& args) {
  std::vector<std::string> names;
  const std::pair<const char*, int64_t> extents[] = {{"m", def.m()}, {"n", def.n()}, {"k", def.k()}};
  for (const auto& [flag, value] : extents)
    if (!args.has(flag) && value == kDefaultExtent) names.push_back(flag);
  if (names.empty()) return "";
  std::string upper, flags;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == names.size() ? " and " : ", ";
    upper += sep + static_cast<char>(names[i][0] - 'a' + 'A');
    flags += sep + "--" + names[i];
  }
  return "; " + upper + (names.size() == 1 ? " is the default " : " are the default ") + std::to_string(kDefaultExtent) +
         " (" + flags + " not given)";
}

// Bytes the simulator allocates for each stored tensor (the inputs and the output), leading
// dimensions and batch strides included: a strided view of a small problem can span gigabytes.
std::vector<std::pair<std::string, double>> stored_bytes(const Definition& def) {
  std::vector<std::pair<std::string, double>> out;
  for (int id = 0; id < def.size(); ++id) {
    const Node& n = def.node(id);
    if (n.kind == OpKind::Input || id == def.output())
      out.emplace_back(n.name + (id == def.output() ? " (the output)" : ""),
                       double(stored_span(def, n)) * dtype_bytes(n.dtype));
  }
  return out;
}

}  // namespace

void check_simulate_budget(const Definition& def, const Args& args) {
  // In double: the product of three extents up to 2^31 overflows 64 bits.
  // Contiguous groups share M's rows, variable-K groups K's: their work is M*N*K whatever the batch.
  const bool per_matrix = def.batch() > 1 && def.problem_source() != ProblemSource::Contiguous &&
                          def.problem_source() != ProblemSource::VarlenK;
  const double work = double(def.m()) * double(def.n()) * double(def.k()) * (per_matrix ? double(def.batch()) : 1.0);
  if (work > double(kSimulateWork))
    throw_user_error("simulate-budget", "simulate runs every thread's work on the CPU: M*N*K" +
                                            std::string(per_matrix ? " x batch" : "") + " of " + str(work) +
                                            " is over its budget of 2^27 (e.g. 512 x 512 x 512)" +
                                            defaults_text(def, args) + "; use a smaller problem");
  double total = 0;
  std::string parts;
  for (const auto& [name, bytes] : stored_bytes(def)) {
    total += bytes;
    parts += (parts.empty() ? "" : ", ") + name + " " + str(bytes);
  }
  if (total > double(kSimulateBytes))
    throw_user_error("simulate-budget", "simulate holds every tensor as it lies in memory, leading dimensions and "
                                        "batch strides included: " + str(total) + " bytes (" + parts +
                                        ") is over its budget of 2^28 (256 MiB); use smaller leading dimensions, "
                                        "batch strides or problem");
}

}  // namespace gg::cli
