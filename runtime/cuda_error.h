#pragma once
// Errors from CUDA runtime, driver, NVRTC and cuBLAS calls, thrown as exceptions
// whose message says what was being done.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gg::rt {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError("<what>: <error name>: <description>") unless `status` is cudaSuccess.
void check_cuda(cudaError_t status, const std::string& what);

}  // namespace gg::rt
