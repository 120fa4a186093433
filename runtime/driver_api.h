#pragma once
// The CUDA driver functions the runtime uses, looked up through cudart
// (cudaGetDriverEntryPointByVersion) instead of linking libcuda: binaries then load
// and run their CPU-only parts on machines without a driver.
#include <cuda.h>

#include <string>
#include <vector>

namespace gg::rt {

struct DriverApi {
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuLaunchKernelEx) launch_kernel_ex = nullptr;
  decltype(&::cuOccupancyMaxActiveClusters) occupancy_max_active_clusters = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy_max_blocks_per_sm = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
};

// Resolved once; throws CudaError when the driver or a function is missing.
// Also initializes the CUDA runtime's primary context, which the driver calls use.
const DriverApi& driver_api();

// Makes the CUDA runtime's primary context current on this thread (driver calls such
// as module loading act on the current context).
void use_runtime_context();

// "CUDA_ERROR_X: description" for a driver status.
std::string driver_error_text(CUresult status);

// A kernel function of a CUBIN loaded into the runtime's primary context; the module stays loaded
// for the process's life (for helper kernels loaded once, as the libraries are). CudaError naming
// `who` on failure.
CUfunction load_function(const std::vector<char>& cubin, const std::string& symbol, const std::string& who);
// Launches such a function (one parameter, `param`) on a grid of grid_x x grid_y blocks of `threads`
// threads on `stream`; CudaError naming `who` if the launch is refused.
void launch_function(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned threads, void* param,
                     CUstream stream, const std::string& who);

}  // namespace gg::rt
