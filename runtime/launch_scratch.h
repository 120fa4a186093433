#pragma once
// The device memory a kernel's launches use beside the caller's tensors: the split-K workspace
// (partial sums and tickets, zeroed, and left zeroed by every launch), the staged operands'
// aligned copies and the pointer-array groups' tensor maps. One set per stream: launches on one
// stream run in order, so they may share it, and launches on two streams never do. A set is made
// at its stream's first launch (even one under CUDA-graph capture: the allocation steps outside
// the capture) and only grows; a buffer it outgrows is kept until the kernel is unloaded, since a
// captured graph may still read it.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device/gemm_args.h"

namespace gg::rt {

// One stream's buffers (null and 0 where none was needed yet).
struct StreamScratch {
  void* workspace = nullptr;
  uint64_t workspace_bytes = 0;
  void* staging = nullptr;
  uint64_t staging_bytes = 0;
  GgTensorMap* group_maps = nullptr;
  int64_t group_maps_groups = 0;
};

// What a launch needs: bytes of workspace and of staging, and group tensor maps for this many
// groups.
struct ScratchNeed {
  uint64_t workspace_bytes = 0;
  uint64_t staging_bytes = 0;
  int64_t group_maps_groups = 0;
};

class LaunchScratch {
 public:
  LaunchScratch() = default;
  ~LaunchScratch();
  LaunchScratch(const LaunchScratch&) = delete;
  LaunchScratch& operator=(const LaunchScratch&) = delete;

  // `stream`'s buffers, grown to `need` first; `owner` names the kernel in a failure.
  StreamScratch reserve(cudaStream_t stream, const ScratchNeed& need, const std::string& owner);

  // How many streams hold a set (tests).
  size_t streams() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<cudaStream_t, StreamScratch>> by_stream_;
  std::vector<void*> retired_;
};

}  // namespace gg::rt
