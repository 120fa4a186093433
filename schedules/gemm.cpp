#include "schedules/gemm.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "codegen/tile_order.h"
#include "dsl/error.h"
#include "runtime/device/gemm_args.h"
#include "runtime/device/tile_order.h"
#include "runtime/device_info.h"
#include "runtime/launch.h"
#include "dsl/schedule_text.h"
#include "schedules/tuning.h"
#include "schedules/tutorial.h"

namespace gg {

namespace {

// Fastest first; each later step asks less of the problem (auto and v5..v10 need TMA loads).
constexpr const char* kPreference[] = {"auto", "v10", "v8", "v6", "v5", "v4", "v3"};

struct KernelCache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<rt::LoadedKernel>> kernels;  // by kernel name
  std::map<std::string, const rt::LoadedKernel*> by_problem;          // by problem key
};

KernelCache& kernel_cache() {
  static KernelCache cache;
  return cache;
}

// The choice `gemmgen tune` recorded for this problem on this device, if any and if it still
// lowers (a record from another gemmgen build may not).
std::optional<GemmPlan> tuned_plan(int64_t m, int64_t n, int64_t k, const GemmOptions& o, const std::string& read_as) {
  if (!rt::gpu_available()) return std::nullopt;
  const auto tuned =
      lookup_tuned(tuning_key(m, n, k, o, std::string(target_name(o.target)), rt::device_info().name));
  if (!tuned) return std::nullopt;
  GemmPlan plan;
  plan.def = gemm_definition(m, n, k, o, tuned->swapped);
  try {
    lower(auto_schedule(plan.def, tuned->params, o.target));
  } catch (const CompileError&) {
    return std::nullopt;
  }
  plan.source = PlanSource::Tuned;
  plan.schedule = "auto";
  plan.params = tuned->params;
  predict_auto_params(plan.def, limits_for(o.target), *plan.params);
  plan.measured_us = tuned->ms * 1e3;
  plan.measured_cublas_us = tuned->cublas_ms * 1e3;
  plan.target = o.target;
  plan.config = read_as + "tuned: " + (tuned->swapped ? "swap A/B; " : "") + plan.params->to_string();
  return plan;
}

// The heuristic's best config for a definition, or nullopt (and why) when none lowers.
std::optional<AutoParams> best_auto(const Definition& def, const DeviceLimits& limits, std::string* refusal) {
  try {
    return choose_auto_params(def, limits);
  } catch (const CompileError& e) {
    if (refusal && refusal->empty()) *refusal = e.rule() + ": " + e.message();
    return std::nullopt;
  }
}

// Why the symmetric plan of D = A * A^T would not beat the whole product, or "" where it does. The
// whole product of A * A^T has no cluster either (one operand cannot be shared as both), so half
// the tiles win almost everywhere: H100, `run --schedule auto` against the symmetric schedule, each
// its own process: 3000^3 0.112 against 0.159 ms, 2000^2 x 7000 0.113 against 0.149, 2048^3 0.028
// against 0.032, 1000^3 0.0136 against 0.0152, 8192^3 1.78x cuBLAS. Not where few tiles compute and
// A's rows load at full rate: the whole product's smaller tiles then spread over more SMs (1024^3:
// 36 computing tiles, 0.0122 against 0.0092 ms).
std::string symmetric_loses(const Definition& def, const Schedule& symmetric, const DeviceLimits& limits) {
  const int64_t tile_m = symmetric.domain().tile_extent(Root::M), tile_n = symmetric.domain().tile_extent(Root::N);
  const int64_t computing =
      gg::dev::triangle_computing(int((def.m() + tile_m - 1) / tile_m), int(triangle_ratio(tile_m, tile_n)));
  if (2 * computing < limits.sms && rows_sector_aligned(def, def.node(def.matmul_node().operands[0])))
    return "the symmetric plan's " + std::to_string(computing) + " computing tiles fill less than half of " +
           std::to_string(limits.sms) + " SMs, where the whole product's smaller tiles spread over more of them";
  return "";
}

}  // namespace

Definition gemm_definition(int64_t m, int64_t n, int64_t k, const GemmOptions& o, bool swapped) {
  std::vector<EpilogueSpec> epilogue;
  if (o.alpha != 1.0) epilogue.push_back({.kind = OpKind::Scale, .scalar = o.alpha});
  epilogue.insert(epilogue.end(), o.epilogue.begin(), o.epilogue.end());
  return make_definition(m, n, k, o.in, o.out, epilogue, o.layout, swapped);
}

