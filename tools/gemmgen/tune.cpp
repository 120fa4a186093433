// `gemmgen tune`: per shape, the model's best configs of each orientation compiled in parallel,
// each checked and timed against cuBLAS on the GPU, and the fastest recorded where `auto` reads
// it (schedules/tuning.h).
#include "tools/gemmgen/tune.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <thread>

#include "codegen/emit.h"
#include "codegen/gemm_check.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/device_info.h"
#include "schedules/bench_report.h"
#include "schedules/tuning.h"
#include "tools/gemmgen/load.h"
#include "tools/gemmgen/parallel_jobs.h"

namespace gg::cli {

namespace {

struct Timed {
  TuneCandidate candidate;
  bool passed = false;
  std::string verdict;  // "ok", or why it was refused or failed
  double ms = 0, cublas_ms = 0;
};

std::string json_text(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out;
}

}  // namespace

int cmd_tune(const Args& args, Io io) {
  std::vector<BenchShape> shapes;
  if (auto file = args.value("shapes")) {
    shapes = parse_shapes(read_text_file(*file, "shapes file"), *file);
  } else {
    const auto m = args.positive("m"), n = args.positive("n"), k = args.positive("k");
    if (!m || !n || !k) usage_error("tune needs --shapes FILE, or --m, --n and --k");
    shapes.push_back({*m, *n, *k, ""});
  }
  GemmOptions gemm;
  apply_type_flags(args, gemm);
  if (auto a = args.value("a-major")) gemm.layout.a = parse_operand_major(*a, "A", "m");
  if (auto b = args.value("b-major")) gemm.layout.b = parse_operand_major(*b, "B", "n");
  const int top = static_cast<int>(std::min<int64_t>(args.positive("top").value_or(6), 64));
  CheckOptions options;
  options.bench = true;
  options.measure_jit = false;
  options.reps = static_cast<int>(args.at_most("reps", kMaxTimedReps).value_or(30));
  std::unique_ptr<std::ofstream> json;
  if (auto path = args.value("json")) {
    json = std::make_unique<std::ofstream>(*path);
    if (!*json) throw_user_error("cannot-write", "cannot write '" + *path + "' (--json)");
  }
  const bool dry = args.has("dry-run");
  if (!dry && !rt::gpu_available())
    throw_user_error("no-gpu", "gemmgen tune times candidates on a GPU and found none (--dry-run lists them)");
  const std::string device = dry ? std::string("(dry run)") : rt::device_info().name;
  const DeviceLimits limits = hopper();

  // Every shape's candidates before any progress line: a shape, dtype or layout that cannot be
  // tuned is refused before anything is printed or timed.
  std::vector<std::vector<TuneCandidate>> candidates_of;
  for (const BenchShape& shape : shapes)
    candidates_of.push_back(tune_candidates(shape.m, shape.n, shape.k, gemm, top, limits));
  if (json)
    *json << "{\"device\": \"" << json_text(device) << "\", \"dtype\": \"" << dtype_name(gemm.in) << "\", \"out\": \""
          << dtype_name(gemm.out) << "\", \"layout\": \"" << json_text(problem_layout_text(gemm.layout))
          << "\", \"reps\": " << options.reps << ", \"shapes\": [";
  for (size_t s = 0; s < shapes.size(); ++s) {
    const BenchShape& shape = shapes[s];
    io.err << "[" << s + 1 << "/" << shapes.size() << "] " << shape.m << "x" << shape.n << "x" << shape.k << "\n";
    const std::vector<TuneCandidate>& candidates = candidates_of[s];
    std::vector<Timed> timed;
    std::vector<EmittedKernel> kernels;
    for (const TuneCandidate& c : candidates) {
      timed.push_back({c, false, "not run", 0, 0});
      kernels.push_back(emit_cuda(auto_schedule(c.def, c.params)));
    }
    if (!dry) {
      run_jobs(kernels.size(), [&](size_t i) { compile_check_builds(kernels[i]); }, io.err, "compiling");
      for (size_t i = 0; i < timed.size(); ++i) {
        io.err << "\r  timing " << i + 1 << "/" << timed.size() << std::flush;
        const CheckReport r = check_on_gpu(auto_schedule(timed[i].candidate.def, timed[i].candidate.params), options);
        timed[i].passed = r.passed;
        timed[i].verdict = r.verdict;
        timed[i].ms = r.ms;
        timed[i].cublas_ms = r.cublas_ms;
      }
      io.err << "\n";
    }
    const Timed* best = nullptr;
    for (const Timed& t : timed)
      if (t.passed && (!best || t.ms < best->ms)) best = &t;
    io.out << shape.m << "x" << shape.n << "x" << shape.k << (shape.label.empty() ? "" : " (" + shape.label + ")")
           << ", " << dtype_name(gemm.in) << " -> " << dtype_name(gemm.out) << ", " << device << ":\n";
    for (size_t i = 0; i < timed.size(); ++i) {
      const Timed& t = timed[i];
      std::ostringstream line;
      line << "  " << i + 1 << ". " << t.candidate.describe() << ": predicted " << t.candidate.params.predicted_us
           << " us";
      if (t.passed)
        line << ", measured " << t.ms * 1e3 << " us (cuBLAS " << t.cublas_ms * 1e3 << " us, ratio "
             << t.cublas_ms / t.ms << ")";
      else if (!dry)
        line << ", " << t.verdict;
      if (&t == best) line << "  <- fastest";
      if (i == 0) line << (dry ? "  <- the model's choice" : "  (the model's choice)");
      io.out << line.str() << "\n";
    }
    if (best) {
      TunedChoice choice{best->candidate.swapped(), best->candidate.params, best->ms, best->cublas_ms};
      const std::string key = tuning_key(shape.m, shape.n, shape.k, gemm, "sm_90a", device);
      record_tuned(key, choice);
      io.out << "  recorded for auto: " << best->candidate.describe() << " (" << timed.front().ms / best->ms
             << "x the model's choice)\n";
    }
    if (json) {
      *json << (s ? ", " : "") << "{\"m\": " << shape.m << ", \"n\": " << shape.n << ", \"k\": " << shape.k
            << ", \"candidates\": [";
      for (size_t i = 0; i < timed.size(); ++i)
        *json << (i ? ", " : "") << "{\"config\": \"" << json_text(timed[i].candidate.describe())
              << "\", \"predicted_us\": " << timed[i].candidate.params.predicted_us << ", \"ms\": " << timed[i].ms
              << ", \"cublas_ms\": " << timed[i].cublas_ms << ", \"passed\": " << (timed[i].passed ? "true" : "false")
              << ", \"fastest\": " << (&timed[i] == best ? "true" : "false")
              << ", \"swapped\": " << (timed[i].candidate.swapped() ? "true" : "false") << ", \"params\": \""
              << params_record(timed[i].candidate.params) << "\", \"tiles\": " << timed[i].candidate.params.tiles
              << ", \"waves\": " << timed[i].candidate.params.waves
              << ", \"mainloop_us\": " << timed[i].candidate.params.mainloop_us
              << ", \"operand_mb\": " << timed[i].candidate.params.operand_mb << "}";
      *json << "]}" << std::flush;  // whole shapes on disk if the run is stopped (scripts/model_report.py reads them)
    }
  }
  if (json) *json << "]}\n";
  if (!dry) {
    const auto file = tuning_file();
    io.out << "tuning record: " << (file ? file->string() : std::string("(none)")) << "\n";
  }
  return 0;
}

}  // namespace gg::cli
