// How many thread-block clusters of each size a GPU holds at once, one CTA per SM (a kernel
// with 200 KB of dynamic shared memory and 384 threads, as gemmgen's persistent kernels are).
// A cluster's CTAs share one GPC and GPCs differ in SM count, so an H100/H200's 132 SMs hold
// 66 clusters of 2 but only 30 of 4: codegen/device_limits.cpp records this table, and a
// persistent grid planned past it runs its last clusters after the others finish. Usage:
// resident_clusters (needs a GPU; built by nvcc, benchmarks/CMakeLists.txt).
#include <cuda_runtime.h>

#include <cstdio>

namespace {
__global__ void one_cta_per_sm(int* out) {
  extern __shared__ int smem[];
  if (out != nullptr) out[0] = smem[threadIdx.x];
}
}  // namespace

int main() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "resident_clusters: no CUDA device\n");
    return 1;
  }
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int smem = 200 * 1024;
  cudaFuncSetAttribute(one_cta_per_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(one_cta_per_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (unsigned size = 1; size <= 16; ++size) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(size * 64);
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute cluster[1];
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim = {size, 1, 1};
    config.attrs = cluster;
    config.numAttrs = 1;
    int clusters = 0;
    const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, one_cta_per_sm, &config);
    std::printf("cluster %2u: %3d clusters, %3d CTAs%s%s\n", size, clusters, clusters * int(size),
                status == cudaSuccess ? "" : ": ", status == cudaSuccess ? "" : cudaGetErrorString(status));
  }
  return 0;
}