double swap_margin(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped) {
  // Where both orientations TMA-store their tiles (the swapped one through a transposed buffer),
  // only the tile widths differ, and 3% takes them: on an H200 (2026-11-28, old and new planner
  // alternating) 960 x 7168 x 2048, 2816^3 and 3000 x 5000 x 1024 ran 1-2% faster swapped in
  // 128x240 tiles than straight in 128x256, and 2560^2 x 4096 stays swapped (0.90x cuBLAS; 0.86x
  // straight). A swapped kernel storing from registers needs 5%: at 3%, 247 x 812 x 3991 lost 9%.
  const bool both_staged = straight && swapped && straight->subtile_cols > 0 && swapped->subtile_cols > 0;
  return both_staged ? 0.03 : 0.05;
}

bool fewer_tiles_swapped(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped) {
  // The model sees one wave as one tile's time: where both orientations' best configs are the same
  // tile in one wave, it ties them exactly, though the one of more tiles computes more padding past
  // M or N at the same pace with more bytes through L2. On an H200 (2026-11-28, old and new plans
  // alternating) swapped in 5% fewer tiles or more: 664 x 3064 x 6040 (128x144, 132 -> 120 tiles)
  // 59.0 -> 51.0 us, 448 x 1888 x 7328 (128x64, 120 -> 105) 46.0 -> 35.0, 848 x 3472 x 5528 (128x224,
  // 128 -> 112) 64.2 -> 53.5; 1512 x 720 x 5032 ran 30.0 us straight (120 64x144 tiles) against
  // 33.3 swapped (132). Fewer by less than that lost 1.5-3% (1240 x 1928 x 9448: 130 -> 128 tiles,
  // 4008 x 752 x 14280: 128 -> 126, 1488 x 2304 x 14712: 132 -> 126). Not for short k loops: at
  // 616 x 872 x 536 (9 k tiles) 112 swapped 64x80 tiles ran 4% faster than 110 straight.
  if (!straight || !swapped) return false;
  const auto one_wave = [](const AutoParams& p) { return p.waves == 1 && p.split_k == 1 && p.k_tiles >= 16; };
  return one_wave(*straight) && one_wave(*swapped) && straight->tile_m == swapped->tile_m &&
         straight->tile_n == swapped->tile_n && 100 * swapped->tiles <= 95 * straight->tiles &&
         std::abs(straight->predicted_us - swapped->predicted_us) <= 0.01 * straight->predicted_us;
}

bool prefer_swapped(const std::optional<AutoParams>& straight, const std::optional<AutoParams>& swapped) {
  return swapped && (!straight || swapped->predicted_us < (1.0 - swap_margin(straight, swapped)) * straight->predicted_us ||
                     fewer_tiles_swapped(straight, swapped));
}

std::string_view plan_source_name(PlanSource s) {
  switch (s) {
    case PlanSource::Named: return "named";
    case PlanSource::Tuned: return "tuned";
    case PlanSource::Auto: return "auto";
    case PlanSource::Fallback: return "fallback";
    case PlanSource::Symmetric: return "symmetric";
  }
  return "?";
}

ProblemLayout planned_layout(int64_t m, int64_t n, int64_t k, const GemmOptions& options) {
  ProblemLayout l = canonical_layout(m, n, options.layout);
  if (l.source != ProblemSource::Dense || l.symmetric || dtype_bytes(options.in) != 2) return l;
  GemmOptions canonical = options;
  canonical.layout = l;
  const Definition def = gemm_definition(m, n, k, canonical);
  const auto& ops = def.matmul_node().operands;
  l.stage_a = l.stage_a || !tma_rows_aligned(def, def.node(ops[0]));
  l.stage_b = l.stage_b || !tma_rows_aligned(def, def.node(ops[1]));
  // Rows TMA loads at half rate (not 32-byte multiples apart: K = 7000 K-major bf16) are not staged
  // for speed: on an H200 (one machine, each run against cuBLAS in its process) copying A first lost
  // at 2000 x 3000 x 7000 (0.87x cuBLAS staged, 0.98x not), 2048 x 3072 x 7000 (0.81x, 0.88x),
  // 4096 x 4096 x 7000 (0.89x, 0.94x), 3000 x 5000 x 1032 (0.86x, 0.94x), and copying B at 8000 x
  // 6000 x 520 (1.01x, 1.07x); it won only at 2000 x 6000 x 7000 (0.93x, 0.90x).
  return l;
}

GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options) {
  GemmOptions o = options;
  o.layout = canonical_layout(m, n, options.layout);
  if (o.schedule == "auto") o.schedule.clear();
  std::string read_as;
  if (o.layout.a != options.layout.a) read_as += "A read k-major (M=1); ";
  if (o.layout.b != options.layout.b) read_as += "B read k-major (N=1); ";
  if (o.schedule.empty()) {  // the planner's kernels load by TMA: rows it cannot address are staged
    const ProblemLayout staged = planned_layout(m, n, k, o);
    if (staged.stage_a && !o.layout.stage_a) read_as += "A staged; ";
    if (staged.stage_b && !o.layout.stage_b) read_as += "B staged; ";
    o.layout = staged;
  }
  GemmPlan plan;
  plan.def = gemm_definition(m, n, k, o);
  plan.target = o.target;
  if (o.schedule.empty() && o.layout.symmetric) {
    // D = A * A^T computes half the tiles where the symmetric plan lowers (16-bit D, rows TMA can
    // store, no C or bias) and is faster; otherwise the whole product, as any other.
    try {
      const Schedule symmetric = symmetric_schedule(plan.def, o.target);
      lower(symmetric);
      plan.symmetric_refusal = symmetric_loses(plan.def, symmetric, limits_for(o.target));
      if (plan.symmetric_refusal.empty()) {
        plan.source = PlanSource::Symmetric;
        plan.schedule = "symmetric";
        plan.config = read_as + "tile " + std::to_string(symmetric.domain().tile_extent(Root::M)) + "x" +
                      std::to_string(symmetric.domain().tile_extent(Root::N)) +
                      ", the tiles on and above the diagonal, each subtile above it stored with its mirror";
        return plan;
      }
    } catch (const CompileError& e) {
      plan.symmetric_refusal = "the symmetric schedule does not lower (" + e.message() + ")";
    }
  }
  if (o.schedule.empty())
    if (auto tuned = tuned_plan(m, n, k, o, read_as)) return *std::move(tuned);
  if (!o.schedule.empty()) {
    builtin_schedule(o.schedule, plan.def, o.target);  // an unknown name is refused here, not at build()
    plan.schedule = o.schedule;
    plan.config = read_as.empty() ? "" : read_as.substr(0, read_as.size() - 2);
    return plan;
  }
  const DeviceLimits limits = limits_for(o.target);
  const Definition swapped_def = gemm_definition(m, n, k, o, true);
  plan.straight_best = best_auto(plan.def, limits, &plan.auto_refusal);
  // Groups are rows of A: the swapped orientation (A's rows the kernel's columns) has none. FP8
  // stays straight too: its factors are laid out for it (the lowering refuses them swapped).
  if (o.layout.source == ProblemSource::Dense && !dtype_is_fp8(o.in))
    plan.swapped_best = best_auto(swapped_def, limits, nullptr);
  if (prefer_swapped(plan.straight_best, plan.swapped_best)) {
    plan.def = swapped_def;
    plan.source = PlanSource::Auto;
    plan.schedule = "auto";
    plan.config = read_as + "swap A/B; " + plan.swapped_best->to_string();
    plan.params = plan.swapped_best;
  } else if (plan.straight_best) {
    plan.source = PlanSource::Auto;
    plan.schedule = "auto";
    plan.config = read_as + plan.straight_best->to_string();
    plan.params = plan.straight_best;
  } else {
    plan.source = PlanSource::Fallback;
    plan.schedule = pick_schedule(plan.def, o.target);
    plan.config = read_as.empty() ? "" : read_as.substr(0, read_as.size() - 2);
  }
  return plan;
}

Schedule GemmPlan::build() const {
  return params ? auto_schedule(def, *params, target) : builtin_schedule(schedule, def, target);
}

std::string GemmPlan::describe() const {
  const std::string name = source == PlanSource::Fallback ? "fallback " + schedule : schedule;
  return config.empty() ? name : name + ": " + config;
}

