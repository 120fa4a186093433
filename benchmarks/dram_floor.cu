// How fast can any kernel be on a skinny GEMM (M <= 128) whose time is reading B from DRAM?
// For each shape this times, in one process and one shared rotation of cold copies of B:
//   - cuBLAS (cublasGemmEx, the call gemmgen bench makes), and
//   - a read of B alone: every byte loaded once with 16-byte loads and nothing computed,
//     over several grid sizes, keeping the fastest.
// cuBLAS's time over the read's is the best ratio to cuBLAS any kernel can reach: a GEMM
// must read B at least once. Usage: dram_floor [M N K]... (default: the decode shapes of
// benchmarks/shapes.txt). Needs a GPU; built by nvcc (benchmarks/CMakeLists.txt).
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "dram_floor: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

__device__ __forceinline__ uint4 load_streaming(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Reads n 16-byte words, four loads in flight per thread; writes only if the xor of
// everything hits a value random data practically never gives, so no load is dead.
__global__ void read_once(const uint4* __restrict__ data, size_t n, unsigned* sink) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned x = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = load_streaming(data + i), b = load_streaming(data + i + stride);
    const uint4 c = load_streaming(data + i + 2 * stride), d = load_streaming(data + i + 3 * stride);
    x ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = load_streaming(data + i);
    x ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (x == 0x9e3779b9u) *sink = x;
}

__global__ void fill_random(uint16_t* data, size_t n, uint32_t seed) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    // a bf16 in [-1, 1): sign, exponent 126 or below, random mantissa
    data[i] = uint16_t((h & 0x8000u) | (0x3f00u - ((h >> 8) & 0x0700u)) | (h & 0x7fu));
  }
}

double median(std::vector<float> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Shape {
  int m, n, k;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({std::atoi(argv[i]), std::atoi(argv[i + 1]), std::atoi(argv[i + 2])});
  if (shapes.empty()) shapes = {{1, 4096, 4096}, {16, 4096, 4096}, {64, 14336, 4096}, {128, 8192, 8192}};
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::printf("dram_floor: no GPU, skipped\n");
    return 0;
  }
  cudaDeviceProp prop{};
  if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  unsigned* sink = nullptr;
  if (!ok(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc")) return 1;
  std::printf("device: %s, bf16 in and out, B[N,K] K-major read cold (copies rotated past L2)\n\n", prop.name);
  std::printf("| shape | B MiB | cuBLAS us | read of B us (TB/s) | best grid | cuBLAS / read |\n|---|---|---|---|---|---|\n");

  for (const Shape& s : shapes) {
    const size_t b_elems = size_t(s.n) * s.k, b_bytes = b_elems * 2;
    const int copies = int(std::min<size_t>(16, std::max<size_t>(2, (512ull << 20) / b_bytes + 1)));
    std::vector<void*> b(copies);
    void *a = nullptr, *d = nullptr;
    bool fine = ok(cudaMalloc(&a, size_t(s.m) * s.k * 2), "cudaMalloc A") && ok(cudaMalloc(&d, size_t(s.m) * s.n * 2), "cudaMalloc D");
    for (int c = 0; c < copies && fine; ++c) {
      fine = ok(cudaMalloc(&b[c], b_bytes), "cudaMalloc B");
      if (fine) fill_random<<<1024, 256>>>(static_cast<uint16_t*>(b[c]), b_elems, 17u + c);
    }
    if (!fine) return 1;
    fill_random<<<64, 256>>>(static_cast<uint16_t*>(a), size_t(s.m) * s.k, 5u);

    const float alpha = 1.0f, beta = 0.0f;
    int turn = 0;
    auto next_b = [&] { return b[turn++ % copies]; };
    std::vector<std::pair<std::string, std::function<void()>>> runs;
    runs.emplace_back("cublas", [&] {
      cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, next_b(), CUDA_R_16BF, s.k, a,
                   CUDA_R_16BF, s.k, &beta, d, CUDA_R_16BF, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    const int grids[] = {2 * prop.multiProcessorCount, 4 * prop.multiProcessorCount, 8 * prop.multiProcessorCount,
                         16 * prop.multiProcessorCount};
    for (int g : grids)
      runs.emplace_back(std::to_string(g) + "x256", [&, g] {
        read_once<<<g, 256>>>(static_cast<const uint4*>(next_b()), b_bytes / 16, sink);
      });

    // Warm clocks for about a second, then time back to back (one sync at the end), interleaved.
    cudaEvent_t warm_start, warm_now;
    cudaEventCreate(&warm_start);
    cudaEventCreate(&warm_now);
    cudaEventRecord(warm_start);
    for (float warm_ms = 0; warm_ms < 1000.0f;) {
      for (int i = 0; i < 20; ++i)
        for (auto& r : runs) r.second();
      cudaEventRecord(warm_now);
      if (!ok(cudaEventSynchronize(warm_now), "warm-up")) return 1;
      cudaEventElapsedTime(&warm_ms, warm_start, warm_now);
    }
    cudaEventDestroy(warm_start);
    cudaEventDestroy(warm_now);
    const int reps = 100;
    std::vector<cudaEvent_t> events(2 * reps * runs.size());
    for (auto& e : events) cudaEventCreate(&e);
    size_t e = 0;
    for (int rep = 0; rep < reps; ++rep)
      for (auto& r : runs) {
        cudaEventRecord(events[e++]);
        r.second();
        cudaEventRecord(events[e++]);
      }
    if (!ok(cudaDeviceSynchronize(), "timed runs")) return 1;
    std::vector<std::vector<float>> times(runs.size());
    e = 0;
    for (int rep = 0; rep < reps; ++rep)
      for (size_t r = 0; r < runs.size(); ++r, e += 2) {
        float ms = 0;
        cudaEventElapsedTime(&ms, events[e], events[e + 1]);
        times[r].push_back(ms * 1000.0f);
      }
    for (auto& ev : events) cudaEventDestroy(ev);

    const double cublas_us = median(times[0]);
    size_t best = 1;
    for (size_t r = 2; r < runs.size(); ++r)
      if (median(times[r]) < median(times[best])) best = r;
    const double read_us = median(times[best]);
    std::printf("| %dx%dx%d | %.0f | %.2f | %.2f (%.2f) | %s | %.3f |\n", s.m, s.n, s.k, b_bytes / 1048576.0,
                cublas_us, read_us, b_bytes / (read_us * 1e-6) / 1e12, runs[best].first.c_str(), cublas_us / read_us);
    for (void* p : b) cudaFree(p);
    cudaFree(a);
    cudaFree(d);
  }
  cublasDestroy(handle);
  return 0;
}
