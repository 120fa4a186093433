// The C ABI (capi/gemmgen.h) over gg::plan_gemm and gg::gemm: every entry catches what the C++
// side throws and turns it into a status and the thread's last error, so no exception and no C++
// type crosses the boundary.
#include "capi/gemmgen.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "dsl/error.h"
#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/jit.h"
#include "dsl/schedule_text.h"
#include "schedules/gemm.h"

namespace {

struct LastError {
  std::string rule, message;
};
thread_local LastError last_error;

gg_status fail(gg_status status, std::string rule, std::string message) {
  last_error = {std::move(rule), std::move(message)};
  return status;
}

// Runs `body` (which returns nothing or throws) and maps what it throws to a status.
template <class Body>
gg_status guarded(Body&& body) {
  last_error = {};
  try {
    body();
    return GG_OK;
  } catch (const gg::CompileError& e) {
    return fail(GG_USER_ERROR, e.rule(), e.message());
  } catch (const gg::rt::CudaError& e) {
    return fail(GG_CUDA_ERROR, "cuda", e.what());
  } catch (const gg::InternalError& e) {
    return fail(GG_INTERNAL_ERROR, "internal", e.what());
  } catch (const std::exception& e) {
    return fail(GG_INTERNAL_ERROR, "internal", e.what());
  }
}

gg::DType dtype_of(gg_dtype t) {
  switch (t) {
    case GG_F16: return gg::DType::F16;
    case GG_BF16: return gg::DType::BF16;
    case GG_F32: return gg::DType::F32;
    case GG_E4M3: return gg::DType::E4M3;
    case GG_E5M2: return gg::DType::E5M2;
  }
  gg::throw_user_error("unknown-dtype", "dtype code " + std::to_string(int(t)) +
                       ": legal are GG_F16, GG_BF16, GG_F32, GG_E4M3 and GG_E5M2");
}

gg::Target target_of(gg_arch a) {
  switch (a) {
    case GG_SM90A: return gg::Target::Sm90a;
    case GG_SM100A: return gg::Target::Sm100a;
  }
  gg::throw_user_error("unknown-arch", "arch code " + std::to_string(int(a)) + ": legal are GG_SM90A and GG_SM100A");
}

gg::ProblemSource source_of(gg_source s) {
  switch (s) {
    case GG_DENSE: return gg::ProblemSource::Dense;
    case GG_MASKED: return gg::ProblemSource::Masked;
    case GG_CONTIGUOUS: return gg::ProblemSource::Contiguous;
    case GG_VARLEN_K: return gg::ProblemSource::VarlenK;
  }
  gg::throw_user_error("unknown-source", "problem source code " + std::to_string(int(s)) +
                       ": legal are GG_DENSE, GG_MASKED, GG_CONTIGUOUS and GG_VARLEN_K");
}

// An FP8 operand's factors: `fallback` (the target's recipe) for GG_SCALE_DEFAULT, none for
// GG_SCALE_NONE, else the named granularity in fp32 with its major.
void set_scale(gg_scale s, const gg::ScaleSpec& fallback, std::optional<gg::ScaleGranularity>& granularity,
               gg::ScaleFormat& format, gg::Layout& major, bool other_major, gg::Layout default_major, const char* which) {
  format = gg::ScaleFormat::F32;
  major = other_major ? (default_major == gg::Layout::MNMajor ? gg::Layout::KMajor : gg::Layout::MNMajor) : default_major;
  switch (s) {
    case GG_SCALE_DEFAULT: granularity = fallback.granularity, format = fallback.format; return;
    case GG_SCALE_NONE: granularity.reset(); return;
    case GG_SCALE_TENSOR: granularity = gg::ScaleGranularity::PerTensor; return;
    case GG_SCALE_ROW: granularity = gg::ScaleGranularity::PerRow; return;
    case GG_SCALE_1X128: granularity = gg::ScaleGranularity::Block1x128; return;
    case GG_SCALE_128X128: granularity = gg::ScaleGranularity::Block128x128; return;
  }
  gg::throw_user_error("bad-scale", std::string(which) + " code " + std::to_string(int(s)) +
                       ": legal are GG_SCALE_DEFAULT, GG_SCALE_NONE, GG_SCALE_TENSOR, GG_SCALE_ROW, GG_SCALE_1X128 "
                       "and GG_SCALE_128X128");
}

// The epilogue ops the problem names, in the order D = act(alpha * acc + beta * C + bias) applies
// them (alpha is GemmOptions::alpha).
std::vector<gg::EpilogueSpec> epilogue_of(const gg_problem* p) {
  std::vector<gg::EpilogueSpec> ops;
  if (p->beta != 0.0) {
    gg::EpilogueSpec e;
    e.kind = gg::OpKind::AddScaled;
    e.scalar = p->beta;
    ops.push_back(e);
  }
  if (p->bias != GG_BIAS_NONE) {
    if (p->bias != GG_BIAS_COLS && p->bias != GG_BIAS_ROWS)
      gg::throw_user_error("bad-epilogue", "bias code " + std::to_string(int(p->bias)) +
                           ": legal are GG_BIAS_NONE, GG_BIAS_COLS and GG_BIAS_ROWS");
    gg::EpilogueSpec e;
    e.kind = gg::OpKind::AddBias;
    e.along = p->bias == GG_BIAS_ROWS ? gg::BiasAlong::Rows : gg::BiasAlong::Cols;
    ops.push_back(e);
  }
  if (p->activation != GG_ACT_NONE) {
    gg::EpilogueSpec e;
    switch (p->activation) {
      case GG_RELU: e.kind = gg::OpKind::Relu; break;
      case GG_GELU: e.kind = gg::OpKind::Gelu; break;
      case GG_SILU: e.kind = gg::OpKind::Silu; break;
      default:
        gg::throw_user_error("bad-epilogue", "activation code " + std::to_string(int(p->activation)) +
                             ": legal are GG_ACT_NONE, GG_RELU, GG_GELU and GG_SILU");
    }
    ops.push_back(e);
  }
  return ops;
}

// A grouped problem's operands lie as its source fixes them; a layout field set otherwise would be
// silently ignored, so it is refused.
void check_grouped_layout(const gg_problem* p) {
  if (p->source == GG_DENSE) return;
  if (p->a_m_major || p->b_n_major || p->d_m_major || p->lda || p->ldb || p->ldd || p->stride_a != -1 ||
      p->stride_b != -1 || p->stride_d != -1)
    gg::throw_user_error("grouped-layout", "a grouped problem's operands are dense, K-major, with D row-major (A [m,k] "
                         "or [groups,m,k], B [groups,n,k]); leave the majors, leading dimensions and strides at "
                         "gg_problem_init's values");
  if (p->batch < 1)
    gg::throw_user_error("bad-group-rows", std::to_string(p->batch) + " groups; legal is at least one (batch holds "
                         "the group count)");
}

// The planner's options for a C problem; its sizes are checked where gg::plan_gemm checks them.
gg::GemmOptions options_of(const gg_problem* p) {
  if (p == nullptr) gg::throw_user_error("null-argument", "the problem is a null pointer");
  check_grouped_layout(p);
  gg::GemmOptions o;
  o.in = dtype_of(p->in);
  o.out = dtype_of(p->out);
  o.target = target_of(p->arch);
  o.schedule = p->schedule ? p->schedule : "";
  o.alpha = p->alpha;
  o.epilogue = epilogue_of(p);
  o.planned_m = p->expected_m > 0 ? p->expected_m : 0;
  gg::ProblemLayout& l = o.layout;
  l.a = p->a_m_major ? gg::Layout::MNMajor : gg::Layout::KMajor;
  l.b = p->b_n_major ? gg::Layout::MNMajor : gg::Layout::KMajor;
  l.d = p->d_m_major ? gg::OutputLayout::ColumnMajor : gg::OutputLayout::RowMajor;
  l.lda = p->lda;
  l.ldb = p->ldb;
  l.ldd = p->ldd;
  l.batch = p->batch;
  l.stride_a = p->stride_a;
  l.stride_b = p->stride_b;
  l.stride_d = p->stride_d;
  l.source = source_of(p->source);
  if (l.source == gg::ProblemSource::VarlenK) l.a = l.b = gg::Layout::MNMajor;  // the tokens are A's and B's rows
  if (gg::dtype_is_fp8(o.in)) {
    const std::array<gg::ScaleSpec, 2> recipe = gg::fp8_default_scales(o.target);
    set_scale(p->scale_a, recipe[0], l.scale_a, l.scale_a_format, l.scale_a_major, p->scale_a_k_major,
              gg::Layout::MNMajor, "scale_a");
    set_scale(p->scale_b, recipe[1], l.scale_b, l.scale_b_format, l.scale_b_major, p->scale_b_mn_major,
              gg::Layout::KMajor, "scale_b");
  }
  return o;
}

// The K a problem's kernel is planned for: variable-K groups read K at run time.
int64_t planned_k(const gg_problem* p) { return p->source == GG_VARLEN_K ? gg::kVarlenPlannedK : p->k; }

// The M a problem's kernel is planned for: expected_m where given (a masked group's at most m).
int64_t planned_m(const gg_problem* p) {
  if (p->expected_m <= 0) return p->m;
  return p->source == GG_MASKED ? std::min(p->expected_m, p->m) : p->expected_m;
}

// The caller's schedule text over the problem (its directives replayed, each validated; `line N:`
// prefixes on their errors): the file's orientation kept, the struct's sizes and types used, the
// file's epilogue where the struct names none.
// A schedule text schedules a dense problem only (the grouped entry points plan their own).
void check_text_source(const gg_problem* p) {
  if (p->schedule_text != nullptr && p->source != GG_DENSE)
    gg::throw_user_error("not-in-abi", "a schedule text schedules a dense problem; grouped problems take the "
                         "planner's or a built-in schedule");
}

gg::Schedule scheduled(const gg_problem* p, const gg::GemmOptions& o) {
  check_text_source(p);
  gg::ScheduleFile file = gg::parse_schedule_file(p->schedule_text);
  if (!file.epilogue.empty() && (p->beta != 0.0 || p->bias != GG_BIAS_NONE || p->activation != GG_ACT_NONE))
    gg::throw_user_error("bad-epilogue", "the schedule text has epilogue lines and the problem names an epilogue "
                         "(beta, bias or activation); give it in one place");
  gg::GemmOptions with_file = o;
  if (!file.epilogue.empty()) with_file.epilogue = file.epilogue;
  for (gg::Directive& d : file.directives)
    if (auto* mma = std::get_if<gg::MmaD>(&d)) mma->target = o.target;  // the struct's arch
  const gg::Definition def =
      gg::gemm_definition(planned_m(p), p->n, p->k, with_file, file.problem.swapped.value_or(false));
  return gg::apply_directives(def, file.directives, file.directive_lines);
}

// What explain and emit show: the caller's scheduled problem, or the plan's (`preamble`: the
// planner's choice, where it chose).
gg::Schedule schedule_of(const gg_problem* p, std::string& preamble, gg::Target& target) {
  const gg::GemmOptions o = options_of(p);
  target = o.target;
  if (p->schedule_text != nullptr) return scheduled(p, o);
  const gg::GemmPlan plan = gg::plan_gemm(planned_m(p), p->n, planned_k(p), o);
  if (plan.source != gg::PlanSource::Named) preamble = gg::explain_plan(plan) + "\n";
  return plan.build();
}

// A dense problem's cache key: its fields one after another (not the struct's bytes: padding is
// not the caller's to set), the schedule's text, and which factor pointers are given.
void dense_key(const gg_problem* p, bool scale_a, bool scale_b, std::string& key) {
  key.clear();
  const auto put = [&](const auto& field) { key.append(reinterpret_cast<const char*>(&field), sizeof field); };
  put(p->m), put(p->n), put(p->k), put(p->in), put(p->out), put(p->a_m_major), put(p->b_n_major), put(p->d_m_major);
  put(p->lda), put(p->ldb), put(p->ldd), put(p->batch), put(p->stride_a), put(p->stride_b), put(p->stride_d);
  put(p->arch), put(p->expected_m), put(p->alpha), put(p->beta), put(p->bias), put(p->activation);
  put(p->scale_a), put(p->scale_b), put(p->scale_a_k_major), put(p->scale_b_mn_major), put(scale_a), put(scale_b);
  if (p->schedule != nullptr) key += p->schedule;
  key += '\0';
  if (p->schedule_text != nullptr) key += p->schedule_text;
}

// A dense problem's kernel and launch problem, prepared at its first call (planning, and a JIT
// where the kernel is new) and looked up by its fields after: a cached call does no planning.
// A thread's calls usually repeat one problem: its last one is found without the shared table.
const gg::PreparedGemm& prepared_dense(const gg_problem* p, bool scale_a, bool scale_b) {
  static std::mutex mutex;
  static std::unordered_map<std::string, gg::PreparedGemm> prepared;
  thread_local std::string key, last_key;
  thread_local const gg::PreparedGemm* last = nullptr;
  dense_key(p, scale_a, scale_b, key);
  if (last != nullptr && key == last_key) return *last;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = prepared.find(key);
  if (it == prepared.end()) {
    const gg::GemmOptions o = options_of(p);
    it = prepared
             .emplace(key, p->schedule_text != nullptr
                               ? gg::prepare_scheduled_gemm(scheduled(p, o), p->m, p->n, p->k, o)
                               : gg::prepare_gemm(p->m, p->n, p->k, o, scale_a, scale_b))
             .first;
  }
  last_key = key;
  last = &it->second;  // never erased, so the pointer outlives the lock
  return *last;
}

// A call's launch: the C++ entry point for the problem's source and operand type.
void run(const gg_problem* p, const gg_tensors& t, void* stream) {
  if (p == nullptr) gg::throw_user_error("null-argument", "the problem is a null pointer");
  if (p->beta != 0.0 && t.c == nullptr)
    gg::throw_user_error("null-argument", "beta is " + std::to_string(p->beta) + " but the tensors' c is null");
  if (p->bias != GG_BIAS_NONE && t.bias == nullptr)
    gg::throw_user_error("null-argument", "the problem adds a bias but the tensors' bias is null");
  const gg::DType in = dtype_of(p->in);
  const bool fp8 = gg::dtype_is_fp8(in);
  if (!fp8 && (t.scale_a != nullptr || t.scale_b != nullptr))
    gg::throw_user_error("bad-scale", std::string("scale factors given for ") + std::string(gg::dtype_name(in)) +
                         " operands; only FP8 (GG_E4M3, GG_E5M2) operands take them");
  if (fp8 && ((t.scale_a != nullptr && p->scale_a == GG_SCALE_NONE) ||
              (t.scale_b != nullptr && p->scale_b == GG_SCALE_NONE)))
    gg::throw_user_error("bad-scale", "a factor pointer is given for an operand whose scale is GG_SCALE_NONE");
  // A factor pointer left null reads as a factor of 1 (gemm_fp8's rule).
  const auto* sa = static_cast<const float*>(t.scale_a);
  const auto* sb = static_cast<const float*>(t.scale_b);
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (p->source == GG_DENSE) {
    const gg::PreparedGemm& prepared = prepared_dense(p, sa != nullptr, sb != nullptr);
    gg::rt::GemmProblem problem = prepared.problem;
    problem.a = t.a;
    problem.b = t.b;
    problem.d = t.d;
    problem.c = t.c;
    problem.bias = t.bias;
    problem.scale_a = sa;
    problem.scale_b = sb;
    prepared.kernel->launch(problem, cuda_stream);
    return;
  }
  check_text_source(p);
  gg::GemmOptions o = options_of(p);
  o.stream = cuda_stream;
  o.c = t.c;
  o.bias = t.bias;
  if (fp8 && sa == nullptr) o.layout.scale_a.reset();
  if (fp8 && sb == nullptr) o.layout.scale_b.reset();
  const int64_t expected = p->expected_m > 0 ? p->expected_m : 0;
  if (p->source == GG_MASKED) {
    if (fp8)
      gg::gemm_fp8_masked(t.a, sa, t.b, sb, t.d, t.groups, p->batch, p->m, p->n, p->k, o, expected);
    else
      gg::gemm_masked(t.a, t.b, t.d, t.groups, p->batch, p->m, p->n, p->k, o, expected);
    return;
  }
  if (p->source == GG_VARLEN_K) {
    if (fp8)
      gg::throw_user_error("not-lowered", "variable-K groups (GG_VARLEN_K) take 16-bit operands; FP8 groups are "
                           "masked or contiguous");
    gg::gemm_varlen_k(t.a, t.b, t.d, t.groups, p->batch, p->m, p->n, p->k, o);
    return;
  }
  if (p->source != GG_CONTIGUOUS) source_of(p->source);  // refuses the code
  if (fp8)
    gg::gemm_fp8_contiguous(t.a, sa, t.b, sb, t.d, t.groups, p->batch, p->m, p->n, p->k, o, expected);
  else
    gg::gemm_contiguous(t.a, t.b, t.d, t.groups, p->batch, p->m, p->n, p->k, o, expected);
}

char* copy_out(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void check_out(char** text) {
  if (text == nullptr) gg::throw_user_error("null-argument", "the text out-pointer is a null pointer");
  *text = nullptr;
}

}  // namespace

extern "C" {

void gg_problem_init(gg_problem* problem, int64_t m, int64_t n, int64_t k) {
  if (problem == nullptr) return;
  *problem = gg_problem{};
  problem->m = m;
  problem->n = n;
  problem->k = k;
  problem->in = GG_BF16;
  problem->out = GG_BF16;
  problem->batch = 1;
  problem->stride_a = problem->stride_b = problem->stride_d = -1;
  problem->arch = GG_SM90A;
  problem->schedule = nullptr;
  problem->source = GG_DENSE;
  problem->alpha = 1.0;
}

const char* gg_version(void) {
  static const std::string version = gg::rt::gemmgen_version();
  return version.c_str();
}

const char* gg_last_error_rule(void) { return last_error.rule.c_str(); }
const char* gg_last_error_message(void) { return last_error.message.c_str(); }

gg_status gg_explain(const gg_problem* problem, char** text) {
  return guarded([&] {
    check_out(text);
    std::string out;
    gg::Target target = gg::Target::Sm90a;
    const gg::Schedule schedule = schedule_of(problem, out, target);
    gg::ExplainOptions eo;
    eo.steps = false;
    eo.limits = gg::limits_for(target);
    out += gg::explain(schedule, eo);
    *text = copy_out(out);
  });
}

gg_status gg_emit(const gg_problem* problem, char** text) {
  return guarded([&] {
    check_out(text);
    std::string preamble;
    gg::Target target = gg::Target::Sm90a;
    const gg::Schedule schedule = schedule_of(problem, preamble, target);
    gg::LowerOptions lo;
    lo.limits = gg::limits_for(target);
    *text = copy_out(gg::emit_cuda(schedule, lo).source);
  });
}

void gg_free(void* text) { std::free(text); }

int gg_gpu_available(void) { return gg::rt::gpu_available() ? 1 : 0; }

gg_status gg_gemm(const gg_problem* problem, const void* a, const void* b, void* d, void* stream) {
  return guarded([&] {
    if (problem != nullptr && (gg::dtype_is_fp8(dtype_of(problem->in)) || problem->source != GG_DENSE ||
                               problem->beta != 0.0 || problem->bias != GG_BIAS_NONE))
      gg::throw_user_error("not-in-abi", "gg_gemm takes A, B and D only; FP8 factors, groups, C and a bias come "
                           "through gg_gemm_ex's gg_tensors");
    const gg_tensors tensors{a, b, d, nullptr, nullptr, nullptr, nullptr, nullptr};
    run(problem, tensors, stream);
  });
}

gg_status gg_gemm_ex(const gg_problem* problem, const gg_tensors* tensors, void* stream) {
  return guarded([&] {
    if (tensors == nullptr) gg::throw_user_error("null-argument", "the tensors are a null pointer");
    run(problem, *tensors, stream);
  });
}

int64_t gg_loaded_kernels(void) { return static_cast<int64_t>(gg::loaded_gemm_kernels()); }

}  // extern "C"
