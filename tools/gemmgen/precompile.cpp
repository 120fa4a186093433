// `gemmgen precompile`: every shape of a shapes file planned as gg::gemm plans it, the distinct
// kernels compiled on every core into the disk cache, so a service's first call of each shape
// loads a CUBIN instead of running NVRTC. Needs no GPU (without one the plans take no tuning
// record: run it where the service runs so a recorded choice is the one compiled).
#include "tools/gemmgen/precompile.h"

#include <chrono>
#include <map>
#include <ostream>
#include <sstream>

#include "codegen/emit.h"
#include "dsl/error.h"
#include "runtime/kernel_cache.h"
#include "schedules/bench_report.h"
#include "schedules/gemm.h"
#include "tools/gemmgen/load.h"
#include "tools/gemmgen/parallel_jobs.h"

namespace gg::cli {

int cmd_precompile(const Args& args, Io io) {
  const auto file = args.value("shapes");
  if (!file) usage_error("precompile needs --shapes FILE (lines 'M N K [label]'; benchmarks/shapes.txt is one)");
  const std::vector<BenchShape> shapes = parse_shapes(read_text_file(*file, "shapes file"), *file);
  const auto cache = rt::kernel_cache_dir();
  if (!cache)
    throw_user_error("no-cache", "precompile fills the kernel cache, but none can be located: set GEMMGEN_CACHE_DIR "
                     "(or XDG_CACHE_HOME or HOME)");
  GemmOptions gemm;
  apply_type_flags(args, gemm);
  if (auto a = args.value("a-major")) gemm.layout.a = parse_operand_major(*a, "A", "m");
  if (auto b = args.value("b-major")) gemm.layout.b = parse_operand_major(*b, "B", "n");
  if (auto c = args.value("compiled-dims")) set_compiled_dims(gemm.layout, *c);
  if (auto t = arch_flag(args)) gemm.target = *t;
  const unsigned jobs = static_cast<unsigned>(args.at_most("jobs", 256).value_or(0));
  const auto start = std::chrono::steady_clock::now();

  // Plan and emit each shape (codegen only), then compile each distinct kernel once.
  std::vector<std::optional<EmittedKernel>> emitted(shapes.size());
  std::vector<std::string> plans(shapes.size()), refusals(shapes.size());
  run_jobs(shapes.size(),
           [&](size_t i) {
             try {
               const GemmPlan plan = plan_gemm(shapes[i].m, shapes[i].n, shapes[i].k, gemm);
               plans[i] = plan.describe();
               emitted[i] = emit_cuda(plan.build());
             } catch (const CompileError& e) {
               refusals[i] = "error[" + e.rule() + "]: " + e.message();
             }
           },
           io.err, "planning", jobs);
  std::map<std::string, size_t> first_of;  // kernel name -> the first shape that needs it
  for (size_t i = 0; i < shapes.size(); ++i)
    if (emitted[i]) first_of.emplace(emitted[i]->kernel_name, i);
  std::vector<size_t> distinct;
  for (const auto& [name, i] : first_of) distinct.push_back(i);
  std::map<std::string, bool> was_cached;
  std::vector<char> cached(distinct.size());  // one byte a job: the jobs write them from their own threads
  run_jobs(distinct.size(), [&](size_t j) { cached[j] = compile_gemm_kernel(*emitted[distinct[j]]).from_cache; },
           io.err, "compiling", jobs);
  for (size_t j = 0; j < distinct.size(); ++j) was_cached[emitted[distinct[j]]->kernel_name] = cached[j];

  size_t compiled = 0, hits = 0, refused = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const BenchShape& s = shapes[i];
    io.out << s.m << " x " << s.n << " x " << s.k << (s.label.empty() ? "" : " (" + s.label + ")") << ": ";
    if (!emitted[i]) {
      io.out << "refused: " << refusals[i] << "\n";
      ++refused;
      continue;
    }
    const std::string& name = emitted[i]->kernel_name;
    io.out << plans[i] << " -> " << name << (was_cached[name] ? " (already cached)" : " (compiled)") << "\n";
  }
  for (const auto& [name, hit] : was_cached) (hit ? hits : compiled) += 1;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream line;
  line.precision(3);
  line << seconds;
  io.out << "precompile: " << shapes.size() << " shape(s), " << was_cached.size() << " distinct kernel(s): " << compiled
         << " compiled, " << hits << " already cached, " << refused << " refused, in " << line.str() << " s; cache "
         << cache->string() << "\n";
  return refused ? 1 : 0;
}

}  // namespace gg::cli