std::string explain_plan(const GemmPlan& plan) {
  const Definition& def = plan.def;
  const int64_t m = plan.swapped() ? def.n() : def.m(), n = plan.swapped() ? def.m() : def.n();
  std::ostringstream os;
  os << "plan for M=" << m << " N=" << n << " K=" << def.k() << " " << dtype_name(def.input_dtype()) << " -> "
     << dtype_name(def.output_dtype()) << " on " << target_name(plan.target) << ": " << plan.describe() << "\n";
  os << "  source:      " << plan_source_name(plan.source);
  switch (plan.source) {
    case PlanSource::Named: os << " (the schedule asked for, in the problem's own orientation)"; break;
    case PlanSource::Tuned: os << " (the record `gemmgen tune` wrote for this problem on this GPU)"; break;
    case PlanSource::Auto: os << " (no tuned record: the heuristic's best config)"; break;
    case PlanSource::Fallback: os << " (no `auto` config lowers: " << plan.auto_refusal << ")"; break;
    case PlanSource::Symmetric: os << " (D = A * A^T: half the tiles, the built-in symmetric schedule)"; break;
  }
  if (!plan.symmetric_refusal.empty()) os << "\n  symmetric:   planned as the whole product: " << plan.symmetric_refusal;
  os << "\n  orientation: " << (plan.swapped() ? "swapped: D^T[N,M] = B * A^T, stored into D's memory column-major"
                                             : "straight: D[M,N] = A * B^T");
  const auto us = [](const std::optional<AutoParams>& p) {
    std::ostringstream t;
    if (p) t << p->predicted_us << " us";
    else t << "no config lowers";
    return t.str();
  };
  if (plan.source == PlanSource::Auto || plan.source == PlanSource::Fallback)
    os << " (the model's best: straight " << us(plan.straight_best) << ", swapped " << us(plan.swapped_best)
       << "; the swap is taken when it is " << std::lround(100 * swap_margin(plan.straight_best, plan.swapped_best))
       << "% faster"
       << (fewer_tiles_swapped(plan.straight_best, plan.swapped_best)
               ? ", or, as here, the same tile in one wave of fewer tiles: " + std::to_string(plan.swapped_best->tiles) +
                     " against " + std::to_string(plan.straight_best->tiles)
               : std::string())
       << ")";
  os << "\n";
  // Every operand matrix read once at the model's DRAM rate, beside the MMAs at peak: the time no
  // kernel of the problem beats, and which side of the roofline it is on.
  const Roofline roof = problem_roofline(def, limits_for(plan.target));
  os << std::setprecision(3) << "  roofline:    the MMAs at peak " << roof.mma_us << " us; every operand "
     << "matrix read and D written once, " << roof.dram_mb << " MB, " << roof.dram_us << " us at "
     << ModelRates{}.dram_bytes_per_s / 1e12 << " TB/s: " << (roof.mma_bound() ? "the MMAs bound" : "DRAM bounds")
     << " it\n" << std::setprecision(6);
  if (plan.source == PlanSource::Tuned && plan.measured_us && plan.params) {
    os << std::fixed << std::setprecision(1) << "  measured:    " << *plan.measured_us << " us when tuned";
    if (plan.measured_cublas_us && *plan.measured_us > 0)
      os << " (cuBLAS " << *plan.measured_cublas_us << " us, ratio " << std::setprecision(2)
         << *plan.measured_cublas_us / *plan.measured_us << ")";
    os << std::setprecision(1) << "; the model predicts " << plan.params->predicted_us << " us for this config ("
       << std::setprecision(2) << plan.params->predicted_us / *plan.measured_us << "x the measured)\n"
       << std::defaultfloat;
  }
  // Operands as the caller names them: a swapped plan's A is the caller's B, its M the caller's N.
  const auto callers = [&](int id) {
    std::string rows = row_bytes_text(def, def.node(id));
    std::string name = def.node(id).name;
    if (plan.swapped()) {
      name = id == def.matmul_node().operands[0] ? "B" : "A";
      if (const size_t at = rows.find(" of M="); at != std::string::npos) rows[at + 4] = 'N';
      else if (const size_t at_n = rows.find(" of N="); at_n != std::string::npos) rows[at_n + 4] = 'M';
    }
    return name + " (" + rows;
  };
  std::string staged, half_rate;
  const auto& ops = def.matmul_node().operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0 && ops[i] == ops[0]) continue;  // D = A * A^T: A once
    const Node& x = def.node(ops[i]);
    if (x.staged) {
      // Rows TMA could load, but at half rate: they start 16 bytes into a 32-byte sector.
      const std::string why = tma_rows_aligned(def, x) ? "TMA loads them at half rate" : "TMA cannot address them";
      staged += (staged.empty() ? "" : "; ") + callers(x.id) + ", copied with rows " +
                std::to_string(staged_pitch(def, x)) + " elements apart: " + why + ")";
    } else if (def.problem_source() != ProblemSource::PointerArray &&  // each group's own rows
               !rows_sector_aligned(def, x)) {
      half_rate += (half_rate.empty() ? "" : "; ") + callers(x.id) + ")";
    }
  }
  if (!staged.empty())
    os << "  staged:      " << staged << "; each launch first copies the rows into buffers whose rows are "
       << GG_STAGE_PITCH_BYTES << "-byte multiples apart; the model counts " << std::fixed << std::setprecision(1) << staging_seconds(def) * 1e6
       << " us for the copy\n" << std::defaultfloat;
  if (!half_rate.empty())
    os << "  half rate:   " << half_rate << ": rows not a multiple of 32 bytes apart start 16 bytes into an L2 "
       << "sector, and TMA loads them in about 4x the requests (their tensor maps ask for 128-byte L2 promotion, not "
          "256); the model counts about "
       << std::setprecision(2) << 128 / ModelRates{}.unaligned_row_bytes_per_sm_s * 1e9 << std::defaultfloat
       << " ns a 128-byte row a CTA issues (a multicast operand's rows once per cluster); a leading dimension that is "
          "a multiple of 32 bytes loads at full rate\n";
  if (plan.source == PlanSource::Auto) os << explain_auto(def, limits_for(plan.target));
  return os.str();
}

