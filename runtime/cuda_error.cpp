#include "runtime/cuda_error.h"

namespace gg::rt {

void check_cuda(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return;
  throw CudaError(what + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

}  // namespace gg::rt
