#include "tools/gemmgen/commands.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/gemm_check.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/jit.h"
#include "schedules/auto_schedule.h"
#include "schedules/bench_report.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"
#include "tools/gemmgen/load.h"
#include "tools/gemmgen/model.h"
#include "tools/gemmgen/precompile.h"
#include "tools/gemmgen/simulate_budget.h"
#include "tools/gemmgen/tune.h"

namespace gg::cli {

namespace {

std::vector<FlagSpec> concat(std::initializer_list<std::vector<FlagSpec>> parts) {
  std::vector<FlagSpec> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

DeviceLimits limits_of(const Schedule& s) {
  auto m = s.mma_shape();
  return limits_for(m ? m->target : Target::Sm90a);
}

// The schedule's device with `--sms N` in place of its SM count, and whether the flag was given.
bool with_sms_flag(const Args& args, DeviceLimits& limits) {
  const auto sms = args.positive("sms");
  if (sms) limits.sms = static_cast<int>(std::min<int64_t>(*sms, 100000));
  return sms.has_value();
}

std::string problem_text(const Schedule& s) {
  const Definition& def = s.definition();
  auto m = s.mma_shape();
  return "M=" + std::to_string(def.m()) + " N=" + std::to_string(def.n()) + " K=" + std::to_string(def.k()) + " " +
         std::string(dtype_name(def.input_dtype())) + " -> " + std::string(dtype_name(def.output_dtype())) + " on " +
         std::string(target_name(m ? m->target : Target::Sm90a));
}

// ---- commands ---------------------------------------------------------------------------

int cmd_list(const Args&, Io io) {
  io.out << "built-in schedules (gemmgen explain --schedule NAME):\n";
  size_t width = 0;
  for (const auto& b : builtin_schedules()) width = std::max(width, b.name.size());
  for (const auto& b : builtin_schedules())
    io.out << "  " << b.name << std::string(width + 2 - b.name.size(), ' ') << b.summary << "\n";
  return 0;
}

int cmd_explain(const Args& args, Io io) {
  if (args.has("diff")) {
    if (args.has("schedule") || args.has("schedule-file"))
      usage_error("--diff A B compares two schedules; drop --schedule/--schedule-file");
    const auto& names = args.values("diff");
    Schedule a = load_schedule_named(names[0], args);
    Schedule b = load_schedule_named(names[1], args);
    io.out << "explain --diff " << names[0] << " " << names[1] << "\n" << explain_diff(a, b);
    return 0;
  }
  const std::optional<GemmPlan> plan = load_plan(args);
  Schedule s = load_schedule(args, plan);
  if (plan && plan->source != PlanSource::Named) io.out << explain_plan(*plan) << "\n";
  ExplainOptions options;
  options.steps = !args.has("final");
  io.out << explain(s, options);
  // The explanation shows the check's verdict; an illegal schedule still exits 2.
  validate_schedule(s, limits_of(s));
  return 0;
}

int cmd_print(const Args& args, Io io) {
  io.out << print_schedule(load_schedule(args));
  return 0;
}

// Every check `emit` runs: the schedule's rules and device limits, then the whole lowering
// (its not-lowered rules and the sync check) and the printer; nothing is written.
int cmd_check(const Args& args, Io io) {
  const std::optional<GemmPlan> plan = load_plan(args);
  Schedule s = load_schedule(args, plan);
  LowerOptions options;
  options.limits = limits_of(s);
  EmittedKernel e = emit_cuda(s, options);
  io.out << "ok: the schedule is legal for " << problem_text(s) << " (" << options.limits.name
         << ") and lowers to kernel " << e.kernel_name << " (sync check passed)\n";
  if (plan && plan->source != PlanSource::Named) io.out << "plan: " << plan->describe() << "\n";
  return 0;
}

int cmd_emit(const Args& args, Io io) {
  Schedule s = load_schedule(args);
  LowerOptions options;
  options.limits = limits_of(s);
  if (auto pass = args.value("dump-after")) {
    if (pass->empty()) usage_error("--dump-after needs a pass name (or `all`)");
    options.dump_after = *pass;
    options.dump = &io.err;
  }
  EmittedKernel e = emit_cuda(s, options);  // nothing is written when the schedule does not lower
  auto path = args.value("output");
  if (!path || *path == "-") {
    io.out << e.source;
    return 0;
  }
  std::ofstream file(*path, std::ios::binary);
  file << e.source;
  file.close();
  if (!file) throw_user_error("cannot-write", "cannot write '" + *path + "'");
  return 0;
}

// "sm_90a" for compute capability 9.0: the target whose kernels run on that device.
std::string device_arch(const rt::DeviceInfo& d) {
  return "sm_" + std::to_string(d.compute_major) + std::to_string(d.compute_minor) + (d.compute_major >= 9 ? "a" : "");
}

int cmd_run(const Args& args, Io io) {
  const std::optional<GemmPlan> plan = load_plan(args);
  Schedule s = load_schedule(args, plan);
  CheckOptions options;
  options.exact = args.has("exact");
  options.bench = args.has("bench");
  if (auto seed = args.positive("seed")) options.seed = static_cast<uint64_t>(*seed);
  if (auto reps = args.at_most("reps", kMaxTimedReps)) {
    if (!options.bench) usage_error("--reps counts timed runs; it needs --bench");
    options.reps = static_cast<int>(*reps);
  }
  if (auto repeat = args.at_most("repeat", kMaxRepeats)) options.repeat = static_cast<int>(*repeat);
  options.group_rows = group_rows_flag(args, s.definition());
  options.group_offsets = group_offsets_flag(args, s.definition());
  options.group_sizes = group_shapes_flag(args, s.definition());
  LowerOptions lowering;
  lowering.limits = limits_of(s);
  if (with_sms_flag(args, lowering.limits)) options.limits = lowering.limits;
  lower(s, lowering);  // compile errors first, so a machine without a GPU reports them too
  if (!rt::gpu_available())
    throw_user_error("no-gpu", "gemmgen run needs a GPU and found none (gemmgen emit writes the .cu without one)");
  auto mma = s.mma_shape();
  std::string target(target_name(mma ? mma->target : Target::Sm90a));
  rt::DeviceInfo device = rt::device_info();
  if (device_arch(device) != target)
    throw_user_error("arch-mismatch", "the schedule targets " + target + " but the GPU is " + device.name + " (" +
                                          device_arch(device) + "); pass --arch " + device_arch(device) +
                                          " if the schedule lowers for it, or use gemmgen emit");
  // --at-m: the one kernel, loaded once, at each M (a kernel that reads M at run time).
  std::vector<std::pair<int64_t, int64_t>> sizes;
  const int64_t caller_n = s.definition().swapped() ? s.definition().m() : s.definition().n();
  for (int64_t m : args.positive_list("at-m", kMaxSizesPerRun)) sizes.push_back({m, caller_n});
  // --expected-m planned the kernel for another M than the problem's --m: launch it at --m.
  if (sizes.empty() && args.has("expected-m")) sizes.push_back({args.positive("m").value_or(kDefaultExtent), caller_n});
  std::vector<CheckReport> reports;
  try {
    reports = check_sizes_on_gpu(s, sizes, options);
  } catch (const rt::CudaError& e) {
    // A kernel that faults fails its check; the message names the kernel and its launch.
    io.err << "gemmgen run: CUDA error: " << e.what() << "\n";
    return 1;
  }
  bool passed = true;
  for (CheckReport& r : reports) {
    if (plan && plan->source != PlanSource::Named) r.plan = plan->describe();
    io.out << (args.has("json") ? format_report_json(r) + "\n" : format_report(r));
    passed = passed && r.passed;
  }
  if (!sizes.empty() && !args.has("json"))
    io.out << "one kernel, compiled and loaded once, launched at " << sizes.size() << " sizes: "
           << (passed ? "all passed" : "FAILED") << "\n";
  return passed ? 0 : 1;
}

// Each shape of a shapes file: the schedule (a built-in, or `auto`: gg::gemm's choice) checked
// against cuBLAS and fp64, then timed interleaved with cuBLAS in this process. A table with the
// geometric mean; optionally JSON and an SVG chart. Exit 1 when a shape that ran failed its check.
int cmd_bench(const Args& args, Io io) {
  const auto file = args.value("shapes");
  if (!file) usage_error("bench needs --shapes FILE (lines 'M N K [label]'; benchmarks/shapes.txt is one)");
  const std::vector<BenchShape> shapes = parse_shapes(read_text_file(*file, "shapes file"), *file);
  GemmOptions gemm;
  apply_type_flags(args, gemm);
  if (auto a = args.value("a-major")) gemm.layout.a = parse_operand_major(*a, "A", "m");
  if (auto b = args.value("b-major")) gemm.layout.b = parse_operand_major(*b, "B", "n");
  if (auto c = args.value("compiled-dims")) set_compiled_dims(gemm.layout, *c);
  gemm.layout.symmetric = args.has("symmetric");  // each shape's D = A * A^T (a shape with N other than M is refused)
  // Masked groups: every shape is `--batch` groups of at most M rows, `--group-m` of them in use
  // (random:SEED draws each shape's counts), planned for --expected-m rows when given.
  if (auto b = args.positive("batch")) gemm.layout.batch = *b;
  if (auto source = source_flag(args)) gemm.layout.source = *source;
  const std::optional<int64_t> expected_m = args.positive("expected-m");
  if (expected_m && gemm.layout.source != ProblemSource::Masked) usage_error("--expected-m plans masked groups; it needs --group-m");
  const std::string schedule = args.value("schedule").value_or("auto");
  if (schedule != "auto") builtin_schedule(schedule, gemm_definition(128, 128, 64, gemm));  // unknown-schedule first
  CheckOptions options;
  options.bench = true;
  if (auto reps = args.at_most("reps", kMaxTimedReps)) options.reps = static_cast<int>(*reps);
  // Output files are opened before any timing, so a bad path fails in a second, not after the run.
  auto open_output = [&](const char* flag) -> std::unique_ptr<std::ofstream> {
    auto path = args.value(flag);
    if (!path) return nullptr;
    auto out = std::make_unique<std::ofstream>(*path);
    if (!*out) throw_user_error("cannot-write", "cannot write '" + *path + "' (--" + flag + ")");
    return out;
  };
  const auto json = open_output("json"), plot = open_output("plot");
  if (!rt::gpu_available())
    throw_user_error("no-gpu", "gemmgen bench needs a GPU and found none (the shapes file parsed: " +
                                   std::to_string(shapes.size()) + " shapes)");
  const std::string device = rt::device_info().name;
  std::vector<BenchRow> rows;
  bool all_passed = true;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const BenchShape& shape = shapes[i];
    BenchRow row;
    row.shape = shape;
    io.err << "[" << i + 1 << "/" << shapes.size() << "] " << shape.m << "x" << shape.n << "x" << shape.k << " "
           << std::flush;
    try {
      // gg::gemm's plan, in the orientation it runs (a swapped one computes D^T = B A^T)
      GemmOptions named = gemm;
      named.schedule = schedule;
      const GemmPlan plan = plan_gemm(expected_m ? std::min(*expected_m, shape.m) : shape.m, shape.n, shape.k, named);
      row.schedule = plan.schedule;
      row.config = plan.config;
      CheckOptions shape_options = options;
      std::vector<std::pair<int64_t, int64_t>> sizes;  // the shape's M where the plan is for another
      if (gemm.layout.source == ProblemSource::Masked) {
        shape_options.group_rows = group_rows_flag(args, gemm.layout.batch, shape.m);
        if (expected_m && *expected_m < shape.m) sizes.push_back({shape.m, shape.n});
      }
      if (gemm.layout.source == ProblemSource::Contiguous || gemm.layout.source == ProblemSource::VarlenK)
        shape_options.group_offsets = group_offsets_flag(args, gemm.layout.source, gemm.layout.batch,
                                                         gemm.layout.source == ProblemSource::VarlenK ? shape.k : shape.m);
      const CheckReport r = check_sizes_on_gpu(plan.build(), sizes, shape_options).front();
      row.ran = true;
      row.kernel = r.kernel_name;
      row.passed = r.passed;
      row.tflops = r.tflops;
      row.cublas_tflops = r.cublas_tflops;
      row.sm_clock_mhz = r.sm_clock_mhz;
      row.power_w = r.power_w;
      all_passed = all_passed && r.passed;
      io.err << row.schedule << ": " << r.tflops << " vs cuBLAS " << r.cublas_tflops << " TFLOP/s\n";
    } catch (const CompileError& e) {
      row.refused = e.rule() + ": " + e.message();
      io.err << "refused (" << e.rule() << ")\n";
    }
    rows.push_back(row);
  }
  const std::string dtype = std::string(dtype_name(gemm.in)) + " -> " + std::string(dtype_name(gemm.out));
  io.out << format_bench_table(rows, device, dtype);
  if (json) *json << format_bench_json(rows, device, dtype);
  if (plot) *plot << format_bench_svg(rows, device, dtype);
  return all_passed ? 0 : 1;
}

// A first use's JIT cost on this CPU, no GPU needed: codegen and NVRTC (disk cache bypassed),
// each timed `reps` times; medians, since other work on the machine only ever adds time.
int cmd_jit(const Args& args, Io io) {
  Schedule s = load_schedule(args);
  const int reps = static_cast<int>(args.at_most("reps", kMaxJitReps).value_or(5));
  rt::JitOptions options;
  std::istringstream extra(args.value("nvrtc-options").value_or(""));
  for (std::string option; extra >> option;) options.extra_options.push_back(option);
  std::vector<double> codegen, nvrtc, cpu;
  JitCompileTiming last;
  for (int i = 0; i < reps; ++i) {
    try {
      last = time_jit_compile(s, options);
    } catch (const rt::JitError& e) {
      if (options.extra_options.empty()) throw;  // gemmgen's own options: a bug
      usage_error("NVRTC failed with --nvrtc-options '" + *args.value("nvrtc-options") + "': " + e.what());
    }
    codegen.push_back(last.codegen_ms);
    nvrtc.push_back(last.nvrtc_ms);
    cpu.push_back(last.nvrtc_cpu_ms);
  }
  auto sorted = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  codegen = sorted(codegen), nvrtc = sorted(nvrtc), cpu = sorted(cpu);
  const size_t mid = nvrtc.size() / 2;
  auto ms = [](double v) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << v << " ms";
    return os.str();
  };
  io.out << "kernel " << last.kernel.kernel_name << " (" << last.compiled.arch << ", " << rt::nvrtc_version()
         << "): source " << last.kernel.source.size() << " bytes, CUBIN " << last.compiled.cubin.size() << " bytes\n"
         << "codegen: median " << ms(codegen[mid]) << ", min " << ms(codegen.front()) << "\n"
         << "NVRTC:   median " << ms(nvrtc[mid]) << ", min " << ms(nvrtc.front()) << ", max " << ms(nvrtc.back())
         << "; CPU time median " << ms(cpu[mid]) << ", min " << ms(cpu.front()) << "\n"
         << "(" << reps << " runs, disk cache bypassed)\n";
  if (!last.compiled.log.empty()) io.out << "NVRTC log (last compile):\n" << last.compiled.log << "\n";
  return 0;
}

// Lowers and executes the kernel IR on the CPU: no GPU needed. Exit 1 when the simulation
// finds a hazard, a deadlock or a wrong element.
int cmd_simulate(const Args& args, Io io) {
  Schedule s = load_schedule(args);
  DeviceLimits limits = limits_of(s);
  with_sms_flag(args, limits);
  SimulateOptions options;
  if (auto seed = args.positive("seed")) options.seed = static_cast<uint64_t>(*seed);
  options.group_rows = group_rows_flag(args, s.definition());
  options.group_offsets = group_offsets_flag(args, s.definition());
  options.group_sizes = group_shapes_flag(args, s.definition());
  check_simulate_budget(s.definition(), args);
  std::vector<int64_t> at_m = args.positive_list("at-m", kMaxSizesPerRun);
  if (at_m.empty() && args.has("expected-m")) at_m.push_back(args.positive("m").value_or(kDefaultExtent));
  if (at_m.empty()) {
    SimulationReport r = simulate(s, options, limits);
    io.out << r.to_string();
    return r.passed ? 0 : 1;
  }
  // The one kernel at each M: lowered once, simulated at each size it reads at run time.
  LowerOptions lowering;
  lowering.limits = limits;
  const Kernel k = lower(s, lowering);
  bool passed = true;
  for (int64_t m : at_m) {
    SimulateOptions at = options;
    (s.definition().swapped() ? at.n : at.m) = m;  // the caller's M is a swapped kernel's N
    Args sized = args;
    sized.flags["m"] = {std::to_string(m)};
    check_simulate_budget(resized_definition(s.definition(), s.definition().swapped() ? s.definition().m() : m,
                                             s.definition().swapped() ? m : s.definition().n()),
                          sized);
    const SimulationReport r = simulate_kernel(k, s.definition(), at);
    io.out << r.to_string();
    passed = passed && r.passed;
  }
  return passed ? 0 : 1;
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"list", "list the built-in schedules", {}, cmd_list},
      {"explain",
       "print the loop nests after each directive, the resources and the check",
       concat({schedule_flags(),
               {{"diff", "A B", "compare two schedules (built-in names, or schedule files)"},
                {"final", "", "print only the final loop nests, not each step"}},
               problem_flags()}),
       cmd_explain},
      {"print", "print a schedule in the text form a schedule file uses", concat({schedule_flags(), problem_flags()}),
       cmd_print},
      {"check", "check a schedule against the device limits and lower it as emit does (exit 0 ok, 2 not)",
       concat({schedule_flags(), problem_flags()}), cmd_check},
      {"emit",
       "write the standalone CUDA .cu for a schedule (needs no GPU)",
       concat({schedule_flags(), problem_flags(),
               {{"output", "FILE", "write the .cu to FILE (`-`: stdout, the default)", "-o"},
                {"dump-after", "PASS", "print the kernel IR after lowering pass PASS (or `all`) to stderr"}}}),
       cmd_emit},
      {"run",
       "run a schedule on the GPU and check it against cuBLAS and fp64 (exit 1 if the check fails)",
       concat({schedule_flags(), problem_flags(),
               {{"check", "", "check the result (always done: errors vs cuBLAS and fp64, unwritten elements)"},
                {"bench", "", "also time the kernel and cuBLAS in this process (TFLOP/s and ratio)"},
                {"json", "", "print the report as one JSON object"},
                {"exact", "", "small-integer inputs in [-2, 2], so the result must equal cuBLAS exactly"},
                {"seed", "N", "random seed for the inputs (default 1)"},
                {"reps", "N", "timed runs for --bench, the median is reported (default 50, at most 10000)"},
                {"repeat", "N", "launch N (at most 1000) more times on the same inputs; each output must be bit-identical"},
                {"sms", "N", "plan for a device of N SMs (its persistent grid; a launch runs no more clusters than this GPU holds)"},
                {"at-m", "LIST", "launch the one kernel at each M of a comma-separated list (M read at run time) and check each"}}}),
       cmd_run},
      {"bench",
       "time a schedule (or auto) against cuBLAS on every shape of a shapes file (needs a GPU)",
       concat({{{"shapes", "FILE", "shapes file: lines 'M N K [label]' (benchmarks/shapes.txt)"},
                {"schedule", "NAME", "a built-in schedule, or auto (default): the one gg::gemm picks per shape"}},
               type_flags(),
               {{"a-major", "k|m", "A's contiguous dimension for every shape: k (default) or m"},
        {"b-major", "k|n", "B's contiguous dimension for every shape: k (default) or n"},
        {"compiled-dims", "DIMS", "sizes the kernels have as constants: nk (default: M read at run time), mnk, mk, k"},
        {"symmetric", "", "each shape is D = A * A^T (N = M): auto plans the symmetric schedule where it wins"},
        {"batch", "B", "matrices (masked: groups) per shape (default 1)"},
        {"group-m", "LIST", "groups' rows per shape (comma-separated) or random:SEED: masked, each group's rows in use; "
                            "contiguous, each group's rows of A and D (M in all at most; random:SEED: M in all)"},
        {"group-k", "LIST", "variable-K groups: each group's rows of K (K in all at most) or random:SEED, per shape"},
        {"source", "SOURCE", "dense, masked (the default with --group-m), contiguous or varlen_k"},
        {"expected-m", "M", "masked groups: plan each shape for this many rows per group"},
        {"reps", "N", "timed runs per shape, the median is reported (default 50, at most 10000)"},
        {"json", "FILE", "also write the results as JSON"},
        {"plot", "FILE", "also write an SVG chart of the ratio to cuBLAS per shape"}}}),
       cmd_bench},
      {"tune",
       "time auto's best configs per shape on the GPU and record the fastest, which auto then uses",
       concat({{{"shapes", "FILE", "shapes file: lines 'M N K [label]'; or one shape with --m, --n and --k"},
                {"m", "M", "rows of A and D"},
                {"n", "N", "rows of B, columns of D"},
                {"k", "K", "the reduction extent"}},
               type_flags(),
               {{"a-major", "k|m", "A's contiguous dimension: k (default) or m"},
        {"b-major", "k|n", "B's contiguous dimension: k (default) or n"},
        {"top", "N", "configs per orientation, the model's best first (default 6)"},
        {"reps", "N", "timed runs per config, the median is compared (default 30, at most 10000)"},
        {"json", "FILE", "also write every candidate's figures as JSON"},
        {"dry-run", "", "list the candidates without a GPU; nothing is timed or recorded"}}}),
       cmd_tune},
      {"precompile",
       "compile gg::gemm's kernel for every shape of a shapes file into the disk cache, on every core (needs no GPU)",
       concat({{{"shapes", "FILE", "shapes file: lines 'M N K [label]' (benchmarks/shapes.txt)"}},
               type_flags(),
               {{"a-major", "k|m", "A's contiguous dimension for every shape: k (default) or m"},
        {"b-major", "k|n", "B's contiguous dimension for every shape: k (default) or n"},
        {"compiled-dims", "DIMS", "sizes the kernels have as constants: nk (default: M read at run time), mnk, mk, k"},
        {"arch", "ARCH", "sm_90a (default) or sm_100a"},
        {"jobs", "N", "compiles at once (default: one per core)"}}}),
       cmd_precompile},
      {"jit",
       "time a first use's codegen and NVRTC compile on this CPU, disk cache bypassed (needs no GPU)",
       concat({schedule_flags(), problem_flags(),
               {{"reps", "N", "compiles to time, the median is reported (default 5, at most 100)"},
                {"nvrtc-options", "OPTIONS", "extra NVRTC options, space-separated, e.g. \"-time=-\" (its log is printed)"}}}),
       cmd_jit},
      {"model",
       "the cost model's predicted time for configs `tune` measured, with given rates (needs no GPU)",
       {{"configs", "FILE", "lines 'M N K DTYPE OUT SWAPPED PARAMS' (PARAMS as tune --json writes a candidate's)"},
        {"rates", "FILE", "'name value' lines for the model's parameters (default: the ones auto plans with)"},
        {"print-rates", "", "print the rates (the defaults, or --rates FILE's) instead"}},
       cmd_model},
      {"simulate",
       "execute the lowered kernel on the CPU: sync hazards, deadlocks and the output vs a host reference (exit 1 on a finding)",
       concat({schedule_flags(), problem_flags(),
               {{"seed", "N", "seed for the inputs and the interleaving of warps and copies (default 1)"},
                {"sms", "N", "SMs of the simulated device (fewer SMs: persistent CTAs loop over more tiles)"},
                {"at-m", "LIST", "simulate the one kernel at each M of a comma-separated list (M read at run time)"}}}),
       cmd_simulate},
  };
  return table;
}

