#include "runtime/driver_api.h"

#include <cuda_runtime_api.h>

#include "runtime/cuda_error.h"

namespace gg::rt {
namespace {

// The ABI version the function pointer types above were declared for.
constexpr unsigned kDriverAbiVersion = 12000;

template <class Fn>
void resolve(Fn& fn, const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  check_cuda(cudaGetDriverEntryPointByVersion(symbol, &address, kDriverAbiVersion, cudaEnableDefault, &found),
             std::string("looking up driver function ") + symbol);
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    throw CudaError(std::string("driver function ") + symbol + " is not available (driver too old?)");
  }
  fn = reinterpret_cast<Fn>(address);
}

DriverApi load_driver_api() {
  use_runtime_context();
  DriverApi api;
  resolve(api.module_load_data, "cuModuleLoadData");
  resolve(api.module_unload, "cuModuleUnload");
  resolve(api.module_get_function, "cuModuleGetFunction");
  resolve(api.func_set_attribute, "cuFuncSetAttribute");
  resolve(api.launch_kernel_ex, "cuLaunchKernelEx");
  resolve(api.occupancy_max_active_clusters, "cuOccupancyMaxActiveClusters");
  resolve(api.occupancy_max_blocks_per_sm, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  resolve(api.tensor_map_encode_tiled, "cuTensorMapEncodeTiled");
  resolve(api.get_error_name, "cuGetErrorName");
  resolve(api.get_error_string, "cuGetErrorString");
  return api;
}

}  // namespace

void use_runtime_context() { check_cuda(cudaFree(nullptr), "initializing the CUDA runtime"); }

const DriverApi& driver_api() {
  static const DriverApi api = load_driver_api();
  return api;
}

std::string driver_error_text(CUresult status) {
  const char* name = nullptr;
  const char* description = nullptr;
  const DriverApi& api = driver_api();
  api.get_error_name(status, &name);
  api.get_error_string(status, &description);
  return std::string(name ? name : "CUDA_ERROR_?") + ": " + (description ? description : "unknown error");
}

CUfunction load_function(const std::vector<char>& cubin, const std::string& symbol, const std::string& who) {
  const DriverApi& api = driver_api();
  use_runtime_context();
  CUmodule module = nullptr;
  if (CUresult status = api.module_load_data(&module, cubin.data()); status != CUDA_SUCCESS)
    throw CudaError(who + ": cuModuleLoadData failed: " + driver_error_text(status));
  CUfunction function = nullptr;
  if (CUresult status = api.module_get_function(&function, module, symbol.c_str()); status != CUDA_SUCCESS)
    throw CudaError(who + ": cuModuleGetFunction failed: " + driver_error_text(status));
  return function;
}

void launch_function(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned threads, void* param,
                     CUstream stream, const std::string& who) {
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  void* params[] = {param};
  if (CUresult status = driver_api().launch_kernel_ex(&config, function, params, nullptr); status != CUDA_SUCCESS)
    throw CudaError(who + ": cuLaunchKernelEx failed: " + driver_error_text(status));
}

}  // namespace gg::rt
