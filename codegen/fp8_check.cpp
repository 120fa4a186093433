#include "codegen/fp8_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "codegen/work_units.h"
#include "dsl/error.h"
#include "runtime/cublaslt_reference.h"
#include "runtime/cuda_error.h"
#include "runtime/device_buffer.h"
#include "runtime/error_metrics.h"
#include "runtime/fp8_quantize.h"
#include "runtime/host_dtype.h"
#include "runtime/host_reference.h"
#include "runtime/jit.h"
#include "runtime/timing.h"

namespace gg {

namespace {

// One FP8 operand: `matrices` matrices [rows, K] (K-major), one after another, as the kernel reads
// them: their FP8 values (as floats, each exactly representable), each matrix's factors in the
// kernel's layout after the previous matrix's (empty: a factor of 1), and what they stand for.
struct Fp8Operand {
  int64_t rows = 0, k = 0, scales_per_matrix = 0;
  std::vector<float> values, scales;
  std::vector<double> dequantized;  // values x factors, row-major, matrix after matrix
  rt::DeviceBuffer buffer, scale_buffer;
};

// The factor index of element (r, c) within its matrix's factors.
int64_t factor_index(ScaleGranularity g, rt::ScaleLayout layout, int64_t rows, int64_t k, int64_t r, int64_t c) {
  switch (g) {
    case ScaleGranularity::PerTensor: return 0;
    case ScaleGranularity::PerRow: return r;
    case ScaleGranularity::Block1x128: return rt::scale_index(rt::Granularity::Row1x128, layout, rows, k, r, c);
    case ScaleGranularity::Block128x128: return rt::scale_index(rt::Granularity::Block128x128, layout, rows, k, r, c);
  }
  return 0;
}

// DeepGEMM's amax recipe at granularity `g`: a row's factors are a one-row tensor's.
rt::Fp8Quantized quantize_as(const std::vector<float>& x, int64_t rows, int64_t k, ScaleGranularity g,
                             const rt::Fp8QuantizeOptions& q) {
  if (g != ScaleGranularity::PerRow)
    return rt::quantize(x, rows, k,
                        g == ScaleGranularity::PerTensor   ? rt::Granularity::PerTensor
                        : g == ScaleGranularity::Block1x128 ? rt::Granularity::Row1x128
                                                            : rt::Granularity::Block128x128,
                        q);
  rt::Fp8Quantized all;
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row(x.begin() + r * k, x.begin() + (r + 1) * k);
    const rt::Fp8Quantized one = rt::quantize(row, 1, k, rt::Granularity::PerTensor, q);
    all.values.insert(all.values.end(), one.values.begin(), one.values.end());
    all.scales.push_back(one.scales.front());
  }
  return all;
}

Fp8Operand make_operand(int64_t matrices, int64_t rows, int64_t k, rt::ElemType type, std::optional<ScaleGranularity> g,
                        rt::ScaleLayout layout, bool exact, uint64_t seed) {
  Fp8Operand o;
  o.rows = rows;
  o.k = k;
  const auto count = size_t(rows * k);
  if (g == ScaleGranularity::PerTensor) o.scales_per_matrix = 1;
  else if (g == ScaleGranularity::PerRow) o.scales_per_matrix = rows;
  else if (g) o.scales_per_matrix = rt::scale_count(*g == ScaleGranularity::Block1x128 ? rt::Granularity::Row1x128 : rt::Granularity::Block128x128, layout, rows, k);
  for (int64_t mat = 0; mat < matrices; ++mat, seed += 1000) {
    std::vector<float> values, scales;
    if (exact) {  // small integers, factors 2^-2 .. 2^2: every product and k block's sum is exact
      values = rt::small_integer_values(count, seed);
      if (g) {
        const std::vector<float> powers = rt::small_integer_values(size_t(o.scales_per_matrix), seed + 100);
        for (float x : powers) scales.push_back(std::ldexp(1.0f, int(x)));
      }
    } else if (g) {  // DeepGEMM's recipe on uniform data in [-1, 1]
      const std::vector<float> x = rt::random_uniform_values(rt::ElemType::F32, count, seed);
      rt::Fp8QuantizeOptions q;
      q.type = type;
      q.layout = layout;
      const rt::Fp8Quantized quantized = quantize_as(x, rows, k, *g, q);
      values.resize(count);
      for (size_t i = 0; i < count; ++i)
        values[i] = type == rt::ElemType::E4M3 ? rt::e4m3_value(quantized.values[i]) : rt::e5m2_value(quantized.values[i]);
      scales = quantized.scales;
    } else {
      values = rt::random_uniform_values(type, count, seed);
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const double factor = g ? scales[size_t(factor_index(*g, layout, rows, k, r, c))] : 1.0;
        o.dequantized.push_back(double(values[size_t(r * k + c)]) * factor);
      }
    o.values.insert(o.values.end(), values.begin(), values.end());
    o.scales.insert(o.scales.end(), scales.begin(), scales.end());
  }
  o.buffer = rt::DeviceBuffer(type, o.values.size());
  o.buffer.upload(o.values);
  if (g) {
    o.scale_buffer = rt::DeviceBuffer(rt::ElemType::F32, o.scales.size());
    o.scale_buffer.upload(o.scales);
  }
  return o;
}

std::optional<ScaleGranularity> granularity_of(const Definition& def, int operand) {
  const Node* s = def.scale_of(def.matmul_node().operands[size_t(operand)]);
  return s ? std::optional<ScaleGranularity>(s->granularity) : std::nullopt;
}
// The layout of an operand's two-dimensional factors (one-dimensional ones have none: MN-major then).
rt::ScaleLayout scale_layout_of(const Definition& def, int operand) {
  const Node* s = def.scale_of(def.matmul_node().operands[size_t(operand)]);
  return s && s->shape.size() == 2 && s->layout == Layout::KMajor ? rt::ScaleLayout::KMajor : rt::ScaleLayout::MNMajor;
}

}  // namespace

