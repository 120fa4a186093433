#include "simulator/simulate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "codegen/index_math.h"
#include "codegen/gemm_check.h"
#include "codegen/lower.h"
#include "codegen/work_units.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/device_buffer.h"
#include "runtime/device/smem_desc.h"
#include "runtime/device/split_k.cuh"
#include "runtime/device/tcgen05_desc.h"
#include "runtime/host_dtype.h"
#include "runtime/tensor_map.h"
#include "simulator/machine.h"

namespace gg {

namespace {

using namespace kir;
using sim::AsyncRead;
using sim::GlobalTensor;
using sim::Mbarrier;
using sim::PendingCommit;
using Bindings = std::map<std::string, int64_t>;
using sim::PendingLoad;
using sim::PendingMma;
using sim::PendingStore;
using sim::SharedMemory;

constexpr int kWarpSize = 32;
constexpr int kWarpsPerWarpgroup = 4;

// Where a warp is in the IR: one frame per compound statement it is inside, plus the leaf
// it is executing (a leaf that blocks stays on the stack and is retried).
struct Frame {
  const kir::Node* node = nullptr;
  size_t index = 0;           // Block: next child
  bool entered = false;       // compound: the child was pushed; leaf barrier: this warp arrived
  bool elected = false;       // ElectOne: the body runs on this warp's elected lane
  int64_t value = 0, end = 0, step = 1;  // For
  int64_t generation = 0;     // the barrier generation this warp arrived in
};

struct Warp {
  int cta = 0, index = 0;     // CTA within the cluster, warp within the CTA
  std::vector<Frame> stack;
  std::map<std::string, int64_t> vars;
  int elect_depth = 0;
  std::string role = "(before the role branch)";
  bool done = false;
  std::string blocked;
  std::map<std::string, std::vector<float>> acc;  // per block: 16 rows (this warp's) x N
  std::map<std::string, int> acc_n;
  std::optional<std::pair<float, float>> column_scales;  // FP8: B's factors (LoadScaleFactors)
  std::optional<std::pair<float, float>> next_column_scales;  // the next k step's (PrefetchScaleFactors, lo_next)
  std::vector<float> column_factors;  // FP8: B's per column of the tile (per 1x128, LoadScaleFactors' cols)
  std::vector<float> row_scales;  // FP8: A's factors of the warp's 16 rows of each block (LoadScaleFactors)
  int64_t wgmma_groups = 0;   // committed wgmma groups; the open one has this id
  int64_t bulk_groups = 0;    // committed bulk (TMA store) groups
  std::vector<std::pair<int64_t, int64_t>> unfenced;  // generic writes not yet fenced
  std::map<int64_t, int64_t> seen_phases;  // per barrier offset: phases this warp saw complete
  std::map<int64_t, int64_t> passed;       // per named barrier id (0: __syncthreads): generations it passed
  int last_mma = 0;           // the id of the last tcgen05.mma this warp issued (0: none)
  int64_t cluster_arrived_in = -1, cluster_seen = -1;  // cluster barrier phases: arrived in, waited for
  std::set<std::pair<int64_t, int>> acquired_maps;  // pointer arrays: (group, operand) maps this warp acquired
  int threads() const { return elect_depth > 0 ? 1 : kWarpSize; }
};

// A warp's tcgen05.ld of TMEM lanes [lane0, lane0 + 32) x columns [col0, col0 + cols): a
// tcgen05.mma of another warp may overwrite them only once the read is ordered before it: the
// reading warp's tcgen05.fence::before_thread_sync, then its arrive on an mbarrier whose phase the
// issuing warp saw complete (ld2mma), or a named barrier (or __syncthreads) both passed.
struct TmemRead {
  int warp = 0;
  int64_t lane0 = 0, col0 = 0, cols = 0;
  bool fenced = false;
  int arrived_cta = -1;                          // the CTA of the mbarrier it arrived on
  int64_t arrived_bar = -1, arrived_phase = 0;  // the mbarrier (offset) and phase it arrived in
  int64_t synced_id = -1, synced_generation = 0;  // the named barrier (0: CTA) and generation it met
};

struct NamedBarrier {
  int threads = 0, arrived = 0;
  int64_t generation = 0;
};

struct Cta {
  int64_t x = 0, y = 0, z = 0;
  SharedMemory smem;
  int64_t sync_arrived = 0, sync_generation = 0;
  std::map<int, NamedBarrier> named;
  std::map<int, NamedBarrier> wgmma_issue;  // per warpgroup: wgmma is .sync.aligned over its 4 warps
  // The elected thread's ticket, told to the tile's threads at the barrier: by the barrier's
  // generation the ticket completes, so a warp that runs on to a second ticket does not change
  // what a slower warp learns from the first.
  std::map<std::pair<int64_t, int64_t>, bool> ticket_last;  // by (barrier, generation)
  bool exited = false;
  sim::TensorMemory tmem;
  std::vector<PendingCommit> commits;  // the tcgen05.commits that arrived, with their phases
  std::vector<TmemRead> tmem_reads;    // tcgen05.ld reads a later tcgen05.mma must be ordered after
};

// An input's logical values (rows x cols per matrix, one matrix when broadcast), as the host
// reference reads them.
struct HostMatrices {
  std::vector<float> values;
  int64_t rows = 0, cols = 0, matrices = 1;
  float at(int64_t b, int64_t i, int64_t j) const {
    return values[static_cast<size_t>(((matrices > 1 ? b : 0) * rows + i) * cols + j)];
  }
  std::vector<float> matrix(int64_t b) const {
    if (values.empty()) return {};
    const auto first = values.begin() + (matrices > 1 ? b : 0) * rows * cols;
    return {first, first + rows * cols};
  }
};

class Simulator {
 public:
  // `def`: the problem the launch computes, in the kernel's orientation: the kernel's own
  // definition, or one of other sizes where the kernel reads them at run time.
  Simulator(const Kernel& k, const Definition& def, const SimulateOptions& o, SimulationReport& r)
      : k_(k), p_(k.plan), def_(def), o_(o), r_(r), rng_(o.seed), m_(def.m()), n_(def.n()),
        layouts_(rt::resolve_layouts(k.launch.layouts, def.m(), def.n(), def.k())),
        grid_(rt::launch_grid(k.launch, def.m(), def.n())) {
    make_tensors();
  }

  void run() {
    const auto& g = grid_;
    const auto& cl = k_.launch.cluster;
    for (unsigned z = 0; z < g[2]; z += cl[2])
      for (unsigned y = 0; y < g[1]; y += cl[1])
        for (unsigned x = 0; x < g[0]; x += cl[0]) {
          if (stopped()) return;
          run_cluster(x, y, z);
          ++r_.clusters;
        }
    compare_output();
  }

 private:
  // Masked groups: group b's rows in use (SimulateOptions::group_rows; all of M when not given).
  int64_t group_rows(int64_t b) const {
    if (!p_.masked) return m_;
    return b < static_cast<int64_t>(o_.group_rows.size()) ? o_.group_rows[static_cast<size_t>(b)] : m_;
  }

  // Pointer-array groups: group g's M, N and K (SimulateOptions::group_sizes; the planned sizes when
  // not given), as the kernel reads them from args.group_sizes.
  std::array<int64_t, 3> group_sizes(int64_t g) const {
    const std::array<int64_t, 3> planned = {m_, n_, p_.k};
    std::array<int64_t, 3> s = planned;
    for (size_t d = 0; d < 3; ++d)
      if (size_t(3 * g) + d < o_.group_sizes.size()) s[d] = o_.group_sizes[size_t(3 * g) + d];
    return s;
  }
  // Group g's tensor map of `op`: the launch's map over the batch, each box of it in matrix g
  // and bounded by the group's sizes (the simulator keeps every group's matrix in one batched
  // tensor of the planned sizes; the device has a pointer and a leading dimension per group).
  const rt::TensorMapSpec& group_map(rt::Operand op, int64_t g) {
    const auto key = std::pair<int, int64_t>{static_cast<int>(op), g};
    if (auto it = group_maps_.find(key); it != group_maps_.end()) return it->second;
    rt::TensorMapSpec t = map(op);
    const auto [gm, gn, gk] = group_sizes(g);
    const auto clamp = [](int64_t v, uint64_t most) { return uint64_t(std::clamp<int64_t>(v, 0, int64_t(most))); };
    const int64_t rows = op == rt::Operand::A ? gm : op == rt::Operand::B ? gn : gm;
    const int64_t cols = op == rt::Operand::A || op == rt::Operand::B ? gk : gn;
    t.rows = clamp(t.transposed ? cols : rows, t.rows);
    t.cols = clamp(t.transposed ? rows : cols, t.cols);
    return group_maps_[key] = t;
  }
  // The map a TMA box goes through and the matrix it addresses: a group's (pointer arrays; its
  // maps acquired by this warp first) or the launch's.
  std::pair<const rt::TensorMapSpec*, int64_t> box_map(Warp& w, rt::Operand op, const ExprPtr& group,
                                                       const ExprPtr& batch, const char* what) {
    if (!group) {
      const rt::TensorMapSpec& m = map(op);
      return {&m, map_batch(w, m, batch, what)};
    }
    const int64_t g = eval(w, group);
    if (g < 0 || g >= p_.layouts.batch) {
      error(std::string(what) + " of " + tensor_map_field(op) + " through group " + std::to_string(g) + "'s map, of " +
            std::to_string(p_.layouts.batch) + " groups");
      return {&map(op), 0};
    }
    if (!w.acquired_maps.count({g, static_cast<int>(op)}))
      error(std::string(what) + " of " + tensor_map_field(op) + " through group " + std::to_string(g) +
            "'s map before the warp acquired the group's maps (AcquireGroupMaps: the map builder's writes may not be "
            "visible to the tensor-map proxy)");
    return {&group_map(op, g), g};
  }
  bool exec(Warp& w, Frame&, const AcquireGroupMaps& n) {
    const int64_t g = eval(w, n.group);
    for (rt::Operand op : {rt::Operand::A, rt::Operand::B, rt::Operand::C, rt::Operand::D})
      if (!n.operand || *n.operand == op) w.acquired_maps.insert({g, static_cast<int>(op)});
    return true;
  }

  // Contiguous (variable-K) groups: the batch + 1 offsets of M's rows (of K) the kernel reads
  // (SimulateOptions::group_offsets; split evenly when not given), and each group's span of them.
  std::vector<int64_t> group_offsets() const {
    if (!p_.contiguous && !p_.varlen_k) return {};
    return group_offsets_or_even(o_.group_offsets, p_.layouts.batch, p_.varlen_k ? p_.k : m_);
  }
  // Contiguous groups: the group whose rows of D hold row `i`; -1 for a row in no group.
  std::vector<int64_t> row_groups() const {
    std::vector<int64_t> group(static_cast<size_t>(m_), -1);
    const std::vector<int64_t> offsets = group_offsets();
    for (int64_t g = 0; g < p_.layouts.batch; ++g) {
      const auto [start, end] = group_span(offsets, g, m_);
      for (int64_t i = start; i < end; ++i) group[static_cast<size_t>(i)] = g;
    }
    return group;
  }

  // ---- setup
  void make_tensors() {
    const gg::Node& mm = def_.matmul_node();
    uint64_t seed = o_.seed;
    // The host keeps the logical rows x cols values; the tensor holds them as they lie in
    // memory (transposed for an MN-major operand, rows `leading_dim` apart, poison between).
    // A batch's matrices lie batch_stride apart (one matrix when broadcast, and for a bias).
    auto input = [&](GlobalTensor& t, const gg::Node& n, int64_t rows, int64_t cols) {
      t.elem = runtime_elem(n.dtype);
      const bool transposed = stored_transposed(def_, n), matrix = n.shape.size() == 2;
      const int64_t matrices = stored_matrices(def_, n);
      t.allocate(transposed ? cols : rows, transposed ? rows : cols, matrix ? leading_dim(def_, n) : cols, matrices,
                 matrices > 1 ? batch_stride(def_, n) : 0);
      auto values = rt::small_integer_values(static_cast<size_t>(matrices * rows * cols), seed++);
      for (int64_t b = 0; b < matrices; ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const float v = values[static_cast<size_t>((b * rows + i) * cols + j)];
            transposed ? t.set(j, i, v, b) : t.set(i, j, v, b);
          }
      HostMatrices& h = host_[n.name];
      h = {{}, rows, cols, matrices};
      for (int64_t b = 0; b < matrices; ++b)  // read back: overlapping matrices keep the last value written
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) h.values.push_back(transposed ? t.get(j, i, b) : t.get(i, j, b));
    };
    input(a_, def_.node(mm.operands[0]), m_, p_.k);
    if (mm.operands[1] == mm.operands[0]) b_ = a_;  // D = A * A^T: B is A
    else input(b_, def_.node(mm.operands[1]), n_, p_.k);
    for (int id : def_.epilogue()) {
      const gg::Node& n = def_.node(id);
      if (n.operands.size() < 2) continue;
      const gg::Node& in = def_.node(n.operands[1]);
      if (reads_c(n)) input(c_, in, m_, n_), c_name_ = in.name;
      if (n.kind == OpKind::AddBias) input(bias_, in, 1, n.bias_along == BiasAlong::Rows ? m_ : n_), bias_name_ = in.name;
    }
    make_scales(seed);
    stage_operands();
    d_.elem = runtime_elem(p_.out);
    d_.allocate(layouts_.d_column_major ? n_ : m_, layouts_.d_column_major ? m_ : n_, layouts_.ldd, layouts_.batch,
                layouts_.batch > 1 ? layouts_.stride_d : 0);
    if (p_.epilogue.reduction(EpilogueReduction::Along::Rows))
      row_reduction_.assign(static_cast<size_t>(layouts_.batch * m_), std::nanf(""));
    if (p_.epilogue.reduction(EpilogueReduction::Along::Cols))
      col_reduction_.assign(static_cast<size_t>(layouts_.batch * n_), std::nanf(""));
    if (p_.epilogue.saves()) {
      aux_.elem = d_.elem;
      aux_.allocate(layouts_.d_column_major ? n_ : m_, layouts_.d_column_major ? m_ : n_, layouts_.ldd,
                    layouts_.batch, layouts_.batch > 1 ? layouts_.stride_d : 0);
    }
  }

  // The launch's aligned copies of staged operands (`<kernel>_stage`, before the kernel runs):
  // the caller's rows with their pitch rounded up to whole 32-byte sectors (rt::staged_matrix).
  void stage_operands() {
    for (const rt::TensorMapSpec& t : k_.launch.tensor_maps) {
      if (!t.staged) continue;
      const GlobalTensor& from = t.operand == rt::Operand::A ? a_ : b_;
      GlobalTensor& copy = t.operand == rt::Operand::A ? staged_a_ : staged_b_;
      const rt::StoredMatrix s = rt::staged_matrix(rt::stored_matrix(layouts_, t.operand, m_, n_, p_.k), from.elem);
      copy.elem = from.elem;
      copy.allocate(s.rows, s.cols, s.row_stride, s.batches, s.batch_stride);
      for (int64_t b = 0; b < s.batches; ++b)
        for (int64_t i = 0; i < s.rows; ++i)
          for (int64_t j = 0; j < s.cols; ++j) copy.set(i, j, from.get(i, j, b), b);
    }
  }

  void make_scales(uint64_t seed) {
    const gg::Node& mm = def_.matmul_node();
    const auto powers = [&](size_t count) {
      std::vector<float> v = rt::small_integer_values(count, seed++);
      for (float& x : v) x = std::ldexp(1.0f, int(x));  // 2^-2 .. 2^2
      return v;
    };
    // One matrix of factors per matrix of A and of B (masked groups and batches; contiguous groups
    // share A's), laid out as the kernel reads them.
    const gg::Node* a_scales = def_.scale_of(mm.operands[0]);
    const gg::Node* b_scales = def_.scale_of(mm.operands[1]);
    a_granularity_ = a_scales ? std::optional<ScaleGranularity>(a_scales->granularity) : std::nullopt;
    b_granularity_ = b_scales ? std::optional<ScaleGranularity>(b_scales->granularity) : std::nullopt;
    if (a_scales && a_scales->shape.size() == 2) a_major_ = a_scales->layout;
    if (b_scales && b_scales->shape.size() == 2) b_major_ = b_scales->layout;
    a_scale_matrices_ = rt::stored_matrix(layouts_, rt::Operand::A, m_, n_, p_.k).batches;
    if (p_.fp8.block_scaled) {  // UE8M0 codes in their atoms: 2^-2 .. 2^2
      for (auto [operand, atoms] : {std::pair{rt::Operand::ScaleA, &scale_a_}, {rt::Operand::ScaleB, &scale_b_atoms_}}) {
        const rt::StoredMatrix s = rt::stored_matrix(layouts_, operand, m_, n_, p_.k);
        atoms->elem = rt::ElemType::F32;  // the atoms' words
        atoms->allocate(s.rows, s.cols, s.row_stride, s.batches, s.batch_stride);
        const std::vector<float> v = rt::small_integer_values(atoms->data.size(), seed++);
        for (size_t i = 0; i < atoms->data.size(); ++i) atoms->data[i] = uint8_t(127 + int(v[i]));
      }
      return;
    }
    if (p_.fp8.stages_scale_a()) {  // through the ScaleA tensor map
      const rt::StoredMatrix s = rt::stored_matrix(layouts_, rt::Operand::ScaleA, m_, n_, p_.k);
      scale_a_.elem = rt::ElemType::F32;
      scale_a_.allocate(s.rows, s.cols, s.row_stride, s.batches, s.batch_stride);
      const std::vector<float> v = powers(size_t(s.batches * s.rows * s.cols));
      for (int64_t b = 0; b < s.batches; ++b)
        for (int64_t kb = 0; kb < s.rows; ++kb)
          for (int64_t i = 0; i < s.cols; ++i) scale_a_.set(kb, i, v[size_t((b * s.rows + kb) * s.cols + i)], b);
    } else if (a_granularity_) {  // read from args.scale_a
      a_scale_count_ = scale_factor_count(*a_granularity_, a_major_, m_, p_.k);
      scale_a_vec_ = powers(size_t(a_scale_matrices_ * a_scale_count_));
    }
    b_scale_matrices_ = rt::stored_matrix(layouts_, rt::Operand::B, m_, n_, p_.k).batches;
    if (b_granularity_) b_scale_count_ = scale_factor_count(*b_granularity_, b_major_, n_, p_.k);
    if (b_scales) scale_b_ = powers(size_t(b_scale_matrices_ * b_scale_count_));
  }
  // args.scale_a[index] (factors per tensor or per row) and args.scale_b[index] as the kernel reads them.
  float scale_a_vector(int64_t index) { return read_factor(scale_a_vec_, index, "scale_a", "A's"); }
  float scale_b(int64_t index) { return read_factor(scale_b_, index, "scale_b", "B's"); }
  float read_factor(const std::vector<float>& factors, int64_t index, const char* field, const char* whose) {
    if (index < 0 || index >= int64_t(factors.size())) {
      error("args." + std::string(field) + "[" + std::to_string(index) + "] read, outside " + whose + " " +
            std::to_string(factors.size()) + " scale factors");
      return 0.0f;
    }
    return factors[size_t(index)];
  }
  // The factor of A's row i and B's row j of matrix (or group) b at element kk of K (1 without scales).
  // A UE8M0 factor of row r at element kk of K, from operand `atoms` of matrix b.
  double ue8m0_at(const GlobalTensor& atoms, int64_t rows, int64_t b, int64_t r, int64_t kk) const {
    const int64_t at = scale_factor_index(ScaleGranularity::Block1x128, Layout::KMajor, rows, p_.k, r, kk, ScaleFormat::Ue8m0);
    return double(ue8m0_value(atoms.data[size_t((atoms.batches > 1 ? b : 0) * atoms.batch_stride * 4 + at)]));
  }
  double scale_a_at(int64_t b, int64_t i, int64_t kk) const {
    if (p_.fp8.block_scaled) return ue8m0_at(scale_a_, m_, b, i, kk);
    const int64_t matrix = a_scale_matrices_ > 1 ? b : 0;
    if (scale_a_.rows) return double(scale_a_.get(kk / kScaleBlock, i, scale_a_.batches > 1 ? b : 0));
    if (!a_granularity_) return 1.0;
    return scale_a_vec_[size_t(matrix * a_scale_count_ + scale_factor_index(*a_granularity_, a_major_, m_, p_.k, i, kk))];
  }
  double scale_b_at(int64_t b, int64_t j, int64_t kk) const {
    if (p_.fp8.block_scaled) return ue8m0_at(scale_b_atoms_, n_, b, j, kk);
    if (scale_b_.empty()) return 1.0;
    const int64_t matrix = b_scale_matrices_ > 1 ? b : 0;
    return double(scale_b_[size_t(matrix * b_scale_count_ + scale_factor_index(*b_granularity_, b_major_, n_, p_.k, j, kk))]);
  }