std::string pick_schedule(const Definition& def, Target target) {
  std::string reasons;
  LowerOptions options;
  options.limits = limits_for(target);
  for (const char* name : kPreference) {
    try {
      lower(builtin_schedule(name, def, target), options);
      return name;
    } catch (const CompileError& e) {
      reasons += std::string(reasons.empty() ? "" : "; ") + name + ": " + e.rule();
    }
  }
  throw_user_error("no-schedule", "no built-in schedule lowers for M=" + std::to_string(def.m()) + " N=" +
                   std::to_string(def.n()) + " K=" + std::to_string(def.k()) + " (" + reasons +
                   "); `gemmgen check --schedule NAME` explains each");
}

rt::CompiledKernel compile_gemm_kernel(const EmittedKernel& e) {
  return rt::compile_kernel(e.source, e.kernel_name, std::string(target_name(e.plan.target)), rt::JitOptions{});
}

PrecompiledGemm precompile_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options) {
  PrecompiledGemm out{plan_gemm(m, n, k, options), "", false};
  const EmittedKernel e = emit_cuda(out.plan.build());
  out.kernel_name = e.kernel_name;
  out.from_cache = compile_gemm_kernel(e).from_cache;
  return out;
}

namespace {

// The kernel gg::gemm and gemm_masked run for a problem: planned once per problem key, and shared
// with every other problem whose plan makes the same kernel (named for its code).
// The epilogue's part of a problem's cache key: each op as its fields.
std::string epilogue_key(const std::vector<EpilogueSpec>& epilogue) {
  std::string key;
  for (const EpilogueSpec& e : epilogue)
    key += std::to_string(int(e.kind)) + "," + std::to_string(e.scalar) + "," + std::to_string(int(e.along)) + "," +
           std::to_string(int(e.activation)) + "," + std::to_string(int(e.save)) + "," + std::to_string(int(e.reduce)) +
           "," + std::to_string(int(e.reduce_along)) + "," + std::to_string(int(e.reduce_op)) + ";";
  return key;
}

// The kernel an emitted schedule compiles to, loaded once per kernel name (the caller holds the
// cache's lock).
const rt::LoadedKernel& loaded_kernel(KernelCache& cache, const EmittedKernel& e) {
  auto loaded = cache.kernels.find(e.kernel_name);
  if (loaded == cache.kernels.end()) {
    auto fresh = std::make_unique<rt::LoadedKernel>(compile_gemm_kernel(e), e.launch);
    loaded = cache.kernels.emplace(e.kernel_name, std::move(fresh)).first;
  }
  return *loaded->second;
}

const rt::LoadedKernel& cached_kernel(int64_t m, int64_t n, int64_t k, const GemmOptions& o) {
  const std::string key = o.schedule + "|" + std::string(target_name(o.target)) + "|" + std::to_string(m) + "x" +
                          std::to_string(n) + "x" + std::to_string(k) + "|" + std::string(dtype_name(o.in)) + "|" +
                          std::string(dtype_name(o.out)) + "|" + std::to_string(o.alpha) + "|" +
                          problem_layout_text(o.layout) + "|" + compiled_dims_text(o.layout) + "|" +
                          epilogue_key(o.epilogue) + (o.layout.symmetric ? "|symmetric" : "");
  KernelCache& cache = kernel_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.by_problem.find(key);
  if (it == cache.by_problem.end()) {
    // A new problem plans and emits (codegen only); a kernel that reads M at run time is named
    // for its code, so a new M that the plan gives the same kernel loads nothing new.
    const EmittedKernel e = emit_cuda(plan_gemm(m, n, k, o).build());
    it = cache.by_problem.emplace(key, &loaded_kernel(cache, e)).first;
  }
  return *it->second;
}

// The caller's problem for `kernel`: a swapped kernel's launch exchanges A and B (and M and N)
// itself; the layouts are what the plan generated from options.layout.
rt::GemmProblem caller_problem(const rt::LoadedKernel& kernel, const void* a, const void* b, void* d, int64_t m,
                               int64_t n, int64_t k, const GemmOptions& o) {
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
  problem.layouts = rt::caller_layouts(kernel.spec());
  problem.c = o.c;
  problem.bias = o.bias;
  problem.aux = o.aux;
  problem.row_reduction = o.row_reduction;
  problem.col_reduction = o.col_reduction;
  return problem;
}

}  // namespace