std::string usage() {
  std::string s = "usage: gemmgen COMMAND [flags]\n\ncommands:\n";
  size_t width = 0;
  for (const auto& c : commands()) width = std::max(width, c.name.size());
  for (const auto& c : commands()) s += "  " + c.name + std::string(width + 2 - c.name.size(), ' ') + c.summary + "\n";
  s += "\n`gemmgen COMMAND --help` lists a command's flags; `gemmgen --version` prints the version.\n"
       "exit codes: 0 ok, 1 check failed (gemmgen run, bench, simulate), 2 usage or compile error, 3 internal error\n";
  return s;
}

std::string command_usage(const Command& c) {
  std::string s = "usage: gemmgen " + c.name + (c.flags.empty() ? "" : " [flags]") + "\n" + c.summary + "\n";
  if (!c.flags.empty()) s += "\nflags:\n" + flags_help(c.flags);
  return s;
}

namespace {
// What a command wrote must have arrived: output to a full disk or a closed standard output
// would otherwise be lost with exit 0. The stream is flushed here because its buffer may still
// hold the whole output, and a failure shows only when it is written out.
int written(Io io, int code) {
  errno = 0;
  io.out.flush();
  if (!io.out)
    throw_user_error("cannot-write", std::string("cannot write to standard output") +
                                         (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()) +
                                         "; the output is incomplete");
  return code;
}
}  // namespace

