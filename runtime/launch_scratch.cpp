#include "runtime/launch_scratch.h"

#include <algorithm>

#include "runtime/cuda_error.h"

namespace gg::rt {

namespace {

// While alive, this thread may call what a graph capture in progress would refuse (cudaMalloc,
// a stream synchronize): relaxed mode, as PyTorch's allocator takes it.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// `bytes` of device memory, zeroed where asked, done by the time this returns: on a private stream
// of its own, so neither the caller's stream (perhaps capturing) nor the legacy default stream
// (which a capture forbids) takes part.
void* allocate(uint64_t bytes, bool zeroed, const std::string& owner, const char* what) {
  RelaxedCaptureMode relaxed;
  void* buffer = nullptr;
  if (cudaError_t status = cudaMalloc(&buffer, bytes); status != cudaSuccess)
    throw CudaError(owner + ": allocating " + std::to_string(bytes) + " bytes " + what + " failed: " +
                    cudaGetErrorString(status));
  if (!zeroed) return buffer;
  cudaStream_t own = nullptr;
  cudaError_t status = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  if (status == cudaSuccess) status = cudaMemsetAsync(buffer, 0, bytes, own);
  if (status == cudaSuccess) status = cudaStreamSynchronize(own);
  if (own != nullptr) cudaStreamDestroy(own);
  if (status != cudaSuccess) {
    cudaFree(buffer);
    throw CudaError(owner + ": zeroing " + what + " failed: " + cudaGetErrorString(status));
  }
  return buffer;
}

// Grows `buffer` (of `held` units of `unit` bytes) to at least `wanted` units, doubling so a
// growing sequence of launches reallocates a few times only; the old buffer goes to `retired`.
template <class T, class Count>
void grow(T*& buffer, Count& held, Count wanted, uint64_t unit, bool zeroed, std::vector<void*>& retired,
          const std::string& owner, const char* what) {
  if (wanted <= held) return;
  const Count size = std::max(wanted, held * 2);
  T* fresh = static_cast<T*>(allocate(uint64_t(size) * unit, zeroed, owner, what));
  if (buffer != nullptr) retired.push_back(buffer);
  buffer = fresh;
  held = size;
}

}  // namespace

LaunchScratch::~LaunchScratch() {
  for (auto& [stream, s] : by_stream_) {
    (void)stream;
    for (void* p : {static_cast<void*>(s.workspace), s.staging, static_cast<void*>(s.group_maps)})
      if (p != nullptr) cudaFree(p);
  }
  for (void* p : retired_) cudaFree(p);
}

StreamScratch LaunchScratch::reserve(cudaStream_t stream, const ScratchNeed& need, const std::string& owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(by_stream_.begin(), by_stream_.end(), [&](const auto& e) { return e.first == stream; });
  if (it == by_stream_.end()) it = by_stream_.insert(by_stream_.end(), {stream, StreamScratch{}});
  StreamScratch& s = it->second;
  grow(s.workspace, s.workspace_bytes, need.workspace_bytes, 1, true, retired_, owner, "of workspace");
  grow(s.staging, s.staging_bytes, need.staging_bytes, 1, false, retired_, owner,
       "for the staged operands' aligned copies");
  grow(s.group_maps, s.group_maps_groups, need.group_maps_groups, GG_GROUP_MAP_SLOTS * sizeof(GgTensorMap), false,
       retired_, owner, "of group tensor maps");
  return s;
}

size_t LaunchScratch::streams() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_stream_.size();
}

}  // namespace gg::rt