  // The launch's tensor maps, with the extents a kernel that reads sizes at run time leaves to the
  // launch filled in for this problem (as rt::resolve_tensor_map_spec does).
  const rt::TensorMapSpec& map(rt::Operand op) {
    if (maps_.empty())
      for (rt::TensorMapSpec t : k_.launch.tensor_maps) {
        if (t.rows == 0 && t.cols == 0) {
          const rt::StoredMatrix stored = rt::stored_matrix(layouts_, t.operand, m_, n_, p_.k);
          t.rows = static_cast<uint64_t>(stored.rows);
          t.cols = static_cast<uint64_t>(stored.cols);
          t.row_stride = static_cast<uint64_t>(stored.row_stride);
          t.batches = static_cast<uint64_t>(stored.batches);
          t.batch_stride = static_cast<uint64_t>(stored.batch_stride);
          if (t.staged) {  // the map reads the aligned copy
            const rt::StoredMatrix copy = rt::staged_matrix(stored, t.elem);
            t.row_stride = static_cast<uint64_t>(copy.row_stride);
            t.batch_stride = static_cast<uint64_t>(copy.batch_stride);
          }
        }
        maps_.push_back(t);
      }
    for (const auto& t : maps_)
      if (t.operand == op) return t;
    GG_INTERNAL_CHECK(false, "the kernel uses tensor map " + tensor_map_field(op) + " but the launch encodes none");
  }
  GlobalTensor& tensor(rt::Operand op) {
    switch (op) {
      case rt::Operand::A: return staged_a_.rows ? staged_a_ : a_;
      case rt::Operand::B: return staged_b_.rows ? staged_b_ : b_;
      case rt::Operand::C: return c_;
      case rt::Operand::D: return d_;
      case rt::Operand::ScaleA: return scale_a_;
      case rt::Operand::ScaleB: return scale_b_atoms_;
      case rt::Operand::Aux: return aux_;
    }
    return d_;
  }

  const SmemBuffer& buffer(const std::string& name) {
    for (const auto& b : p_.smem)
      if (b.name == name) return b;
    GG_INTERNAL_CHECK(false, "no shared-memory buffer '" + name + "' in the plan");
  }

  // ---- one cluster of CTAs, its warps interleaved
  void run_cluster(unsigned x0, unsigned y0, unsigned z0) {
    const auto& cl = k_.launch.cluster;
    const std::vector<int64_t> offsets = group_offsets();  // the kernel's args.group_offsets
    ctas_.clear();
    warps_.clear();
    loads_.clear();
    stores_.clear();
    mmas_.clear();
    commits_.clear();
    const int warps_per_cta = static_cast<int>(k_.launch.block[0]) / kWarpSize;
    warps_per_cta_ = warps_per_cta;
    for (unsigned z = 0; z < cl[2]; ++z)
      for (unsigned y = 0; y < cl[1]; ++y)
        for (unsigned x = 0; x < cl[0]; ++x) {
          Cta c;
          c.x = x0 + x;
          c.y = y0 + y;
          c.z = z0 + z;
          c.smem = SharedMemory(p_.smem_bytes);
          ctas_.push_back(std::move(c));
          for (int w = 0; w < warps_per_cta; ++w) {
            Warp warp;
            warp.cta = static_cast<int>(ctas_.size()) - 1;
            warp.index = w;
            warp.vars = {{"blockIdx.x", c.x}, {"blockIdx.y", c.y}, {"blockIdx.z", c.z},
                         {"gridDim.x", grid_[0]}, {"gridDim.y", grid_[1]},
                         {"gridDim.z", grid_[2]}, {"warpgroup", w / kWarpsPerWarpgroup}, {"warp", w},
                         {"args.m", m_}, {"args.n", n_}, {"args.k", p_.k},
                         {"args.lda", layouts_.lda}, {"args.ldb", layouts_.ldb},
                         {"args.ldc", layouts_.ldc}, {"args.ldd", layouts_.ldd},
                         {"args.stride_a", layouts_.stride_a}, {"args.stride_b", layouts_.stride_b},
                         {"args.stride_c", layouts_.stride_c}, {"args.stride_d", layouts_.stride_d}};
            for (int64_t b = 0; p_.masked && b < p_.layouts.batch; ++b)
              warp.vars[kir::element_name("args.group_rows", b)] = group_rows(b);
            for (size_t g = 0; g < offsets.size(); ++g)
              warp.vars[kir::element_name("args.group_offsets", int64_t(g))] = offsets[g];
            for (int64_t g = 0; p_.pointer_array && g < p_.layouts.batch; ++g)
              for (int64_t d = 0; d < 3; ++d)
                warp.vars[kir::element_name("args.group_sizes", 3 * g + d)] = group_sizes(g)[size_t(d)];
            warp.stack.push_back({k_.body.get()});
            warps_.push_back(std::move(warp));
          }
        }
    r_.ctas += static_cast<int64_t>(ctas_.size());
    r_.warps += static_cast<int64_t>(warps_.size());
    schedule();
    for (auto& c : ctas_) c.exited = true;
    if (!loads_.empty()) error("a TMA load is still in flight when its CTA exits: " + loads_.front().what);
    if (!mmas_.empty()) error("a tcgen05.mma is still in flight when its CTA exits: " + mmas_.front().what);
    for (const auto& c : ctas_)
      if (c.tmem.allocated && !c.tmem.freed) {
        error("CTA (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) +
              ") exits without freeing its " + std::to_string(c.tmem.columns) + " TMEM columns (tcgen05.dealloc)");
        break;
      }
    for (const auto& c : ctas_)
      for (const auto& r : c.smem.readers)
        if (r.what == "a TMA store") {
          error("CTA (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) +
                ") exits while a TMA store may still read its shared memory (no bulk wait before exit)");
          break;
        }
    while (!stores_.empty()) finish_store(0);
  }

  void schedule() {
    std::vector<size_t> live, lead;
    int64_t stalled = 0;
    while (!stopped()) {
      live.clear();
      for (size_t i = 0; i < warps_.size(); ++i)
        if (!warps_[i].done) live.push_back(i);
      if (live.empty()) return;
      // Copies land at random moments, so a consumer that forgets to wait reads stale bytes.
      if (async_pending() && rng_() % 3 == 0) land_random_copy();
      size_t pick = live[rng_() % live.size()];
      if (o_.lead_cta >= 0 && rng_() % 8 != 0) {
        lead.clear();
        for (size_t i : live)
          if (warps_[i].cta == o_.lead_cta) lead.push_back(i);
        if (!lead.empty()) pick = lead[rng_() % lead.size()];
      }
      Warp& w = warps_[pick];
      bool progressed = false;
      for (uint64_t s = 0, n = 1 + rng_() % 24; s < n && !w.done && !stopped(); ++s) {
        if (!step(w)) break;
        progressed = true;
      }
      stalled = progressed ? 0 : stalled + 1;
      if (stalled > int64_t(4 * live.size()) && !sweep(live)) return;
    }
  }

  // Every live warp tries once; copies land when no warp can move. False: deadlock.
  bool sweep(const std::vector<size_t>& live) {
    for (size_t i : live)
      if (step(warps_[i])) return true;
    if (async_pending()) {
      land_random_copy();
      return true;
    }
    std::string report = "deadlock: every warp is blocked";
    for (size_t i : live) {
      const Warp& w = warps_[i];
      const Cta& c = ctas_[static_cast<size_t>(w.cta)];
      report += "\n  CTA (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) +
                ") warp " + std::to_string(w.index) + " (role " + w.role + "): " + w.blocked;
    }
    error(report);
    return false;
  }

  // Asynchronous work in flight: TMA loads and stores, tcgen05.mma (completing in issue order) and
  // the commits waiting for them.
  bool async_pending() const { return !loads_.empty() || !stores_.empty() || !mmas_.empty() || !commits_.empty(); }
  void land_random_copy() {
    const size_t mma = mmas_.empty() ? 0 : 1;
    std::vector<size_t> ready_commits;
    for (size_t i = 0; i < commits_.size(); ++i)
      if (commit_ready(commits_[i])) ready_commits.push_back(i);
    const size_t total = loads_.size() + stores_.size() + mma + ready_commits.size();
    GG_INTERNAL_CHECK(total > 0, "asynchronous work that can never complete");
    size_t pick = static_cast<size_t>(rng_() % total);
    if (pick < loads_.size()) return land_load(pick);
    pick -= loads_.size();
    if (pick < stores_.size()) return finish_store(pick);
    pick -= stores_.size();
    if (pick < mma) return complete_mma();
    fire_commit(ready_commits[pick - mma]);
  }

  // ---- stepping through statements
  void push(Warp& w, const kir::Node* n) { w.stack.push_back(Frame{n}); }
  void pop(Warp& w) {
    const Frame& f = w.stack.back();
    if (f.elected) --w.elect_depth;
    if (f.node->kind == NodeKind::WarpRole) w.role = "(after the role branch)";
    w.stack.pop_back();
    if (w.stack.empty()) {
      w.done = true;
      check_cta_exit(w.cta);
    }
  }
  int64_t eval(const Warp& w, const ExprPtr& e) {
    try {
      return evaluate(e, w.vars);
    } catch (const kir::UnboundElement& element) {
      error("warp " + std::to_string(w.index) + " reads " + element.what() + ", past the end of the device array");
      return 0;
    }
  }
  // Where element row `row` (the box's row coordinate plus the row within it) of a TMA box with
  // third coordinate `third` lies in map `m`'s matrices: `inside` the map (else TMA clips it: zero
  // fill, no store), the matrix row and the matrix. A row-limited map's dimension 1 (box_rows
  // long) clips the rows past those kept and its dimension 2 offsets them, over a base box_rows
  // rows before the matrix: an element inside it can still lie outside the matrix
  // (`outside_matrix`: memory the hardware would touch, the caller's error).
  struct MapElement {
    bool inside = false, outside_matrix = false;
    int64_t row = 0, matrix = 0;
  };
  static MapElement map_element(const rt::TensorMapSpec& m, int64_t row, int64_t third) {
    if (!m.row_limited) return {row >= 0 && row < int64_t(m.rows), false, row, third};
    const int64_t box = int64_t(m.box_rows);
    MapElement e{row >= 0 && row < box && third >= 0 && third < int64_t(m.rows) + box, false, row + third - box, 0};
    e.outside_matrix = e.inside && (e.row < 0 || e.row >= int64_t(m.rows));
    e.inside = e.inside && !e.outside_matrix;
    return e;
  }
  // The matrix a TMA box of map `m` addresses: its third coordinate, 0 for a 2-D map.
  int64_t map_batch(const Warp& w, const rt::TensorMapSpec& m, const ExprPtr& batch, const char* what) {
    if (!batch) return 0;
    if (m.row_limited) return eval(w, batch);  // the row offset of a row-limited map (finish_store)
    const int64_t b = eval(w, batch);
    if (m.batches < 2 || b < 0 || b >= int64_t(m.batches)) {
      error(std::string(what) + " of " + tensor_map_field(m.operand) + " addresses matrix " + std::to_string(b) +
            " of a tensor map over " + std::to_string(m.batches) + " matrices");
      return 0;
    }
    return b;
  }
  // If, ElectOne and WarpRole run at most one child: entered once, left when it returns.
  bool enter(Warp& w, Frame& f, const kir::Node* child) {
    f.entered = true;  // before push: the frame reference does not survive it
    if (child) push(w, child);
    else pop(w);
    return true;
  }
  bool leave(Warp& w) {
    pop(w);
    return true;
  }

  // One statement (or one entry/exit of a compound one). False when the warp is blocked.
  bool step(Warp& w) {
    ++r_.steps;
    if (r_.steps > o_.max_steps) {
      error("gave up after " + std::to_string(o_.max_steps) + " steps (a livelock, or raise max_steps)");
      return false;
    }
    Frame& f = w.stack.back();
    const kir::Node* n = f.node;
    switch (n->kind) {
      case NodeKind::Block: {
        const auto& body = static_cast<const Block*>(n)->body;
        if (f.index < body.size()) push(w, body[f.index++].get());
        else pop(w);
        return true;
      }
      case NodeKind::For: {
        const auto& loop = *static_cast<const For*>(n);
        if (!f.entered) {
          f.entered = true;
          f.value = eval(w, own_begin(loop));  // a dealt loop: this warpgroup's turns
          f.end = eval(w, loop.end);
          f.step = eval(w, own_step(loop));
          GG_INTERNAL_CHECK(f.step > 0, "a loop with a step below one");
        } else {
          f.value += f.step;
        }
        if (f.value < f.end) w.vars[loop.var] = f.value;
        if (f.value < f.end && (!loop.while_cond || eval(w, loop.while_cond))) {
          push(w, loop.body.get());
        } else {
          pop(w);
        }
        return true;
      }
      case NodeKind::If: {
        if (f.entered) return leave(w);
        const auto& i = *static_cast<const If*>(n);
        return enter(w, f, eval(w, i.cond) ? i.then_body.get() : i.else_body.get());
      }
      case NodeKind::ElectOne: {
        if (f.entered) return leave(w);
        const auto& e = *static_cast<const ElectOne*>(n);
        if (!e.each_warp && w.index != eval(w, e.warp)) return enter(w, f, nullptr);
        f.elected = true;
        ++w.elect_depth;
        return enter(w, f, e.body.get());
      }
      case NodeKind::WarpRole: {
        if (f.entered) return leave(w);
        const auto& role = *static_cast<const WarpRole*>(n);
        const int wg = w.index / kWarpsPerWarpgroup;
        if (wg < role.first_warpgroup || wg >= role.first_warpgroup + role.warpgroups) return enter(w, f, nullptr);
        w.role = role.role;
        return enter(w, f, role.body.get());
      }
      default:
        if (!leaf(w, f)) return false;
        pop(w);
        return true;
    }
  }

  bool leaf(Warp& w, Frame& f) {
    switch (f.node->kind) {
#define GG_SIM_LEAF(N) \
  case NodeKind::N: return exec(w, f, static_cast<const N&>(*f.node));
      GG_KIR_LEAF_NODES(GG_SIM_LEAF)
#undef GG_SIM_LEAF
      default: GG_INTERNAL_CHECK(false, "not a leaf");
    }
  }

  // ---- leaves
  bool abstract(const kir::Node& n) {
    error(std::string("abstract node ") + node_kind_name(n.kind) + " left in the lowered kernel");
    return true;
  }
  bool exec(Warp&, Frame&, const LoadTile& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const AcquireStage& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const ComputeTile& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const FinishCompute& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const AcquireAccumulator& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const ReleaseStage& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const WriteTile& n) { return abstract(n); }
  bool exec(Warp&, Frame&, const Comment&) { return true; }
  bool exec(Warp& w, Frame&, const Let& n) {
    w.vars[n.name] = eval(w, n.value);
    return true;
  }
  bool exec(Warp& w, Frame&, const Assign& n) {
    GG_INTERNAL_CHECK(w.vars.count(n.name), "assignment to '" + n.name + "', which no let declared");
    w.vars[n.name] = eval(w, n.value);
    return true;
  }
  bool exec(Warp&, Frame&, const SetMaxNReg&) { return true; }

  // CTA-wide and cluster-wide barriers: a warp arrives once, then waits for the generation.
  bool exec(Warp& w, Frame& f, const SyncThreads&) {
    Cta& c = ctas_[static_cast<size_t>(w.cta)];
    if (w.elect_depth > 0) error("__syncthreads inside an elected-thread block (a hang on hardware)");
    if (!f.entered) {
      f.entered = true;
      f.generation = c.sync_generation;
      ++c.sync_arrived;
      hand_over_tmem_reads(w, [&](TmemRead& r) { r.synced_id = 0, r.synced_generation = f.generation; });  // this CTA's
    }
    if (c.sync_generation == f.generation && c.sync_arrived >= live_warps(w.cta)) {
      ++c.sync_generation;
      c.sync_arrived = 0;
      publish(c);
    }
    w.blocked = "__syncthreads (" + std::to_string(c.sync_arrived) + " warps arrived)";
    if (c.sync_generation == f.generation) return false;
    w.passed[0] = std::max(w.passed[0], f.generation + 1);
    return true;
  }
  // barrier.cluster: arrive (once per phase) and wait, or one of the two. A phase completes when
  // every live warp of the cluster arrived; a warp's wait returns once its arrival's phase did.
  bool exec(Warp& w, Frame& f, const ClusterSync& c) {
    if (c.part != kir::ClusterPart::Wait && !f.entered) {
      f.entered = true;
      if (w.cluster_arrived_in == cluster_generation_)
        error("barrier.cluster.arrive twice in one phase (no wait between): warp " + std::to_string(w.index) +
              " of CTA rank " + std::to_string(w.cta));
      w.cluster_arrived_in = cluster_generation_;
      ++cluster_arrived_;
    }
    int64_t live = 0;
    for (const auto& x : warps_) live += !x.done;
    if (cluster_arrived_ >= live) {
      for (auto& cta : ctas_) publish(cta, cluster_generation_);
      ++cluster_generation_;
      cluster_arrived_ = 0;
    }
    if (c.part == kir::ClusterPart::Arrive) return true;
    if (w.cluster_arrived_in < 0) {
      error("barrier.cluster.wait without an arrive before it: warp " + std::to_string(w.index) + " of CTA rank " +
            std::to_string(w.cta));
      return true;
    }
    w.blocked = "cluster barrier (" + std::to_string(cluster_arrived_) + " of " + std::to_string(live) + " warps)";
    if (cluster_generation_ <= w.cluster_arrived_in) return false;
    w.cluster_seen = w.cluster_arrived_in;
    return true;
  }
  // A named barrier's phase completes when its thread count has arrived: bar.sync arrives and
  // waits for that, bar.arrive only arrives.
  NamedBarrier& named_arrive(Warp& w, const ExprPtr& id_expr, int threads, const char* op) {
    const int64_t id = eval(w, id_expr);
    if (id <= 0 || id >= 16)
      error(std::string(op) + " on named barrier " + std::to_string(id) + " (ids 1..15; 0 is __syncthreads)");
    NamedBarrier& b = ctas_[static_cast<size_t>(w.cta)].named[static_cast<int>(id)];
    if (b.threads != 0 && b.threads != threads)
      error("named barrier " + std::to_string(id) + " used with " + std::to_string(threads) + " threads and with " +
            std::to_string(b.threads));
    b.threads = threads;
    b.arrived += w.threads();
    if (b.arrived >= b.threads) {
      if (b.arrived > b.threads) error("named barrier " + std::to_string(id) + ": more threads arrived than its count");
      ++b.generation;
      b.arrived = 0;
    }
    return b;
  }
  // A warp's bar.sync (`op` bar.red.or for a ticket) on named barrier `id`: it arrives on its first
  // call, then each call says whether the barrier's phase completed; `what` names the wait (before
  // the barrier's id) in a deadlock report.
  bool named_wait(Warp& w, Frame& f, const ExprPtr& id, int threads, const char* op, const std::string& what) {
    Cta& cta = ctas_[static_cast<size_t>(w.cta)];
    if (!f.entered) {
      f.entered = true;
      f.generation = cta.named[static_cast<int>(eval(w, id))].generation;
      f.value = eval(w, id);
      named_arrive(w, id, threads, op);
    }
    const NamedBarrier& b = cta.named[static_cast<int>(f.value)];
    w.blocked = what + " " + std::to_string(f.value) + " (" + std::to_string(b.arrived) + " of " +
                std::to_string(b.threads) + " threads arrived)";
    return b.generation != f.generation;
  }
  bool exec(Warp& w, Frame& f, const NamedBarrierSync& n) {
    const bool arriving = !f.entered;
    if (!named_wait(w, f, n.id, n.threads, "bar.sync", "named barrier")) {
      if (arriving) hand_over_tmem_reads(w, [&](TmemRead& r) { r.synced_id = f.value, r.synced_generation = f.generation; });
      return false;
    }
    if (arriving) hand_over_tmem_reads(w, [&](TmemRead& r) { r.synced_id = f.value, r.synced_generation = f.generation; });
    w.passed[f.value] = std::max(w.passed[f.value], f.generation + 1);
    return true;
  }
  bool exec(Warp& w, Frame&, const NamedBarrierArrive& n) {
    named_arrive(w, n.id, n.threads, "bar.arrive");
    return true;
  }

