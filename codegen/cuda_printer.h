#pragma once
// Prints a lowered kernel as CUDA C++: one handler per IR node (a Visitor), calling the
// device helpers of runtime/device (namespace gg::dev).
#include <string>

#include "codegen/kernel.h"

namespace gg {

std::string print_cuda_kernel(const Kernel& k);

}  // namespace gg
