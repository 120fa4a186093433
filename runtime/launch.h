#pragma once
// Loading a compiled kernel and launching it on a GEMM problem: tensor maps encoded
// into GgGemmArgs, dynamic shared memory raised, cluster dimensions attached.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/device/gemm_args.h"
#include "runtime/jit.h"
#include "runtime/launch_scratch.h"
#include "runtime/launch_spec.h"

namespace gg::rt {

// D[M,N] = epilogue(alpha * A[M,K] * B[N,K]^T + beta * C[M,N], bias) on device pointers laid out
// as `layouts` says (default: one dense matrix each, A and B K-major, C and D row-major).
struct GemmProblem {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  ElemType in_type = ElemType::BF16;   // A and B
  ElemType out_type = ElemType::BF16;  // C, D and bias
  MatrixLayouts layouts;
  // Masked groups (LaunchSpec::masked): device memory, one int per matrix of the batch, each group's
  // rows in use (0..M); the kernel reads it at run time.
  const int* group_rows = nullptr;
  // Contiguous groups (LaunchSpec::contiguous): device memory, batch + 1 ints, group g's rows of A,
  // C and D being [group_offsets[g], group_offsets[g + 1]); variable-K groups (varlen_k): group g's
  // rows of K in A and B. The kernel reads it at run time.
  const int* group_offsets = nullptr;
  // Pointer-array groups (LaunchSpec::pointer_array): the groups' device arrays (layouts.batch
  // entries each). A launch writes every group's tensor maps on the device before the kernel reads
  // them.
  GroupArrays groups;
  // FP8 operands' fp32 scale factors (nullptr: none): A's per row and 128 of K, MN-major
  // ([ceil(K/128)][M rounded up to 4]); B's per 128 x 128 block, K-major ([ceil(N/128)][ceil(K/128)]).
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  // A saved second output (LaunchSpec::writes_aux): [M, N] of out_type, laid out as D.
  void* aux = nullptr;
  // Reductions (LaunchSpec::reduces_rows, reduces_cols): device memory, fp32, [batch][M] and
  // [batch][N], in the caller's orientation.
  float* row_reduction = nullptr;
  float* col_reduction = nullptr;
  bool operator==(const GemmProblem&) const = default;
};

// The problem as the other orientation sees it when the spec is swapped (A and B, M and N and
// the layouts exchanged; exchange_operands), else as it is: the caller's problem as the kernel
// computes it, and back.
GemmProblem swap_orientation(const LaunchSpec& spec, const GemmProblem& problem);

// The tensor map spec with its stored matrix filled in from the problem (A: M x K, or K x M when
// MN-major; B likewise; C and D: M x N, or N x M when column-major; the problem's leading
// dimension, batch and batch stride) when the spec leaves rows and cols at 0. Throws CudaError if
// a shape or element type the spec states disagrees with the problem.
TensorMapSpec resolve_tensor_map_spec(const TensorMapSpec& spec, const GemmProblem& problem);

// A kernel loaded into the current context (needs a GPU). Owns its module.
class LoadedKernel {
 public:
  LoadedKernel(const CompiledKernel& compiled, LaunchSpec spec);
  ~LoadedKernel();
  LoadedKernel(LoadedKernel&& other) noexcept;
  LoadedKernel& operator=(LoadedKernel&& other) noexcept;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  // Pointers, sizes, scalars and one tensor map per spec entry, with `stream`'s scratch (see
  // runtime/launch_scratch.h). `problem` is the caller's: a swapped kernel's arguments get its A
  // and B (and M and N) exchanged. Staged operands: `stage` (where given) receives the copy
  // kernel's parameter, from the same copies the maps read (count 0 when the kernel stages none).
  GgGemmArgs make_args(const GemmProblem& problem, GgStageArgs* stage = nullptr, cudaStream_t stream = nullptr) const;

  // Pointer-array groups: the map builder's parameter for a problem (its templates encoded here),
  // writing `stream`'s group maps.
  GgGroupMapArgs make_group_map_args(const GemmProblem& problem, cudaStream_t stream = nullptr) const;

  // Pointer-array groups: the map builder runs first, on the same stream; staged operands: the
  // copy kernel. Launches on different streams may overlap (each stream has its own scratch).
  void launch(const GemmProblem& problem, cudaStream_t stream = nullptr) const;
  void launch_args(const GgGemmArgs& args, cudaStream_t stream = nullptr) const;

  // Launches and synchronizes the stream, so a fault in the kernel is reported with
  // the launch shape.
  void launch_and_wait(const GemmProblem& problem, cudaStream_t stream = nullptr) const;

  const LaunchSpec& spec() const { return spec_; }

  // How many of this kernel's CTAs the device can hold at once (clusters counted whole):
  // a persistent grid larger than this runs a second, mostly idle wave.
  unsigned max_resident_ctas() const;
  // A persistent kernel's clusters resident at once (its launches run no more); 0 for a grid of tiles.
  unsigned resident_clusters() const { return resident_clusters_; }

  // "kernel 'name' (grid {x,y,z}, block {x,y,z}, cluster {x,y,z}, N bytes dynamic smem)"
  std::string describe() const;

 private:
  void fail(const std::string& what, CUresult status) const;

  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  LaunchSpec spec_;
  unsigned resident_clusters_ = 0;
  // The workspace, staging copies and group maps, one set per stream.
  std::unique_ptr<LaunchScratch> scratch_ = std::make_unique<LaunchScratch>();
  // The tensor maps encoded last, by spec and address: launches over the same tensors (a layer's
  // weights, a benchmark's loop) encode each once. And the arguments of the last launch on each
  // stream, by problem: a launch repeating it (a decode loop whose allocator hands back the same
  // addresses, a benchmark) makes none.
  struct EncodedMaps;
  std::unique_ptr<EncodedMaps> encoded_;
  GgTensorMap encoded_map(const TensorMapSpec& spec, const void* base) const;
  // Pointer-array groups: the map builder, which writes every group's maps into the stream's set.
  CUfunction group_maps_function_ = nullptr;
  mutable std::optional<GgGroupMapArgs> group_map_templates_;  // the templates, encoded at the first launch
  void launch_group_maps(const GgGroupMapArgs& args, cudaStream_t stream) const;
  // Staged operands: the copy kernel, which writes the aligned copies into the stream's set.
  CUfunction stage_function_ = nullptr;
  void launch_stage(const GgStageArgs& args, cudaStream_t stream) const;
  // A companion kernel of the module (the map builder, the staging copy) on a 1-D grid, its one
  // parameter by value; `what` names it in a failure.
  void launch_companion(CUfunction function, unsigned blocks, unsigned threads, void* param, cudaStream_t stream,
                        const char* what) const;
};

}  // namespace gg::rt