  // ---- mbarriers
  // A CTA-wide barrier after fence.mbarrier_init makes the initialized barriers usable by
  // every warp (and, a cluster barrier, by the peers).
  // `cluster_phase`: the cluster barrier's phase that publishes (-1: a CTA barrier).
  static void publish(Cta& c, int64_t cluster_phase = -1) {
    for (auto& [offset, b] : c.smem.barriers)
      if (b.initialized && b.fenced && !b.published) {
        b.published = true;
        b.published_in = cluster_phase;
      }
  }
  // The thread that initialized a barrier may use it at once; any other only after a barrier
  // ordered the init before it (a cluster barrier's: after this warp waited there).
  void check_published(const Warp& w, int cta, const Mbarrier& b, const std::string& name, const char* op) {
    if (!b.initialized || (cta == w.cta && w.index == b.init_warp)) return;
    if (!b.published)
      error(std::string(op) + " on " + name + " before a barrier published its initialization (init, "
            "fence.mbarrier_init, then __syncthreads or the cluster barrier)");
    else if (b.published_in >= 0 && w.cluster_seen < b.published_in)
      error(std::string(op) + " on " + name + " of CTA rank " + std::to_string(cta) + " by warp " +
            std::to_string(w.index) + " of CTA rank " + std::to_string(w.cta) +
            " before that warp waited at the cluster barrier that published its initialization (barrier.cluster.wait)");
  }
  int64_t barrier_offset(const Warp& w, const BarrierRef& ref) {
    const SmemBuffer& b = buffer(kir::barrier_name(ref.array));
    int64_t index = eval(w, ref.index);
    if (index < 0 || 8 * index >= b.bytes)
      error("mbarrier " + kir::barrier_name(ref.array) + "[" + std::to_string(index) + "] lies outside its array of " +
            std::to_string(b.bytes / 8));
    return b.offset + 8 * index;
  }
  Mbarrier& barrier(int cta, int64_t offset) { return ctas_[static_cast<size_t>(cta)].smem.barriers[offset]; }
  std::string barrier_name(const Warp& w, const BarrierRef& ref) { return kir::barrier_name(ref.array) + "[" + std::to_string(eval(w, ref.index)) + "]"; }

  Mbarrier& initialized(const Warp& w, int cta, const BarrierRef& ref, const char* op) {
    Mbarrier& b = barrier(cta, barrier_offset(w, ref));
    if (!b.initialized) error(std::string(op) + " on " + barrier_name(w, ref) + " before it was initialized");
    check_published(w, cta, b, barrier_name(w, ref), op);
    return b;
  }

  bool exec(Warp& w, Frame&, const MbarrierInit& n) {
    Mbarrier& b = barrier(w.cta, barrier_offset(w, n.bar));
    b = Mbarrier{};
    b.initialized = true;
    b.init_warp = w.index;
    b.count = b.pending = n.arrivals;
    return true;
  }
  bool exec(Warp& w, Frame&, const FenceMbarrierInit&) {
    for (auto& [offset, b] : ctas_[static_cast<size_t>(w.cta)].smem.barriers) b.fenced = true;
    return true;
  }
  bool exec(Warp& w, Frame&, const MbarrierArriveExpectTx& n) {
    Mbarrier& b = initialized(w, w.cta, n.bar, "arrive.expect_tx");
    const int64_t bytes = n.leader_only && w.cta % 2 == 1 ? 0 : n.bytes;  // a pair's odd CTA announces none
    for (int t = 0; t < w.threads(); ++t) {
      b.tx += bytes;
      b.arrive();
    }
    return true;
  }
  bool exec(Warp& w, Frame&, const MbarrierArrive& n) {
    int cta = w.cta;
    if (n.cta) {
      int64_t rank = eval(w, n.cta);
      if (rank < 0 || rank >= int64_t(ctas_.size())) {
        error("arrive on " + barrier_name(w, n.bar) + " of cluster rank " + std::to_string(rank) + ", outside the cluster");
        return true;
      }
      cta = static_cast<int>(rank);
      if (ctas_[static_cast<size_t>(cta)].exited)
        error("arrive on " + barrier_name(w, n.bar) + " of CTA rank " + std::to_string(rank) + " after it exited");
    }
    Mbarrier& b = initialized(w, cta, n.bar, "arrive");
    if (cta != w.cta && !b.fenced) error("remote arrive on " + barrier_name(w, n.bar) + " before its init was fenced");
    {
      const int64_t offset = barrier_offset(w, n.bar), phase = b.phase;
      hand_over_tmem_reads(w, [&](TmemRead& r) { r.arrived_cta = cta, r.arrived_bar = offset, r.arrived_phase = phase; });
    }
    for (int t = 0; t < w.threads(); ++t) b.arrive();
    return true;
  }
  bool exec(Warp& w, Frame& f, const MbarrierWait& n) {
    Mbarrier& b = initialized(w, w.cta, n.bar, "wait");
    int64_t parity = eval(w, n.parity);
    if (!f.entered) {
      f.entered = true;
      ++r_.barrier_waits;
    }
    if (b.phase % 2 != parity) {
      w.seen_phases[barrier_offset(w, n.bar)] = b.phase;  // phases 0 .. phase - 1 have completed
      return true;
    }
    w.blocked = "waits on " + barrier_name(w, n.bar) + " for parity " + std::to_string(parity) + "; it is " + b.describe();
    return false;
  }

  // ---- shared memory accesses
  // The absolute offset of `ref`; its access covers `bytes` from `ref` rounded down to `align`
  // (a wgmma descriptor points into the middle of its first row) and must stay in the buffer.
  int64_t smem_offset(const Warp& w, const SmemRef& ref, int64_t bytes, const char* what, int64_t align = 1) {
    const SmemBuffer& b = buffer(buffer_name(ref.buffer));
    int64_t off = eval(w, ref.offset), lo = off - off % align;
    if (lo < 0 || lo + bytes > b.bytes)
      error(std::string(what) + " touches bytes [" + std::to_string(lo) + ", " + std::to_string(lo + bytes) + ") of " +
            buffer_name(ref.buffer) + ", which holds " + std::to_string(b.bytes));
    return b.offset + off;
  }
  // A write through the generic proxy (st.shared): the async proxy may not read it unfenced.
  void generic_write(Warp& w, int64_t at, const uint8_t* data, int64_t n, const char* what) {
    SharedMemory& s = ctas_[static_cast<size_t>(w.cta)].smem;
    if (const AsyncRead* r = s.reader_of(at, at + n))
      error(std::string(what) + " overwrites shared bytes at " + std::to_string(at) + " that " + r->what +
            " of warp " + std::to_string(r->warp) + " still reads");
    for (int64_t i = 0; i < n; ++i) {
      auto u = static_cast<size_t>(at + i);
      if (s.pending_fill[u]) error(std::string(what) + " writes shared byte " + std::to_string(at + i) + " that a TMA load in flight will overwrite");
      s.bytes[u] = data[i];
      s.unfenced_by[u] = static_cast<int16_t>(w.index + 1);
    }
    w.unfenced.push_back({at, at + n});
  }
  void async_read_check(int cta, int64_t lo, int64_t hi, const std::string& what, const Warp* reader = nullptr) {
    SharedMemory& s = ctas_[static_cast<size_t>(cta)].smem;
    for (int64_t i = lo; i < hi; ++i) {
      auto u = static_cast<size_t>(i);
      if (s.pending_fill[u]) {
        error(what + " reads shared byte " + std::to_string(i) + " before the TMA load filling it landed (a read of a "
              "stage whose fill has not completed)");
        return;
      }
      if (reader && s.filled_by[u] >= 0) {
        auto seen = reader->seen_phases.find(s.filled_by[u]);
        if (seen == reader->seen_phases.end() || seen->second <= s.filled_in_phase[u]) {
          error(what + " reads shared byte " + std::to_string(i) + " filled by TMA in phase " +
                std::to_string(s.filled_in_phase[u]) + " of the mbarrier at " + std::to_string(s.filled_by[u]) +
                " without waiting for that phase (a read of a stage whose fill it has not acquired)");
          return;
        }
      }
      if (s.unfenced_by[u]) {
        error(what + " reads shared byte " + std::to_string(i) + " written by warp " + std::to_string(s.unfenced_by[u] - 1) +
              " through the generic proxy without fence.proxy.async");
        return;
      }
    }
  }
  bool exec(Warp& w, Frame&, const FenceProxyAsync&) {
    SharedMemory& s = ctas_[static_cast<size_t>(w.cta)].smem;
    for (auto [lo, hi] : w.unfenced)
      for (int64_t i = lo; i < hi; ++i)
        if (s.unfenced_by[static_cast<size_t>(i)] == w.index + 1) s.unfenced_by[static_cast<size_t>(i)] = 0;
    w.unfenced.clear();
    return true;
  }

  // ---- TMA
  bool exec(Warp& w, Frame&, const TmaLoad& n) {
    const auto [map_of_box, batch] = box_map(w, n.map, n.group, n.batch, "TMA load");
    const rt::TensorMapSpec& m = *map_of_box;
    GlobalTensor& g = tensor(m.operand);
    const int eb = rt::elem_bytes(m.elem), sb = sim::swizzle_bytes_of(m.swizzle);
    const int64_t row = eval(w, n.row), col = eval(w, n.col), row_bytes = int64_t(m.box_cols) * eb;
    const int64_t box_bytes = int64_t(m.box_rows) * row_bytes;
    const int64_t bar = barrier_offset(w, n.bar);
    // Measured on an H100 (a contiguous group's FP8 factors from an unaligned row): a box whose
    // first column is not 16-byte aligned is an illegal instruction.
    if ((col * eb) % 16 != 0)
      error("a TMA load of " + tensor_map_field(n.map) + " at column " + std::to_string(col) + " (" +
            std::to_string(col * eb) + " bytes into its row): a box's first column must be 16-byte aligned");
    // cuTensorMapEncodeTiled refuses a row pitch that is not a 16-byte multiple (K odd, K-major).
    if (g.ld * eb % 16 != 0)
      error("a TMA load of " + tensor_map_field(n.map) + " over rows " + std::to_string(g.ld) + " elements (" +
            std::to_string(g.ld * eb) + " bytes) apart: a tensor map's rows must lie a 16-byte multiple apart");
    std::vector<int> targets;
    if (n.to_pair_leader && w.cta % 2 == 1 && w.cta - 1 >= int(ctas_.size()))
      error("a CTA pair's TMA load in CTA rank " + std::to_string(w.cta) + " without its pair");
    // A CTA pair's load completes on the pair leader's barrier at the same offset.
    const int bar_cta = n.to_pair_leader ? w.cta - w.cta % 2 : -1;
    const int64_t shift = n.multicast_shift ? eval(w, n.multicast_shift) : 0;
    if (shift < 0 || shift >= 16) error("TMA multicast mask shifted by " + std::to_string(shift) + " bits");
    const unsigned mask = (n.multicast_mask << shift) & 0xffffu;
    if (n.multicast_mask == 0) targets.push_back(w.cta);
    for (int r = 0; r < 16; ++r)
      if (mask & (1u << r)) {
        if (r >= int(ctas_.size())) error("TMA multicast mask names CTA rank " + std::to_string(r) + " outside the cluster");
        else targets.push_back(r);
      }
    for (int t = 0; t < w.threads(); ++t)
      for (int cta : targets) {
        int64_t dst = smem_offset(w, n.dst, box_bytes, "TMA load");
        if (dst % 128 != 0)
          error("a TMA load of " + tensor_map_field(n.map) + " into shared byte " + std::to_string(dst) +
                ": a box's shared-memory destination must be 128-byte aligned");
        const int completes = bar_cta >= 0 ? bar_cta : cta;
        if (!barrier(completes, bar).initialized) error("TMA load completes on " + barrier_name(w, n.bar) + " before it was initialized");
        check_published(w, completes, barrier(completes, bar), barrier_name(w, n.bar), "TMA load");
        PendingLoad load;
        load.id = ++load_ids_;
        load.cta = cta;
        load.bar_cta = completes;
        load.barrier = bar;
        load.bytes = box_bytes;
        load.what = tensor_map_field(n.map) + " box at (" + std::to_string(row) + ", " + std::to_string(col) +
                    (n.batch || n.group ? ", matrix " + std::to_string(batch) : "") + ")";
        SharedMemory& s = ctas_[static_cast<size_t>(cta)].smem;
        for (int64_t i = 0; i < m.box_rows; ++i)
          for (int64_t j = 0; j < m.box_cols; ++j) {
            uint8_t elem[4] = {0, 0, 0, 0};  // out of bounds (TMA coordinates are signed): zero fill
            const MapElement at_row = map_element(m, row + i, batch);
            if (at_row.outside_matrix)
              error("a row-limited TMA load of " + tensor_map_field(n.map) + " reads row " +
                    std::to_string(at_row.row) + ", outside the matrix's " + std::to_string(m.rows) + " rows");
            if (at_row.inside && col + j >= 0 && col + j < int64_t(m.cols))
              std::memcpy(elem, g.data.data() + g.offset(at_row.row, col + j, at_row.matrix), static_cast<size_t>(eb));
            for (int e = 0; e < eb; ++e) {
              int64_t at = sim::swizzled(dst + i * row_bytes + j * eb + e, sb);
              if (at < 0 || at >= int64_t(s.bytes.size())) continue;
              load.writes.push_back({at, elem[e]});
              s.pending_fill[static_cast<size_t>(at)] = load.id;
            }
          }
        loads_.push_back(std::move(load));
        ++r_.tma_loads;
      }
    return true;
  }
  void land_load(size_t i) {
    PendingLoad load = std::move(loads_[i]);
    loads_.erase(loads_.begin() + static_cast<std::ptrdiff_t>(i));
    SharedMemory& s = ctas_[static_cast<size_t>(load.cta)].smem;
    int64_t lo = load.writes.empty() ? 0 : load.writes.front().first, hi = lo;
    for (auto [at, v] : load.writes) {
      lo = std::min(lo, at);
      hi = std::max(hi, at + 1);
    }
    if (const AsyncRead* r = s.reader_of(lo, hi))
      error("TMA load " + load.what + " lands on shared bytes that " + r->what + " of warp " + std::to_string(r->warp) +
            " still reads (a stage refilled before its readers released it)");
    Mbarrier& completes = ctas_[static_cast<size_t>(load.bar_cta)].smem.barriers[load.barrier];
    const int64_t phase = completes.phase;
    for (auto [at, v] : load.writes) {
      auto u = static_cast<size_t>(at);
      s.bytes[u] = v;
      if (s.pending_fill[u] == load.id) s.pending_fill[u] = 0;
      s.filled_by[u] = load.barrier;
      s.filled_in_phase[u] = phase;
    }
    completes.complete_tx(load.bytes);
  }

  bool exec(Warp& w, Frame&, const TmaStore& n) {
    const auto [map_of_box, batch] = box_map(w, n.map, n.group, n.batch, "TMA store");
    const rt::TensorMapSpec& m = *map_of_box;
    // Measured on an H100: a store through a map whose rows end mid 16-byte piece writes the whole
    // piece, past the map's columns (which this model's clipping would hide).
    if ((int64_t(m.cols) * rt::elem_bytes(m.elem)) % 16 != 0)
      error("a TMA store of " + tensor_map_field(n.map) + " through a map of " + std::to_string(m.cols) +
            " columns, rows of " + std::to_string(int64_t(m.cols) * rt::elem_bytes(m.elem)) +
            " bytes: the hardware writes a row's last 16-byte piece whole, past the map's columns");
    const int64_t box_bytes = int64_t(m.box_rows) * m.box_cols * rt::elem_bytes(m.elem);
    for (int t = 0; t < w.threads(); ++t) {
      PendingStore st;
      st.cta = w.cta;
      st.warp = w.index;
      st.group = w.bulk_groups;
      st.map = &m;
      st.src = smem_offset(w, n.src, box_bytes, "TMA store");
      st.row = eval(w, n.row);
      st.col = eval(w, n.col);
      st.batch = batch;
      st.lo = st.src;
      st.hi = st.src + box_bytes;
      async_read_check(w.cta, st.lo, st.hi, "TMA store of " + tensor_map_field(n.map));
      ctas_[static_cast<size_t>(w.cta)].smem.readers.push_back({st.lo, st.hi, w.index, st.group, "a TMA store"});
      stores_.push_back(st);
      ++r_.tma_stores;
    }
    return true;
  }
  void finish_store(size_t i) {
    PendingStore st = stores_[i];
    stores_.erase(stores_.begin() + static_cast<std::ptrdiff_t>(i));
    const rt::TensorMapSpec& m = *st.map;
    GlobalTensor& g = tensor(m.operand);
    const int eb = rt::elem_bytes(m.elem), sb = sim::swizzle_bytes_of(m.swizzle);
    SharedMemory& s = ctas_[static_cast<size_t>(st.cta)].smem;
    for (int64_t r = 0; r < m.box_rows; ++r)
      for (int64_t c = 0; c < m.box_cols; ++c) {
        const MapElement at_row = map_element(m, st.row + r, st.batch);
        if (at_row.outside_matrix && st.col + c >= 0 && st.col + c < int64_t(m.cols)) {
          error("a row-limited TMA store of " + tensor_map_field(m.operand) + " writes row " +
                std::to_string(at_row.row) + ", outside D's " + std::to_string(m.rows) + " rows (coordinates " +
                std::to_string(st.row) + ", " + std::to_string(st.batch) + ")");
          return;
        }
        if (!at_row.inside || st.col + c < 0 || st.col + c >= int64_t(m.cols))
          continue;  // clipped at the edges (TMA coordinates are signed)
        for (int e = 0; e < eb; ++e) {
          int64_t at = sim::swizzled(st.src + (r * m.box_cols + c) * eb + e, sb);
          g.data[static_cast<size_t>(g.offset(at_row.row, st.col + c, at_row.matrix) + e)] =
              s.bytes[static_cast<size_t>(at)];
        }
      }
  }
  bool exec(Warp& w, Frame&, const BulkCommit&) {
    w.bulk_groups += w.threads() > 0 ? 1 : 0;
    return true;
  }
  bool exec(Warp& w, Frame&, const BulkWaitRead& n) {
    // The thread's own committed groups older than the newest `pending` finish reading now;
    // until this wait, their source bytes count as being read however early they were copied.
    const int64_t below = w.bulk_groups - n.pending;
    for (size_t i = 0; i < stores_.size();)
      if (stores_[i].cta == w.cta && stores_[i].warp == w.index && stores_[i].group < below)
        finish_store(i);
      else
        ++i;
    ctas_[static_cast<size_t>(w.cta)].smem.retire_readers(w.index, below, "a TMA store");
    return true;
  }

  // ---- the synchronous copy (every thread of the block, 16-byte chunks)
  // The printed index math (CopyIndex) per lane and chunk; the 16-byte load (or the element
  // loads of a row's tail) as the hardware does it.
  bool exec(Warp& w, Frame&, const SyncCopyTile& n) {
    const CopyIndex& ix = n.index;
    const GlobalTensor& g = n.source == "a" ? a_ : b_;
    const int chunk_elems = 16 / n.elem_bytes;
    const int64_t matrix = n.offset ? eval(w, n.offset) : 0;  // elements to the batch matrix
    const SmemBuffer& buf = buffer(buffer_name(n.dst.buffer));
    Bindings at = w.vars;
    at["tile_smem"] = smem_offset(w, n.dst, int64_t(n.rows) * n.cols * n.elem_bytes, "synchronous copy");
    for (int lane = 0; lane < kWarpSize; ++lane) {
      at["threadIdx.x"] = int64_t(w.index) * kWarpSize + lane;
      for (int64_t chunk = at["threadIdx.x"]; chunk < ix.chunks; chunk += n.threads) {
        at["chunk"] = chunk;
        bind(at, ix.chunk);
        const int64_t row = bound(at, "row"), col = bound(at, "col");
        uint8_t v[16] = {};
        if (evaluate(ix.inside, at)) {
          const int64_t byte = (matrix + evaluate(ix.element, at)) * n.elem_bytes;
          const int64_t valid =
              n.load_bytes == 16 ? chunk_elems : std::clamp<int64_t>(evaluate(ix.valid, at), 0, chunk_elems);
          if (n.load_bytes == 16 && (byte % 16 != 0 || evaluate(n.col_limit, at) - col < chunk_elems))
            error("synchronous copy of " + n.source + ": a 16-byte load at element (" + std::to_string(row) + ", " +
                  std::to_string(col) + ") is " + (byte % 16 != 0 ? "not 16-byte aligned" : "past the end of its row"));
          if (byte < 0 || byte + valid * n.elem_bytes > int64_t(g.data.size()))
            error("synchronous copy of " + n.source + " reads element (" + std::to_string(row) + ", " +
                  std::to_string(col) + ") at byte " + std::to_string(byte) + ", outside the tensor");
          else
            std::memcpy(v, g.data.data() + byte, size_t(valid * n.elem_bytes));
        }
        const int64_t dst = bound(at, "dst");
        if (dst < buf.offset || dst + 16 > buf.offset + buf.bytes) {
          error("synchronous copy of " + n.source + " writes shared byte " + std::to_string(dst) + ", outside " + buf.name);
          return true;
        }
        generic_write(w, dst, v, 16, "synchronous copy");
      }
    }
    return true;
  }

