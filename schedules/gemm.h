#pragma once
// One call for users who do not schedule: D = alpha * A * B^T on device pointers, with a
// built-in schedule chosen for the problem and the kernel JIT-compiled on first use (cached in
// this process, and on disk by the kernel cache underneath).
//
//   gg::gemm(d_a, d_b, d_d, m, n, k);                      // bf16 in, bf16 out
//   gg::gemm(d_a, d_b, d_d, m, n, k, {.in = gg::DType::F16, .out = gg::DType::F32});
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emit.h"
#include "dsl/definition.h"
#include "dsl/schedule_text.h"
#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/launch_spec.h"
#include "schedules/auto_schedule.h"

namespace gg {

// The FP8 scale factors a target's recipe takes when none are named (DeepGEMM's): on sm_90a fp32
// factors, A's per 1x128 and B's per 128x128; on sm_100a UE8M0 factors per 1x128 for both (its
// block-scaled MMA's, SM100 1D1D). [0]: A's, [1]: B's.
std::array<ScaleSpec, 2> fp8_default_scales(Target target);

struct GemmOptions {
  DType in = DType::BF16;    // A and B
  DType out = DType::BF16;   // D
  double alpha = 1.0;        // compiled into the kernel: each alpha is its own kernel
  // Where A, B and D lie: majors, leading dimensions (0: dense), batch count (dense batches).
  // Each layout is its own kernel.
  ProblemLayout layout;
  std::string schedule;      // a built-in schedule (`gemmgen list`); empty or "auto": the planner's choice
  Target target = Target::Sm90a;
  cudaStream_t stream = nullptr;
  // 0: the kernel is planned for the call's M. Else (with layout.runtime_m, the default) it is
  // planned for this many rows and serves every M, so a decode loop over M = 1..256 compiles one
  // kernel (DeepGEMM's expected_m); a new M then plans nothing either.
  int64_t planned_m = 0;
  // The epilogue after alpha, in the schedule file's terms (`epilogue` lines: add_c BETA, bias,
  // relu/gelu/silu, their gradients at a pre-activation, save, rowsum/rowsumsq/colsum/colsumsq),
  // applied in order; each list is its own kernel. The tensors its ops read and write (device
  // memory; where an op needs one and it is null, the launch refuses):
  std::vector<EpilogueSpec> epilogue;
  const void* c = nullptr;         // add_c's C, or a gradient's pre-activation: [M,N] laid out as D, of D's type
  const void* bias = nullptr;      // bias: [N] (cols) or [M] (rows), of D's type
  void* aux = nullptr;             // save: the saved output, laid out as D, of D's type
  float* row_reduction = nullptr;  // rowsum, rowsumsq: fp32 [batch][M]
  float* col_reduction = nullptr;  // colsum, colsumsq: fp32 [batch][N]
};

// The definition gemm() computes for these sizes and options, laid out as options.layout says;
// `swapped`: in the swapped orientation, D^T[N,M] = B * A^T (Definition::swapped).
Definition gemm_definition(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {}, bool swapped = false);

// The layout the planner plans (and tune times and records under): canonical_layout's, then each
// operand whose rows TMA cannot address (16-bit, a dense problem or batch) staged through an
// aligned copy the launch makes first (Definition::stage_operand), so every shape gets its TMA
// kernels.
ProblemLayout planned_layout(int64_t m, int64_t n, int64_t k, const GemmOptions& options);

// The swap rule, the one place it is decided: the swapped orientation runs when only it has an
// `auto` config, or when the model predicts it faster than the straight one by swap_margin: 3%
// where both orientations TMA-store their tiles, 5% where one stores from registers.
double swap_margin(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped);
bool prefer_swapped(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped);
// The tie prefer_swapped also takes: both orientations' best configs the same tile in one wave
// (a long k loop, unsplit), predicted within 1%, and the swapped one of at least 5% fewer tiles.
bool fewer_tiles_swapped(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped);

// Where a plan's configuration comes from.
enum class PlanSource {
  Named,     // the caller named a built-in schedule
  Tuned,     // the config `gemmgen tune` recorded for this problem on this GPU
  Auto,      // the `auto` heuristic, in the orientation the swap rule takes
  Fallback,  // no `auto` config lowers: the furthest tutorial step that does (pick_schedule)
  Symmetric, // D = A * A^T: the built-in `symmetric` schedule, the tiles on and above the diagonal
};
std::string_view plan_source_name(PlanSource s);  // "named", "tuned", "auto", "fallback", "symmetric"

// How a problem is run: the definition it lowers (in the orientation it runs: a swapped plan's
// definition computes D^T[N,M] = B * A^T stored column-major, so a skinny M becomes the wgmma's
// N instead of a 64-row tile of padding), where the config comes from, and the schedule.
// gg::gemm, bench, tune and every CLI command given `--schedule NAME` take their plan from
// plan_gemm; the orientation travels in the definition to the kernel's LaunchSpec and emitted host
// entry, which take the caller's A, B, M and N.
struct GemmPlan {
  Definition def;
  PlanSource source = PlanSource::Named;
  std::string schedule;               // a built-in name ("auto" for tuned and auto plans)
  std::string config;                 // for auto: AutoParams::to_string(), prefixed "swap A/B; " when swapped
  std::optional<AutoParams> params;   // for auto: the config chosen, so building it ranks nothing again
  Target target = Target::Sm90a;
  // For auto and fallback plans: the model's best config in each orientation, when one lowers.
  std::optional<AutoParams> straight_best, swapped_best;
  std::string auto_refusal;           // for a fallback: why no `auto` config lowers
  std::string symmetric_refusal;      // for D = A * A^T planned whole: why not the symmetric schedule
  // For a tuned plan: its time and cuBLAS's as `tune` measured them (params carries the model's
  // prediction for the same config, so explain shows the two side by side).
  std::optional<double> measured_us, measured_cublas_us;

