#include "codegen/fp8_check.h"

#include <cmath>
#include <sstream>

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

// One FP8 operand [rows, K] (K-major) as the kernel reads it: its FP8 values (as floats, each
// exactly representable), its factors in the kernel's layout (empty: a factor of 1), and what
// they stand for.
struct Fp8Operand {
  std::vector<float> values, scales;
  std::vector<double> dequantized;  // values x factors, row-major
  rt::DeviceBuffer buffer, scale_buffer;
};

Fp8Operand make_operand(int64_t rows, int64_t k, rt::ElemType type, std::optional<rt::Granularity> g,
                        rt::ScaleLayout layout, bool exact, uint64_t seed) {
  Fp8Operand o;
  const auto count = size_t(rows * k);
  if (exact) {  // small integers, factors 2^-2 .. 2^2: every product and k block's sum is exact
    o.values = rt::small_integer_values(count, seed);
    if (g) {
      o.scales.assign(size_t(rt::scale_count(*g, layout, rows, k)), 0.0f);
      const std::vector<float> powers = rt::small_integer_values(o.scales.size(), seed + 100);
      for (size_t i = 0; i < o.scales.size(); ++i) o.scales[i] = std::ldexp(1.0f, int(powers[i]));
    }
  } else if (g) {  // DeepGEMM's recipe on uniform data in [-1, 1]
    const std::vector<float> x = rt::random_uniform_values(rt::ElemType::F32, count, seed);
    rt::Fp8QuantizeOptions q;
    q.type = type;
    q.layout = layout;
    const rt::Fp8Quantized quantized = rt::quantize(x, rows, k, *g, q);
    o.values.resize(count);
    for (size_t i = 0; i < count; ++i)
      o.values[i] = type == rt::ElemType::E4M3 ? rt::e4m3_value(quantized.values[i]) : rt::e5m2_value(quantized.values[i]);
    o.scales = quantized.scales;
  } else {
    o.values = rt::random_uniform_values(type, count, seed);
  }
  o.dequantized.resize(count);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const double factor = g ? o.scales[size_t(rt::scale_index(*g, layout, rows, k, r, c))] : 1.0;
      o.dequantized[size_t(r * k + c)] = double(o.values[size_t(r * k + c)]) * factor;
    }
  o.buffer = rt::DeviceBuffer(type, count);
  o.buffer.upload(o.values);
  if (g) {
    o.scale_buffer = rt::DeviceBuffer(rt::ElemType::F32, o.scales.size());
    o.scale_buffer.upload(o.scales);
  }
  return o;
}

std::optional<rt::Granularity> granularity_of(const Definition& def, int operand) {
  const Node* s = def.scale_of(def.matmul_node().operands[size_t(operand)]);
  if (!s) return std::nullopt;
  GG_INTERNAL_CHECK(s->granularity == ScaleGranularity::Block1x128 || s->granularity == ScaleGranularity::Block128x128,
                    "the lowering refuses other scale granularities");
  return s->granularity == ScaleGranularity::Block1x128 ? rt::Granularity::Row1x128 : rt::Granularity::Block128x128;
}

}  // namespace

