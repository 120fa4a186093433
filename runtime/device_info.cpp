#include "runtime/device_info.h"

#include <cuda_runtime_api.h>

#include "runtime/cuda_error.h"

namespace gg::rt {

bool gpu_available() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error for later calls
    return false;
  }
  return count > 0;
}

DeviceInfo device_info(int device) {
  cudaDeviceProp props{};
  check_cuda(cudaGetDeviceProperties(&props, device), "reading properties of device " + std::to_string(device));
  DeviceInfo info;
  info.name = props.name;
  info.compute_major = props.major;
  info.compute_minor = props.minor;
  info.sm_count = props.multiProcessorCount;
  info.smem_per_block_optin_bytes = static_cast<int>(props.sharedMemPerBlockOptin);
  return info;
}

}  // namespace gg::rt
