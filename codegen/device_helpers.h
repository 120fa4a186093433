#pragma once
// The runtime/device helpers a lowered kernel calls, read from its IR: which node kinds it holds
// (mbarriers, TMA, clusters, named barriers, split-K, stmatrix, synchronous copies, ...) and which
// wgmma shapes and input types its WgmmaIssue nodes use. emit.cpp embeds only these, so NVRTC
// parses and the emitted .cu carries no helper the kernel does not call.
#include <string>
#include <vector>

#include "codegen/kernel.h"

namespace gg {

struct DeviceHelpers {
  // runtime/device file names in the order they are embedded (gemm_args.h first). Each header
  // stands alone (no helper calls into another header), so any subset in this order compiles.
  std::vector<std::string> headers;
  // Sections of wgmma_mma.cuh, one per wrapper the kernel issues (kir::wgmma_wrapper_name), sorted.
  std::vector<std::string> wgmma_wrappers;
};

DeviceHelpers device_helpers_used(const Kernel& k);

}  // namespace gg
