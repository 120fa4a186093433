#include "codegen/lower.h"

#include <algorithm>
#include <ostream>

#include "codegen/build_loop_nests.h"
#include "codegen/check_sync.h"
#include "codegen/expand_circular_buffer.h"
#include "codegen/insert_mbarriers.h"
#include "codegen/lower_epilogue.h"
#include "codegen/lower_operand_copies.h"
#include "codegen/plan_kernel.h"
#include "codegen/select_mma.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"

namespace gg {

const std::vector<std::string>& lowering_passes() {
  static const std::vector<std::string> names = {"build_loop_nests", "expand_circular_buffer",
                                                 "lower_operand_copies", "insert_mbarriers", "select_mma",
                                                 "lower_epilogue", "check_sync"};
  return names;
}

namespace {

struct PassRunner {
  const LowerOptions& options;
  Kernel run(const std::string& name, Kernel k) const {
    if (options.dump && (options.dump_after == name || options.dump_after == "all"))
      *options.dump << "// ---- IR after " << name << "\n" << kir::dump(k.body);
    return k;
  }
};

}  // namespace

Kernel lower(const Schedule& s, const LowerOptions& options) {
  const auto& names = lowering_passes();
  if (!options.dump_after.empty() && options.dump_after != "all" &&
      std::find(names.begin(), names.end(), options.dump_after) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw_user_error("unknown-pass", "--dump-after " + options.dump_after + ": no such pass; passes are " + list + ", all");
  }
  PassRunner after{options};

  // Every user error surfaces here, before any IR; the analysis it checked is what lowering reads.
  const ScheduleAnalysis analysis = validate_schedule(s, options.limits);
  Kernel k = plan_kernel(s, analysis);  // tile, stages, roles, layouts, shared-memory layout, grid
  k = after.run("build_loop_nests", build_loop_nests(s, std::move(k)));
  k = after.run("expand_circular_buffer", expand_circular_buffer(std::move(k)));
  k = after.run("lower_operand_copies", lower_operand_copies(std::move(k)));
  k = after.run("insert_mbarriers", insert_mbarriers(std::move(k)));
  k = after.run("select_mma", select_mma(std::move(k)));
  k = after.run("lower_epilogue", lower_epilogue(std::move(k)));
  k = after.run("check_sync", check_sync(std::move(k)));
  return k;
}

}  // namespace gg