  Schedule build() const;  // the schedule of the plan
  // One line naming the choice: "auto: swap A/B; tile 64x16x256, ...", "fallback v4", "v10".
  std::string describe() const;
  bool swapped() const { return def.swapped(); }  // the orientation the definition computes
};
// With options.schedule a built-in name: that schedule on the problem as given. Otherwise, for
// D = A * A^T (options.layout.symmetric), the `symmetric` schedule where it lowers and beats the
// whole product (half the tiles, ahead of a tuned record; not where fewer tiles compute than half
// the SMs, see symmetric_loses). Otherwise the
// config `gemmgen tune` recorded for this problem on this GPU (see schedules/tuning.h), else `auto`
// in the orientation prefer_swapped takes, else the furthest tutorial step that lowers
// (pick_schedule). A one-row M-major A (or N-major B) is read K-major (canonical_layout) first.
GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});

// gg::gemm's compile of an emitted kernel: NVRTC through the disk cache (runtime/kernel_cache.h)
// with the options every gg::gemm launch uses, so a kernel compiled here is a cache hit there.
rt::CompiledKernel compile_gemm_kernel(const EmittedKernel& e);

// What gg::gemm would compile for a problem, compiled now into the disk cache (no GPU needed;
// `gemmgen precompile`), so a service's first call of that shape loads instead of compiling.
struct PrecompiledGemm {
  GemmPlan plan;
  std::string kernel_name;
  bool from_cache = false;  // it was compiled before (by an earlier precompile or use)
};
PrecompiledGemm precompile_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});

// How many kernels gg::gemm and its grouped and FP8 siblings have loaded in this process (each
// one JIT-compiled or read from the disk cache): what a test of "one kernel for every M" counts.
size_t loaded_gemm_kernels();

// What `explain` prints for a plan: the source, the orientation with the model's figures for
// both, the config, and the chosen orientation's ranking.
std::string explain_plan(const GemmPlan& plan);

// The built-in schedule gemm() runs for a definition: the furthest tutorial step that is legal
// and lowers for it (auto first, then v10, v8, ...). Throws CompileError `no-schedule`, naming
// each step's reason, when none does.
std::string pick_schedule(const Definition& def, Target target = Target::Sm90a);

