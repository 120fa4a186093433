// Runs before doctest's main: without a usable Hopper GPU the whole suite exits 77,
// which ctest reports as skipped (SKIP_RETURN_CODE), instead of failing.
#include <cstdio>
#include <cstdlib>

#include "runtime/device_info.h"

namespace {

bool skip_without_hopper_gpu() {
  if (!gg::rt::gpu_available()) {
    std::printf("test_gpu: no GPU or no driver: skipped\n");
    std::exit(77);
  }
  const gg::rt::DeviceInfo info = gg::rt::device_info();
  if (info.compute_major != 9) {
    std::printf("test_gpu: %s is sm_%d%d; these tests run sm_90a kernels: skipped\n", info.name.c_str(),
                info.compute_major, info.compute_minor);
    std::exit(77);
  }
  std::printf("test_gpu: %s, %d SMs, %d bytes shared memory per block\n", info.name.c_str(), info.sm_count,
              info.smem_per_block_optin_bytes);
  return true;
}

[[maybe_unused]] const bool kGuarded = skip_without_hopper_gpu();

}  // namespace
