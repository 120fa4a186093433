#pragma once
// Whether a GPU is usable here, and what it offers.
#include <string>

namespace gg::rt {

// False, without crashing, when there is no driver or no device.
bool gpu_available();

struct DeviceInfo {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  int smem_per_block_optin_bytes = 0;  // the most dynamic shared memory a block may request
};

DeviceInfo device_info(int device = 0);  // throws CudaError

}  // namespace gg::rt
