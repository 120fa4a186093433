#pragma once
// fp64 host reference for D = epilogue(alpha * A * B^T + beta * C, bias), row-major
// A[M,K], B[N,K], C and D [M,N]. Small problems are computed in full; large ones on a
// sample of rows (reference_rows) to keep the host cost bounded.
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/launch_spec.h"

namespace gg::rt {

enum class Activation { None, Relu, GeluTanh, Silu };

// Rows: one bias value per output row (bias[M]); Cols: one per column (bias[N]).
enum class BiasAlong { None, Rows, Cols };

// Applied per element in this order: y = alpha * acc + beta * c + bias; y = act(y);
// then y is rounded to `out` (as the kernel's final store does).
struct EpilogueRef {
  double alpha = 1.0;
  double beta = 0.0;
  BiasAlong bias_along = BiasAlong::None;
  Activation activation = Activation::None;
  ElemType out = ElemType::F32;
};

double apply_activation(Activation activation, double x);  // gelu: tanh form
// The activation's derivative at x (relu's at 0 taken as 0; None's is 1).
double apply_activation_grad(Activation activation, double x);
double apply_epilogue(const EpilogueRef& epilogue, double acc, double c, double bias);

// Problems with M * N * K <= 2^24 (e.g. 256^3): every row. Larger: rows 0-7, the last
// 8 rows, and 48 spread rows i * (M / 48) + i % 8 (i = 0..47), so each residue mod 8
// (a wgmma fragment row) and both ends are covered. Sorted, without repeats.
std::vector<int64_t> reference_rows(int64_t m, int64_t n, int64_t k);

struct HostReference {
  std::vector<int64_t> rows;   // which rows of D were computed
  int64_t n = 0;               // columns per row
  std::vector<double> values;  // rows.size() x n, row-major
};

// `c` may be empty when beta == 0 and `bias` empty when bias_along == None.
HostReference host_gemm_reference(std::span<const float> a, std::span<const float> b, int64_t m, int64_t n,
                                  int64_t k, const EpilogueRef& epilogue = {}, std::span<const float> c = {},
                                  std::span<const float> bias = {}, std::vector<int64_t> rows = {});

// The same rows picked out of a full row-major [M,N] result (e.g. a kernel's output).
std::vector<double> gather_rows(std::span<const float> full, int64_t n, const std::vector<int64_t>& rows);

}  // namespace gg::rt
