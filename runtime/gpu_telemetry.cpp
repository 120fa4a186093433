#include "runtime/gpu_telemetry.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace gg::rt {

namespace {

// The few NVML entry points used, by their C ABI (nvml.h is not needed to build).
using NvmlDevice = void*;
using InitFn = int (*)();
using ByPciFn = int (*)(const char*, NvmlDevice*);
using ClockFn = int (*)(NvmlDevice, int, unsigned*);
using PowerFn = int (*)(NvmlDevice, unsigned*);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  InitFn init = nullptr;
  ByPciFn by_pci = nullptr;
  ClockFn clock = nullptr;
  PowerFn power = nullptr;
  bool ready = false;
};

const Nvml& nvml() {
  static const Nvml lib = [] {
    Nvml n;
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!handle) return n;
    n.init = reinterpret_cast<InitFn>(dlsym(handle, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<ByPciFn>(dlsym(handle, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock = reinterpret_cast<ClockFn>(dlsym(handle, "nvmlDeviceGetClockInfo"));
    n.power = reinterpret_cast<PowerFn>(dlsym(handle, "nvmlDeviceGetPowerUsage"));
    n.ready = n.init && n.by_pci && n.clock && n.power && n.init() == kNvmlSuccess;
    return n;
  }();
  return lib;
}

}  // namespace

GpuTelemetry sample_gpu_telemetry() {
  GpuTelemetry t;
  const Nvml& n = nvml();
  int ordinal = 0;
  char bus_id[32] = {};
  if (!n.ready || cudaGetDevice(&ordinal) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal) != cudaSuccess)
    return t;
  NvmlDevice device = nullptr;  // the CUDA device, matched by PCI bus id (NVML numbers devices its own way)
  if (n.by_pci(bus_id, &device) != kNvmlSuccess) return t;
  unsigned mhz = 0, milliwatts = 0;
  if (n.clock(device, kNvmlClockSm, &mhz) == kNvmlSuccess) t.sm_clock_mhz = mhz;
  if (n.power(device, &milliwatts) == kNvmlSuccess) t.power_w = milliwatts / 1000.0;
  return t;
}

}  // namespace gg::rt