std::array<ScaleSpec, 2> fp8_default_scales(Target target) {
  if (target == Target::Sm100a)
    return {ScaleSpec{ScaleGranularity::Block1x128, std::nullopt, ScaleFormat::Ue8m0},
            ScaleSpec{ScaleGranularity::Block1x128, std::nullopt, ScaleFormat::Ue8m0}};
  return {ScaleSpec{ScaleGranularity::Block1x128, std::nullopt, ScaleFormat::F32},
          ScaleSpec{ScaleGranularity::Block128x128, std::nullopt, ScaleFormat::F32}};
}

size_t loaded_gemm_kernels() {
  KernelCache& cache = kernel_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.kernels.size();
}

namespace {

// The M a dense call's kernel is planned for (GemmOptions::planned_m).
int64_t dense_planned_m(int64_t m, const GemmOptions& o) {
  return o.planned_m > 0 && o.layout.runtime_m ? o.planned_m : m;
}

}  // namespace

namespace {

// FP8 operands (the default bf16 means "not said" here) and the factors the pointers stand for: a
// pointer given means DeepGEMM's factors unless the layout names others; none means a factor of 1.
GemmOptions fp8_options(GemmOptions o, bool scale_a, bool scale_b) {
  if (!dtype_is_fp8(o.in)) o.in = DType::E4M3;
  o.layout.scale_a = scale_a ? o.layout.scale_a.value_or(ScaleGranularity::Block1x128) : std::optional<ScaleGranularity>();
  o.layout.scale_b = scale_b ? o.layout.scale_b.value_or(ScaleGranularity::Block128x128) : std::optional<ScaleGranularity>();
  return o;
}

}  // namespace

PreparedGemm prepare_gemm(int64_t m, int64_t n, int64_t k, const GemmOptions& options, bool scale_a, bool scale_b) {
  const bool fp8 = dtype_is_fp8(options.in);
  if (fp8 && (options.layout.source != ProblemSource::Dense || options.layout.batch > 1))
    throw_user_error("not-lowered", "gemm_fp8 on a batch or grouped problem source is recorded and checked, but this "
                     "code generator does not lower it yet (one dense FP8 problem; gemm_fp8_masked and "
                     "gemm_fp8_contiguous take groups)");
  const GemmOptions o = fp8 ? fp8_options(options, scale_a, scale_b) : options;
  PreparedGemm out;
  out.kernel = &cached_kernel(dense_planned_m(m, o), n, k, o);
  out.problem = caller_problem(*out.kernel, nullptr, nullptr, nullptr, m, n, k, o);
  return out;
}

PreparedGemm prepare_scheduled_gemm(const Schedule& schedule, int64_t m, int64_t n, int64_t k,
                                    const GemmOptions& o) {
  LowerOptions lo;
  lo.limits = limits_for(o.target);
  const EmittedKernel e = emit_cuda(schedule, lo);
  PreparedGemm out;
  {
    KernelCache& cache = kernel_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    out.kernel = &loaded_kernel(cache, e);
  }
  out.problem = caller_problem(*out.kernel, nullptr, nullptr, nullptr, m, n, k, o);
  return out;
}

