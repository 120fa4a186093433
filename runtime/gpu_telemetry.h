#pragma once
// The SM clock and board power of the current CUDA device, read through NVML when the driver's
// libnvidia-ml is present (dlopen: nothing links it, and binaries start without it). Benchmarks
// record them beside each timing, since a throttled clock explains a ratio that code does not.
#include <optional>

namespace gg::rt {

struct GpuTelemetry {
  std::optional<unsigned> sm_clock_mhz;  // the current SM clock
  std::optional<double> power_w;         // board power draw (NVML's recent average)
};

// Empty fields where NVML, the device or the reading is unavailable; never throws.
GpuTelemetry sample_gpu_telemetry();

}  // namespace gg::rt
