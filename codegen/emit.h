#pragma once
// A whole, standalone .cu for a schedule: a header comment with the schedule text, target,
// shape and dtypes; the device helpers it uses; the kernel; and an `extern "C"` host entry
// (compiled only by nvcc, not NVRTC) that builds the tensor maps and launches.
#include <string>

#include "codegen/lower.h"

namespace gg {

struct EmittedKernel {
  std::string source;
  std::string kernel_name;
  std::string launch_function;  // the extern "C" host entry
  rt::LaunchSpec launch;
  KernelPlan plan;
};

EmittedKernel emit_cuda(const Schedule& s, const LowerOptions& options = {});

}  // namespace gg