void gemm(const void* a, const void* b, void* d, int64_t m, int64_t n, int64_t k, const GemmOptions& o) {
  // FP8 operands through gemm(): factors the layout names are the kernel's, and its launch asks for
  // their pointers (gemm_fp8 takes them).
  PreparedGemm p = prepare_gemm(m, n, k, o, o.layout.scale_a.has_value(), o.layout.scale_b.has_value());
  p.problem.a = a;
  p.problem.b = b;
  p.problem.d = d;
  p.kernel->launch(p.problem, o.stream);
}

void gemm_fp8(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d, int64_t m, int64_t n,
              int64_t k, const GemmOptions& options) {
  GemmOptions o = options;
  if (!dtype_is_fp8(o.in)) o.in = DType::E4M3;
  PreparedGemm p = prepare_gemm(m, n, k, o, scale_a != nullptr, scale_b != nullptr);
  p.problem.a = a;
  p.problem.b = b;
  p.problem.d = d;
  p.problem.scale_a = scale_a;
  p.problem.scale_b = scale_b;
  p.kernel->launch(p.problem, o.stream);
}

namespace {

// What a grouped entry point plans with: the caller's dtypes, alpha, target, stream and FP8
// factors' layout; the source's own layout (dense, K-major unless said, M read at run time) over
// `groups` matrices.
GemmOptions grouped_options(const GemmOptions& options, ProblemSource source, int64_t groups) {
  GemmOptions o = options;
  o.layout = ProblemLayout{};
  o.layout.scale_a = options.layout.scale_a;
  o.layout.scale_b = options.layout.scale_b;
  o.layout.scale_a_major = options.layout.scale_a_major;
  o.layout.scale_b_major = options.layout.scale_b_major;
  o.layout.scale_a_format = options.layout.scale_a_format;
  o.layout.scale_b_format = options.layout.scale_b_format;
  o.layout.batch = groups;
  o.layout.source = source;
  o.layout.runtime_m = true;  // one kernel per planned size, not per M
  return o;
}

// Refuses what the host can judge: no group or an empty extent (`bad_count`, said by
// `count_text`), a null device array (said by `array_text`).
void check_groups(const std::string& entry, bool bad_count, const std::string& count_text, const void* array,
                  const std::string& array_text) {
  if (bad_count) throw_user_error("bad-group-rows", entry + ": " + count_text);
  if (array == nullptr) throw_user_error("bad-group-rows", entry + ": " + array_text);
}

// Launches the kernel planned for `planned_m` x n x `planned_k` on the caller's problem and the
// groups' device array (masked: the rows in use; contiguous, variable K: the offsets).
void launch_grouped(const GemmOptions& o, int64_t planned_m, int64_t planned_k, const void* a, const void* b, void* d,
                    int64_t m, int64_t n, int64_t k, const int* group_rows, const int* group_offsets,
                    const float* scale_a = nullptr, const float* scale_b = nullptr) {
  const rt::LoadedKernel& kernel = cached_kernel(planned_m, n, planned_k, o);
  rt::GemmProblem problem = caller_problem(kernel, a, b, d, m, n, k, o);
  problem.group_rows = group_rows;
  problem.group_offsets = group_offsets;
  problem.scale_a = scale_a;
  problem.scale_b = scale_b;
  kernel.launch(problem, o.stream);
}

}  // namespace

namespace {

// The masked and contiguous entry points, 16-bit or FP8 (`o` planned for the source; factor
// pointers null for 16-bit operands): the host's refusals, then the launch.
void masked_groups(const std::string& entry, const GemmOptions& o, const void* a, const float* scale_a, const void* b,
                   const float* scale_b, void* d, const int* group_rows, int64_t groups, int64_t m_max, int64_t n,
                   int64_t k, int64_t expected_m) {
  check_groups(entry, groups < 1 || m_max < 1,
               std::to_string(groups) + " groups of at most " + std::to_string(m_max) +
                   " rows; legal is at least one group of one row",
               group_rows, "group_rows is null; it holds each group's rows in use (device memory, one int per group)");
  // Planned for the rows a group is expected to hold; the kernel serves any m_max.
  launch_grouped(o, expected_m > 0 ? std::min(expected_m, m_max) : m_max, k, a, b, d, m_max, n, k, group_rows, nullptr,
                 scale_a, scale_b);
}

void contiguous_groups(const std::string& entry, const GemmOptions& o, const void* a, const float* scale_a,
                       const void* b, const float* scale_b, void* d, const int* group_offsets, int64_t groups,
                       int64_t m, int64_t n, int64_t k, int64_t expected_m) {
  check_groups(entry, groups < 1 || m < 1,
               std::to_string(groups) + " groups sharing " + std::to_string(m) +
                   " rows; legal is at least one group and one row",
               group_offsets, "group_offsets is null; it holds the groups' row offsets (device memory, groups + 1 ints)");
  launch_grouped(o, expected_m > 0 ? expected_m : m, k, a, b, d, m, n, k, nullptr, group_offsets, scale_a, scale_b);
}

}  // namespace