CheckReport check_fp8(const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                      const CheckOptions& o) {
  GG_INTERNAL_CHECK(def.problem_source() == ProblemSource::Dense && def.batch() == 1 && !def.swapped(),
                    "the FP8 check runs one dense problem");
  CheckReport r = launch_report(e, kernel, def);
  const rt::ElemType in = runtime_elem(def.input_dtype()), out = runtime_elem(def.output_dtype());
  const auto ga = granularity_of(def, 0), gb = granularity_of(def, 1);
  Fp8Operand a = make_operand(r.m, r.k, in, ga, rt::ScaleLayout::MNMajor, o.exact, o.seed);
  Fp8Operand b = make_operand(r.n, r.k, in, gb, rt::ScaleLayout::KMajor, o.exact, o.seed + 1);
  rt::DeviceBuffer d(out, size_t(r.m * r.n));
  rt::fill_poison(d);

  rt::GemmProblem problem;
  problem.a = a.buffer.data();
  problem.b = b.buffer.data();
  problem.d = d.data();
  problem.m = r.m;
  problem.n = r.n;
  problem.k = r.k;
  problem.in_type = in;
  problem.out_type = out;
  problem.layouts = rt::resolve_layouts(e.launch.layouts, r.m, r.n, r.k);
  problem.scale_a = ga ? static_cast<const float*>(a.scale_buffer.data()) : nullptr;
  problem.scale_b = gb ? static_cast<const float*>(b.scale_buffer.data()) : nullptr;
  kernel.launch_and_wait(problem);
  const std::vector<float> ours = d.download();
  for (float v : ours) r.unwritten += std::isnan(v);

  // cuBLASLt on the same inputs: block-scaled where both operands have DeepGEMM's factors, one
  // factor of 1 per tensor where neither has any. It needs M a multiple of 4 (block-scaled).
  rt::CublasLtFp8 lt;
  rt::DeviceBuffer theirs_d(out, size_t(r.m * r.n));
  rt::DeviceBuffer ones(rt::ElemType::F32, 1);
  ones.upload({1.0f});
  rt::Fp8GemmOperands ops;
  ops.a = a.buffer.data();
  ops.b = b.buffer.data();
  ops.d = theirs_d.data();
  ops.m = r.m;
  ops.n = r.n;
  ops.k = r.k;
  ops.a_type = ops.b_type = in;
  ops.out_type = out;
  std::optional<rt::Fp8Problem> baseline;
  std::string no_baseline;
  try {
    if (ga && gb) {
      ops.a_scales = static_cast<const float*>(a.scale_buffer.data());
      ops.b_scales = static_cast<const float*>(b.scale_buffer.data());
      baseline = lt.prepare_blockscaled(ops);
    } else if (!ga && !gb) {
      ops.a_scales = ops.b_scales = static_cast<const float*>(ones.data());
      baseline = lt.prepare_per_tensor(ops);
    } else {
      no_baseline = "cuBLASLt has no FP8 GEMM with only one operand's factors";
    }
  } catch (const std::exception& ex) {
    no_baseline = std::string("cuBLASLt refused the problem: ") + ex.what();
  }
  std::vector<float> theirs;
  if (baseline) {
    rt::fill_poison(theirs_d);
    baseline->run();
    rt::check_cuda(cudaDeviceSynchronize(), "running cuBLASLt's FP8 GEMM");
    theirs = theirs_d.download();
  }

  std::vector<float> a_ref(a.dequantized.begin(), a.dequantized.end()), b_ref(b.dequantized.begin(), b.dequantized.end());
  const rt::HostReference host = rt::host_gemm_reference(a_ref, b_ref, r.m, r.n, r.k);
  r.checked_rows = host.rows.size();
  std::vector<double> ref, mine, lt_values;
  for (size_t i = 0; i < host.rows.size(); ++i)
    for (int64_t col = 0; col < r.n; ++col) {
      const auto at = size_t(host.rows[i] * r.n + col);
      ref.push_back(host.values[i * size_t(r.n) + size_t(col)]);
      mine.push_back(ours[at]);
      lt_values.push_back(theirs.empty() ? ours[at] : theirs[at]);
    }
  std::ostringstream why;
  if (r.unwritten) why << r.unwritten << " output elements never written; ";
  why << judge_errors(r, mine, ref, lt_values, def.output_dtype(), o.exact, def.input_dtype());
  const double diff = rt::deepgemm_diff(mine, ref);
  if (!(diff <= 1e-3)) why << "DeepGEMM's diff " << diff << " > 1e-3; ";
  r.baseline = theirs.empty() ? no_baseline : baseline->describe();
  for (int i = 0; i < o.repeat; ++i) {
    rt::fill_poison(d);
    kernel.launch_and_wait(problem);
    ++r.repeats;
    r.repeats_differing += !rt::same_bits(d.download(), ours);
  }
  if (r.repeats_differing) why << r.repeats_differing << " of " << r.repeats << " repeated launches differ; ";
  r.verdict = why.str().empty() ? "ok" : why.str();
  r.passed = r.verdict == "ok";

  if (o.bench && r.passed && baseline) {
    const std::string arch(target_name(e.plan.target));
    rt::LoadedKernel timed(rt::compile_kernel(e.source, e.kernel_name, arch, rt::JitOptions{}), e.launch);
    const auto times = rt::interleaved_median_ms([&] { timed.launch(problem); }, [&] { baseline->run(); }, o.warmup,
                                                 o.reps);
    r.ms = times.ours_ms;
    r.cublas_ms = times.reference_ms;
    r.tflops = rt::tflops(r.m, r.n, r.k, r.ms);
    r.cublas_tflops = rt::tflops(r.m, r.n, r.k, r.cublas_ms);
    if (ga && gb) {  // the ceiling: cuBLASLt's FP8 with one factor per tensor
      rt::Fp8GemmOperands flat = ops;
      flat.a_scales = flat.b_scales = static_cast<const float*>(ones.data());
      const rt::Fp8Problem per_tensor = lt.prepare_per_tensor(flat);
      const double ms = rt::median_time_ms([&] { per_tensor.run(); }, o.warmup, o.reps);
      r.baseline += "; per-tensor FP8 cuBLASLt " + std::to_string(rt::tflops(r.m, r.n, r.k, ms)) + " TFLOP/s";
    }
  }
  return r;
}

}  // namespace gg
