#pragma once
// The epilogue a cuBLAS caller runs after the GEMM, as a kernel of its own: D = ops(D) element by
// element, reading C (or a saved pre-activation) and a bias as the ops say. The baseline a fused
// epilogue is measured against (one pass over D, the best such a caller can do: one kernel for the
// whole chain, not one per op). JIT-compiled once per process.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/host_reference.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

struct UnfusedOp {
  enum class Kind { Scale, AddC, BiasRows, BiasCols, Activation, ActivationGrad } kind = Kind::Scale;
  double scalar = 0.0;                          // Scale: alpha; AddC: beta
  Activation activation = Activation::None;     // Activation; ActivationGrad: times its derivative at C
};

struct UnfusedEpilogue {
  std::vector<UnfusedOp> ops;  // at most 8
  // A saved output (the pre-activation): the values after the first save_after ops also go to
  // `aux`, laid out as D (-1: none).
  int save_after = -1;
  // Reductions into fp32 vectors in the same pass (rows: one per row of D as stored, columns: one
  // per column): of the values after the first `after` ops (-1: none), or of their squares. The
  // sums meet by atomicAdd (the vectors zeroed first): the order, and so the last bits, vary.
  struct Reduction {
    int after = -1;
    bool squares = false;
  };
  Reduction rows, cols;
  ElemType d = ElemType::BF16, c = ElemType::BF16, bias = ElemType::BF16;
};

// Applies `e` in place to D [rows, cols] row-major (ldd elements between rows), C likewise (ldc),
// the saved output to `aux`. Asynchronous on `stream`. std::invalid_argument for more than 8 ops,
// a save past them or without `aux`, or an FP8 element type.
// The kernel's CUBIN for `arch` (NVRTC; no GPU needed).
struct CompiledKernel;
CompiledKernel compile_unfused_epilogue_kernel(const std::string& arch);

// `row_sums` and `col_sums`: the reductions' vectors ([rows] and [cols] fp32), where `e` has them.
void run_unfused_epilogue(const UnfusedEpilogue& e, void* d, const void* c, const void* bias, int64_t rows,
                          int64_t cols, int64_t ldd, int64_t ldc, void* aux = nullptr, cudaStream_t stream = nullptr,
                          float* row_sums = nullptr, float* col_sums = nullptr);

}  // namespace gg::rt