  // ---- WGMMA: this warp computes its 16 rows of the 64-row block
  bool exec(Warp& w, Frame&, const AccumulatorDecl& n) {
    w.acc[n.name].assign(static_cast<size_t>(n.blocks * 16 * n.regs * 2), std::nanf(""));
    w.acc_n[n.name] = n.regs * 2;
    return true;
  }
  bool exec(Warp& w, Frame&, const AccumulatorZero& n) {
    std::fill(w.acc[n.name].begin(), w.acc[n.name].end(), 0.0f);
    return true;
  }
  bool exec(Warp&, Frame&, const WgmmaFence&) { return true; }
  bool exec(Warp&, Frame&, const AccumulatorFence&) { return true; }  // a compiler ordering; check_sync checks its places
  // The warpgroup's four warps issue together, and the MMA they issue is one asynchronous
  // operation: the last warp to arrive performs it for all four (each its 16 rows), so its
  // completion (wgmma.wait_group in any of them) holds for all of them.
  bool exec(Warp& w, Frame& f, const WgmmaIssue& n) {
    Cta& cta = ctas_[static_cast<size_t>(w.cta)];
    const int wg = w.index / kWarpsPerWarpgroup;
    NamedBarrier& meet = cta.wgmma_issue[wg];
    if (w.elect_depth > 0) error("wgmma issued inside an elected-thread block (it is warpgroup-wide)");
    if (!f.entered) {
      f.entered = true;
      f.generation = meet.generation;
      if (++meet.arrived == kWarpsPerWarpgroup) {
        meet.arrived = 0;
        ++meet.generation;
        for (int q = 0; q < kWarpsPerWarpgroup; ++q)
          mma_quarter(warps_[static_cast<size_t>(w.cta * warps_per_cta_ + wg * kWarpsPerWarpgroup + q)], n);
      }
    }
    if (meet.generation != f.generation) return true;
    w.blocked = "wgmma issue: waits for the other warps of its warpgroup (" + std::to_string(meet.arrived) + " of 4 here)";
    return false;
  }
  // Where element (mn, kk) of a wgmma operand lies, from the descriptor's start address `start`.
  // K-major: row mn starts mn * swizzle_bytes in (8-row groups 8 x swizzle_bytes apart), element
  // kk at 2 kk bytes. MN-major: row kk starts kk * swizzle_bytes in, index mn in swizzle atom
  // mn / W (W = swizzle_bytes / 2 elements) at atom_bytes per atom, 2 (mn % W) bytes into the row.
  // The hardware swizzles the resulting address.
  static int64_t operand_address(const WgmmaLayout& l, int64_t start, int64_t mn, int64_t kk, int64_t eb = 2) {
    return element_address(l.swizzle_bytes, l.mn_major, l.atom_bytes, 8 * l.swizzle_bytes, start, mn, kk, eb);
  }
  // The same through the fields a descriptor gives (wgmma's and tcgen05's agree on them): the
  // swizzle; the leading byte offset, MN-major the distance between swizzle atoms along M or N; the
  // stride byte offset, between 8-row groups (K-major: 8 rows of M or N, MN-major: 8 rows of k).
  // (`eb`: element bytes; MN-major operands are 16-bit, as only they have the transpose.)
  static int64_t element_address(int sb, bool mn_major, int64_t lbo, int64_t sbo, int64_t start, int64_t mn,
                                 int64_t kk, int64_t eb = 2) {
    if (!mn_major) return sim::swizzled(start + mn / 8 * sbo + mn % 8 * sb + kk * eb, sb);
    const int64_t w = sb / 2;
    return sim::swizzled(start + mn / w * lbo + kk / 8 * sbo + kk % 8 * sb + mn % w * 2, sb);
  }
  // The shared bytes a wgmma reads for operand rows [mn, mn + count) of its 16 k: one range of
  // whole rows K-major, one per swizzle atom (16 rows of it) MN-major.
  static std::vector<std::pair<int64_t, int64_t>> operand_ranges(const WgmmaLayout& l, int64_t start, int64_t mn,
                                                                 int64_t count) {
    const int64_t sb = l.swizzle_bytes;
    if (!l.mn_major) {
      const int64_t lo = (start + mn * sb) & ~(sb - 1);
      return {{lo, lo + count * sb}};
    }
    std::vector<std::pair<int64_t, int64_t>> out;
    const int64_t w = sb / 2, lo = start & ~(sb - 1);
    for (int64_t atom = mn / w; atom <= (mn + count - 1) / w; ++atom)
      out.push_back({lo + atom * l.atom_bytes, lo + atom * l.atom_bytes + 16 * sb});
    return out;
  }
  static int64_t operand_extent(const WgmmaLayout& l, int64_t count) {
    const int64_t sb = l.swizzle_bytes;
    return l.mn_major ? (count - 1) / (sb / 2) * l.atom_bytes + 16 * sb : count * sb;
  }
  // The layout an sm_90 matrix descriptor gives its operand: the swizzle from its mode (bits
  // 62-63), the atom distance from its leading byte offset; its stride byte offset must be the 8
  // rows of swizzle bytes the layouts use. nullopt (and an error) for anything else.
  std::optional<WgmmaLayout> wgmma_desc_layout(uint64_t d, bool mn_major, const std::string& what) {
    const int64_t lbo = int64_t((d >> 16) & 0x3FFF) << 4, sbo = int64_t((d >> 32) & 0x3FFF) << 4;
    const unsigned mode = unsigned(d >> 62);
    WgmmaLayout l;
    l.swizzle_bytes = mode == gg::dev::kDescSwizzle128B ? 128 : mode == gg::dev::kDescSwizzle64B ? 64
                      : mode == gg::dev::kDescSwizzle32B ? 32 : 0;
    l.mn_major = mn_major;
    l.atom_bytes = mn_major ? lbo : 0;
    if (l.swizzle_bytes == 0 || sbo != 8 * l.swizzle_bytes || (mn_major && lbo < 16 * l.swizzle_bytes)) {
      error(what + ": descriptor swizzle mode " + std::to_string(mode) + ", stride byte offset " + std::to_string(sbo) +
            ", leading byte offset " + std::to_string(lbo) + ": not a layout of 8-row groups of swizzled rows");
      return std::nullopt;
    }
    return l;
  }
  // An operand's layout as the kernel's descriptor (built as the printer builds it) says.
  std::optional<WgmmaLayout> described(const Warp& w, const SmemRef& r, const WgmmaLayout& l, const std::string& what) {
    const int64_t at = smem_offset(w, r, 0, what.c_str(), l.swizzle_bytes);
    const SmemDescOffsets offsets = smem_desc_offsets(l);
    const uint64_t d = gg::dev::make_smem_desc(static_cast<unsigned>(at), unsigned(offsets.leading), unsigned(offsets.stride),
                                               gg::dev::descriptor_swizzle_mode(l.swizzle_bytes));
    return wgmma_desc_layout(d, l.mn_major, what);
  }
  void mma_quarter(Warp& w, const WgmmaIssue& issue) {
    ++r_.wgmmas;
    Cta& cta = ctas_[static_cast<size_t>(w.cta)];
    const rt::ElemType elem = runtime_elem(parse_dtype(issue.dtype));
    const int64_t eb = rt::elem_bytes(elem), K = issue.k;
    const int quarter = w.index % kWarpsPerWarpgroup;
    // The operands as their descriptors lay them out, not as the node says.
    const auto a_layout = described(w, issue.a, issue.a_layout, "wgmma A operand");
    const auto b_layout = described(w, issue.b, issue.b_layout, "wgmma B operand");
    if (!a_layout || !b_layout) return;
    WgmmaIssue n = issue;
    n.a_layout = *a_layout;
    n.b_layout = *b_layout;
    const int64_t a = smem_offset(w, n.a, operand_extent(n.a_layout, 64), "wgmma A operand", n.a_layout.swizzle_bytes);
    const int64_t b = smem_offset(w, n.b, operand_extent(n.b_layout, n.n), "wgmma B operand", n.b_layout.swizzle_bytes);
    auto element = [&](const WgmmaLayout& l, int64_t start, int64_t mn, int64_t kk) {
      return sim::decode(elem, cta.smem.bytes.data() + operand_address(l, start, mn, kk, eb));
    };
    std::string what = "wgmma of warp " + std::to_string(w.index);
    const int owner = w.index / kWarpsPerWarpgroup * kWarpsPerWarpgroup;  // groups belong to the warpgroup
    for (auto [lo, hi] : operand_ranges(n.a_layout, a, quarter * 16, 16)) {
      async_read_check(w.cta, lo, hi, what + " (A)", &w);
      cta.smem.readers.push_back({lo, hi, owner, w.wgmma_groups, "a wgmma group"});
    }
    for (auto [lo, hi] : operand_ranges(n.b_layout, b, 0, n.n)) {
      async_read_check(w.cta, lo, hi, what + " (B)", &w);
      cta.smem.readers.push_back({lo, hi, owner, w.wgmma_groups, "a wgmma group"});
    }
    auto& acc = w.acc[n.accumulator.substr(0, n.accumulator.find('['))];
    const int64_t block = eval(w, n.block), N = n.n;
    if (acc.empty() || (block + 1) * 16 * N > int64_t(acc.size())) {
      error("wgmma accumulates into block " + std::to_string(block) + " of an accumulator that does not hold it");
      return;
    }
    if (K * eb != 32) {
      error("wgmma k" + std::to_string(K) + " of " + issue.dtype + " operands (an instruction reads 32 bytes of K)");
      return;
    }
    float av[16][32], bv[256][32];
    for (int i = 0; i < 16; ++i)
      for (int kk = 0; kk < K; ++kk) av[i][kk] = element(n.a_layout, a, quarter * 16 + i, kk);
    for (int64_t j = 0; j < N; ++j)
      for (int kk = 0; kk < K; ++kk) bv[j][kk] = element(n.b_layout, b, j, kk);
    const bool accumulate = !n.accumulate || eval(w, n.accumulate) != 0;
    for (int i = 0; i < 16; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float sum = 0;
        for (int kk = 0; kk < K; ++kk) sum += av[i][kk] * bv[j][kk];
        float& d = acc[static_cast<size_t>((block * 16 + i) * N + j)];
        d = accumulate ? d + sum : sum;
      }
  }
  // The warp's 16 rows of each block (rows as the fragment's) and B's factors, into its registers.
  // The registers hold what was loaded, not what this k step should read: a prefetch of the wrong
  // k block or column block shows in D.
  bool exec(Warp& w, Frame&, const PrefetchScaleFactors& n) {
    const float lo = scale_b(eval(w, n.lo));
    w.next_column_scales = std::pair<float, float>{lo, n.hi ? scale_b(eval(w, n.hi)) : lo};
    return true;
  }
  bool exec(Warp& w, Frame&, const LoadScaleFactors& n) {
    if (n.lo != nullptr && n.lo_next != nullptr) {
      if (!w.next_column_scales) {
        error("B's factors taken from the prefetched registers before a PrefetchScaleFactors loaded them");
        return false;
      }
      w.column_scales = w.next_column_scales;
      const float lo = scale_b(eval(w, n.lo_next));
      w.next_column_scales = std::pair<float, float>{lo, n.hi_next ? scale_b(eval(w, n.hi_next)) : lo};
    } else if (n.lo) {
      const float lo = scale_b(eval(w, n.lo));
      w.column_scales = std::pair<float, float>{lo, n.hi ? scale_b(eval(w, n.hi)) : lo};
    }
    if (n.cols_index) {
      const int64_t base = eval(w, n.cols_index), first = eval(w, n.cols_first), last = eval(w, n.cols_last);
      const int64_t stride = eval(w, n.cols_stride);
      w.column_factors.assign(size_t(n.cols), 0.0f);
      for (int64_t c = 0; c < n.cols; ++c) w.column_factors[size_t(c)] = scale_b(base + std::min(first + c, last) * stride);
    }
    const int64_t row0 = eval(w, n.row0), quarter = w.index % kWarpsPerWarpgroup;
    if (n.a_index) {  // from args.scale_a: per tensor, or row r's (clamped), row block's times the stride
      const int64_t base = eval(w, n.a_index);
      w.row_scales.assign(size_t(n.blocks * 16), 0.0f);
      for (int64_t b = 0; b < n.blocks; ++b)
        for (int64_t i = 0; i < 16; ++i) {
          int64_t at = base;
          if (n.a_row_block) {
            const int64_t row = std::min(eval(w, n.a_row) + row0 + 64 * b + 16 * quarter + i, eval(w, n.a_last));
            at += row / n.a_row_block * eval(w, n.a_row_stride);
          }
          w.row_scales[size_t(b * 16 + i)] = scale_a_vector(at);
        }
      return true;
    }
    if (!n.row_scales) return true;
    Cta& cta = ctas_[static_cast<size_t>(w.cta)];
    const int64_t at = smem_offset(w, *n.row_scales, 4 * (row0 + 64 * n.blocks), "the row factors' load", 4);
    w.row_scales.assign(size_t(n.blocks * 16), 0.0f);
    for (int64_t b = 0; b < n.blocks; ++b)
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t byte = at + 4 * (row0 + 64 * b + 16 * quarter + i);
        async_read_check(w.cta, byte, byte + 4, "the row factors' load", &w);
        std::memcpy(&w.row_scales[size_t(b * 16 + i)], cta.smem.bytes.data() + byte, 4);
      }
    return true;
  }
  // Each warp promotes its 16 rows of each block: (row, column) as the node's fragment says.
  bool exec(Warp& w, Frame&, const PromoteAccumulator& n) {
    auto& from = w.acc[n.from];
    auto& into = w.acc[n.into];
    const int64_t N = 2 * n.regs;
    const int64_t from_blocks = n.block ? 1 : n.blocks;
    if (int64_t(from.size()) != from_blocks * 16 * N || int64_t(into.size()) != n.blocks * 16 * N) {
      error("promotion between accumulators of other shapes than " + std::to_string(n.blocks) + " x 64 x " +
            std::to_string(N));
      return true;
    }
    if ((n.col_split && !w.column_scales) || (n.row_scaled && int64_t(w.row_scales.size()) != n.blocks * 16) ||
        (n.col_scaled && int64_t(w.column_factors.size()) < 2 * n.regs)) {
      error("promotion with scale factors no LoadScaleFactors loaded");
      return true;
    }
    const auto [sb_lo, sb_hi] = n.col_split ? *w.column_scales : std::pair<float, float>{1.0f, 1.0f};
    const int64_t split = n.col_split ? eval(w, n.col_split) : N;
    const int64_t first = n.block ? eval(w, n.block) : 0, last = n.block ? first + 1 : n.blocks;
    if (first < 0 || last > n.blocks) {
      error("promotion into block " + std::to_string(first) + " of " + std::to_string(n.blocks));
      return true;
    }
    for (int64_t b = first; b < last; ++b)
      for (int64_t i = 0; i < 16; ++i) {
        const float sa = n.row_scaled ? w.row_scales[size_t(b * 16 + i)] : 1.0f;
        for (int64_t j = 0; j < N; ++j) {
          const auto at = static_cast<size_t>((b * 16 + i) * N + j);
          const auto src = static_cast<size_t>(((n.block ? 0 : b) * 16 + i) * N + j);
          const float sb = n.col_scaled ? w.column_factors[size_t(j)] : j / 8 * 8 < split ? sb_lo : sb_hi;
          into[at] += from[src] * (sa * sb);
        }
      }
    return true;
  }
  // Each warp's 16 rows of each block: column j times B's factor of tile column j.
  bool exec(Warp& w, Frame&, const ScaleAccumulatorColumns& n) {
    auto& acc = w.acc[n.name];
    const int64_t N = 2 * n.regs;
    if (int64_t(acc.size()) != n.blocks * 16 * N) {
      error("column factors on an accumulator of another shape than " + std::to_string(n.blocks) + " x 64 x " +
            std::to_string(N));
      return true;
    }
    const int64_t first = eval(w, n.first), last = eval(w, n.last);
    for (int64_t j = 0; j < N; ++j) {
      const float s = scale_b(std::min(first + j, last));
      for (int64_t r = 0; r < n.blocks * 16; ++r) acc[size_t(r * N + j)] *= s;
    }
    return true;
  }
  bool exec(Warp& w, Frame&, const WgmmaCommit&) {
    ++w.wgmma_groups;
    return true;
  }
  bool exec(Warp& w, Frame&, const WgmmaWait& n) {
    const int owner = w.index / kWarpsPerWarpgroup * kWarpsPerWarpgroup;
    ctas_[static_cast<size_t>(w.cta)].smem.retire_readers(owner, w.wgmma_groups - n.pending, "a wgmma group");
    return true;
  }


  // ---- Tensor Memory and tcgen05 (sm_100a). TMEM belongs to the CTA; tcgen05.mma runs
  // asynchronously and completes in issue order, reading shared memory through its descriptors
  // when it runs; a commit arrives once the MMAs it tracks completed.
  bool whole_warp(const Warp& w, const std::string& what) {
    if (w.elect_depth > 0) error(what + " on one elected thread: it is .sync.aligned, the whole warp executes it");
    return w.elect_depth == 0;
  }
  sim::TensorMemory& tmem(const Warp& w) { return ctas_[static_cast<size_t>(w.cta)].tmem; }
  bool exec(Warp& w, Frame&, const TmemAlloc& n) {
    if (w.index != eval(w, n.warp) || !whole_warp(w, "tcgen05.alloc")) return true;
    sim::TensorMemory& t = tmem(w);
    if (t.allocated) {
      error("warp " + std::to_string(w.index) + " allocates TMEM a second time (the CTA relinquished its permit)");
      return true;
    }
    if (n.columns < 32 || n.columns > sim::TensorMemory::kColumns || (n.columns & (n.columns - 1)) != 0)
      error("tcgen05.alloc of " + std::to_string(n.columns) + " columns (a power of 2 from 32 to 512)");
    t.allocated = true;
    t.alloc_warp = w.index;
    t.columns = n.columns;
    t.alloc_generation = ctas_[static_cast<size_t>(w.cta)].sync_generation;
    t.cells.assign(size_t(sim::TensorMemory::kLanes) * sim::TensorMemory::kColumns, std::nanf(""));
    t.writer.assign(t.cells.size(), 0);
    return true;
  }
  bool exec(Warp& w, Frame&, const TmemBaseLoad& n) {
    const sim::TensorMemory& t = tmem(w);
    if (!t.allocated)
      error("warp " + std::to_string(w.index) + " reads the TMEM address before any tcgen05.alloc wrote it");
    else if (w.index != t.alloc_warp && ctas_[static_cast<size_t>(w.cta)].sync_generation == t.alloc_generation)
      error("warp " + std::to_string(w.index) + " reads the TMEM address before a barrier after warp " +
            std::to_string(t.alloc_warp) + "'s tcgen05.alloc");
    w.vars[n.name] = gg::dev::tmem_address(0, 0, 0);  // the allocator's first column
    return true;
  }
  bool exec(Warp& w, Frame&, const TmemDealloc& n) {
    if (w.index != eval(w, n.warp) || !whole_warp(w, "tcgen05.dealloc")) return true;
    sim::TensorMemory& t = tmem(w);
    if (!t.allocated || t.freed) {
      error("warp " + std::to_string(w.index) + " frees TMEM " + (t.freed ? "twice" : "it never allocated"));
      return true;
    }
    if (w.index != t.alloc_warp)
      error("warp " + std::to_string(w.index) + " frees the TMEM warp " + std::to_string(t.alloc_warp) + " allocated");
    if (n.columns != t.columns)
      error("tcgen05.dealloc of " + std::to_string(n.columns) + " columns, " + std::to_string(t.columns) + " allocated");
    for (const auto& m : mmas_)
      if (m.cta == w.cta) {
        error("TMEM freed while " + m.what + " may still write it");
        break;
      }
    t.freed = true;
    return true;
  }
  bool exec(Warp& w, Frame&, const Tcgen05Fence& n) {
    if (!n.after)
      for (TmemRead& r : ctas_[static_cast<size_t>(w.cta)].tmem_reads)
        if (r.warp == w.index) r.fenced = true;
    return true;
  }
  // Warp w's fenced TMEM reads not handed over yet, ordered by the barrier it now reaches (`mark`
  // says which): the first such barrier after a read is what orders it.
  template <class F>
  void hand_over_tmem_reads(const Warp& w, F mark) {
    for (TmemRead& r : ctas_[static_cast<size_t>(w.cta)].tmem_reads)
      if (r.warp == w.index && r.fenced && r.arrived_bar < 0 && r.synced_id < 0) mark(r);
  }
  // A tcgen05.mma of warp w about to write TMEM lanes [lane_lo, lane_hi) x columns [col0, col0 + n):
  // every other warp's read of those cells must be ordered before it, else the MMAs may overwrite an
  // accumulator its writeback still reads (a buffer reused before ld2mma).
  void check_tmem_overwrite(const Warp& w, int cta, int64_t lane_lo, int64_t lane_hi, int64_t col0, int64_t n,
                            const std::string& what) {
    auto& reads = ctas_[static_cast<size_t>(cta)].tmem_reads;
    for (auto it = reads.begin(); it != reads.end();) {
      const TmemRead& r = *it;
      const bool overlaps = r.col0 < col0 + n && col0 < r.col0 + r.cols && r.lane0 < lane_hi && lane_lo < r.lane0 + kWarpSize;
      if (!overlaps) {
        ++it;
        continue;
      }
      auto seen = w.seen_phases.find(r.arrived_bar);
      auto passed = w.passed.find(r.synced_id);
      const bool here = cta == w.cta;
      const bool ordered =
          (here && r.warp == w.index) ||  // its own tcgen05.wait::ld came first
          (r.fenced && ((r.arrived_cta == w.cta && seen != w.seen_phases.end() && seen->second > r.arrived_phase) ||
                        (here && r.synced_id >= 0 && passed != w.passed.end() && passed->second > r.synced_generation)));
      if (!ordered) {
        error(what + " overwrites TMEM lanes [" + std::to_string(r.lane0) + ", " + std::to_string(r.lane0 + kWarpSize) +
              ") x columns [" + std::to_string(r.col0) + ", " + std::to_string(r.col0 + r.cols) + ") that warp " +
              std::to_string(r.warp) + (here ? "" : " of CTA rank " + std::to_string(cta)) + " read with tcgen05.ld, and no " +
              (r.fenced ? "barrier orders that read before it (the reader's arrive this warp waited for, ld2mma)"
                        : "tcgen05.fence::before_thread_sync after that read and barrier order it before it") +
              ": the accumulator is reused before its writeback is done with it");
        return;
      }
      it = reads.erase(it);
    }
  }

