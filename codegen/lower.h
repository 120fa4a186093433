#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/resources.h"

namespace gg {

struct LowerOptions {
  DeviceLimits limits = hopper();
  std::string dump_after;          // a pass name, or "all": print the IR after it to `dump`
  std::ostream* dump = nullptr;
};

// The pass names in order, for `--dump-after` and its error message.
const std::vector<std::string>& lowering_passes();

// Lowers a schedule to a kernel: the ordered pass list in lower.cpp.
Kernel lower(const Schedule& s, const LowerOptions& options = {});

}  // namespace gg
