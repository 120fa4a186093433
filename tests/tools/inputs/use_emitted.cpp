// A user's program around a kernel `gemmgen emit` wrote: plain C++ (no CUDA compiler needed
// for this file) that declares the emitted `extern "C"` launch function and calls it. The
// .cu is compiled by nvcc on its own; this file by the host compiler; linked with cudart.
//
//   gemmgen emit --schedule v5 --m 4096 --n 4096 --k 4096 -o gemm.cu
//   nvcc -gencode=arch=compute_90a,code=sm_90a -c gemm.cu -o gemm.o
//   c++ -DGG_LAUNCH=<kernel>_launch -I$CUDA/include -c use_emitted.cpp -o main.o
//   c++ main.o gemm.o -L$CUDA/lib64 -lcudart -o use_emitted
//
// Run on a Hopper GPU it checks D = A * B^T exactly (A[m][k] = 1 + m % 3, B[n][k] = n % 4, so
// D[m][n] = K * (1 + m % 3) * (n % 4), summed exactly in fp32 and rounded once to bf16: operands or
// M and N exchanged would show). The shape is
// 4096^3 unless -DGG_M=, -DGG_N=, -DGG_K= say otherwise (a planned-swapped kernel's host entry
// takes the caller's M and N like any other). Arguments, if any, are other M to call the same
// entry with (a kernel that reads M at run time serves each). Exit status: 0 right, 1 wrong or
// failed, 77 no GPU.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef GG_LAUNCH
#error "compile with -DGG_LAUNCH=<kernel>_launch (the `// kernel:` line of the emitted .cu, plus _launch)"
#endif

// The emitted host entry: row-major A[M,K], B[N,K], C and D [M,N]; returns 0 or an error code.
extern "C" int GG_LAUNCH(const void* a, const void* b, const void* c, void* d, const void* bias, long long m,
                         long long n, long long k, cudaStream_t stream);

namespace {

#ifndef GG_M
#define GG_M 4096
#endif
#ifndef GG_N
#define GG_N 4096
#endif
#ifndef GG_K
#define GG_K 4096
#endif
constexpr long long kM = GG_M, kN = GG_N, kK = GG_K;

uint16_t to_bf16(float x) {  // round to nearest even, as the kernel's conversion does (a K of 555 makes sums past 256)
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

bool ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "use_emitted: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

// Calls the entry at M = `m` on fresh inputs; the elements of D it got wrong, or -1 on a failure.
// With `probe`, also calls it with half of K, which it must refuse: 1 when it did not.
long long run_at(long long m_rows, bool probe) {
  const long long rows = m_rows;
  std::vector<uint16_t> a(rows * kK), b(kN * kK), d(rows * kN, 0xffff);
  for (long long m = 0; m < rows; ++m)
    for (long long k = 0; k < kK; ++k) a[m * kK + k] = to_bf16(static_cast<float>(1 + m % 3));
  for (long long n = 0; n < kN; ++n)
    for (long long k = 0; k < kK; ++k) b[n * kK + k] = to_bf16(static_cast<float>(n % 4));
  void *da = nullptr, *db = nullptr, *dd = nullptr;
  const size_t bytes_a = a.size() * 2, bytes_b = b.size() * 2, bytes_d = d.size() * 2;
  if (!ok(cudaMalloc(&da, bytes_a), "cudaMalloc A") || !ok(cudaMalloc(&db, bytes_b), "cudaMalloc B") ||
      !ok(cudaMalloc(&dd, bytes_d), "cudaMalloc D") ||
      !ok(cudaMemcpy(da, a.data(), bytes_a, cudaMemcpyHostToDevice), "copy A") ||
      !ok(cudaMemcpy(db, b.data(), bytes_b, cudaMemcpyHostToDevice), "copy B") ||
      !ok(cudaMemset(dd, 0xff, bytes_d), "poison D"))
    return -1;
  const int status = GG_LAUNCH(da, db, nullptr, dd, nullptr, rows, kN, kK, nullptr);
  if (status != 0) {
    std::fprintf(stderr, "use_emitted: the launch function returned %d at M=%lld\n", status, rows);
    return -1;
  }
  if (!ok(cudaDeviceSynchronize(), "kernel") || !ok(cudaMemcpy(d.data(), dd, bytes_d, cudaMemcpyDeviceToHost), "copy D"))
    return -1;
  long long wrong = 0;
  for (long long m = 0; m < rows; ++m)
    for (long long n = 0; n < kN; ++n)
      wrong += d[m * kN + n] != to_bf16(static_cast<float>(kK * (1 + m % 3) * (n % 4)));
  // A K other than the generated one is refused, not run.
  if (probe && GG_LAUNCH(da, db, nullptr, dd, nullptr, rows, kN, kK / 2, nullptr) == 0) {
    std::fprintf(stderr, "use_emitted: K=%lld NOT refused\n", kK / 2);
    wrong = wrong > 0 ? wrong : 1;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  std::printf("use_emitted: M=%lld N=%lld K=%lld: %lld of %lld elements wrong\n", rows, kN, kK, wrong, rows * kN);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("use_emitted: no GPU; linked fine\n");
    return 77;
  }
  bool right = run_at(kM, true) == 0;
  for (int i = 1; i < argc; ++i) right = run_at(std::atoll(argv[i]), false) == 0 && right;
  return right ? 0 : 1;
}