// D[M,N] = alpha * A[M,K] * B[N,K]^T on device pointers laid out as options.layout says (by
// default dense, A and B K-major, D row-major). Asynchronous on options.stream. Throws CompileError for a problem no schedule takes, rt::CudaError when there
// is no GPU or CUDA refuses a call.
void gemm(const void* a, const void* b, void* d, int64_t m, int64_t n, int64_t k, const GemmOptions& options = {});

// What gemm() (or, for FP8 operands, gemm_fp8() with factor pointers where `scale_a`/`scale_b`
// say) launches for a problem, prepared once for a caller that launches it many times with new
// pointers (the C ABI keeps one per problem): the kernel, loaded on first use, and the problem with
// the caller's sizes and options. Set its a, b, d (and c, bias, scale_a, scale_b where they vary)
// and call kernel->launch(problem, stream).
struct PreparedGemm {
  const rt::LoadedKernel* kernel = nullptr;
  rt::GemmProblem problem;
};
PreparedGemm prepare_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options = {}, bool scale_a = false,
                          bool scale_b = false);

// The same for a schedule the caller wrote (a schedule file's directives over gemm_definition's
// problem, as the C ABI's schedule text gives it): its kernel loaded by name, beside gemm()'s.
PreparedGemm prepare_scheduled_gemm(const Schedule& schedule, int64_t m, int64_t n, int64_t k,
                                    const GemmOptions& options);

// FP8 GEMM with DeepGEMM's fine-grained scaling (its fp8_gemm_nt): D[M,N] = A[M,K] * B[N,K]^T with
// A and B e4m3 (options.in, or e5m2) and K-major, each element times its scale factor: scale_a
// per row and 128 of K, [ceil(K/128)][M rounded up to 4] fp32 (DeepGEMM's MN-major TMA-aligned
// layout), scale_b per 128 x 128 block, [ceil(N/128)][ceil(K/128)] fp32; a null factor pointer
// means a factor of 1. Other granularities and majors (options.layout.scale_a / scale_b and
// scale_a_major / scale_b_major: per tensor, per row, per 1x128, per 128x128, K- or MN-major) take
// their arrays as scale_factor_index lays them out. D is options.out (bf16 by default; f16, f32). Every k tile of 128 is
// promoted into fp32 (WGMMA's FP8 accumulation keeps about 14 bits). Device pointers, 16-byte
// aligned; asynchronous on options.stream.
void gemm_fp8(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d, int64_t m, int64_t n,
              int64_t k, const GemmOptions& options = {});
// Grouped FP8 (DeepGEMM's m_grouped_fp8_gemm_nt_masked and ..._contiguous): gemm_masked and
// gemm_contiguous below on FP8 operands with gemm_fp8's factors, one matrix of them per matrix of
// A and B after the previous one's: masked, scale_a [groups][ceil(K/128)][m_max rounded up to 4];
// contiguous, the groups share A and its factors [ceil(K/128)][m rounded up to 4]; scale_b
// [groups][ceil(N/128)][ceil(K/128)] for both.
void gemm_fp8_masked(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d,
                     const int* group_rows, int64_t groups, int64_t m_max, int64_t n, int64_t k,
                     const GemmOptions& options = {}, int64_t expected_m = 0);
void gemm_fp8_contiguous(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d,
                         const int* group_offsets, int64_t groups, int64_t m, int64_t n, int64_t k,
                         const GemmOptions& options = {}, int64_t expected_m = 0);
// Masked grouped GEMM (DeepGEMM's m_grouped_gemm_nt_masked, MoE decode): for each of `groups`
// groups g, D[g][0:rows_g, :] = alpha * A[g][0:rows_g, :] * B[g]^T with A [groups, m_max, K],
// B [groups, N, K] and D [groups, m_max, N] dense, and rows_g = group_rows[g] (device memory, one
// int per group, 0..m_max; a count past m_max reads as m_max, a negative one as 0) read by the
// kernel at run time, so a CUDA graph can replay it as the counts change. A group's last tile is stored whole (its rows past rows_g get A's rows there
// times B); D's tiles past it are untouched. `expected_m`, when not 0, is the planner's hint for
// the rows a group holds (DeepGEMM's expected_m); the kernel is planned for m_max otherwise.
void gemm_masked(const void* a, const void* b, void* d, const int* group_rows, int64_t groups, int64_t m_max,
                 int64_t n, int64_t k, const GemmOptions& options = {}, int64_t expected_m = 0);

