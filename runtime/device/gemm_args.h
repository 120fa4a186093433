#ifndef GG_GEMM_ARGS_H
#define GG_GEMM_ARGS_H
// The one kernel parameter of every gemmgen kernel, passed by value as __grid_constant__.
// Shared verbatim by the host runtime and the device code (embedded into emitted .cu),
// so it uses no headers (and an include guard, not #pragma once, which warns when the
// text is pasted into a .cu).
struct alignas(128) GgTensorMap {  // CUDA 13 aligns CUtensorMap to 128 bytes
  unsigned long long opaque[16];
};

struct GgGemmArgs {
  GgTensorMap map_a, map_b, map_c, map_d;  // filled for the operands LaunchSpec lists
  const void* a;                           // [M, K] row-major (K contiguous)
  const void* b;                           // [N, K] row-major (K contiguous)
  const void* c;                           // [M, N] row-major, read when beta != 0
  void* d;                                 // [M, N] row-major output
  const void* bias;                        // [N] or [M], output dtype
  long long m, n, k;
  float alpha, beta;
};

#endif  // GG_GEMM_ARGS_H