  // Decodes a shared-memory descriptor by the PTX ISA's table (tcgen05_desc.h cites it): the
  // simulator reads operands through these fields only, so a wrong field misplaces every element.
  struct SmemDescFields {
    int64_t start = 0, lbo = 0, sbo = 0;
    int swizzle = 0;
  };
  std::optional<SmemDescFields> decode_smem_desc(uint64_t d, const std::string& what, bool unswizzled = false) {
    SmemDescFields f;
    f.start = int64_t(d & 0x3FFF) << 4;
    f.lbo = int64_t((d >> 16) & 0x3FFF) << 4;
    f.sbo = int64_t((d >> 32) & 0x3FFF) << 4;
    const unsigned version = unsigned(d >> 46) & 7u, base_offset = unsigned(d >> 49) & 7u, mode = unsigned(d >> 61);
    if (version != 1) error(what + ": descriptor bits 46-48 hold " + std::to_string(version) + ", not the fixed 0b001");
    if (base_offset != 0 || ((d >> 52) & 1u))
      error(what + ": a descriptor with a base offset or an absolute leading dimension, which nothing generates");
    f.swizzle = mode == 2 ? 128 : mode == 4 ? 64 : mode == 6 ? 32 : 0;
    if (unswizzled) {  // tcgen05.cp's source
      if (mode != 0) error(what + ": descriptor swizzle mode " + std::to_string(mode) + " (0, none, expected)");
      return f;
    }
    if (f.swizzle == 0) {
      error(what + ": descriptor swizzle mode " + std::to_string(mode) +
            " (2: 128B, 4: 64B, 6: 32B are the modes of the generated layouts)");
      return std::nullopt;
    }
    return f;
  }
  // The shared bytes an operand's descriptor covers for rows [0, count) of M or N and 16 of k: whole
  // swizzled rows, per 8-row group (and MN-major per swizzle atom).
  static std::vector<std::pair<int64_t, int64_t>> desc_ranges(const SmemDescFields& f, bool mn_major, int64_t count) {
    std::vector<std::pair<int64_t, int64_t>> out;
    const int64_t sb = f.swizzle, base = f.start & ~(sb - 1);
    if (!mn_major) {
      for (int64_t g = 0; g < (count + 7) / 8; ++g) out.push_back({base + g * f.sbo, base + g * f.sbo + 8 * sb});
      return out;
    }
    for (int64_t atom = 0; atom <= (count - 1) / (sb / 2); ++atom)
      for (int64_t g = 0; g < 2; ++g)
        out.push_back({base + atom * f.lbo + g * f.sbo, base + atom * f.lbo + g * f.sbo + 8 * sb});
    return out;
  }
  // A tcgen05 operation one thread issues into the MMA queue (`instruction`: its name): its entry,
  // or nullopt where every thread issues it or it precedes the TMEM address (reported); a pair's
  // only from the even CTA of a pair.
  std::optional<PendingMma> issue_tcgen05(const Warp& w, const std::string& base, bool pair, const char* instruction) {
    if (w.elect_depth == 0) {
      error(std::string(instruction) + " issued by every thread of warp " + std::to_string(w.index) +
            " (one thread issues it)");
      return std::nullopt;
    }
    if (!w.vars.count(base)) {
      error(std::string(instruction) + " of warp " + std::to_string(w.index) + " before it read the TMEM address");
      return std::nullopt;
    }
    PendingMma m;
    m.id = ++mma_ids_;
    m.cta = w.cta;
    m.warp = w.index;
    m.pair = pair;
    m.what = std::string(instruction) + " #" + std::to_string(m.id) + " of warp " + std::to_string(w.index);
    if (pair && (w.cta % 2 != 0 || w.cta + 1 >= int(ctas_.size()))) {
      error(m.what + ": a CTA pair's " + instruction + " (cta_group::2) issued by CTA rank " + std::to_string(w.cta) +
            ", not the even CTA of a pair of the cluster");
      return std::nullopt;
    }
    return m;
  }
  bool exec(Warp& w, Frame&, const Tcgen05Mma& n) {
    std::optional<PendingMma> issued = issue_tcgen05(w, n.base, n.pair, "tcgen05.mma");
    if (!issued) return true;
    PendingMma& m = *issued;
    // The operands exactly as the printed kernel builds them (the printer calls the same functions).
    auto desc = [&](const SmemRef& r, const WgmmaLayout& l, const char* which) {
      const int64_t at = smem_offset(w, r, 0, which, l.swizzle_bytes);
      const SmemDescOffsets offsets = smem_desc_offsets(l);
      return gg::dev::make_tcgen05_smem_desc(static_cast<unsigned>(at), unsigned(offsets.leading),
                                             unsigned(offsets.stride), gg::dev::tcgen05_swizzle_mode(l.swizzle_bytes));
    };
    m.a_desc = desc(n.a, n.a_layout, "tcgen05.mma A operand");
    m.b_desc = desc(n.b, n.b_layout, "tcgen05.mma B operand");
    if (n.block_scaled()) {
      m.scaled = true;
      m.idesc = gg::dev::make_tcgen05_idesc_mxf8f6f4(
          n.dtype == "e4m3" ? gg::dev::kTcgen05TypeE4M3 : gg::dev::kTcgen05TypeE5M2, unsigned(n.m), unsigned(n.n),
          n.a_layout.mn_major ? 1u : 0u, n.b_layout.mn_major ? 1u : 0u, unsigned(eval(w, n.scale_id)));
      const auto base = static_cast<unsigned>(w.vars[n.base]);
      m.a_scales = gg::dev::tmem_address(base, 0, static_cast<unsigned>(eval(w, n.scale_a_column)));
      m.b_scales = gg::dev::tmem_address(base, 0, static_cast<unsigned>(eval(w, n.scale_b_column)));
    } else {
      m.idesc = gg::dev::make_tcgen05_idesc_f16(n.dtype == "bf16" ? gg::dev::kTcgen05TypeBF16 : gg::dev::kTcgen05TypeF16,
                                                unsigned(n.m), unsigned(n.n), n.a_layout.mn_major ? 1u : 0u,
                                                n.b_layout.mn_major ? 1u : 0u);
    }
    m.d_tmem = gg::dev::tmem_address(static_cast<unsigned>(w.vars[n.base]), static_cast<unsigned>(eval(w, n.lane)),
                                     static_cast<unsigned>(eval(w, n.column)));
    m.accumulate = eval(w, n.accumulate) != 0;
    for (int cta = w.cta; cta <= w.cta + (n.pair ? 1 : 0); ++cta) {
      const int64_t lane0 = m.d_tmem >> 16, col0 = m.d_tmem & 0xFFFF;
      const int64_t lane_hi = n.m >= 128 ? lane0 + 128 : lane0 + 16 + 32 * (n.m / 16 - 1);
      check_tmem_overwrite(w, cta, lane0, lane_hi, col0, n.n, m.what);
    }
    // It reads its operands when it runs: they must have landed and been acquired by the issuer, and
    // nothing may overwrite them until it completed.
    // A pair's MMA reads each CTA's 128 rows of A and half of B, at the same offsets in both.
    const int m_rows = int((m.idesc >> 24) & 0x1F) << 4, n_cols = int((m.idesc >> 17) & 0x3F) << 3;
    const int sharing = n.pair ? 2 : 1;
    const bool a_mn = (m.idesc >> 15) & 1u, b_mn = (m.idesc >> 16) & 1u;
    for (int at = w.cta; at < w.cta + sharing; ++at) {
      Cta& cta = ctas_[static_cast<size_t>(at)];
      for (auto [d, mn, count, name] : {std::tuple{m.a_desc, a_mn, m_rows / sharing, "A"},
                                        std::tuple{m.b_desc, b_mn, n_cols / sharing, "B"}}) {
        auto f = decode_smem_desc(d, m.what + " (" + name + ")");
        if (!f) continue;
        for (auto [lo, hi] : desc_ranges(*f, mn, count)) {
          async_read_check(at, lo, hi, m.what + " (" + name + (at != w.cta ? ", the pair's odd CTA" : "") + ")", &w);
          cta.smem.readers.push_back({lo, hi, w.index, m.id, "a tcgen05.mma"});
        }
      }
    }
    check_scale_order(w, m);
    w.last_mma = m.id;
    mma_issuer_[m.id] = {w.cta, w.index};
    mmas_.push_back(m);
    ++r_.tcgen05_mmas;
    return true;
  }
  // tcgen05.cp .32x128b.warpx4: one thread's copy of 512 shared bytes into 4 TMEM columns of every
  // lane quarter, queued with its MMAs (it runs before those it issued after it).
  bool exec(Warp& w, Frame&, const Tcgen05Copy& n) {
    std::optional<PendingMma> issued = issue_tcgen05(w, n.base, n.pair, "tcgen05.cp");
    if (!issued) return true;
    PendingMma& m = *issued;
    m.copy = true;
    const int64_t at = smem_offset(w, n.src, 512, "tcgen05.cp source", 16);
    m.a_desc = gg::dev::make_tcgen05_cp_32x128b_desc(static_cast<unsigned>(at));
    m.d_tmem = gg::dev::tmem_address(static_cast<unsigned>(w.vars[n.base]), 0, static_cast<unsigned>(eval(w, n.column)));
    if (auto f = decode_smem_desc(m.a_desc, m.what, true))
      for (int cta = w.cta; cta <= w.cta + (n.pair ? 1 : 0); ++cta) {  // a pair's: each CTA's own bytes
        async_read_check(cta, f->start, f->start + 512, m.what + (cta != w.cta ? " (the pair's odd CTA)" : ""), &w);
        ctas_[static_cast<size_t>(cta)].smem.readers.push_back({f->start, f->start + 512, w.index, m.id, "a tcgen05.mma"});
      }
    check_scale_order(w, m);
    w.last_mma = m.id;
    mma_issuer_[m.id] = {w.cta, w.index};
    mmas_.push_back(m);
    return true;
  }
  // The TMEM columns of scale factors an operation writes (a copy) or reads (a block-scaled MMA).
  static std::vector<std::pair<int64_t, int64_t>> scale_columns(const PendingMma& m) {
    if (m.copy) return {{m.d_tmem & 0xFFFF, (m.d_tmem & 0xFFFF) + 4}};
    if (!m.scaled) return {};
    const int64_t n = int64_t((m.idesc >> 17) & 0x3F) << 3, rows = int64_t((m.idesc >> 24) & 0x1F) << 4;
    return {{m.a_scales & 0xFFFF, (m.a_scales & 0xFFFF) + (rows + 31) / 32},
            {m.b_scales & 0xFFFF, (m.b_scales & 0xFFFF) + (n + 31) / 32}};
  }
  // Only one thread's tcgen05.cp and tcgen05.mma run in issue order: a copy may not overwrite factors
  // another thread's MMA still reads, nor an MMA read factors another thread's copy is still writing.
  void check_scale_order(const Warp& w, const PendingMma& next) {
    for (const PendingMma& m : mmas_) {
      if (m.cta != w.cta || m.warp == w.index || (m.copy == next.copy) || (!m.copy && !m.scaled)) continue;
      for (auto [lo, hi] : scale_columns(m))
        for (auto [nlo, nhi] : scale_columns(next))
          if (lo < nhi && nlo < hi) {
            error(next.what + (next.copy ? " overwrites" : " reads") + " the scale factors in TMEM columns [" +
                  std::to_string(std::max(lo, nlo)) + ", " + std::to_string(std::min(hi, nhi)) + ") that " + m.what +
                  (m.copy ? " is still writing" : " issued before still reads") +
                  ": tcgen05 operations of two threads run in no order");
            return;
          }
    }
  }
  // A copy runs: row i (16 bytes; 8-row groups the stride byte offset apart) into lane i of each
  // quarter, its 4 words into columns d.. d + 3, marked as a copy's (writer < 0). A pair's copies
  // each CTA's own bytes at the offset into its own TMEM.
  void complete_copy(const PendingMma& m) {
    const auto f = decode_smem_desc(m.a_desc, m.what, true);
    const int64_t col0 = m.d_tmem & 0xFFFF;
    for (int cta = m.cta; f && cta <= m.cta + (m.pair ? 1 : 0); ++cta) {
      sim::TensorMemory& t = ctas_[static_cast<size_t>(cta)].tmem;
      if (!t.allocated || t.freed || col0 + 4 > t.columns || (m.d_tmem >> 16) != 0) {
        error(m.what + " writes TMEM columns [" + std::to_string(col0) + ", " + std::to_string(col0 + 4) +
              ") from lane " + std::to_string(m.d_tmem >> 16) + ", outside the allocated columns (or not from lane 0)");
        return;
      }
      const auto& bytes = ctas_[static_cast<size_t>(cta)].smem.bytes;
      for (int64_t i = 0; i < 32; ++i)
        for (int64_t c = 0; c < 4; ++c) {
          float word;
          std::memcpy(&word, bytes.data() + f->start + i / 8 * f->sbo + i % 8 * 16 + c * 4, 4);
          for (int64_t quarter = 0; quarter < 4; ++quarter) {
            const size_t cell = t.at(32 * quarter + i, col0 + c);
            t.cells[cell] = word;
            t.writer[cell] = -m.id;
          }
        }
    }
  }
  // A block-scaled MMA's factor of row r (A) or column r (B): byte `id` of the word in column
  // r / 32 from `address`, lane r % 32 of quarter `quarter`, which a tcgen05.cp must have written.
  std::optional<float> tmem_factor(const PendingMma& m, int cta, uint32_t address, int64_t r, int64_t quarter,
                                   unsigned id, const char* whose) {
    const sim::TensorMemory& t = ctas_[static_cast<size_t>(cta)].tmem;
    const int64_t column = (address & 0xFFFF) + r / 32, lane = 32 * quarter + r % 32;
    if (column >= t.columns || t.writer[t.at(lane, column)] >= 0) {
      error(m.what + " reads " + whose + " scale factor of row " + std::to_string(r) + " at TMEM lane " +
            std::to_string(lane) + ", column " + std::to_string(column) + (cta != m.cta ? " of the pair's odd CTA" : "") +
            ", which no tcgen05.cp wrote" +
            (column < t.columns && t.writer[t.at(lane, column)] > 0 ? " (an MMA's accumulator is there)" : ""));
      return std::nullopt;
    }
    uint32_t word;
    std::memcpy(&word, &t.cells[t.at(lane, column)], 4);
    return ue8m0_value(uint8_t(word >> (8 * id)));
  }
  // A block-scaled FP8 MMA (kind::mxf8f6f4): the descriptor by the PTX ISA's block-scaled table,
  // e4m3/e5m2 elements from shared memory (K-major, 32 of K), each row of A and column of B times its
  // UE8M0 factor from TMEM: row r's data path (its CTA's lane r % 128) reads its CTA's factors, A's
  // of its row and B's of every column. A pair's (m256) rows 128.. and B's second half are the odd
  // CTA's, as the f16 MMA's. Each element's product is summed as fp32 times the two factors (powers
  // of two, exact): the hardware's internal rounding is not modeled, so only exact data checks it
  // bit for bit.
  void complete_scaled_mma(const PendingMma& m) {
    const uint32_t i = m.idesc;
    const int M = int((i >> 24) & 0x1F) << 4, N = int((i >> 17) & 0x3F) << 3;
    const unsigned a_type = (i >> 7) & 7u, b_type = (i >> 10) & 7u, b_id = (i >> 4) & 3u, a_id = (i >> 29) & 3u;
    if ((i & 0xFu) != 0 || ((i >> 6) & 1u) != 0 || a_type != b_type || a_type > 1 || ((i >> 13) & 3u) != 0 ||
        ((i >> 15) & 3u) != 0 || ((i >> 23) & 1u) != 1 || (i >> 31) != 0 || M != (m.pair ? 256 : 128) || N < 8 ||
        N > 256) {
      error(m.what + ": instruction descriptor " + std::to_string(i) + " is not a dense K-major e4m3/e5m2 " +
            (m.pair ? "m256 (a CTA pair's)" : "m128") + " block-scaled MMA with UE8M0 factors (kind::mxf8f6f4)");
      return;
    }
    auto a = decode_smem_desc(m.a_desc, m.what + " (A)"), b = decode_smem_desc(m.b_desc, m.what + " (B)");
    const int sharing = m.pair ? 2 : 1;
    const int64_t lane0 = m.d_tmem >> 16, col0 = m.d_tmem & 0xFFFF;
    if (!a || !b) return;
    for (int at = m.cta; at < m.cta + sharing; ++at) {
      const sim::TensorMemory& d = ctas_[static_cast<size_t>(at)].tmem;
      if (!d.allocated || d.freed || lane0 != 0 || col0 + N > d.columns) {
        error(m.what + ": its m" + std::to_string(M) + "n" + std::to_string(N) + " accumulator at TMEM lane " +
              std::to_string(lane0) + ", column " + std::to_string(col0) + " does not fit the allocated columns" +
              (at != m.cta ? " of the pair's odd CTA" : ""));
        return;
      }
    }
    const auto elem = a_type == 0 ? rt::ElemType::E4M3 : rt::ElemType::E5M2;
    // Row mn of A (column of B) from the CTA that holds it, at the leader's offsets.
    auto element = [&](const SmemDescFields& f, int64_t mn, int64_t kk, int64_t per_cta) {
      const Cta& holder = ctas_[static_cast<size_t>(m.cta + mn / per_cta)];
      const int64_t at = element_address(f.swizzle, false, f.lbo, f.sbo, f.start, mn % per_cta, kk, 1);
      return at < 0 || at >= int64_t(holder.smem.bytes.size()) ? std::nanf("")
                                                                : sim::decode(elem, holder.smem.bytes.data() + at);
    };
    constexpr int kK = 32;
    std::vector<float> av(size_t(M) * kK), bv(size_t(N) * kK), sa(static_cast<size_t>(M));
    std::vector<float> sb(size_t(sharing) * 4 * size_t(N));  // per CTA, per lane quarter, per column
    for (int r = 0; r < M; ++r) {
      for (int kk = 0; kk < kK; ++kk) av[size_t(r * kK + kk)] = element(*a, r, kk, M / sharing);
      const auto f = tmem_factor(m, m.cta + r / 128, m.a_scales, r % 128, r % 128 / 32, a_id, "A's");
      if (!f) return;
      sa[size_t(r)] = *f;
    }
    for (int c = 0; c < N; ++c) {
      for (int kk = 0; kk < kK; ++kk) bv[size_t(c * kK + kk)] = element(*b, c, kk, N / sharing);
      for (int at = 0; at < sharing; ++at)
        for (int quarter = 0; quarter < 4; ++quarter) {
          const auto f = tmem_factor(m, m.cta + at, m.b_scales, c, quarter, b_id, "B's");
          if (!f) return;
          sb[size_t((at * 4 + quarter) * N + c)] = *f;
        }
    }
    for (int r = 0; r < M; ++r) {
      sim::TensorMemory& d = ctas_[static_cast<size_t>(m.cta + r / 128)].tmem;
      const int64_t row = r % 128;
      for (int c = 0; c < N; ++c) {
        float sum = 0;
        for (int kk = 0; kk < kK; ++kk) sum += av[size_t(r * kK + kk)] * bv[size_t(c * kK + kk)];
        sum *= sa[size_t(r)] * sb[size_t((r / 128 * 4 + row / 32) * N + c)];
        const size_t cell = d.at(lane0 + row, col0 + c);
        d.cells[cell] = m.accumulate ? d.cells[cell] + sum : sum;
        d.writer[cell] = m.id;
      }
    }
  }
  // The oldest tcgen05.mma (or tcgen05.cp) runs: D (+)= A * B through the decoded descriptors into TMEM.
  void complete_mma() {
    PendingMma m = mmas_.front();
    mmas_.erase(mmas_.begin());
    for (int at = m.cta; at <= m.cta + (m.pair ? 1 : 0); ++at)
      std::erase_if(ctas_[static_cast<size_t>(at)].smem.readers,
                    [&](const AsyncRead& r) { return r.what == "a tcgen05.mma" && r.group == m.id; });
    if (m.copy) return complete_copy(m);
    if (m.scaled) return complete_scaled_mma(m);
    // The instruction descriptor (PTX ISA, tcgen05 "Instruction descriptor", kind::f16).
    const uint32_t i = m.idesc;
    const int M = int((i >> 24) & 0x1F) << 4, N = int((i >> 17) & 0x3F) << 3;
    const unsigned a_type = (i >> 7) & 7u, b_type = (i >> 10) & 7u;
    if ((i & 0xFu) != 0 || ((i >> 4) & 3u) != 1 || a_type != b_type || a_type > 1 || ((i >> 13) & 3u) != 0 ||
        (i >> 29) != 0 || (m.pair ? M != 256 || N % 16 != 0 : (M != 64 && M != 128)) || N < 8 || N > 256) {
      error(m.what + ": instruction descriptor " + std::to_string(i) + " is not a dense f16/bf16 -> f32 " +
            (m.pair ? "m256 MMA over a CTA pair" : "m64/m128 MMA"));
      return;
    }
    const auto elem = a_type == 1 ? rt::ElemType::BF16 : rt::ElemType::F16;
    auto a = decode_smem_desc(m.a_desc, m.what + " (A)"), b = decode_smem_desc(m.b_desc, m.what + " (B)");
    const int sharing = m.pair ? 2 : 1;
    const int64_t lane0 = m.d_tmem >> 16, col0 = m.d_tmem & 0xFFFF;
    if (!a || !b) return;
    for (int at = m.cta; at < m.cta + sharing; ++at) {
      const sim::TensorMemory& t = ctas_[static_cast<size_t>(at)].tmem;
      if (!t.allocated || t.freed) {
        error(m.what + " writes TMEM that is " + (t.freed ? "freed" : "not allocated") +
              (at != m.cta ? " in the pair's odd CTA" : ""));
        return;
      }
    }
    sim::TensorMemory& t = ctas_[static_cast<size_t>(m.cta)].tmem;
    if ((M >= 128 && lane0 != 0) || (M == 64 && lane0 != 0 && lane0 != 16) || col0 + N > t.columns) {
      error(m.what + ": its m" + std::to_string(M) + "n" + std::to_string(N) + " accumulator at TMEM lane " +
            std::to_string(lane0) + ", column " + std::to_string(col0) + " does not fit the " +
            std::to_string(t.columns) + " allocated columns (m128 starts at lane 0, m64 at lane 0 or 16)");
      return;
    }
    // Row r of A (column c of B) from the CTA that holds it: a pair's odd CTA holds rows M/2.. (B's
    // rows N/2..), at the same offsets as the leader's first ones.
    auto element = [&](const SmemDescFields& f, bool mn_major, int64_t mn, int64_t kk, int64_t per_cta) {
      const Cta& holder = ctas_[static_cast<size_t>(m.cta + mn / per_cta)];
      const int64_t at = element_address(f.swizzle, mn_major, f.lbo, f.sbo, f.start, mn % per_cta, kk);
      if (at < 0 || at + 2 > int64_t(holder.smem.bytes.size())) return std::nanf("");
      return sim::decode(elem, holder.smem.bytes.data() + at);
    };
    std::vector<float> av(size_t(M) * 16), bv(size_t(N) * 16);
    for (int r = 0; r < M; ++r)
      for (int kk = 0; kk < 16; ++kk) av[size_t(r * 16 + kk)] = element(*a, (i >> 15) & 1u, r, kk, M / sharing);
    for (int c = 0; c < N; ++c)
      for (int kk = 0; kk < 16; ++kk) bv[size_t(c * 16 + kk)] = element(*b, (i >> 16) & 1u, c, kk, N / sharing);
    for (int r = 0; r < M; ++r) {
      // Row r's CTA and lane (the data-path layout the epilogue's tmem_lane_row inverts).
      sim::TensorMemory& d = ctas_[static_cast<size_t>(m.cta + r / (M / sharing))].tmem;
      const int rr = r % (M / sharing);
      const int64_t lane = lane0 + (M >= 128 ? rr : rr % 16 + 32 * (rr / 16));
      for (int c = 0; c < N; ++c) {
        float sum = 0;
        for (int kk = 0; kk < 16; ++kk) sum += av[size_t(r * 16 + kk)] * bv[size_t(c * 16 + kk)];
        const size_t cell = d.at(lane, col0 + c);
        d.cells[cell] = m.accumulate ? d.cells[cell] + sum : sum;
        d.writer[cell] = m.id;
      }
    }
  }
  bool exec(Warp& w, Frame&, const Tcgen05Commit& n) {
    if (w.elect_depth == 0) {
      error("tcgen05.commit by every thread of warp " + std::to_string(w.index) + ": 32 arrivals, one per thread");
      return true;
    }
    Mbarrier& b = initialized(w, w.cta, n.bar, "tcgen05.commit");
    (void)b;
    PendingCommit c;
    c.cta = w.cta;
    c.warp = w.index;
    c.up_to = w.last_mma;
    c.barrier = barrier_offset(w, n.bar);
    c.multicast_mask = n.multicast_mask;
    for (int r = 0; r < 16; ++r)
      if ((n.multicast_mask >> r) & 1u) {
        if (r >= int(ctas_.size())) error("tcgen05.commit multicast mask names CTA rank " + std::to_string(r) + " outside the cluster");
        else if (!barrier(r, c.barrier).fenced)
          error("tcgen05.commit onto " + barrier_name(w, n.bar) + " of CTA rank " + std::to_string(r) +
                " before its init was fenced");
      }
    commits_.push_back(c);
    return true;
  }
  // Every MMA the commit tracks has completed (MMAs complete in issue order).
  bool commit_ready(const PendingCommit& c) const {
    for (const auto& m : mmas_)
      if (m.cta == c.cta && m.warp == c.warp && m.id <= c.up_to) return false;
    return true;
  }
  void fire_commit(size_t i) {
    PendingCommit c = commits_[i];
    commits_.erase(commits_.begin() + static_cast<std::ptrdiff_t>(i));
    // A multicast commit's arrivals in the peers (the own CTA's is recorded below).
    for (int r = 0; r < int(ctas_.size()); ++r) {
      if (r == c.cta || !((c.multicast_mask >> r) & 1u)) continue;
      if (ctas_[static_cast<size_t>(r)].exited)
        error("a tcgen05.commit arrives on a barrier of CTA rank " + std::to_string(r) + " after it exited");
      Mbarrier& peer = barrier(r, c.barrier);
      PendingCommit seen = c;
      seen.phase = peer.phase;
      peer.arrive();
      // A pair's MMAs write the odd CTA's TMEM too: its readers learn of them from this arrival.
      ctas_[static_cast<size_t>(r)].commits.push_back(seen);
    }
    if (c.multicast_mask && !((c.multicast_mask >> c.cta) & 1u)) return;
    Mbarrier& b = barrier(c.cta, c.barrier);
    c.phase = b.phase;
    b.arrive();
    ctas_[static_cast<size_t>(c.cta)].commits.push_back(c);
  }
  // Whether `reader` observed a commit covering MMA `id` (of warp `issuer`): it waited on the
  // barrier the commit arrived on until the phase the commit arrived in had completed.
  // (A commit arrives in `cta` from the issuing CTA's thread: a pair's leader's, or a multicast peer's.)
  bool saw_commit(const Warp& reader, int cta, std::pair<int, int> issuer, int id) const {
    for (const PendingCommit& c : ctas_[static_cast<size_t>(cta)].commits) {
      if (c.cta != issuer.first || c.warp != issuer.second || c.up_to < id) continue;
      auto seen = reader.seen_phases.find(c.barrier);
      if (seen != reader.seen_phases.end() && seen->second > c.phase) return true;
    }
    return false;
  }
  bool exec(Warp& w, Frame&, const TmemLoad& n) {
    if (!whole_warp(w, "tcgen05.ld")) return true;
    const sim::TensorMemory& t = tmem(w);
    if (!w.vars.count(n.base) || !t.allocated || t.freed) {
      error("warp " + std::to_string(w.index) + " reads TMEM " +
            (t.freed ? "after it was freed" : "without the address of an allocation"));
      return true;
    }
    const uint32_t addr = gg::dev::tmem_address(static_cast<unsigned>(w.vars[n.base]), static_cast<unsigned>(eval(w, n.lane)),
                                                static_cast<unsigned>(eval(w, n.column)));
    const int64_t lane0 = addr >> 16, col0 = addr & 0xFFFF;
    const int64_t quarter = int64_t(w.index % kWarpsPerWarpgroup) * kWarpSize;
    if (lane0 != quarter) {
      error("warp " + std::to_string(w.index) + " reads TMEM lanes [" + std::to_string(lane0) + ", " +
            std::to_string(lane0 + kWarpSize) + "): a warp of a warpgroup reaches only its quarter, lanes [" +
            std::to_string(quarter) + ", " + std::to_string(quarter + kWarpSize) + ")");
      return true;
    }
    if (col0 + n.columns > t.columns) {
      error("warp " + std::to_string(w.index) + " reads TMEM columns [" + std::to_string(col0) + ", " +
            std::to_string(col0 + n.columns) + ") of " + std::to_string(t.columns) + " allocated");
      return true;
    }
    std::vector<float>& regs = w.acc[n.dst];
    if (n.zero_when && eval(w, n.zero_when)) {  // no MMA for this unit: zeros, TMEM unread
      regs.assign(size_t(kWarpSize) * size_t(n.columns), 0.0f);
      return true;
    }
    regs.assign(size_t(kWarpSize) * size_t(n.columns), std::nanf(""));
    std::map<int32_t, bool> checked;  // per writer: in flight, or its commit not observed
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int c = 0; c < n.columns; ++c) {
        const size_t cell = t.at(lane0 + lane, col0 + c);
        const int32_t id = t.writer[cell];
        // A cell no MMA wrote loads as NaN (lanes past a tile's rows: the epilogue skips them).
        if (id != 0 && !checked.count(id)) {
          checked[id] = true;
          bool in_flight = false;
          for (const auto& m : mmas_) in_flight = in_flight || (m.cta == w.cta && m.id == id);
          if (in_flight)
            error("warp " + std::to_string(w.index) + " reads TMEM lane " + std::to_string(lane0 + lane) + ", column " +
                  std::to_string(col0 + c) + " while tcgen05.mma #" + std::to_string(id) + " writing it is in flight");
          else if (!saw_commit(w, w.cta, mma_issuer_[id], id))
            error("warp " + std::to_string(w.index) + " reads TMEM lane " + std::to_string(lane0 + lane) + ", column " +
                  std::to_string(col0 + c) + " written by tcgen05.mma #" + std::to_string(id) +
                  " without waiting on the barrier a tcgen05.commit tracking it arrived on (the accumulator is not "
                  "known to be final)");
        }
        regs[size_t(lane * n.columns + c)] = t.cells[cell];
      }
    ctas_[static_cast<size_t>(w.cta)].tmem_reads.push_back({w.index, lane0, col0, int64_t(n.columns)});
    return true;
  }

  // ---- the epilogue: the printed index math (EpilogueIndex) evaluated per lane, values moved as
  // the hardware holds them: wgmma's register fragment, tcgen05.ld's lanes, stmatrix's rows.
  // `at`: the lane's bindings after the pair's lets; value `e` of the pair. `staged_c`: C's value
  // as the kernel read it from the staging buffer; `col_bias` the column bias it loaded.
  float epilogue_op(const EpilogueStore& n, const EpilogueOp& op, float v, const Bindings& at, int e,
                    const std::optional<float>& staged_c, float col_bias) {
    switch (op.kind) {
      case EpilogueOp::Kind::Scale: return v * static_cast<float>(op.scalar);
      case EpilogueOp::Kind::AddScaled: {
        if (staged_c) return v + static_cast<float>(op.scalar) * *staged_c;
        if (!evaluate(n.index.inside[size_t(e)], at)) return v;
        return v + static_cast<float>(op.scalar) * read_c(evaluate(n.index.c_element[size_t(e)], at));
      }
      case EpilogueOp::Kind::AddBiasRows: {
        const int64_t row = bound(at, "row");
        return v + (row < m_ ? bias_.get(0, row) : 0.0f);
      }
      case EpilogueOp::Kind::AddBiasCols: return v + col_bias;
      case EpilogueOp::Kind::Relu: return std::fmax(v, 0.0f);
      case EpilogueOp::Kind::Gelu: {
        const float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        return 0.5f * v * (1.0f + std::tanh(inner));
      }
      case EpilogueOp::Kind::Silu: return v / (1.0f + std::exp(-v));
      case EpilogueOp::Kind::ActGrad: {
        float pre = 0.0f;  // C's value as the kernel reads it; past D's edge the value is not stored
        if (staged_c) pre = *staged_c;
        else if (!evaluate(n.index.inside[size_t(e)], at)) return v;
        else pre = read_c(evaluate(n.index.c_element[size_t(e)], at));
        return v * activation_grad(op.activation, pre);
      }
    }
    return v;
  }
  // C's element `c_at` as the epilogue reads it from global memory (0 and an error outside C).
  float read_c(int64_t c_at) {
    if (c_at < 0 || (c_at + 1) * c_.bytes() > int64_t(c_.data.size())) {
      error("the epilogue reads C at element " + std::to_string(c_at) + ", outside C");
      return 0.0f;
    }
    return sim::decode(c_.elem, c_.data.data() + c_at * c_.bytes());
  }
  // The device's derivatives (epilogue.cuh), in fp32 as it computes them.
  static float activation_grad(EpilogueOp::Kind activation, float x) {
    switch (activation) {
      case EpilogueOp::Kind::Relu: return x > 0.0f ? 1.0f : 0.0f;
      case EpilogueOp::Kind::Gelu: {
        const float t = std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x));
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608028654f * (1.0f + 0.134145f * x * x);
      }
      case EpilogueOp::Kind::Silu: {
        const float s = 1.0f / (1.0f + std::exp(-x));
        return s * (1.0f + x * (1.0f - s));
      }
      default: GG_INTERNAL_CHECK(false, "an activation gradient of a kind that is not an activation");
    }
    return 1.0f;
  }
  static int64_t bound(const Bindings& at, const char* name) {
    auto it = at.find(name);
    GG_INTERNAL_CHECK(it != at.end(), std::string("the epilogue's index math has no ") + name);
    return it->second;
  }
  static void bind(Bindings& at, const std::vector<IndexLet>& lets) {
    for (const auto& l : lets) at[l.name] = evaluate(l.value, at);
  }
  // The column bias at the pair's global columns named `col` and `col1`, zero past N.
  std::array<float, 2> col_bias(const EpilogueStore& n, const Bindings& at, const char* col, const char* col1) {
    if (!epilogue_inputs(n).col_bias) return {0.0f, 0.0f};
    std::array<float, 2> bias{};
    for (int e = 0; e < 2; ++e) {
      const int64_t c = bound(at, e ? col1 : col);
      bias[static_cast<size_t>(e)] = c < n_ ? bias_.get(0, c) : 0.0f;
    }
    return bias;
  }
  // `bytes` bytes at staged address `a` lie in the staging buffer.
  bool staging_holds(const EpilogueStore& n, int64_t a, int bytes) {
    const SmemBuffer& b = buffer(buffer_name(n.staging.buffer));
    if (a >= b.offset && a + bytes <= b.offset + b.bytes) return true;
    error("the epilogue addresses shared byte " + std::to_string(a) + ", outside " + b.name);
    return false;
  }
  // The pair's values after the ops: from registers `regs` (two values), C staged at `dst`.
  std::array<float, 2> pair_values(Warp& w, const EpilogueStore& n, const Bindings& at, std::array<float, 2> regs,
                                   const std::array<float, 2>& bias, rt::ElemType out) {
    const int ob = rt::elem_bytes(out);
    for (int e = 0; e < 2; ++e) {
      std::optional<float> staged_c;
      if (n.c_staged) {
        const int64_t a = bound(at, "dst") + e * ob;
        if (!staging_holds(n, a, ob)) return regs;
        async_read_check(w.cta, a, a + ob, "the epilogue's read of C from the staging buffer", &w);
        staged_c = sim::decode(out, ctas_[static_cast<size_t>(w.cta)].smem.bytes.data() + a);
      }
      for (const auto& op : n.ops) regs[e] = epilogue_op(n, op, regs[e], at, e, staged_c, bias[size_t(e)]);
    }
    return regs;
  }
  // Stores the pair at the staged address `dst` or, where inside D, at D's elements.
  void store_pair(Warp& w, const EpilogueStore& n, const Bindings& at, std::array<float, 2> v, rt::ElemType out) {
    const int ob = rt::elem_bytes(out);
    for (int e = 0; e < 2; ++e) {
      if (n.staged) {
        // A transposed staging from TMEM lanes: the pair's columns in two buffer rows.
        const bool two_rows = n.transposed_staging && n.fragment == Fragment::TmemLanes;
        const int64_t a = two_rows ? bound(at, e ? "dst1" : "dst") : bound(at, "dst") + e * ob;
        if (!staging_holds(n, a, ob)) return;
        uint8_t bytes[4];
        sim::encode(out, v[e], bytes);
        generic_write(w, a, bytes, ob, "the epilogue's staging write");
        continue;
      }
      if (!evaluate(n.index.inside[size_t(e)], at)) continue;
      // d_ (and aux_) hold D as it lies in memory
      const int64_t d_at = evaluate(n.index.d_element[size_t(e)], at);
      GlobalTensor& to = tensor(n.output);
      if (d_at < 0 || (d_at + 1) * ob > int64_t(to.data.size()))
        error(std::string("the epilogue stores ") + rt::operand_name(n.output) + " at element " + std::to_string(d_at) +
              ", outside it");
      else
        sim::encode(out, v[e], to.data.data() + d_at * ob);
    }
  }
  bool exec(Warp& w, Frame&, const EpilogueStore& n) {
    const EpilogueIndex& ix = n.index;
    const auto out = n.out_type == "f32" ? rt::ElemType::F32 : n.out_type == "bf16" ? rt::ElemType::BF16 : rt::ElemType::F16;
    const int64_t group_begin = eval(w, ix.group_begin), group_end = eval(w, ix.group_end);
    std::array<Bindings, kWarpSize> lanes;
    for (int lane = 0; lane < kWarpSize; ++lane) {
      lanes[lane] = w.vars;
      lanes[lane]["threadIdx.x"] = int64_t(w.index) * kWarpSize + lane;
      if (n.staged) lanes[lane]["staging"] = smem_offset(w, n.staging, 0, "epilogue staging");
      bind(lanes[lane], ix.thread);
    }
    if (n.fragment == Fragment::TmemLanes) {
      // tcgen05.ld.32x32b: lane l of the warp holds TMEM lane 32 (warp % 4) + l, registers the
      // load's columns.
      const auto& acc = w.acc[n.accumulator];
      if (int64_t(acc.size()) != int64_t(kWarpSize) * n.cols) {
        error("the epilogue reads " + std::to_string(n.cols) + " columns of " + n.accumulator + ", which holds " +
              std::to_string(acc.size() / kWarpSize));
        return true;
      }
      if (n.reduce && n.reduce->along == EpilogueReduction::Along::Rows)
        return tmem_row_share(w, n, lanes, acc, group_begin, group_end, out);
      if (n.reduce) return tmem_column_share(w, n, lanes, acc, group_begin, group_end, out);
      for (int lane = 0; lane < kWarpSize; ++lane) {
        Bindings& at = lanes[lane];
        if (ix.lane_guard && !evaluate(ix.lane_guard, at)) continue;
        for (int64_t p = group_begin; p < group_end; ++p) {
          const int64_t reg = tmem_pair_register(n, at, p);
          if (reg < 0) return true;
          const auto base = static_cast<size_t>(lane * n.cols + reg);
          store_pair(w, n, at, pair_values(w, n, at, {acc[base], acc[base + 1]}, col_bias(n, at, "col", "col1"), out), out);
        }
      }
      return true;
    }
    if (n.stmatrix) return stmatrix_store(w, n, lanes, group_begin, group_end, out);
    if (n.reduce) return reduce_share(w, n, lanes, group_begin, group_end, out);
    walk_fragment(w, n, lanes, group_begin, group_end, out,
                  [&](int, Bindings& at, int, int, const std::array<float, 2>& v) { store_pair(w, n, at, v, out); },
                  [](int64_t) {});
    return true;
  }
  // The wgmma fragment's pairs in the printed loops' order per lane: for each column group j, each
  // lane's blocks b and halves h, `pair(lane, bindings, b, h, values after the ops)`; then
  // `group_done(j)` once every lane has passed group j. False where a register lies outside the
  // accumulator (reported).
  template <class Pair, class GroupDone>
  bool walk_fragment(Warp& w, const EpilogueStore& n, std::array<Bindings, kWarpSize>& lanes, int64_t group_begin,
                     int64_t group_end, rt::ElemType out, Pair pair, GroupDone group_done) {
    const EpilogueIndex& ix = n.index;
    for (int64_t j = group_begin; j < group_end; ++j) {
      for (int lane = 0; lane < kWarpSize; ++lane) {
        Bindings& at = lanes[size_t(lane)];
        at["j"] = j;
        bind(at, ix.group);
        const std::array<float, 2> bias = col_bias(n, at, "col", "col1");
        for (int b = 0; b < n.blocks; ++b)
          for (int h = 0; h < 2; ++h) {
            at["b"] = b;
            at["h"] = h;
            bind(at, ix.pair);
            const auto regs = fragment_pair(w, n, lane, b, bound(at, "reg"));
            if (!regs) return false;
            pair(lane, at, b, h, pair_values(w, n, at, *regs, bias, out));
          }
      }
      group_done(j);
    }
    return true;
  }
  // A reduction's share of the tile, as the printer's reducing_store adds it: each lane's values of
  // a row (over j, then the pair's two) or of a column pair (over b, h), inside D only; then lane l
  // adds lane l ^ mask's sum for each mask in order; lanes 0..3 of each quad (row), or of the warp
  // (column), store the sums at their workspace partials.
  // The first register of column pair `p` of a TMEM chunk's store at the lane's bindings `at`
  // (bound there); -1 where it lies outside the chunk (reported).
  int64_t tmem_pair_register(const EpilogueStore& n, Bindings& at, int64_t p) {
    at["p"] = p;
    bind(at, n.index.group);
    const int64_t reg = bound(at, "reg");
    if (reg >= 0 && reg + 1 < n.cols) return reg;
    error("the epilogue reads register " + std::to_string(reg) + " of a " + std::to_string(n.cols) + "-column TMEM load");
    return -1;
  }
  // A column reduction out of TMEM lanes (the printer's tmem_reducing_store): per column pair, the
  // band's rows inside the problem summed over the warp's lanes, lane 0's partials stored.
  bool tmem_column_share(Warp& w, const EpilogueStore& n, std::array<Bindings, kWarpSize>& lanes,
                         const std::vector<float>& acc, int64_t group_begin, int64_t group_end, rt::ElemType out) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    allocate_reduction_workspace();
    using Sums = std::array<float, kWarpSize>;
    for (int64_t p = group_begin; p < group_end; ++p) {
      std::array<Sums, 2> terms{};  // per value of the pair, per lane
      for (int lane = 0; lane < kWarpSize; ++lane) {
        Bindings& at = lanes[size_t(lane)];
        const int64_t reg = tmem_pair_register(n, at, p);
        if (reg < 0) return true;
        if (ix.lane_guard && !evaluate(ix.lane_guard, at)) continue;
        const auto base = static_cast<size_t>(lane * n.cols + reg);
        const std::array<float, 2> v = pair_values(w, n, at, {acc[base], acc[base + 1]}, col_bias(n, at, "col", "col1"), out);
        for (int e = 0; e < 2; ++e)
          if (evaluate(ix.inside[size_t(e)], at)) terms[size_t(e)][size_t(lane)] = r.squares ? v[size_t(e)] * v[size_t(e)] : v[size_t(e)];
      }
      // The printed shuffles: lane l adds lane l ^ mask's running sum, mask by mask; lane 0 stores.
      std::array<float, 2> sums{};
      for (int e = 0; e < 2; ++e) {
        Sums s = terms[size_t(e)];
        for (int mask : r.lane_masks) {
          Sums next{};
          for (int lane = 0; lane < kWarpSize; ++lane) next[size_t(lane)] = s[size_t(lane)] + s[size_t(lane ^ mask)];
          s = next;
        }
        sums[size_t(e)] = s[0];
      }
      const int64_t record = p_.epilogue.reduction_workspace.record_words();
      for (int e = 0; e < 2; ++e) {
        const int64_t i = evaluate(ix.partial_col[size_t(e)], lanes[0]);
        if (i < 0 || i >= int64_t(reduction_partials_.size()) || i % record < 2) {
          error("a reduction stores a partial at workspace word " + std::to_string(i) + ", outside its " +
                std::to_string(reduction_partials_.size()) + " or on a record's ticket counter");
          return true;
        }
        reduction_partials_[size_t(i)] = sums[size_t(e)];
      }
    }
    return true;
  }
  // A row reduction out of TMEM lanes (the printer's tmem_row_share): each lane sums its row's values
  // of the chunk inside the problem, in pair order, and stores the chunk's partial of its row.
  bool tmem_row_share(Warp& w, const EpilogueStore& n, std::array<Bindings, kWarpSize>& lanes,
                      const std::vector<float>& acc, int64_t group_begin, int64_t group_end, rt::ElemType out) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    allocate_reduction_workspace();
    for (int lane = 0; lane < kWarpSize; ++lane) {
      Bindings& at = lanes[size_t(lane)];
      float sum = 0.0f;
      for (int64_t p = group_begin; p < group_end; ++p) {
        const int64_t reg = tmem_pair_register(n, at, p);
        if (reg < 0) return true;
        const auto base = static_cast<size_t>(lane * n.cols + reg);
        const std::array<float, 2> v = pair_values(w, n, at, {acc[base], acc[base + 1]}, col_bias(n, at, "col", "col1"), out);
        for (int e = 0; e < 2; ++e)
          if (evaluate(ix.inside[size_t(e)], at)) sum += r.squares ? v[size_t(e)] * v[size_t(e)] : v[size_t(e)];
      }
      if (ix.lane_guard && !evaluate(ix.lane_guard, at)) continue;
      const int64_t i = evaluate(ix.partial_row, at);
      const int64_t record = p_.epilogue.reduction_workspace.record_words();
      if (i < 0 || i >= int64_t(reduction_partials_.size()) || i % record < 2) {
        error("a reduction stores a partial at workspace word " + std::to_string(i) + ", outside its " +
              std::to_string(reduction_partials_.size()) + " or on a record's ticket counter");
        return true;
      }
      reduction_partials_[size_t(i)] = sum;
    }
    return true;
  }
  bool reduce_share(Warp& w, const EpilogueStore& n, std::array<Bindings, kWarpSize>& lanes, int64_t group_begin,
                    int64_t group_end, rt::ElemType out) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    const bool rows = r.along == EpilogueReduction::Along::Rows;
    allocate_reduction_workspace();
    using Sums = std::array<float, kWarpSize>;
    const auto butterfly = [&](Sums v) {
      for (int mask : r.lane_masks) {
        Sums next{};
        for (int lane = 0; lane < kWarpSize; ++lane) next[size_t(lane)] = v[size_t(lane)] + v[size_t(lane ^ mask)];
        v = next;
      }
      return v;
    };
    const auto store = [&](const Bindings& at, const ExprPtr& where, float value) {
      const int64_t i = evaluate(where, at);
      const int64_t record = p_.epilogue.reduction_workspace.record_words();
      if (i < 0 || i >= int64_t(reduction_partials_.size()) || i % record < 2) {
        error("a reduction stores a partial at workspace word " + std::to_string(i) + ", outside its " +
              std::to_string(reduction_partials_.size()) + " or on a record's ticket counter");
        return;
      }
      reduction_partials_[size_t(i)] = value;
    };
    std::vector<std::array<Sums, 2>> row_sums(static_cast<size_t>(n.blocks));  // [b][h] per lane
    for (auto& bh : row_sums) bh = {Sums{}, Sums{}};
    std::array<Sums, 2> col_sums{};  // the column group's, per lane
    const bool walked = walk_fragment(
        w, n, lanes, group_begin, group_end, out,
        [&](int lane, const Bindings& at, int b, int h, const std::array<float, 2>& v) {
          for (int e = 0; e < 2; ++e) {
            if (!evaluate(ix.inside[size_t(e)], at)) continue;
            const float term = r.squares ? v[size_t(e)] * v[size_t(e)] : v[size_t(e)];
            float& sum = rows ? row_sums[size_t(b)][size_t(h)][size_t(lane)] : col_sums[size_t(e)][size_t(lane)];
            sum += term;
          }
        },
        [&](int64_t) {
          if (rows) return;
          for (int e = 0; e < 2; ++e) {
            const Sums total = butterfly(col_sums[size_t(e)]);
            for (int lane = 0; lane < 4; ++lane) store(lanes[size_t(lane)], ix.partial_col[size_t(e)], total[size_t(lane)]);
          }
          col_sums = {};
        });
    if (!walked) return true;
    for (int b = 0; rows && b < n.blocks; ++b)
      for (int h = 0; h < 2; ++h) {
        const Sums total = butterfly(row_sums[size_t(b)][size_t(h)]);
        for (int lane = 0; lane < kWarpSize; lane += 4) {
          Bindings& at = lanes[size_t(lane)];
          at["b"] = b;
          at["h"] = h;
          store(at, ix.partial_row, total[size_t(lane)]);
        }
      }
    return true;
  }
  void allocate_reduction_workspace() {
    if (!reduction_partials_.empty()) return;
    const ReductionWorkspace& ws = p_.epilogue.reduction_workspace;
    reduction_slots_ = ws.slot_count ? evaluate(ws.slot_count, {{"args.m", m_}, {"args.n", n_}}) : ws.slots;
    reduction_partials_.assign(static_cast<size_t>(reduction_slots_ * ws.record_words()), std::nanf(""));
  }
  // The band's last CTA: each of its elements' partials in slot order, then part order.
  bool exec(Warp& w, Frame&, const ReductionCombine& n) {
    const bool rows = n.along == EpilogueReduction::Along::Rows;
    std::vector<float>& out = rows ? row_reduction_ : col_reduction_;
    const int64_t element0 = eval(w, n.element0), limit = eval(w, n.limit), out_offset = eval(w, n.out_offset);
    const int64_t first_slot = eval(w, n.first_slot), stride = eval(w, n.slot_stride), count = eval(w, n.slots_in_band);
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int64_t t = int64_t(w.index) * kWarpSize + lane - n.first_thread;
      if (t < 0 || t >= n.threads) continue;
      for (int64_t i = t; i < n.elements; i += n.threads) {
        const int64_t at = element0 + i;
        if (at >= limit) break;
        float sum = 0.0f;
        for (int64_t s = 0; s < count; ++s)
          for (int part = 0; part < n.parts; ++part) {
            const int64_t f = (first_slot + s * stride) * n.ws.record_words() + 2 + n.part0 + i +
                              int64_t(part) * n.part_stride;
            if (f < 0 || f >= int64_t(reduction_partials_.size())) {
              error("a reduction's combine reads workspace float " + std::to_string(f) + ", outside its " +
                    std::to_string(reduction_partials_.size()));
              return true;
            }
            if (std::isnan(reduction_partials_[size_t(f)])) {
              error("a reduction's combine reads workspace float " + std::to_string(f) + " (slot " +
                    std::to_string(first_slot + s * stride) + "), which no tile's share wrote");
              return true;
            }
            sum += reduction_partials_[size_t(f)];
          }
        const int64_t o = out_offset + at;
        if (o < 0 || o >= int64_t(out.size())) {
          error(std::string("a reduction stores ") + n.out + "[" + std::to_string(o) + "], outside its " +
                std::to_string(out.size()));
          return true;
        }
        out[size_t(o)] = sum;
      }
    }
    return true;
  }

  // Registers (reg, reg + 1) of block b of `lane`, where wgmma put them.
  std::optional<std::array<float, 2>> fragment_pair(Warp& w, const EpilogueStore& n, int lane, int b, int64_t reg) {
    const int regs = w.acc_n[n.accumulator] / 2;  // per block: 4 per 8 columns
    if (b >= n.blocks || reg < 0 || reg + 1 >= regs) {
      error("the epilogue reads register " + std::to_string(reg) + " of block " + std::to_string(b) + " of " +
            n.accumulator + ", which holds " + std::to_string(regs) + " per block");
      return std::nullopt;
    }
    return std::array<float, 2>{fragment(w, n.accumulator, lane, b, static_cast<int>(reg)),
                                fragment(w, n.accumulator, lane, b, static_cast<int>(reg) + 1)};
  }
  // stmatrix.x4: lane l's register q packs its fragment pair of matrix q; the 8 rows of matrix q
  // go to the addresses lanes 8 q .. 8 q + 7 give, row r from lanes 4 r .. 4 r + 3, 4 bytes each.
  bool stmatrix_store(Warp& w, const EpilogueStore& n, std::array<Bindings, kWarpSize>& lanes, int64_t group_begin,
                      int64_t group_end, rt::ElemType out) {
    const EpilogueIndex& ix = n.index;
    GG_INTERNAL_CHECK(rt::elem_bytes(out) == 2, "stmatrix stores 16-bit values");
    for (int64_t jj = group_begin; jj < group_end; ++jj)
      for (int b = 0; b < n.blocks; ++b) {
        std::array<std::array<std::array<float, 2>, 4>, kWarpSize> pairs;
        std::array<int64_t, kWarpSize> row_dst;
        for (int lane = 0; lane < kWarpSize; ++lane) {
          Bindings& at = lanes[lane];
          at["jj"] = jj;
          at["b"] = b;
          std::array<std::array<float, 2>, 2> bias{};  // bias_pair[g]: the column bias of matrices 2 g, 2 g + 1
          for (int g = 0; g < 2 && !ix.bias_group.empty(); ++g) {
            at["g"] = g;
            bind(at, ix.bias_group);
            bias[size_t(g)] = col_bias(n, at, "col_g", "col_g1");
          }
          for (int q = 0; q < 4; ++q) {
            at["q"] = q;
            bind(at, ix.pair);
            const auto regs = fragment_pair(w, n, lane, b, bound(at, "reg"));
            if (!regs) return true;
            pairs[size_t(lane)][size_t(q)] = pair_values(w, n, at, *regs, bias[size_t(q / 2)], out);
          }
          bind(at, ix.matrix_row);
          row_dst[lane] = bound(at, "row_dst");
        }
        if (n.transposed_staging) {
          // .trans: the address of lane 8 q + i takes matrix q's column i, its rows r = 0..7 from
          // lanes 4 r + i / 2 (value i % 2 of their pair), 2 bytes each.
          for (int q = 0; q < 4; ++q)
            for (int i = 0; i < 8; ++i)
              for (int r = 0; r < 8; ++r) {
                const int64_t a = row_dst[size_t(8 * q + i)] + 2 * r;
                if (!staging_holds(n, a, 2)) return true;
                uint8_t bytes[2];
                sim::encode(out, pairs[size_t(4 * r + i / 2)][size_t(q)][size_t(i % 2)], bytes);
                generic_write(w, a, bytes, 2, "the epilogue's stmatrix.trans write");
              }
          continue;
        }
        for (int q = 0; q < 4; ++q)
          for (int r = 0; r < 8; ++r)
            for (int k = 0; k < 4; ++k) {
              const int lane = 4 * r + k;
              const int64_t a = row_dst[size_t(8 * q + r)] + 4 * k;
              if (!staging_holds(n, a, 4)) return true;
              uint8_t bytes[4];
              sim::encode(out, pairs[lane][q][0], bytes);
              sim::encode(out, pairs[lane][q][1], bytes + 2);
              generic_write(w, a, bytes, 4, "the epilogue's stmatrix write");
            }
      }
    return true;
  }

  // ---- split-K: the workspace in global memory, [slots][splits][per_thread][threads] floats and a
  // ticket counter per slot; register i of a lane is the wgmma fragment element the epilogue reads.
  float& fragment(Warp& w, const std::string& acc, int lane, int b, int i) {
    const int N = w.acc_n[acc], j = i / 4, h = (i % 4) / 2, e = i % 2;
    return w.acc[acc][static_cast<size_t>((b * 16 + lane / 4 + 8 * h) * N + 8 * j + 2 * (lane % 4) + e)];
  }
  // A split-K node's register i of block b in `lane`: the wgmma fragment's, or a TMEM chunk's (the
  // tcgen05.ld's registers, lane-major); and its index among the thread's partial sums.
  template <class Node>
  float& partial_reg(Warp& w, const Node& n, int lane, int b, int i) {
    if (n.fragment == Fragment::Wgmma) return fragment(w, n.accumulator, lane, b, i);
    std::vector<float>& chunk = w.acc[n.accumulator];
    if (chunk.size() != size_t(kWarpSize) * size_t(n.regs)) {
      error("split-K reads " + std::to_string(n.regs) + " registers of TMEM chunk " + n.accumulator + ", which holds " +
            std::to_string(chunk.size() / kWarpSize));
      chunk.assign(size_t(kWarpSize) * size_t(n.regs), std::nanf(""));
    }
    return chunk[size_t(lane) * size_t(n.regs) + size_t(i)];
  }
  template <class Node>
  int64_t partial_index(Warp& w, const Node& n, int b, int i) {
    const int64_t index = (n.element0 ? eval(w, n.element0) : 0) + int64_t(b) * n.regs + i;
    if (index < 0 || index >= n.ws.per_thread) {
      error("split-K partial sum " + std::to_string(index) + " of a thread outside its " +
            std::to_string(n.ws.per_thread) + " in the workspace");
      return 0;
    }
    return index;
  }
  // fn(lane, t, b, i) for each accumulator register i of block b of each lane holding the tile (t: its
  // thread within the tile).
  template <class Node, class Fn>
  void each_fragment(const Warp& w, const Node& n, Fn fn) {
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int64_t t = int64_t(w.index) * kWarpSize + lane - n.first_thread;
      if (t < 0 || t >= n.ws.threads) continue;
      for (int b = 0; b < n.blocks; ++b)
        for (int i = 0; i < n.regs; ++i) fn(lane, t, b, i);
    }
  }
  void allocate_workspace(const SplitKWorkspace& ws) {
    if (!partials_.empty()) return;
    slots_ = ws.slot_count ? evaluate(ws.slot_count, {{"args.m", m_}, {"args.n", n_}}) : ws.slots;
    partials_.assign(static_cast<size_t>(slots_ * ws.splits * ws.tile_floats()), std::nanf(""));
  }
  bool exec(Warp& w, Frame&, const PartialStore& n) {
    allocate_workspace(n.ws);
    const int64_t slot = eval(w, n.slot), split = eval(w, n.split);
    if (slot < 0 || slot >= slots_ || split < 0 || split >= n.ws.splits) {
      error("split-K partial store to slot " + std::to_string(slot) + ", split " + std::to_string(split) +
            " outside the workspace's " + std::to_string(slots_) + " x " + std::to_string(n.ws.splits));
      return true;
    }
    each_fragment(w, n, [&](int lane, int64_t t, int b, int i) {
      partials_[static_cast<size_t>(n.ws.partial(slot, split, partial_index(w, n, b, i), t))] =
          partial_reg(w, n, lane, b, i);
    });
    return true;
  }
  bool exec(Warp& w, Frame& f, const TileTicket& n) {
    Cta& cta = ctas_[static_cast<size_t>(w.cta)];
    if (!f.entered && n.when && eval(w, n.when) == 0) {  // not a shared tile: no ticket
      w.vars[n.result] = 1;
      return true;
    }
    // The elected thread takes the ticket before its warp arrives; the CTA's threads learn the outcome
    // by the barrier's phase they arrive in.
    if (!f.entered && w.index == n.first_thread / kWarpSize) {  // its lane 0 is the elected thread
      const int64_t id = eval(w, n.barrier);
      const std::pair<int64_t, int64_t> phase = {id, cta.named[static_cast<int>(id)].generation};
      const int64_t counter = eval(w, n.counter), records = eval(w, n.counters);
      if (counter < 0 || counter >= records * n.record_words)
        error("a ticket on word " + std::to_string(counter) + ", outside the workspace's " + std::to_string(records) +
              " records of " + std::to_string(n.record_words) + " words");
      uint32_t& ticket = tickets_[counter];  // the device's atomicAdd, then its rule
      const auto arrivals = static_cast<unsigned>(eval(w, n.arrivals));
      const bool last = n.claim ? gg::dev::claim_is_last(ticket++, arrivals) : gg::dev::ticket_is_last(ticket++, arrivals);
      cta.ticket_last[phase] = last;
      if (last && !n.claim) ticket = 0;  // claimed first: the last resets it after the others' count
    }
    if (!named_wait(w, f, n.barrier, n.threads, "bar.red.or", "ticket at named barrier")) return false;
    w.vars[n.result] = cta.ticket_last[{f.value, f.generation}] ? 1 : 0;
    return true;
  }
  // Claimed first: the CTA that is not last counts its stored sums; from then on the last may read them.
  bool exec(Warp& w, Frame&, const PartialsStored& n) {
    if (w.index != n.first_thread / kWarpSize) return true;  // its lane 0 is the elected thread
    tickets_[eval(w, n.counter)] += gg::dev::stored_increment();
    counted_partials_.insert({eval(w, n.slot), eval(w, n.split)});
    return true;
  }
  // The last CTA's elected thread waits for the others' count, resets the counter, then every warp
  // meets at the named barrier.
  bool exec(Warp& w, Frame& f, const AwaitPartials& n) {
    if (!f.entered && w.index == n.first_thread / kWarpSize) {
      uint32_t& word = tickets_[eval(w, n.counter)];
      w.blocked = "waiting for the split-K partial sums of the tile's other CTAs (counter " + std::to_string(word) + ")";
      if (!gg::dev::others_stored(word, static_cast<unsigned>(eval(w, n.arrivals)))) return false;
      word = 0;
      awaited_.insert({w.cta, eval(w, n.counter)});
    }
    return named_wait(w, f, n.barrier, n.threads, "bar.sync", "after the split-K wait, named barrier");
  }
  // Two splits, claimed first: this CTA's sums are its registers; the other's must have been counted stored.
  bool own_and_other(Warp& w, const PartialReduce& n, int64_t slot) {
    const int64_t own = eval(w, n.own);
    if (own < 0 || own > 1) {
      error("a split-K reduction in registers for split " + std::to_string(own) + " of 2");
      return false;
    }
    if (!awaited_.count({w.cta, slot * n.ws.record_words()})) {
      error("split " + std::to_string(own) + " read the other split's partial sums of slot " + std::to_string(slot) +
            " without waiting for their count (no tile_await_partials before the reduction)");
      return false;
    }
    if (!counted_partials_.count({slot, 1 - own})) {
      error("split " + std::to_string(own) + " read split " + std::to_string(1 - own) + "'s partial sums of slot " +
            std::to_string(slot) + " before that CTA counted them stored");
      return false;
    }
    each_fragment(w, n, [&](int lane, int64_t t, int b, int i) {
      float& mine = partial_reg(w, n, lane, b, i);
      const float theirs = partials_[static_cast<size_t>(n.ws.partial(slot, 1 - own, partial_index(w, n, b, i), t))];
      mine = own == 0 ? (0.0f + mine) + theirs : (0.0f + theirs) + mine;
    });
    return true;
  }
  bool exec(Warp& w, Frame&, const PartialReduce& n) {
    allocate_workspace(n.ws);  // (poisoned: a reduction of sums no split stored reads NaN)
    if (n.own) return own_and_other(w, n, eval(w, n.slot));
    const int64_t slot = eval(w, n.slot), pieces = n.pieces ? eval(w, n.pieces) : n.ws.splits;
    if (pieces < 1 || pieces > n.ws.splits) {
      error("a tile's partial sums reduced over " + std::to_string(pieces) + " splits, outside the workspace's 1.." +
            std::to_string(n.ws.splits));
      return false;
    }
    each_fragment(w, n, [&](int lane, int64_t t, int b, int i) {
      float sum = 0.0f;
      for (int64_t s = 0; s < pieces; ++s)
        sum += partials_[static_cast<size_t>(n.ws.partial(slot, s, partial_index(w, n, b, i), t))];
      partial_reg(w, n, lane, b, i) = sum;
    });
    return true;
  }

  // ---- bookkeeping
  int64_t live_warps(int cta) const {
    int64_t n = 0;
    for (const auto& w : warps_) n += w.cta == cta && !w.done;
    return n;
  }
  void check_cta_exit(int cta) {
    if (live_warps(cta) == 0) ctas_[static_cast<size_t>(cta)].exited = true;
  }
  bool stopped() const { return int(r_.errors.size()) >= o_.max_errors || r_.steps > o_.max_steps; }
  void error(const std::string& what) {
    if (int(r_.errors.size()) < o_.max_errors) r_.errors.push_back(what);
  }

  void compare_output() {
    for (const auto& [counter, value] : tickets_)
      if (value != 0) {
        error("ticket counter " + std::to_string(counter) + " ends at " + std::to_string(value) +
              ", not reset to 0 for the next launch");
        break;
      }
    compare_reductions();
    // A strided or batched D: the elements between its rows and matrices belong to someone else
    // and stay untouched.
    const std::vector<bool> in_d = d_.in_matrices();
    for (size_t e = 0; e < in_d.size(); ++e)
      if (!in_d[e] && !d_.is_poison(0, static_cast<int64_t>(e))) {
        const int64_t b = d_.batch_stride ? int64_t(e) / d_.batch_stride : 0, in = int64_t(e) - b * d_.batch_stride;
        error("the kernel wrote D's padding: element " + std::to_string(e) + " (matrix " + std::to_string(b) +
              ", stored row " + std::to_string(in / d_.ld) + ", element " + std::to_string(in % d_.ld) +
              ") lies outside the matrices' " + std::to_string(d_.rows) + " rows of " + std::to_string(d_.cols) +
              " elements (leading dimension " + std::to_string(d_.ld) + ")");
        break;
      }
    const HostMatrices none;
    const HostMatrices& c = host_.count(c_name_) ? host_[c_name_] : none;
    const HostMatrices& bias = host_.count(bias_name_) ? host_[bias_name_] : none;
    const HostMatrices& av = host_[def_.node(def_.matmul_node().operands[0]).name];
    const HostMatrices& bv = host_[def_.node(def_.matmul_node().operands[1]).name];
    bool exact_ops = true;
    for (const auto& op : p_.epilogue.ops)
      for (EpilogueOp::Kind k : {op.kind, op.kind == EpilogueOp::Kind::ActGrad ? op.activation : op.kind})
        exact_ops = exact_ops && k != EpilogueOp::Kind::Gelu && k != EpilogueOp::Kind::Silu;
    // Contiguous groups: D's row i is its group's (A's row i times the group's B), and a row in
    // no group stays untouched.
    const std::vector<int64_t> group_of = p_.contiguous ? row_groups() : std::vector<int64_t>{};
    // Variable K: each group's range of K (else all of K).
    std::vector<std::pair<int64_t, int64_t>> k_ranges(static_cast<size_t>(p_.layouts.batch), {0, p_.k});
    const std::vector<int64_t> offsets = group_offsets();
    for (int64_t g = 0; p_.varlen_k && g < p_.layouts.batch; ++g) k_ranges[size_t(g)] = group_span(offsets, g, p_.k);
    // Pointer arrays: each group's K (negative as 0, at most the planned K the tensors hold).
    for (int64_t g = 0; p_.pointer_array && g < p_.layouts.batch; ++g)
      k_ranges[size_t(g)] = {0, std::clamp<int64_t>(group_sizes(g)[2], 0, p_.k)};
    const auto check = [&](int64_t b, int64_t i, int64_t j, const std::string& at, const std::vector<float>& c_b) {
      const auto [k_lo, k_hi] = k_ranges[size_t(b)];
      const int64_t di = p_.layouts.d_column_major ? j : i, dj = p_.layouts.d_column_major ? i : j;
      if (d_.is_poison(di, dj, b)) {
        if (r_.unwritten++ == 0 && r_.first_mismatch.empty())
          r_.first_mismatch = at + std::to_string(i) + "][" + std::to_string(j) + "] never written";
        return;
      }
      double acc = 0;
      for (int64_t kk = k_lo; kk < k_hi; ++kk)
        acc += double(av.at(b, i, kk)) * bv.at(b, j, kk) * scale_a_at(b, i, kk) * scale_b_at(b, j, kk);
      double want = rt::round_to(d_.elem, apply_epilogue(def_, acc, i, j, c_b, bias.values));
      double got = d_.get(di, dj, b);
      bool ok = exact_ops ? got == want : std::fabs(got - want) <= 1e-2 * (1 + std::fabs(want));
      if (!ok && r_.mismatches++ == 0)
        r_.first_mismatch = at + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(got) +
                            ", reference " + std::to_string(want);
      if (!p_.epilogue.saves()) return;
      // the saved output: the value of the saved node, stored where D's element lies
      const std::string saved_at = def_.saved_name() + at.substr(1) + std::to_string(i) + "][" + std::to_string(j) + "]";
      if (aux_.is_poison(di, dj, b)) {
        if (r_.unwritten++ == 0 && r_.first_mismatch.empty()) r_.first_mismatch = saved_at + " never written";
        return;
      }
      want = rt::round_to(d_.elem, apply_epilogue(def_, acc, i, j, c_b, bias.values, def_.saved_output()));
      got = aux_.get(di, dj, b);
      ok = exact_ops ? got == want : std::fabs(got - want) <= 1e-2 * (1 + std::fabs(want));
      if (!ok && r_.mismatches++ == 0)
        r_.first_mismatch = saved_at + " = " + std::to_string(got) + ", reference " + std::to_string(want);
    };
    if (p_.contiguous) {
      const std::vector<float> c_all = c.matrix(0);
      for (int64_t i = 0; i < m_; ++i)
        for (int64_t j = 0; j < n_; ++j) {
          const int64_t g = group_of[static_cast<size_t>(i)];
          const int64_t di = p_.layouts.d_column_major ? j : i, dj = p_.layouts.d_column_major ? i : j;
          if (g >= 0) {
            check(g, i, j, "D (group " + std::to_string(g) + ")[", c_all);
          } else if (!d_.is_poison(di, dj) && r_.mismatches++ == 0) {
            r_.first_mismatch = "D[" + std::to_string(i) + "][" + std::to_string(j) + "] written, in no group's rows";
          }
        }
      return;
    }
    for (int64_t b = 0; b < p_.layouts.batch; ++b) {
      const std::vector<float> c_b = c.matrix(b);
      const std::string at = p_.layouts.batch > 1 ? "D[" + std::to_string(b) + "][" : "D[";
      // Masked groups: rows past the group's rows in use are unchecked in its last tile (the tile is
      // stored whole) and must stay untouched in the tiles past it.
      const int64_t used = group_rows(b), stored = std::min(m_, (used + p_.tile_m - 1) / p_.tile_m * p_.tile_m);
      // Pointer arrays: the group's own rows and columns; D past them must stay untouched.
      const int64_t rows = p_.pointer_array ? std::clamp<int64_t>(group_sizes(b)[0], 0, m_) : m_;
      const int64_t cols = p_.pointer_array ? std::clamp<int64_t>(group_sizes(b)[1], 0, n_) : n_;
      for (int64_t i = 0; i < m_; ++i)
        for (int64_t j = 0; j < n_; ++j) {
          const int64_t di = p_.layouts.d_column_major ? j : i, dj = p_.layouts.d_column_major ? i : j;
          if (i >= rows || j >= cols) {
            if (!d_.is_poison(di, dj, b) && r_.mismatches++ == 0)
              r_.first_mismatch = at + std::to_string(i) + "][" + std::to_string(j) + "] written, outside group " +
                                  std::to_string(b) + "'s " + std::to_string(rows) + " x " + std::to_string(cols);
            continue;
          }
          if (i >= stored) {
            if (!d_.is_poison(di, dj, b) && r_.mismatches++ == 0)
              r_.first_mismatch = at + std::to_string(i) + "][" + std::to_string(j) + "] written, past group " +
                                  std::to_string(b) + "'s " + std::to_string(used) + " rows in use";
            continue;
          }
          if (i >= used) continue;
          check(b, i, j, at, c_b);
        }
    }
  }

  // Each reduction's vector against the host's sum (in double) of the reduced node's values: exact
  // where every value and sum is a small integer (integer ops, sums below 2^24), else within 1e-5
  // of the sum of the terms' magnitudes.
  void compare_reductions() {
    if (def_.reductions().empty()) return;
    const HostMatrices none;
    const HostMatrices& c = host_.count(c_name_) ? host_[c_name_] : none;
    const HostMatrices& bias = host_.count(bias_name_) ? host_[bias_name_] : none;
    const HostMatrices& av = host_[def_.node(def_.matmul_node().operands[0]).name];
    const HostMatrices& bv = host_[def_.node(def_.matmul_node().operands[1]).name];
    for (const Reduction& r : def_.reductions()) {
      const bool rows = r.along == ReduceAlong::Rows;
      const std::vector<float>& got = rows ? row_reduction_ : col_reduction_;
      const int64_t length = rows ? m_ : n_, across = rows ? n_ : m_;
      for (int64_t b = 0; b < p_.layouts.batch; ++b) {
        const std::vector<float> c_b = c.matrix(b);
        for (int64_t x = 0; x < length; ++x) {
          double want = 0, magnitude = 0;
          bool integral = true;
          for (int64_t y = 0; y < across; ++y) {
            const int64_t i = rows ? x : y, j = rows ? y : x;
            double acc = 0;
            for (int64_t kk = 0; kk < p_.k; ++kk)
              acc += double(av.at(b, i, kk)) * bv.at(b, j, kk) * scale_a_at(b, i, kk) * scale_b_at(b, j, kk);
            const double v = apply_epilogue(def_, acc, i, j, c_b, bias.values, r.node);
            const double term = r.op == ReduceOp::SumSquares ? v * v : v;
            want += term;
            magnitude += std::fabs(term);
            integral = integral && term == std::round(term);
          }
          const float g = got[size_t(b * length + x)];
          const std::string at = r.name + (p_.layouts.batch > 1 ? "[" + std::to_string(b) + "]" : "") + "[" +
                                 std::to_string(x) + "]";
          if (std::isnan(g)) {
            if (r_.unwritten++ == 0 && r_.first_mismatch.empty()) r_.first_mismatch = at + " never written";
            continue;
          }
          const bool ok = integral && magnitude < 16777216.0 ? double(g) == want
                                                             : std::fabs(double(g) - want) <= 1e-5 * magnitude + 1e-30;
          if (!ok && r_.mismatches++ == 0)
            r_.first_mismatch = at + " = " + std::to_string(g) + ", reference " + std::to_string(want);
        }
      }
    }
  }

  const Kernel& k_;
  const KernelPlan& p_;
  const Definition& def_;
  const SimulateOptions& o_;
  SimulationReport& r_;
  std::mt19937_64 rng_;
  int64_t m_ = 0, n_ = 0;          // the launch's sizes (args.m, args.n)
  rt::MatrixLayouts layouts_;      // resolved for them, as the launch fills GgGemmArgs
  std::array<unsigned, 3> grid_;   // the launch's grid for them
  int64_t slots_ = 0;              // split-K: the workspace's tile slots for them
  std::vector<rt::TensorMapSpec> maps_;  // the launch's tensor maps for them (map())
  std::map<std::pair<int, int64_t>, rt::TensorMapSpec> group_maps_;  // pointer arrays: (operand, group) -> map
  GlobalTensor a_, b_, c_, bias_, d_;
  GlobalTensor staged_a_, staged_b_;  // staged operands' aligned copies (stage_operands)
  GlobalTensor aux_;  // a saved output (Definition::set_saved_output), laid out as D
  // FP8 scale factors (powers of two, so the reference stays exact): A's per row and k block
  // MN-major stored as the ScaleA map reads them; B's as args.scale_b holds them (empty without).
  GlobalTensor scale_a_;
  GlobalTensor scale_b_atoms_;  // B's UE8M0 factors (block-scaled FP8), in their atoms as map_scale_b reads them
  std::vector<float> scale_b_;
  int64_t b_scale_matrices_ = 1, b_scale_count_ = 0;  // B's matrices with factors, factors per matrix
  int64_t a_scale_count_ = 0;  // A's factors per matrix read from args.scale_a
  Layout a_major_ = Layout::MNMajor, b_major_ = Layout::KMajor;  // two-dimensional factors' majors
  int64_t a_scale_matrices_ = 1;                      // A's matrices (with factors, one set each)
  std::optional<ScaleGranularity> a_granularity_, b_granularity_;
  std::vector<float> scale_a_vec_;  // A's factors read from args.scale_a (all but 1x128 MN-major, staged)
  std::string c_name_, bias_name_;
  std::map<std::string, HostMatrices> host_;
  std::vector<float> partials_;    // split-K workspace: partial sums (NaN until written)
  std::map<int64_t, uint32_t> tickets_;  // ticket counters by their word in the workspace
  std::set<std::pair<int64_t, int64_t>> counted_partials_;  // (slot, split) counted stored (claimed first)
  std::set<std::pair<int, int64_t>> awaited_;  // (CTA, counter word) whose last waited for the others' count
  // Reductions: the workspace's records (partials NaN until written) and the vectors (NaN until written),
  // [batch][M] and [batch][N].
  std::vector<float> reduction_partials_;
  int64_t reduction_slots_ = 0;
  std::vector<float> row_reduction_, col_reduction_;
  std::vector<Cta> ctas_;
  std::vector<Warp> warps_;
  std::vector<PendingLoad> loads_;
  std::vector<PendingStore> stores_;
  std::vector<PendingMma> mmas_;        // in issue order
  std::vector<PendingCommit> commits_;  // waiting for their MMAs
  int mma_ids_ = 0;
  std::map<int, std::pair<int, int>> mma_issuer_;  // tcgen05.mma id -> the CTA and warp that issued it
  int load_ids_ = 0;
  int warps_per_cta_ = 0;
  int64_t cluster_arrived_ = 0, cluster_generation_ = 0;
};

}  // namespace