CheckReport check_fp8(const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                      const CheckOptions& o) {
  const ProblemSource source = def.problem_source();
  GG_INTERNAL_CHECK(!def.swapped() && (source == ProblemSource::Dense || source == ProblemSource::Masked ||
                                       source == ProblemSource::Contiguous),
                    "the FP8 check runs dense problems, batches, masked and contiguous groups");
  CheckReport r = launch_report(e, kernel, def);
  const rt::ElemType in = runtime_elem(def.input_dtype()), out = runtime_elem(def.output_dtype());
  const auto ga = granularity_of(def, 0), gb = granularity_of(def, 1);
  const rt::MatrixLayouts layouts = rt::resolve_layouts(e.launch.layouts, r.m, r.n, r.k);
  const auto matrices = [&](rt::Operand op) { return rt::stored_matrix(layouts, op, r.m, r.n, r.k).batches; };
  const rt::ScaleLayout a_layout = scale_layout_of(def, 0), b_layout = scale_layout_of(def, 1);
  Fp8Operand a = make_operand(matrices(rt::Operand::A), r.m, r.k, in, ga, a_layout, o.exact, o.seed);
  Fp8Operand b = make_operand(matrices(rt::Operand::B), r.n, r.k, in, gb, b_layout, o.exact, o.seed + 1);
  const int64_t d_matrices = matrices(rt::Operand::D);
  const auto d_index = [&](int64_t matrix, int64_t row, int64_t col) {
    return (d_matrices > 1 ? matrix * layouts.stride_d : 0) + row * layouts.ldd + col;
  };
  const auto d_count = size_t(d_index(d_matrices - 1, r.m - 1, r.n - 1) + 1);
  rt::DeviceBuffer d(out, d_count);
  rt::fill_poison(d);

  // The products the kernel computes (as gemm_check's slices): a masked group's rows in use of its
  // matrices, a contiguous group's rows of A and D times its B, each matrix of a batch.
  struct Slice {
    int64_t a, b, d;   // the matrices of A, B and D
    int64_t row0, rows;
  };
  const bool masked = source == ProblemSource::Masked, contiguous = source == ProblemSource::Contiguous;
  std::vector<int> rows_in_use;
  std::vector<int64_t> offsets;
  if (contiguous) offsets = group_offsets_or_even(o.group_offsets, def.batch(), r.m);
  std::vector<Slice> slices;
  for (int64_t g = 0; g < def.batch(); ++g) {
    const auto pick = [&](rt::Operand op) { return matrices(op) > 1 ? g : 0; };
    if (contiguous) {
      const auto [start, end] = group_span(offsets, g, r.m);
      slices.push_back({0, g, 0, start, end - start});
    } else {
      const int64_t used = masked && g < int64_t(o.group_rows.size()) ? std::clamp<int64_t>(o.group_rows[size_t(g)], 0, r.m) : r.m;
      rows_in_use.push_back(int(masked && g < int64_t(o.group_rows.size()) ? o.group_rows[size_t(g)] : r.m));
      slices.push_back({pick(rt::Operand::A), pick(rt::Operand::B), pick(rt::Operand::D), 0, used});
    }
  }
  rt::DeviceInts group_rows(rows_in_use.empty() ? std::vector<int>{0} : rows_in_use);
  rt::DeviceInts group_offsets(offsets.empty() ? std::vector<int>{0} : std::vector<int>(offsets.begin(), offsets.end()));

  rt::GemmProblem problem;
  problem.group_rows = masked ? group_rows.data() : nullptr;
  problem.group_offsets = contiguous ? group_offsets.data() : nullptr;
  problem.a = a.buffer.data();
  problem.b = b.buffer.data();
  problem.d = d.data();
  problem.m = r.m;
  problem.n = r.n;
  problem.k = r.k;
  problem.in_type = in;
  problem.out_type = out;
  problem.layouts = layouts;
  problem.scale_a = ga ? static_cast<const float*>(a.scale_buffer.data()) : nullptr;
  problem.scale_b = gb ? static_cast<const float*>(b.scale_buffer.data()) : nullptr;
  kernel.launch_and_wait(problem);
  const std::vector<float> ours = d.download();
  // 1: an element the kernel must write; 2: one it may (a masked group's last tile past its rows
  // in use); 0: one it must not touch (rows in no group, a masked group's tiles past its rows).
  std::vector<char> is_element(d_count, 0);
  for (const Slice& sl : slices) {
    const int64_t tile_m = e.plan.tile_m;
    const int64_t stored = masked ? std::min(r.m, (sl.rows + tile_m - 1) / tile_m * tile_m) : sl.rows;
    for (int64_t i = sl.row0; i < sl.row0 + stored; ++i)
      for (int64_t j = 0; j < r.n; ++j) is_element[size_t(d_index(sl.d, i, j))] = i < sl.row0 + sl.rows ? 1 : 2;
  }
  int64_t touched = 0;
  for (size_t i = 0; i < d_count; ++i) {
    if (is_element[i] == 1) r.unwritten += std::isnan(ours[i]);
    if (is_element[i] == 0 && layouts.ldd == r.n) touched += !std::isnan(ours[i]);
  }

  // cuBLASLt on the same inputs, one call per slice (the loop a caller without grouping runs):
  // block-scaled where both operands have DeepGEMM's factors (a slice's A factors repacked for its
  // rows; it needs rows a multiple of 4), one factor of 1 per tensor where neither has any.
  rt::CublasLtFp8 lt;
  rt::DeviceBuffer theirs_d(out, d_count);
  rt::fill_poison(theirs_d);
  rt::DeviceBuffer ones(rt::ElemType::F32, 1);
  ones.upload({1.0f});
  const int in_bytes = rt::elem_bytes(in), out_bytes = rt::elem_bytes(out);
  std::vector<rt::DeviceBuffer> slice_scales;
  std::vector<rt::Fp8Problem> baselines, ceilings;
  std::vector<char> has_baseline(slices.size(), 0);
  std::string no_baseline;
  const auto operands_of = [&](const Slice& sl) {
    rt::Fp8GemmOperands ops;
    ops.a = static_cast<const char*>(a.buffer.data()) + (sl.a * r.m + sl.row0) * r.k * in_bytes;
    ops.b = static_cast<const char*>(b.buffer.data()) + sl.b * r.n * r.k * in_bytes;
    ops.d = static_cast<char*>(theirs_d.data()) + d_index(sl.d, sl.row0, 0) * out_bytes;
    ops.m = sl.rows;
    ops.n = r.n;
    ops.k = r.k;
    ops.a_type = ops.b_type = in;
    ops.out_type = out;
    return ops;
  };
  try {
    if (layouts.ldd != r.n) throw std::invalid_argument("D's rows are padded (ldd != N)");
    // cuBLASLt's FP8: DeepGEMM's blocks for both, one factor per tensor for both, or none.
    const bool blocks = ga == ScaleGranularity::Block1x128 && gb == ScaleGranularity::Block128x128;
    const bool per_tensor = ga == ScaleGranularity::PerTensor && gb == ScaleGranularity::PerTensor;
    if (!blocks && !per_tensor && (ga || gb))
      throw std::invalid_argument("cuBLASLt has no FP8 GEMM with these factors (A per " +
                                  std::string(ga ? scale_granularity_name(*ga) : "none") + ", B per " +
                                  std::string(gb ? scale_granularity_name(*gb) : "none") + ")");
    for (size_t i = 0; i < slices.size(); ++i) {
      const Slice& sl = slices[i];
      if (sl.rows == 0) continue;
      rt::Fp8GemmOperands ops = operands_of(sl);
      if (blocks) {
        if (sl.rows % 4 != 0) throw std::invalid_argument("a group of " + std::to_string(sl.rows) + " rows (block-scaled cuBLASLt takes multiples of 4)");
        // The slice's A factors as a matrix of its own rows: k blocks x rows (padded to 4).
        const int64_t k_blocks = (r.k + 127) / 128, packed_ld = (sl.rows + 3) / 4 * 4;
        std::vector<float> packed(size_t(k_blocks * packed_ld), 0.0f);
        for (int64_t kb = 0; kb < k_blocks; ++kb)
          for (int64_t row = 0; row < sl.rows; ++row)
            packed[size_t(kb * packed_ld + row)] =
                a.scales[size_t(sl.a * a.scales_per_matrix +
                                factor_index(*ga, a_layout, r.m, r.k, sl.row0 + row, kb * kScaleBlock))];
        slice_scales.emplace_back(rt::ElemType::F32, packed.size());
        slice_scales.back().upload(packed);
        ops.a_scales = static_cast<const float*>(slice_scales.back().data());
        // B's factors K-major ([n blocks][k blocks]) as cuBLASLt's reference takes them.
        const int64_t n_blocks = (r.n + 127) / 128;
        std::vector<float> b_packed(size_t(n_blocks * k_blocks));
        for (int64_t nb = 0; nb < n_blocks; ++nb)
          for (int64_t kb = 0; kb < k_blocks; ++kb)
            b_packed[size_t(nb * k_blocks + kb)] =
                b.scales[size_t(sl.b * b.scales_per_matrix +
                                factor_index(*gb, b_layout, r.n, r.k, nb * kScaleBlock, kb * kScaleBlock))];
        slice_scales.emplace_back(rt::ElemType::F32, b_packed.size());
        slice_scales.back().upload(b_packed);
        ops.b_scales = static_cast<const float*>(slice_scales.back().data());
        baselines.push_back(lt.prepare_blockscaled(ops));
      } else if (per_tensor) {  // each matrix's one factor
        ops.a_scales = static_cast<const float*>(a.scale_buffer.data()) + sl.a;
        ops.b_scales = static_cast<const float*>(b.scale_buffer.data()) + sl.b;
        baselines.push_back(lt.prepare_per_tensor(ops));
      } else {
        ops.a_scales = ops.b_scales = static_cast<const float*>(ones.data());
        baselines.push_back(lt.prepare_per_tensor(ops));
      }
      has_baseline[i] = 1;
    }
  } catch (const std::exception& ex) {
    no_baseline = std::string("no cuBLASLt baseline: ") + ex.what();
    baselines.clear();
    std::fill(has_baseline.begin(), has_baseline.end(), 0);
  }
  const auto run_baselines = [&] {
    for (const rt::Fp8Problem& bl : baselines) bl.run();
  };
  std::vector<float> theirs;
  if (!baselines.empty()) {
    run_baselines();
    rt::check_cuda(cudaDeviceSynchronize(), "running cuBLASLt's FP8 GEMM");
    theirs = theirs_d.download();
  }

  std::vector<double> ref, mine, lt_values;
  for (size_t s_i = 0; s_i < slices.size(); ++s_i) {
    const Slice& sl = slices[s_i];
    if (sl.rows == 0) continue;
    const auto part = [](const Fp8Operand& op, int64_t matrix, int64_t row0, int64_t rows) {
      const auto first = op.dequantized.begin() + (matrix * op.rows + row0) * op.k;
      return std::vector<float>(first, first + rows * op.k);
    };
    const rt::HostReference host =
        rt::host_gemm_reference(part(a, sl.a, sl.row0, sl.rows), part(b, sl.b, 0, r.n), sl.rows, r.n, r.k);
    r.checked_rows += host.rows.size();
    for (size_t i = 0; i < host.rows.size(); ++i)
      for (int64_t col = 0; col < r.n; ++col) {
        const auto at = size_t(d_index(sl.d, sl.row0 + host.rows[i], col));
        ref.push_back(host.values[i * size_t(r.n) + size_t(col)]);
        mine.push_back(ours[at]);
        lt_values.push_back(has_baseline[s_i] ? theirs[at] : ours[at]);
      }
  }
  std::ostringstream why;
  if (r.unwritten) why << r.unwritten << " output elements never written; ";
  if (touched) why << touched << " elements of D in no group's rows or past a masked group's tiles overwritten; ";
  why << judge_errors(r, mine, ref, lt_values, def.output_dtype(), o.exact, def.input_dtype());
  const double diff = rt::deepgemm_diff(mine, ref);
  if (!(diff <= 1e-3)) why << "DeepGEMM's diff " << diff << " > 1e-3; ";
  r.baseline = baselines.empty() ? no_baseline
                                 : baselines.front().describe() +
                                       (baselines.size() > 1 ? " (a loop of " + std::to_string(baselines.size()) + " calls, one per group)" : "");
  for (int i = 0; i < o.repeat; ++i) {
    rt::fill_poison(d);
    kernel.launch_and_wait(problem);
    ++r.repeats;
    r.repeats_differing += !rt::same_bits(d.download(), ours);
  }
  if (r.repeats_differing) why << r.repeats_differing << " of " << r.repeats << " repeated launches differ; ";
  r.verdict = why.str().empty() ? "ok" : why.str();
  r.passed = r.verdict == "ok";

  // Timed: every slice's rows (as gemm_check counts a grouped problem's work) against the loop of
  // cuBLASLt calls, interleaved.
  if (o.bench && r.passed && !baselines.empty()) {
    const std::string arch(target_name(e.plan.target));
    rt::LoadedKernel timed(rt::compile_kernel(e.source, e.kernel_name, arch, rt::JitOptions{}), e.launch);
    const auto times = rt::interleaved_median_ms([&] { timed.launch(problem); }, run_baselines, o.warmup, o.reps);
    r.ms = times.ours_ms;
    r.cublas_ms = times.reference_ms;
    double rows = 0;  // the rows in use (a masked group's rows past them are no work)
    for (const Slice& sl : slices) rows += double(sl.rows);
    r.tflops = rt::tflops(1, r.n, r.k, r.ms) * rows;
    r.cublas_tflops = rt::tflops(1, r.n, r.k, r.cublas_ms) * rows;
    if (ga == ScaleGranularity::Block1x128 && gb == ScaleGranularity::Block128x128) {  // the ceiling: one factor per tensor
      for (const Slice& sl : slices) {
        if (sl.rows == 0) continue;
        rt::Fp8GemmOperands flat = operands_of(sl);
        flat.a_scales = flat.b_scales = static_cast<const float*>(ones.data());
        ceilings.push_back(lt.prepare_per_tensor(flat));
      }
      const double ms = rt::median_time_ms([&] { for (const rt::Fp8Problem& c : ceilings) c.run(); }, o.warmup, o.reps);
      r.baseline += "; per-tensor FP8 cuBLASLt " + std::to_string(rt::tflops(1, r.n, r.k, ms) * rows) + " TFLOP/s";
    }
  }
  return r;
}

}  // namespace gg
