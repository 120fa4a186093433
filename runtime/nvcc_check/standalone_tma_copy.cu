// A standalone program in the shape of an emitted .cu: the device headers and
// host_entry.cuh, one kernel, a main. It copies a 128x128 bf16 matrix through shared
// memory, one 64x64 tile per CTA, with TMA load (128B swizzle, mbarrier) and TMA store.
// Exit status: 0 copied exactly, 1 wrong or failed, 77 no GPU.
#include "runtime/device/gemm_args.h"
#include "runtime/device/cluster.cuh"
#include "runtime/device/epilogue.cuh"
#include "runtime/device/fence.cuh"
#include "runtime/device/mbarrier.cuh"
#include "runtime/device/named_barrier.cuh"
#include "runtime/device/setmaxnreg.cuh"
#include "runtime/device/smem.cuh"
#include "runtime/device/stmatrix.cuh"
#include "runtime/device/smem_desc.h"
#include "runtime/device/tma.cuh"
#include "runtime/device/warp.cuh"
#include "runtime/device/wgmma.cuh"
#include "runtime/device/wgmma_mma.cuh"
#include "runtime/device/host_entry.cuh"

#include <vector>

constexpr int kTile = 64;
constexpr unsigned kTileBytes = kTile * kTile * 2;

extern "C" __global__ void __launch_bounds__(128, 1) tma_copy_tile(const __grid_constant__ GgGemmArgs args) {
  extern __shared__ __align__(1024) unsigned char smem[];  // 128B swizzle wants 1024-byte alignment
  __shared__ unsigned long long full_barrier;
  const unsigned tile = gg::dev::smem_addr(smem);
  const unsigned bar = gg::dev::smem_addr(&full_barrier);
  if (threadIdx.x == 0) {
    gg::dev::prefetch_tensormap(&args.map_a);
    gg::dev::mbarrier_init(bar, 1);
    gg::dev::fence_mbarrier_init();
  }
  __syncthreads();
  const int col = static_cast<int>(blockIdx.x) * kTile, row = static_cast<int>(blockIdx.y) * kTile;
  if (threadIdx.x == 0) {
    gg::dev::mbarrier_arrive_expect_tx(bar, kTileBytes);
    gg::dev::tma_load_2d(tile, &args.map_a, bar, col, row);
  }
  gg::dev::mbarrier_wait_parity(bar, 0);
  if (threadIdx.x == 0) {
    gg::dev::tma_store_2d(&args.map_d, tile, col, row);
    gg::dev::bulk_commit_group();
    gg::dev::bulk_wait_group_read<0>();
  }
}

// Never launched: makes nvcc assemble a sample of the generated wgmma wrappers.
extern "C" __global__ void wgmma_sample(const __grid_constant__ GgGemmArgs args) {
  float d64[32] = {}, d256[128] = {};
  const unsigned long long desc = gg::dev::make_smem_desc(0, 16, 1024, gg::dev::kDescSwizzle128B);
  gg::dev::wgmma_fence();
  gg::dev::wgmma_m64n64k16_f32_bf16(d64, desc, desc, 0);
  gg::dev::wgmma_m64n256k16_f32_f16(d256, desc, desc, 1);
  gg::dev::wgmma_commit_group();
  gg::dev::wgmma_wait_group<0>();
  float* out = static_cast<float*>(args.d);
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 160 + i] = d64[i];
  for (int i = 0; i < 128; ++i) out[threadIdx.x * 160 + 32 + i] = d256[i];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  const int n = 2 * kTile;
  std::vector<unsigned short> host_in(n * n), host_out(n * n, 0);
  for (int i = 0; i < n * n; ++i) host_in[i] = static_cast<unsigned short>(0x3F80 + (i * 7919) % 0x3F00);
  void *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * n * 2);
  cudaMalloc(&out, n * n * 2);
  cudaMemcpy(in, host_in.data(), n * n * 2, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, n * n * 2);

  GgGemmArgs args = {};
  const gg::host::TensorMapDesc desc = {gg::host::kElemBF16, n, n, n, 1, 0, kTile, kTile, gg::host::kSwizzle128B};
  if (gg::host::encode_tensor_map(&args.map_a, in, desc, "tma_copy_tile", "A") != 0) return 1;
  if (gg::host::encode_tensor_map(&args.map_d, out, desc, "tma_copy_tile", "D") != 0) return 1;
  if (gg::host::launch_kernel(reinterpret_cast<const void*>(tma_copy_tile), "tma_copy_tile", dim3(2, 2, 1),
                              dim3(128, 1, 1), dim3(1, 1, 1), kTileBytes, args, nullptr) != cudaSuccess) {
    return 1;
  }
  if (cudaError_t status = cudaDeviceSynchronize(); status != cudaSuccess) {
    std::fprintf(stderr, "tma_copy_tile failed: %s\n", cudaGetErrorString(status));
    return 1;
  }
  cudaMemcpy(host_out.data(), out, n * n * 2, cudaMemcpyDeviceToHost);
  int mismatches = 0;
  for (int i = 0; i < n * n; ++i) mismatches += host_out[i] != host_in[i];
  std::printf("standalone tma_copy_tile: %d of %d elements differ\n", mismatches, n * n);
  cudaFree(in);
  cudaFree(out);
  return mismatches == 0 ? 0 : 1;
}
