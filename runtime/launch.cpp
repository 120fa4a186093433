#include "runtime/launch.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/driver_api.h"
#include "runtime/tensor_map.h"

namespace gg::rt {
namespace {

std::string dims(const std::array<unsigned, 3>& d) {
  return "{" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "}";
}

bool is_single_cta_cluster(const std::array<unsigned, 3>& cluster) {
  return cluster[0] == 1 && cluster[1] == 1 && cluster[2] == 1;
}

// The driver's launch description of `spec`; a cluster shape goes in `cluster_attribute`, which
// must outlive the config.
CUlaunchConfig launch_config(const LaunchSpec& spec, const std::array<unsigned, 3>& grid, cudaStream_t stream,
                             CUlaunchAttribute& cluster_attribute) {
  CUlaunchConfig config{};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = spec.block[0];
  config.blockDimY = spec.block[1];
  config.blockDimZ = spec.block[2];
  config.sharedMemBytes = spec.dynamic_smem_bytes;
  config.hStream = stream;  // cudaStream_t and CUstream are the same handle type
  if (!is_single_cta_cluster(spec.cluster)) {
    cluster_attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster_attribute.value.clusterDim.x = spec.cluster[0];
    cluster_attribute.value.clusterDim.y = spec.cluster[1];
    cluster_attribute.value.clusterDim.z = spec.cluster[2];
    config.attrs = &cluster_attribute;
    config.numAttrs = 1;
  }
  return config;
}

const void* base_pointer(Operand operand, const GemmProblem& problem) {
  switch (operand) {
    case Operand::A: return problem.a;
    case Operand::B: return problem.b;
    case Operand::C: return problem.c;
    case Operand::D: return problem.d;
    case Operand::ScaleA: return problem.scale_a;
    case Operand::ScaleB: return problem.scale_b;
    case Operand::Aux: return problem.aux;
  }
  return nullptr;
}

GgTensorMap* map_slot(Operand operand, GgGemmArgs& args) {
  switch (operand) {
    case Operand::A: return &args.map_a;
    case Operand::B: return &args.map_b;
    case Operand::C: return &args.map_c;
    case Operand::D: return &args.map_d;
    case Operand::ScaleA: return &args.map_scale_a;
    case Operand::ScaleB: return &args.map_scale_b;
    case Operand::Aux: return &args.map_aux;
  }
  return nullptr;
}

// A staged operand of a problem (the kernel's orientation): the caller's stored matrix, its
// aligned copy and the copy's offset in the staging buffer (A's first, then B's).
struct StagedOperand {
  Operand operand;
  StoredMatrix caller, copy;
  uint64_t offset = 0;
};

std::vector<StagedOperand> staged_operands(const LaunchSpec& spec, const GemmProblem& problem) {
  std::vector<StagedOperand> out;
  uint64_t offset = 0;
  for (const TensorMapSpec& t : spec.tensor_maps) {
    if (!t.staged) continue;
    StagedOperand s{t.operand, stored_matrix(problem.layouts, t.operand, problem.m, problem.n, problem.k), {}, offset};
    s.copy = staged_matrix(s.caller, problem.in_type);
    offset += staged_bytes(s.copy, problem.in_type);
    out.push_back(s);
  }
  return out;
}

// The copy kernel's parameter: each staged operand's rows from the caller's memory into its copy.
GgStageArgs stage_args(const std::vector<StagedOperand>& staged, const GemmProblem& problem, void* staging) {
  GgStageArgs args{};
  for (const StagedOperand& s : staged) {
    GgStageCopy& c = args.copies[args.count++];
    c.src = base_pointer(s.operand, problem);
    c.dst = static_cast<char*>(staging) + s.offset;
    c.rows = s.caller.rows;
    c.cols = s.caller.cols;
    c.matrices = s.caller.batches;
    c.src_pitch = s.caller.row_stride;
    c.dst_pitch = s.copy.row_stride;
    c.src_matrix_stride = s.caller.batch_stride;
    c.dst_matrix_stride = s.copy.batch_stride;
    c.elem_bytes = elem_bytes(problem.in_type);
  }
  return args;
}

}  // namespace

TensorMapSpec resolve_tensor_map_spec(const TensorMapSpec& spec, const GemmProblem& problem) {
  const StoredMatrix stored = stored_matrix(problem.layouts, spec.operand, problem.m, problem.n, problem.k);
  const bool is_input = spec.operand == Operand::A || spec.operand == Operand::B;
  const bool scales = spec.operand == Operand::ScaleA || spec.operand == Operand::ScaleB;  // fp32, or UE8M0 atoms' words
  const ElemType elem = scales ? ElemType::F32 : is_input ? problem.in_type : problem.out_type;
  const std::string which = std::string("tensor map for operand ") + operand_name(spec.operand);
  if (spec.elem != elem) {
    throw CudaError(which + " is " + elem_name(spec.elem) + " but the problem's operand is " + elem_name(elem));
  }
  const auto rows = static_cast<uint64_t>(stored.rows), cols = static_cast<uint64_t>(stored.cols);
  TensorMapSpec resolved = spec;
  if (spec.rows == 0 && spec.cols == 0) {
    resolved.rows = rows;
    resolved.cols = cols;
    resolved.transposed = stored.transposed;
  } else if (spec.rows != rows || spec.cols != cols || spec.transposed != stored.transposed) {
    throw CudaError(which + " was generated for a stored " + std::to_string(spec.rows) + "x" +
                    std::to_string(spec.cols) + (spec.transposed ? " (transposed)" : "") +
                    " matrix but the problem's operand is " + std::to_string(rows) + "x" + std::to_string(cols) +
                    (stored.transposed ? " (transposed)" : ""));
  }
  resolved.row_stride = static_cast<uint64_t>(stored.row_stride);
  resolved.batches = static_cast<uint64_t>(stored.batches);
  resolved.batch_stride = static_cast<uint64_t>(stored.batch_stride);
  return resolved;
}

struct LoadedKernel::EncodedMaps {
  struct Entry {
    TensorMapSpec spec;
    const void* base = nullptr;
    GgTensorMap map;
  };
  std::mutex mutex;
  std::array<Entry, 8> entries{};
  size_t used = 0, next = 0;  // filled entries; the one a new map replaces (oldest first)
  struct LastLaunch {
    cudaStream_t stream = nullptr;
    GemmProblem problem;
    GgGemmArgs args;
  };
  std::vector<LastLaunch> last;  // one per stream
};

GgTensorMap LoadedKernel::encoded_map(const TensorMapSpec& spec, const void* base) const {
  std::lock_guard<std::mutex> lock(encoded_->mutex);
  for (size_t i = 0; i < encoded_->used; ++i) {
    const EncodedMaps::Entry& e = encoded_->entries[i];
    if (e.base == base && e.spec == spec) return e.map;
  }
  EncodedMaps::Entry& fresh = encoded_->entries[encoded_->next];
  fresh.map = encode_tensor_map(spec, base);  // throws before the entry is taken
  fresh.spec = spec;
  fresh.base = base;
  encoded_->next = (encoded_->next + 1) % encoded_->entries.size();
  encoded_->used = std::min(encoded_->used + 1, encoded_->entries.size());
  return fresh.map;
}

LoadedKernel::LoadedKernel(const CompiledKernel& compiled, LaunchSpec spec)
    : spec_(std::move(spec)), encoded_(std::make_unique<EncodedMaps>()) {
  if (spec_.kernel_name.empty()) spec_.kernel_name = compiled.kernel_name;
  const DriverApi& api = driver_api();
  use_runtime_context();
  if (CUresult status = api.module_load_data(&module_, compiled.cubin.data()); status != CUDA_SUCCESS) {
    fail("cuModuleLoadData (" + compiled.arch + " cubin)", status);
  }
  if (CUresult status = api.module_get_function(&function_, module_, compiled.lowered_name.c_str());
      status != CUDA_SUCCESS) {
    fail("cuModuleGetFunction('" + compiled.lowered_name + "')", status);
  }
  if (CUresult status = api.func_set_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(spec_.dynamic_smem_bytes));
      status != CUDA_SUCCESS) {
    fail("setting the dynamic shared memory limit", status);
  }
  if (spec_.cluster[0] * spec_.cluster[1] * spec_.cluster[2] > 8) {
    if (CUresult status = api.func_set_attribute(function_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        status != CUDA_SUCCESS) {
      fail("allowing a non-portable cluster size", status);
    }
  }
  if (spec_.pointer_array) {
    const std::string builder = compiled.lowered_name + "_group_maps";
    if (CUresult status = api.module_get_function(&group_maps_function_, module_, builder.c_str());
        status != CUDA_SUCCESS)
      fail("cuModuleGetFunction('" + builder + "')", status);
  }
  if (std::any_of(spec_.tensor_maps.begin(), spec_.tensor_maps.end(), [](const TensorMapSpec& t) { return t.staged; })) {
    const std::string stage = compiled.lowered_name + "_stage";
    if (CUresult status = api.module_get_function(&stage_function_, module_, stage.c_str()); status != CUDA_SUCCESS)
      fail("cuModuleGetFunction('" + stage + "')", status);
  }
  if (spec_.persistent) {
    const unsigned cluster_ctas = spec_.cluster[0] * spec_.cluster[1] * spec_.cluster[2];
    resident_clusters_ = std::max(1u, max_resident_ctas() / std::max(1u, cluster_ctas));
  }
}

LoadedKernel::~LoadedKernel() {
  if (module_ != nullptr) driver_api().module_unload(module_);
}

LoadedKernel::LoadedKernel(LoadedKernel&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      function_(std::exchange(other.function_, nullptr)),
      spec_(std::move(other.spec_)),
      resident_clusters_(other.resident_clusters_),
      scratch_(std::exchange(other.scratch_, std::make_unique<LaunchScratch>())),
      encoded_(std::exchange(other.encoded_, std::make_unique<EncodedMaps>())),
      group_maps_function_(std::exchange(other.group_maps_function_, nullptr)),
      group_map_templates_(std::exchange(other.group_map_templates_, std::nullopt)),
      stage_function_(std::exchange(other.stage_function_, nullptr)) {}

LoadedKernel& LoadedKernel::operator=(LoadedKernel&& other) noexcept {
  if (this != &other) {
    if (module_ != nullptr) driver_api().module_unload(module_);
    module_ = std::exchange(other.module_, nullptr);
    function_ = std::exchange(other.function_, nullptr);
    spec_ = std::move(other.spec_);
    resident_clusters_ = other.resident_clusters_;
    scratch_ = std::exchange(other.scratch_, std::make_unique<LaunchScratch>());
    encoded_ = std::exchange(other.encoded_, std::make_unique<EncodedMaps>());
    group_maps_function_ = std::exchange(other.group_maps_function_, nullptr);
    group_map_templates_ = std::exchange(other.group_map_templates_, std::nullopt);
    stage_function_ = std::exchange(other.stage_function_, nullptr);
  }
  return *this;
}

std::string LoadedKernel::describe() const {
  return "kernel '" + spec_.kernel_name + "' (grid " + dims(spec_.grid) + ", block " + dims(spec_.block) +
         ", cluster " + dims(spec_.cluster) + ", " + std::to_string(spec_.dynamic_smem_bytes) +
         " bytes dynamic smem" + (spec_.swapped ? ", A and B swapped" : "") + ")";
}

void LoadedKernel::fail(const std::string& what, CUresult status) const {
  throw CudaError(describe() + ": " + what + " failed: " + driver_error_text(status));
}

GemmProblem swap_orientation(const LaunchSpec& spec, const GemmProblem& problem) {
  if (!spec.swapped) return problem;
  GemmProblem p = problem;
  std::swap(p.a, p.b);
  std::swap(p.m, p.n);
  std::swap(p.row_reduction, p.col_reduction);
  p.layouts = exchange_operands(problem.layouts);
  return p;
}

GgGemmArgs LoadedKernel::make_args(const GemmProblem& caller, GgStageArgs* stage, cudaStream_t stream) const {
  GemmProblem problem = swap_orientation(spec_, caller);
  if (spec_.symmetric) {  // D = A * A^T: B is A, whatever the caller passed
    if (problem.m != problem.n)
      throw CudaError(describe() + ": the kernel computes D = A * A^T, M x M, but M=" + std::to_string(problem.m) +
                      " and N=" + std::to_string(problem.n));
    problem.b = problem.a;
  }
  // A's factors through their tensor map (per row and 128 of K) or read directly (per tensor or row).
  const bool a_staged = std::any_of(spec_.tensor_maps.begin(), spec_.tensor_maps.end(),
                                    [](const TensorMapSpec& t) { return t.operand == Operand::ScaleA; });
  if ((a_staged || spec_.reads_scale_a) && problem.scale_a == nullptr)
    throw CudaError(describe() + ": the kernel reads A's FP8 scale factors (GemmProblem::scale_a, device memory, " +
                    spec_.scale_a_array + ")");
  const bool b_staged = std::any_of(spec_.tensor_maps.begin(), spec_.tensor_maps.end(),
                                    [](const TensorMapSpec& t) { return t.operand == Operand::ScaleB; });
  if ((b_staged || spec_.reads_scale_b) && problem.scale_b == nullptr)
    throw CudaError(describe() + ": the kernel reads B's FP8 scale factors (GemmProblem::scale_b, device memory, " +
                    spec_.scale_b_array + ")");
  if (spec_.writes_aux && problem.aux == nullptr)
    throw CudaError(describe() + ": the kernel stores a saved second output (GemmProblem::aux, device memory of D's "
                    "type laid out as D)");
  // Named in the caller's orientation: a swapped kernel's rows are the caller's columns.
  for (const bool rows : {true, false}) {
    const bool callers_rows = rows != spec_.swapped;
    if ((rows ? spec_.reduces_rows : spec_.reduces_cols) &&
        (rows ? problem.row_reduction : problem.col_reduction) == nullptr)
      throw CudaError(describe() + ": the kernel reduces along " + (callers_rows ? "rows" : "columns") +
                      " (GemmProblem::" + (callers_rows ? "row_reduction" : "col_reduction") +
                      ", device memory, fp32, " + (callers_rows ? "[batch][M])" : "[batch][N])"));
  }
  GgGemmArgs args{};
  args.aux = problem.aux;
  args.row_reduction = problem.row_reduction;
  args.col_reduction = problem.col_reduction;
  args.a = problem.a;
  args.b = problem.b;
  args.c = problem.c;
  args.d = problem.d;
  args.bias = problem.bias;
  args.scale_a = problem.scale_a;
  args.scale_b = problem.scale_b;
  args.m = problem.m;
  args.n = problem.n;
  args.k = problem.k;
  args.alpha = problem.alpha;
  args.beta = problem.beta;
  if (const std::string sizes = sizes_mismatch(spec_, problem.m, problem.n, problem.k); !sizes.empty())
    throw CudaError(describe() + ": " + sizes);
  const MatrixLayouts l = resolve_layouts(problem.layouts, problem.m, problem.n, problem.k);
  const std::string differs =
      layout_differences(resolve_layouts(spec_.layouts, problem.m, problem.n, problem.k), l);
  if (!differs.empty()) throw CudaError(describe() + ": the problem's layout differs from the kernel's: " + differs);
  args.lda = l.lda;
  args.ldb = l.ldb;
  args.ldc = l.ldc;
  args.ldd = l.ldd;
  args.batch = l.batch;
  args.stride_a = l.stride_a;
  args.stride_b = l.stride_b;
  args.stride_c = l.stride_c;
  args.stride_d = l.stride_d;
  if (spec_.masked && problem.group_rows == nullptr)
    throw CudaError(describe() + ": the kernel computes masked groups and needs each group's rows in use "
                    "(GemmProblem::group_rows, device memory)");
  args.group_rows = problem.group_rows;
  if (spec_.contiguous && problem.group_offsets == nullptr)
    throw CudaError(describe() + ": the kernel computes contiguous groups and needs their row offsets "
                    "(GemmProblem::group_offsets, device memory, batch + 1 ints)");
  if (spec_.varlen_k && problem.group_offsets == nullptr)
    throw CudaError(describe() + ": the kernel computes variable-K groups and needs their K offsets "
                    "(GemmProblem::group_offsets, device memory, batch + 1 ints)");
  args.group_offsets = problem.group_offsets;
  ScratchNeed need;
  need.workspace_bytes = launch_workspace_bytes(spec_, problem.m, problem.n);
  if (spec_.pointer_array) {  // each group's maps: written by the map builder (make_group_map_args)
    const GroupArrays& g = problem.groups;
    if (g.a == nullptr || g.b == nullptr || g.d == nullptr || g.sizes == nullptr)
      throw CudaError(describe() + ": the kernel computes pointer-array groups and needs device arrays of each "
                      "group's A, B and D pointers and its sizes (GemmProblem::groups)");
    need.group_maps_groups = l.batch;
    const StreamScratch scratch = scratch_->reserve(stream, need, describe());
    args.workspace = scratch.workspace;
    args.group_maps = scratch.group_maps;
    args.group_sizes = g.sizes;
    return args;
  }
  const std::vector<StagedOperand> staged = staged_operands(spec_, problem);
  if (!staged.empty()) need.staging_bytes = staged.back().offset + staged_bytes(staged.back().copy, problem.in_type);
  const StreamScratch scratch = scratch_->reserve(stream, need, describe());
  args.workspace = scratch.workspace;
  if (stage != nullptr) *stage = stage_args(staged, problem, scratch.staging);
  for (const TensorMapSpec& spec : spec_.tensor_maps) {
    try {
      TensorMapSpec resolved = resolve_tensor_map_spec(spec, problem);
      const void* base = base_pointer(spec.operand, problem);
      for (const StagedOperand& s : staged)  // the map reads the aligned copy
        if (s.operand == spec.operand) {
          resolved.row_stride = static_cast<uint64_t>(s.copy.row_stride);
          resolved.batch_stride = static_cast<uint64_t>(s.copy.batch_stride);
          base = static_cast<const char*>(scratch.staging) + s.offset;
        }
      *map_slot(spec.operand, args) = encoded_map(resolved, base);
    } catch (const CudaError& error) {
      throw CudaError(describe() + ": " + error.what());
    }
  }
  return args;
}

void LoadedKernel::launch_stage(const GgStageArgs& args, cudaStream_t stream) const {
  if (args.count == 0) return;
  uint64_t pieces = 0;
  for (int i = 0; i < args.count; ++i) {
    const GgStageCopy& c = args.copies[i];
    pieces += uint64_t(GG_STAGE_COPY_PIECES(c));
  }
  // A grid-stride loop: enough CTAs to fill the device a few times over, fewer for a small copy.
  const uint64_t most = uint64_t(device_info().sm_count) * GG_STAGE_CTAS_PER_SM;
  const auto blocks =
      static_cast<unsigned>(std::max<uint64_t>(1, std::min(most, (pieces + GG_STAGE_THREADS - 1) / GG_STAGE_THREADS)));
  GgStageArgs by_value = args;
  launch_companion(stage_function_, blocks, GG_STAGE_THREADS, &by_value, stream, "launching the staged operands' copy");
}

void LoadedKernel::launch_companion(CUfunction function, unsigned blocks, unsigned threads, void* param,
                                    cudaStream_t stream, const char* what) const {
  void* params[] = {param};
  CUlaunchConfig config{};
  config.gridDimX = blocks;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  if (CUresult status = driver_api().launch_kernel_ex(&config, function, params, nullptr); status != CUDA_SUCCESS)
    fail(what, status);
}

unsigned LoadedKernel::max_resident_ctas() const {
  const DriverApi& api = driver_api();
  if (is_single_cta_cluster(spec_.cluster)) {
    int per_sm = 0;
    const int threads = static_cast<int>(spec_.block[0] * spec_.block[1] * spec_.block[2]);
    if (CUresult status = api.occupancy_max_blocks_per_sm(&per_sm, function_, threads, spec_.dynamic_smem_bytes);
        status != CUDA_SUCCESS) {
      fail("cuOccupancyMaxActiveBlocksPerMultiprocessor", status);
    }
    return static_cast<unsigned>(per_sm) * static_cast<unsigned>(device_info().sm_count);
  }
  CUlaunchAttribute cluster_attribute{};
  CUlaunchConfig config = launch_config(spec_, spec_.grid, nullptr, cluster_attribute);
  int clusters = 0;
  if (CUresult status = api.occupancy_max_active_clusters(&clusters, function_, &config); status != CUDA_SUCCESS) {
    fail("cuOccupancyMaxActiveClusters", status);
  }
  return static_cast<unsigned>(clusters) * spec_.cluster[0] * spec_.cluster[1] * spec_.cluster[2];
}

GgGroupMapArgs LoadedKernel::make_group_map_args(const GemmProblem& problem, cudaStream_t stream) const {
  const MatrixLayouts l = resolve_layouts(problem.layouts, problem.m, problem.n, problem.k);
  ScratchNeed need;
  need.group_maps_groups = l.batch;
  GgTensorMap* const group_maps = scratch_->reserve(stream, need, describe()).group_maps;
  if (!group_map_templates_) {  // encoded once: they depend on the kernel alone
    GgGroupMapArgs templates{};
    for (const TensorMapSpec& spec : spec_.tensor_maps) {
      const auto slot = static_cast<size_t>(spec.operand);
      // The box, swizzle and element type; its address, sizes and row pitch are each group's
      // (written on the device), here a valid placeholder over the maps' own allocation.
      TensorMapSpec t = spec;
      t.rows = spec.box_rows;
      t.cols = spec.box_cols;
      t.row_stride = spec.box_cols;
      t.batches = 1;
      t.batch_stride = 0;
      t.transposed = stored_matrix(l, spec.operand, problem.m, problem.n, problem.k).transposed;
      try {
        templates.templates[slot] = encode_tensor_map(t, group_maps);
      } catch (const CudaError& error) {
        throw CudaError(describe() + ": " + error.what());
      }
      templates.transposed[slot] = t.transposed ? 1 : 0;
      templates.elem_bytes[slot] = elem_bytes(spec.elem);
    }
    group_map_templates_ = templates;
  }
  GgGroupMapArgs out = *group_map_templates_;
  out.groups = static_cast<int>(l.batch);
  out.sizes = problem.groups.sizes;
  out.maps = group_maps;
  for (const TensorMapSpec& spec : spec_.tensor_maps) {
    const auto slot = static_cast<size_t>(spec.operand);
    const GroupArrays& g = problem.groups;
    out.pointers[slot] = spec.operand == Operand::A   ? g.a
                         : spec.operand == Operand::B ? g.b
                                                      : const_cast<const void* const*>(g.d);
    out.lds[slot] = spec.operand == Operand::A ? g.lda : spec.operand == Operand::B ? g.ldb : g.ldd;
  }
  return out;
}

void LoadedKernel::launch_group_maps(const GgGroupMapArgs& args, cudaStream_t stream) const {
  if (args.groups == 0) return;
  constexpr unsigned kThreads = 128;
  const unsigned blocks = (static_cast<unsigned>(args.groups) * GG_GROUP_MAP_SLOTS + kThreads - 1) / kThreads;
  GgGroupMapArgs by_value = args;
  launch_companion(group_maps_function_, blocks, kThreads, &by_value, stream, "launching the group tensor-map builder");
}

void LoadedKernel::launch(const GemmProblem& problem, cudaStream_t stream) const {
  // A launch that only runs the kernel (no copy or map builder first) repeats its stream's last
  // launch when the problem is the same: its arguments (maps, the stream's workspace) are too.
  const bool kernel_only = !spec_.pointer_array && stage_function_ == nullptr;
  if (kernel_only) {
    std::optional<GgGemmArgs> repeated;
    {
      std::lock_guard<std::mutex> lock(encoded_->mutex);
      for (const EncodedMaps::LastLaunch& l : encoded_->last)
        if (l.stream == stream && l.problem == problem) repeated = l.args;
    }
    if (repeated) return launch_args(*repeated, stream);
  }
  GgStageArgs stage{};
  const GgGemmArgs args = make_args(problem, &stage, stream);
  if (spec_.pointer_array) launch_group_maps(make_group_map_args(problem, stream), stream);
  launch_stage(stage, stream);
  launch_args(args, stream);
  if (kernel_only) {
    std::lock_guard<std::mutex> lock(encoded_->mutex);
    auto it = std::find_if(encoded_->last.begin(), encoded_->last.end(),
                           [&](const EncodedMaps::LastLaunch& l) { return l.stream == stream; });
    if (it == encoded_->last.end()) it = encoded_->last.insert(encoded_->last.end(), EncodedMaps::LastLaunch{});
    *it = {stream, problem, args};
  }
}

void LoadedKernel::launch_args(const GgGemmArgs& args, cudaStream_t stream) const {
  const std::array<unsigned, 3> grid = launch_grid(spec_, args.m, args.n, resident_clusters_);
  for (int i = 0; i < 3; ++i) {
    if (spec_.cluster[i] == 0 || grid[i] % spec_.cluster[i] != 0) {
      throw CudaError(describe() + ": the grid is not a whole number of clusters");
    }
  }
  CUlaunchAttribute cluster_attribute{};
  CUlaunchConfig config = launch_config(spec_, grid, stream, cluster_attribute);
  GgGemmArgs by_value = args;
  void* params[] = {&by_value};
  if (CUresult status = driver_api().launch_kernel_ex(&config, function_, params, nullptr); status != CUDA_SUCCESS) {
    fail("cuLaunchKernelEx", status);
  }
}

void LoadedKernel::launch_and_wait(const GemmProblem& problem, cudaStream_t stream) const {
  launch(problem, stream);
  if (cudaError_t status = cudaStreamSynchronize(stream); status != cudaSuccess) {
    throw CudaError(describe() + ": kernel execution failed: " + cudaGetErrorName(status) + ": " +
                    cudaGetErrorString(status));
  }
}

}  // namespace gg::rt
