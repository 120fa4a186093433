#include "schedules/gemm.h"

#include <map>
#include <memory>
#include <mutex>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "runtime/launch.h"
#include "schedules/tutorial.h"

namespace gg {

namespace {

// Fastest first; each later step asks less of the problem (auto and v5..v10 need TMA loads).
constexpr const char* kPreference[] = {"auto", "v10", "v8", "v6", "v5", "v4", "v3"};

struct KernelCache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<rt::LoadedKernel>> kernels;  // by problem key
};

KernelCache& kernel_cache() {
  static KernelCache cache;
  return cache;
}

}  // namespace

Definition gemm_definition(int64_t m, int64_t n, int64_t k, const GemmOptions& o) {
  Definition def;
  Tensor a = def.input("A", {m, k}, o.in), b = def.input("B", {n, k}, o.in);
  Tensor acc = def.matmul(a, b);
  if (o.alpha != 1.0) acc = def.scale(acc, o.alpha);
  def.set_output(def.cast(acc, o.out));
  return def;
}

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
  const Definition def = gemm_definition(m, n, k, o);
  const std::string key = o.schedule + "|" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                          "|" + std::string(dtype_name(o.in)) + "|" + std::string(dtype_name(o.out)) + "|" +
                          std::to_string(o.alpha);
  KernelCache& cache = kernel_cache();
  const rt::LoadedKernel* kernel = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.kernels.find(key);
    if (it == cache.kernels.end()) {
      const std::string name = o.schedule.empty() ? pick_schedule(def) : o.schedule;
      const EmittedKernel e = emit_cuda(builtin_schedule(name, def));
      auto loaded = std::make_unique<rt::LoadedKernel>(
          rt::compile_kernel(e.source, e.kernel_name, std::string(target_name(e.plan.target)), rt::JitOptions{}),
          e.launch);
      it = cache.kernels.emplace(key, std::move(loaded)).first;
    }
    kernel = it->second.get();
  }
  rt::GemmProblem problem;
  problem.a = a;
  problem.b = b;
  problem.d = d;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.alpha = static_cast<float>(o.alpha);
  problem.in_type = runtime_elem(o.in);
  problem.out_type = runtime_elem(o.out);
  kernel->launch(problem, o.stream);
}

}  // namespace gg