// Contiguous grouped GEMM (DeepGEMM's m_grouped_gemm_nt_contiguous, MoE forward): for each of
// `groups` groups g, D[o_g:o_{g+1}, :] = alpha * A[o_g:o_{g+1}, :] * B[g]^T with A [m, K] and D
// [m, N] dense row-major (the tokens of every expert, one expert after another), B [groups, N, K]
// dense, and o = group_offsets (device memory, groups + 1 nondecreasing ints in 0..m) read by
// the kernel at run time, so any group may hold any number of rows (0 included) and a CUDA graph
// can replay it as the offsets change. Each group's rows are stored exactly: a tile's rows past
// its group are not written, nor are D's rows outside [o_0, o_groups). On the device an offset
// outside 0..m reads as the nearer end and a group ending before its start is empty. The kernel
// reads M at run time; it is planned for `expected_m` rows when not 0 (one kernel for every m, as
// a training or serving loop with a new token count each step wants), else for m (a new m may
// plan, and compile, another kernel).
void gemm_contiguous(const void* a, const void* b, void* d, const int* group_offsets, int64_t groups, int64_t m,
                     int64_t n, int64_t k, const GemmOptions& options = {}, int64_t expected_m = 0);

// Variable-K grouped GEMM (QuACK's varlen_k, the weight gradients of a mixture-of-experts layer):
// for each of `groups` groups g, D[g] = alpha * A[o_g:o_{g+1}, :]^T * B[o_g:o_{g+1}, :] with A
// [k_total, m] and B [k_total, n] dense row-major (the tokens of every expert one after another:
// dY and X), D [groups, m, n] dense row-major, and o = group_offsets (device memory, groups + 1
// nondecreasing ints in 0..k_total) read by the kernel at run time, as K is: one kernel serves
// every k_total and every set of offsets. A group with no rows of K stores zeros. On the device an
// offset outside 0..k_total reads as the nearer end and a range ending before its start is empty.
void gemm_varlen_k(const void* a, const void* b, void* d, const int* group_offsets, int64_t groups, int64_t m,
                   int64_t n, int64_t k_total, const GemmOptions& options = {});
// The K gemm_varlen_k's kernel is planned for (it reads K at run time): one kernel for every k_total.
inline constexpr int64_t kVarlenPlannedK = 4096;

// Pointer-array grouped GEMM (CUTLASS's ptr-array grouped GEMM, cublasGemmGroupedBatchedEx): for
// each of `groups` groups g, D_g = alpha * A_g * B_g^T with M_g, N_g, K_g = sizes[3g..3g+2] and
// A_g = a[g] [M_g, K_g] (lda[g] elements between rows; MN-major when options.layout.a says),
// B_g = b[g] [N_g, K_g] (ldb[g]), D_g = d[g] [M_g, N_g] row-major (ldd[g]). Every array is device
// memory of `groups` entries, read on the device at run time (a null lda, ldb or ldd: dense), so
// a CUDA graph can replay it as the pointers and sizes change; the launch writes each group's
// tensor maps on the device first. Pointers and leading dimensions must meet TMA's 16-byte
// alignment and each N_g must make D's rows whole 16-byte pieces (a multiple of 8 for 16-bit
// output; a TMA store writes a row's last piece whole); a negative size reads as 0; a group with no
// K stores zeros. One kernel serves every
// set of sizes: it is planned for `planned` M, N, K (0: 4096 each), the sizes a group is expected
// to have.
using GroupedPointers = rt::GroupArrays;
void gemm_pointer_array(const GroupedPointers& groups_arrays, int64_t groups, const GemmOptions& options = {},
                        std::array<int64_t, 3> planned = {0, 0, 0});

}  // namespace gg