void gemm_masked(const void* a, const void* b, void* d, const int* group_rows, int64_t groups, int64_t m_max,
                 int64_t n, int64_t k, const GemmOptions& options, int64_t expected_m) {
  masked_groups("gemm_masked", grouped_options(options, ProblemSource::Masked, groups), a, nullptr, b, nullptr, d,
                group_rows, groups, m_max, n, k, expected_m);
}

void gemm_contiguous(const void* a, const void* b, void* d, const int* group_offsets, int64_t groups, int64_t m,
                     int64_t n, int64_t k, const GemmOptions& options, int64_t expected_m) {
  contiguous_groups("gemm_contiguous", grouped_options(options, ProblemSource::Contiguous, groups), a, nullptr, b,
                    nullptr, d, group_offsets, groups, m, n, k, expected_m);
}

void gemm_fp8_masked(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d,
                     const int* group_rows, int64_t groups, int64_t m_max, int64_t n, int64_t k,
                     const GemmOptions& options, int64_t expected_m) {
  const GemmOptions o =
      fp8_options(grouped_options(options, ProblemSource::Masked, groups), scale_a != nullptr, scale_b != nullptr);
  masked_groups("gemm_fp8_masked", o, a, scale_a, b, scale_b, d, group_rows, groups, m_max, n, k, expected_m);
}

void gemm_fp8_contiguous(const void* a, const float* scale_a, const void* b, const float* scale_b, void* d,
                         const int* group_offsets, int64_t groups, int64_t m, int64_t n, int64_t k,
                         const GemmOptions& options, int64_t expected_m) {
  const GemmOptions o =
      fp8_options(grouped_options(options, ProblemSource::Contiguous, groups), scale_a != nullptr, scale_b != nullptr);
  contiguous_groups("gemm_fp8_contiguous", o, a, scale_a, b, scale_b, d, group_offsets, groups, m, n, k, expected_m);
}

void gemm_varlen_k(const void* a, const void* b, void* d, const int* group_offsets, int64_t groups, int64_t m,
                   int64_t n, int64_t k_total, const GemmOptions& options) {
  check_groups("gemm_varlen_k", groups < 1 || k_total < 1,
               std::to_string(groups) + " groups sharing " + std::to_string(k_total) +
                   " rows of K; legal is at least one group and one row",
               group_offsets, "group_offsets is null; it holds the groups' offsets of K (device memory, groups + 1 ints)");
  GemmOptions o = grouped_options(options, ProblemSource::VarlenK, groups);
  o.layout.a = Layout::MNMajor;  // the tokens are the rows of A and B
  o.layout.b = Layout::MNMajor;
  launch_grouped(o, m, kVarlenPlannedK, a, b, d, m, n, k_total, nullptr, group_offsets);
}

void gemm_pointer_array(const GroupedPointers& arrays, int64_t groups, const GemmOptions& options,
                        std::array<int64_t, 3> planned) {
  check_groups("gemm_pointer_array", groups < 1, std::to_string(groups) + " groups; legal is at least one",
               arrays.a && arrays.b && arrays.d ? arrays.sizes : nullptr,
               "a device array is null; a, b, d (one pointer per group) and sizes (M, N, K per group) are required");
  GemmOptions o = grouped_options(options, ProblemSource::PointerArray, groups);
  o.layout.a = options.layout.a;  // every group's A and B lie alike
  o.layout.b = options.layout.b;
  for (int64_t& size : planned) size = size > 0 ? size : 4096;
  const rt::LoadedKernel& kernel = cached_kernel(planned[0], planned[1], planned[2], o);
  rt::GemmProblem problem = caller_problem(kernel, nullptr, nullptr, nullptr, planned[0], planned[1], planned[2], o);
  problem.groups = arrays;
  kernel.launch(problem, o.stream);
}

}  // namespace gg