std::string SimulationReport::to_string() const {
  std::ostringstream os;
  os << "simulate " << kernel << " M=" << m << " N=" << n << " K=" << k << ": " << (passed ? "ok" : "FAILED") << "\n"
     << "  " << clusters << " cluster(s), " << ctas << " CTA(s), " << warps << " warps, " << steps << " steps; "
     << tma_loads << " TMA loads, " << tma_stores << " TMA stores, "
     << (tcgen05_mmas > 0 ? std::to_string(tcgen05_mmas) + " tcgen05.mma issues (one thread each), "
                          : std::to_string(wgmmas) + " wgmma issues (per warp), ")
     << barrier_waits << " mbarrier waits\n"
     << "  output: " << mismatches << " mismatch(es), " << unwritten << " unwritten" << (first_mismatch.empty() ? "" : " (first: " + first_mismatch + ")") << "\n";
  for (const auto& e : errors) os << "  error: " << e << "\n";
  return os.str();
}

SimulationReport simulate_kernel(const Kernel& k, const Definition& def, const SimulateOptions& options) {
  SimulationReport r;
  const KernelPlan& p = k.plan;
  if ((options.m && options.m != def.m()) || (options.n && options.n != def.n())) {
    // Another problem for the same kernel: it must read the sizes that differ at run time.
    const int64_t m = options.m ? options.m : def.m(), n = options.n ? options.n : def.n();
    if (const std::string why = rt::sizes_mismatch(k.launch, m, n, def.k()); !why.empty())
      throw_user_error("runtime-size", "simulate M=" + std::to_string(m) + " N=" + std::to_string(n) + ": " + why);
    const Definition problem = resized_definition(def, m, n);
    SimulateOptions same = options;
    same.m = same.n = 0;
    return simulate_kernel(k, problem, same);
  }
  r.m = def.m();
  r.n = def.n();
  r.k = p.k;
  r.kernel = std::to_string(p.tile_m) + "x" + std::to_string(p.tile_n) + "x" + std::to_string(p.tile_k) + ", " +
             std::to_string(p.pipeline.stages) + " stage(s), " + std::to_string(p.roles.size()) + " role(s), cluster " +
             std::to_string(p.cluster_size);
  Simulator sim(k, def, options, r);
  sim.run();
  r.passed = r.errors.empty() && r.mismatches == 0 && r.unwritten == 0;
  return r;
}

SimulationReport simulate(const Schedule& s, const SimulateOptions& options, const DeviceLimits& limits) {
  LowerOptions lo;
  lo.limits = limits;
  Kernel k = lower(s, lo);
  return simulate_kernel(k, s.definition(), options);
}

}  // namespace gg
