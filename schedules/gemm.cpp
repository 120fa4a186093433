#include "schedules/gemm.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "runtime/device_info.h"
#include "runtime/launch.h"
#include "schedules/tuning.h"
#include "schedules/tutorial.h"

namespace gg {

namespace {

// Fastest first; each later step asks less of the problem (auto and v5..v10 need TMA loads).
constexpr const char* kPreference[] = {"auto", "v10", "v8", "v6", "v5", "v4", "v3"};

struct CachedKernel {
  std::unique_ptr<rt::LoadedKernel> kernel;
  bool swapped = false;  // launched with A and B (and M and N) exchanged
};

struct KernelCache {
  std::mutex mutex;
  std::map<std::string, CachedKernel> kernels;  // by problem key
};

KernelCache& kernel_cache() {
  static KernelCache cache;
  return cache;
}

// The choice `gemmgen tune` recorded for this problem on this device, if any and if it still
// lowers (a record from another gemmgen build may not).
std::optional<GemmPlan> tuned_plan(int64_t m, int64_t n, int64_t k, const GemmOptions& o, const std::string& read_as) {
  if (!rt::gpu_available()) return std::nullopt;
  const auto tuned = lookup_tuned(tuning_key(m, n, k, o, "sm_90a", rt::device_info().name));
  if (!tuned) return std::nullopt;
  GemmPlan plan;
  GemmOptions swapped_options = o;
  swapped_options.layout = swapped_layout(o.layout);
  plan.def = tuned->swapped ? gemm_definition(n, m, k, swapped_options) : gemm_definition(m, n, k, o);
  try {
    lower(auto_schedule(plan.def, tuned->params));
  } catch (const CompileError&) {
    return std::nullopt;
  }
  plan.swapped = tuned->swapped;
  plan.schedule = "auto";
  plan.params = tuned->params;
  plan.config = read_as + "tuned: " + (tuned->swapped ? "swap A/B; " : "") + tuned->params.to_string();
  return plan;
}

}  // namespace

Definition gemm_definition(int64_t m, int64_t n, int64_t k, const GemmOptions& o) {
  Definition def;
  auto [a, b] = gemm_inputs(def, m, n, k, o.in, o.layout);
  Tensor acc = def.matmul(a, b);
  if (o.alpha != 1.0) acc = def.scale(acc, o.alpha);
  set_gemm_output(def, def.cast(acc, o.out), o.layout);
  return def;
}

ProblemLayout swapped_layout(const ProblemLayout& l) {
  ProblemLayout s = l;
  s.a = l.b;
  s.b = l.a;
  s.lda = l.ldb;
  s.ldb = l.lda;
  s.stride_a = l.stride_b;
  s.stride_b = l.stride_a;
  s.d = l.d == OutputLayout::RowMajor ? OutputLayout::ColumnMajor : OutputLayout::RowMajor;
  return s;
}

GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options) {
  GemmOptions o = options;
  o.layout = canonical_layout(m, n, options.layout);
  std::string read_as;
  if (o.layout.a != options.layout.a) read_as += "A read k-major (M=1); ";
  if (o.layout.b != options.layout.b) read_as += "B read k-major (N=1); ";
  if (o.schedule.empty()) {
    if (auto tuned = tuned_plan(m, n, k, o, read_as)) return *std::move(tuned);
  }
  GemmPlan plan;
  plan.def = gemm_definition(m, n, k, o);
  if (!o.schedule.empty()) {
    plan.schedule = o.schedule;
    return plan;
  }
  const DeviceLimits limits = hopper();
  std::optional<AutoParams> straight, swapped;
  GemmOptions swapped_options = o;
  swapped_options.layout = swapped_layout(o.layout);
  const Definition swapped_def = gemm_definition(n, m, k, swapped_options);
  try {
    straight = choose_auto_params(plan.def, limits);
  } catch (const CompileError&) {
  }
  try {
    swapped = choose_auto_params(swapped_def, limits);
  } catch (const CompileError&) {
  }
  if (swapped && (!straight || swapped->predicted_us < 0.95 * straight->predicted_us)) {
    plan.def = swapped_def;
    plan.swapped = true;
    plan.schedule = "auto";
    plan.config = read_as + "swap A/B; " + swapped->to_string();
    plan.params = swapped;
  } else if (straight) {
    plan.schedule = "auto";
    plan.config = read_as + straight->to_string();
    plan.params = straight;
  } else {
    plan.schedule = pick_schedule(plan.def);
    plan.config = read_as.empty() ? "" : read_as.substr(0, read_as.size() - 2);
  }
  return plan;
}

Schedule GemmPlan::build() const { return params ? auto_schedule(def, *params) : builtin_schedule(schedule, def); }

std::string pick_schedule(const Definition& def) {
  std::string reasons;
  for (const char* name : kPreference) {
    try {
      lower(builtin_schedule(name, def));
      return name;
    } catch (const CompileError& e) {
      reasons += std::string(reasons.empty() ? "" : "; ") + name + ": " + e.rule();
    }
  }
  throw_user_error("no-schedule", "no built-in schedule lowers for M=" + std::to_string(def.m()) + " N=" +
                   std::to_string(def.n()) + " K=" + std::to_string(def.k()) + " (" + reasons +
                   "); `gemmgen check --schedule NAME` explains each");
}

void gemm(const void* a, const void* b, void* d, int64_t m, int64_t n, int64_t k, const GemmOptions& o) {
  const std::string key = o.schedule + "|" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                          "|" + std::string(dtype_name(o.in)) + "|" + std::string(dtype_name(o.out)) + "|" +
                          std::to_string(o.alpha) + "|" + problem_layout_text(o.layout);
  KernelCache& cache = kernel_cache();
  const rt::LoadedKernel* kernel = nullptr;
  bool swapped = false;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.kernels.find(key);
    if (it == cache.kernels.end()) {
      const GemmPlan plan = plan_gemm(m, n, k, o);
      const EmittedKernel e = emit_cuda(plan.build());
      CachedKernel entry{std::make_unique<rt::LoadedKernel>(
                             rt::compile_kernel(e.source, e.kernel_name, std::string(target_name(e.plan.target)),
                                                rt::JitOptions{}),
                             e.launch),
                         plan.swapped};
      it = cache.kernels.emplace(key, std::move(entry)).first;
    }
    kernel = it->second.kernel.get();
    swapped = it->second.swapped;
  }
  // The swapped orientation computes D^T = B * A^T: B is its first operand, and its column-major
  // [N,M] output is D's row-major [M,N].
  rt::GemmProblem problem;
  problem.a = swapped ? b : a;
  problem.b = swapped ? a : b;
  problem.d = d;
  problem.m = swapped ? n : m;
  problem.n = swapped ? m : n;
  problem.k = k;
  problem.alpha = static_cast<float>(o.alpha);
  problem.in_type = runtime_elem(o.in);
  problem.out_type = runtime_elem(o.out);
  problem.layouts = kernel->spec().layouts;  // what the plan generated from options.layout
  kernel->launch(problem, o.stream);
}

}  // namespace gg
