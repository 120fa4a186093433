#pragma once
// Runs a schedule's kernel on the GPU and judges it: JIT compile (NVRTC, disk cache), random
// or small-integer inputs, a poisoned output, then the relative Frobenius error against
// cuBLAS and against an fp64 host reference, cuBLAS's own error against that reference, the
// count of unwritten elements, and optionally TFLOP/s next to cuBLAS in the same process.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/emit.h"
#include "codegen/reduction_check.h"
#include "runtime/jit.h"

namespace gg::rt {
class LoadedKernel;
}

namespace gg {

struct CheckOptions {
  bool exact = false;    // small integers in [-2, 2]: every product and sum is exact in fp32
  uint64_t seed = 1;
  bool bench = false;
  int warmup = 10, reps = 50;
  int repeat = 0;        // > 0: launch that many more times on the same inputs; each result must be bit-identical
  bool measure_jit = true;  // with bench: also time a first use (NVRTC with the cache bypassed)
  // Masked groups: each matrix's rows in use (args.group_rows); empty: all M rows.
  std::vector<int64_t> group_rows;
  // Contiguous groups: batch + 1 row offsets (args.group_offsets); empty: M split evenly.
  std::vector<int64_t> group_offsets;
  // Pointer-array groups: M, N, K of each group (3 per group; args.group_sizes); empty: every
  // group of the schedule's sizes.
  std::vector<int64_t> group_sizes;
  // The device the kernel is planned for (default: its target's); a persistent grid planned for
  // more SMs than this GPU holds clusters of is launched at what it holds.
  std::optional<DeviceLimits> limits;
};

// A first use's codegen (lower and print) and NVRTC compile with the disk cache bypassed, timed on
// this CPU: what a JIT user waits for before the module load. Needs no GPU. CPU time is the
// process's, which NVRTC (one thread) dominates, and is steadier than wall time on a shared machine.
struct JitCompileTiming {
  EmittedKernel kernel;
  rt::CompiledKernel compiled;
  double codegen_ms = 0, nvrtc_ms = 0, nvrtc_cpu_ms = 0;
};
JitCompileTiming time_jit_compile(const Schedule& s, rt::JitOptions options = {}, const LowerOptions& lowering = {});

// Compiles into the disk cache the builds check_on_gpu loads (the watchdog build it checks and
// the plain build it times), so a caller can compile many kernels in parallel first. Needs no GPU.
void compile_check_builds(const EmittedKernel& e);

struct CheckReport {
  std::string kernel_name, launch, device;
  std::string plan;  // set by the caller: the planner's choice it ran ("auto: swap A/B; tile ..."), if any
  int64_t m = 0, n = 0, k = 0, batch = 1;  // the kernel's (a swapped kernel's M is the caller's N)
  bool swapped = false;                    // the kernel is the swapped orientation, D^T = B * A^T
  double error_vs_cublas = 0, error_vs_host = 0, cublas_error_vs_host = 0;
  size_t unwritten = 0, checked_rows = 0;
  double bound = 0;          // the dtype's bound on error_vs_host
  bool passed = false;
  std::string verdict;       // why it failed, or "ok"
  double ms = 0, cublas_ms = 0, tflops = 0, cublas_tflops = 0;  // when benchmarked
  // What cublas_ms timed where a problem has more than one cuBLAS baseline (pointer-array groups:
  // the faster of a loop of calls and cublasGemmGroupedBatchedEx); "" for the usual one.
  std::string baseline;
  // When benchmarked and NVML answers: the SM clock (MHz) and board power (W) under a burst of
  // our kernel right after the timed runs; 0 when unknown.
  unsigned sm_clock_mhz = 0;
  double power_w = 0;
  int input_copies = 1;  // timed: copies of A and B the runs cycle through (small problems: past L2)
  // CTAs launched and CTAs the device holds at once: a grid above the second runs a tail wave.
  unsigned grid_ctas = 0, resident_ctas = 0;
  unsigned planned_grid_ctas = 0;  // a persistent grid as planned, before the device's resident clusters cap it
  // When benchmarked: a first use's codegen, NVRTC (cache bypassed) and module load; codegen plus
  // a disk-cache hit plus load (0: no writable cache); the host time of one cached launch.
  double jit_codegen_ms = 0, jit_compile_ms = 0, jit_load_ms = 0, jit_cached_ms = 0, launch_host_us = 0;
  int repeats = 0, repeats_differing = 0;  // the repeated launches, and those not bit-identical to the first
  std::vector<ReductionReport> reductions;  // each reduction's vector, judged
};

// The definition's epilogue ops, in their order, on one fp32-accumulated value (in double);
// `c` is the [M,N] C input (when the epilogue reads it) and `bias` the bias vector. With `until`
// a node of the chain (the matmul or an op), the value of that node (a saved output's).
double apply_epilogue(const Definition& def, double acc, int64_t row, int64_t col, const std::vector<float>& c,
                      const std::vector<float>& bias, int until = -1);

// Fills the report's errors (vs fp64, cuBLAS's own vs fp64, vs cuBLAS) and bound from the checked
// values, and returns why they fail ("" when within the bound, at most 2x cuBLAS's own error and,
// `exact`, equal to cuBLAS or to the fp64 reference rounded to the output type).
std::string judge_errors(CheckReport& r, const std::vector<double>& mine, const std::vector<double>& ref,
                         const std::vector<double>& theirs, DType out, bool exact, DType in = DType::BF16);

// Where an unpromoted 16-bit kernel's f32 output failed its error check: why, and the fix ("" else).
std::string unpromoted_f32_hint(const KernelPlan& plan, const Definition& def);

// Whether every value equals its reference rounded to `out` (ties to even), as a kernel that sums
// exactly and rounds once writes it.
bool equals_rounded(const std::vector<double>& mine, const std::vector<double>& ref, DType out);

// A report's launch facts (kernel, grid, resident CTAs, device, sizes) before a check fills it.
CheckReport launch_report(const EmittedKernel& e, const rt::LoadedKernel& kernel, const Definition& def);

// The relative Frobenius bound for an output dtype: f16 1e-3, bf16 4e-3, f32 1e-5.
// FP8 operands (`in`): WGMMA's FP8 accumulation keeps about 14 bits (DeepSeek-V3 report 3.3.2),
// so an f32 output is bounded at 5e-4 (measured on an H100: 1.1e-4 on random data, gemmgen and
// cuBLASLt's block-scaled FP8 alike); bf16 and f16 outputs keep their bounds.
double error_bound(DType out, DType in = DType::BF16);

// Needs a GPU; throws CompileError for schedules that do not lower and rt errors for CUDA failures.
CheckReport check_on_gpu(const Schedule& s, const CheckOptions& options = {});
// One kernel, compiled and loaded once, launched and checked at each of `sizes` (M and N in the
// caller's orientation; a kernel that reads them at run time): one report per size. Empty
// `sizes`: the schedule's own problem. CompileError `runtime-size` for a size the kernel has
// compiled in as another value.
std::vector<CheckReport> check_sizes_on_gpu(const Schedule& s, const std::vector<std::pair<int64_t, int64_t>>& sizes,
                                            const CheckOptions& options = {});

std::string format_report(const CheckReport& r);
std::string format_report_json(const CheckReport& r);

}  // namespace gg
