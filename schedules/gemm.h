#pragma once
// One call for users who do not schedule: D = alpha * A * B^T on device pointers, with a
// built-in schedule chosen for the problem and the kernel JIT-compiled on first use (cached in
// this process, and on disk by the kernel cache underneath).
//
//   gg::gemm(d_a, d_b, d_d, m, n, k);                      // bf16 in, bf16 out
//   gg::gemm(d_a, d_b, d_d, m, n, k, {.in = gg::DType::F16, .out = gg::DType::F32});
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "dsl/definition.h"
#include "schedules/auto_schedule.h"

namespace gg {

struct GemmOptions {
  DType in = DType::BF16;    // A and B
  DType out = DType::BF16;   // D
  double alpha = 1.0;        // compiled into the kernel: each alpha is its own kernel
  // Where A, B and D lie: majors, leading dimensions (0: dense), batch count (dense batches).
  // Each layout is its own kernel.
  ProblemLayout layout;
  std::string schedule;      // a built-in schedule (`gemmgen list`); empty: pick_schedule
  cudaStream_t stream = nullptr;
};

// The definition gemm() computes for these sizes and options, laid out as options.layout says.
Definition gemm_definition(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});
// The swapped orientation of a layout: D^T[N,M] = B * A^T, A and B trading places (and leading
// dimensions), D's rows its columns.
ProblemLayout swapped_layout(const ProblemLayout& l);

// How gemm() runs a problem: the definition it lowers, whether it is the swapped orientation
// (D^T[N,M] = B * A^T stored column-major, so a skinny M becomes the wgmma's N instead of a
// 64-row tile of padding), and the schedule.
struct GemmPlan {
  Definition def;
  bool swapped = false;
  std::string schedule;               // a built-in name
  std::string config;                 // for auto: AutoParams::to_string(), prefixed "swap A/B; " when swapped
  std::optional<AutoParams> params;   // for auto: the config chosen, so building it ranks nothing again

  Schedule build() const;  // the schedule of the plan
};
// Without options.schedule: the config `gemmgen tune` recorded for this problem on this GPU (see
// schedules/tuning.h), else `auto` in the orientation the heuristic predicts faster (the swap
// must win by 5%), else the furthest tutorial step that lowers (pick_schedule).
GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});

// The built-in schedule gemm() runs for a definition: the furthest tutorial step that is legal
// and lowers for it (v10 first; the tuned `auto` choice replaces this heuristic later). Throws
// CompileError `no-schedule`, naming each step's reason, when none does.
std::string pick_schedule(const Definition& def);

// D[M,N] = alpha * A[M,K] * B[N,K]^T on device pointers laid out as options.layout says (by
// default dense, A and B K-major, D row-major). Asynchronous on options.stream. Throws CompileError for a problem no schedule takes, rt::CudaError when there
// is no GPU or CUDA refuses a call.
void gemm(const void* a, const void* b, void* d, int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});

}  // namespace gg