int run_cli(const std::vector<std::string>& argv, Io io) {
  try {
    if (argv.empty()) {
      io.err << usage();
      return 2;
    }
    const std::string& name = argv[0];
    if (name == "--help" || name == "-h" || name == "help") {
      io.out << usage();
      return written(io, 0);
    }
    if (name == "--version") {
      io.out << "gemmgen " << rt::gemmgen_version() << "\n";
      return written(io, 0);
    }
    auto cmd = std::find_if(commands().begin(), commands().end(), [&](const Command& c) { return c.name == name; });
    if (cmd == commands().end()) {
      std::string names;
      for (const auto& c : commands()) names += (names.empty() ? "" : ", ") + c.name;
      usage_error("unknown command '" + name + "'; commands are " + names + " (gemmgen --help)");
    }
    Args args = parse_args(name, std::vector<std::string>(argv.begin() + 1, argv.end()), cmd->flags);
    if (args.help) {
      io.out << command_usage(*cmd);
      return written(io, 0);
    }
    return written(io, cmd->run(args, io));
  } catch (const CompileError& e) {
    io.err << "gemmgen: error[" << e.rule() << "]: " << e.message() << "\n";
    if (e.rule() == "usage") io.err << "gemmgen: run `gemmgen --help` or `gemmgen COMMAND --help` for usage\n";
    return 2;
  } catch (const InternalError& e) {
    io.err << "gemmgen: " << e.what() << "\n"
           << "gemmgen: this is a bug in gemmgen, not in your schedule; please report it with the command line "
              "and any schedule file\n";
    return 3;
  } catch (const std::exception& e) {
    io.err << "gemmgen: internal error: " << e.what() << "\n"
           << "gemmgen: this is a bug in gemmgen; please report it with the command line and any schedule file\n";
    return 3;
  }
}

}  // namespace gg::cli
