// Host time of a cached gg::gemm call, split into its parts: planning's lookup (gg::gemm against
// a prepared kernel's launch), the arguments (tensor maps, scratch) and the driver's launch, and one
// tensor map's encode. Run on a GPU machine: build/benchmarks/launch_overhead [M N K]; each figure
// is the best of five batches of 400 calls, the stream drained between batches.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "runtime/device_info.h"
#include "runtime/launch.h"
#include "runtime/tensor_map.h"
#include "schedules/gemm.h"

namespace {

double best_us(const std::function<void()>& call) {
  constexpr int kBatch = 400;
  for (int i = 0; i < 50; ++i) call();
  cudaDeviceSynchronize();
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) call();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, us / kBatch);
    cudaDeviceSynchronize();
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (!gg::rt::gpu_available()) {
    std::printf("launch_overhead: no GPU: skipped\n");
    return 77;
  }
  const int64_t m = argc > 3 ? std::atoll(argv[1]) : 64, n = argc > 3 ? std::atoll(argv[2]) : 4096,
                k = argc > 3 ? std::atoll(argv[3]) : 4096;
  void *a = nullptr, *b = nullptr, *d = nullptr;
  cudaMalloc(&a, size_t(m * k * 2));
  cudaMalloc(&b, size_t(n * k * 2));
  cudaMalloc(&d, size_t(m * n * 2));
  cudaMemset(a, 0, size_t(m * k * 2));
  cudaMemset(b, 0, size_t(n * k * 2));
  const gg::GemmOptions o;
  gg::gemm(a, b, d, m, n, k, o);
  gg::PreparedGemm p = gg::prepare_gemm(m, n, k, o);
  p.problem.a = a;
  p.problem.b = b;
  p.problem.d = d;
  const gg::rt::LoadedKernel& kernel = *p.kernel;
  const GgGemmArgs args = kernel.make_args(p.problem);
  const gg::rt::TensorMapSpec spec = gg::rt::resolve_tensor_map_spec(kernel.spec().tensor_maps.front(), p.problem);
  const double gemm = best_us([&] { gg::gemm(a, b, d, m, n, k, o); });
  const double launch = best_us([&] { kernel.launch(p.problem); });
  const double make_args = best_us([&] { (void)kernel.make_args(p.problem); });
  const double driver = best_us([&] { kernel.launch_args(args); });
  const double encode = best_us([&] { (void)gg::rt::encode_tensor_map(spec, a); });
  std::printf("launch_overhead %lldx%lldx%lld (%s): host us per call: gg::gemm %.2f, prepared launch %.2f "
              "(make_args %.2f, cuLaunchKernelEx %.2f), one tensor-map encode %.2f\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              kernel.describe().c_str(), gemm, launch, make_args, driver, encode);
  return 0;
}
