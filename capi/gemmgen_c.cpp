// The C ABI (capi/gemmgen.h) over gg::plan_gemm and gg::gemm: every entry catches what the C++
// side throws and turns it into a status and the thread's last error, so no exception and no C++
// type crosses the boundary.
#include "capi/gemmgen.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "dsl/error.h"
#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/jit.h"
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

// The planner's options for a C problem; its sizes are checked where gg::plan_gemm checks them.
gg::GemmOptions options_of(const gg_problem* p) {
  if (p == nullptr) gg::throw_user_error("null-argument", "the problem is a null pointer");
  gg::GemmOptions o;
  o.in = dtype_of(p->in);
  o.out = dtype_of(p->out);
  o.target = target_of(p->arch);
  o.schedule = p->schedule ? p->schedule : "";
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
  // FP8: the target's recipe, as the CLI defaults it; the factor pointers are a later part of this ABI.
  if (gg::dtype_is_fp8(o.in)) {
    const std::array<gg::ScaleSpec, 2> scales = gg::fp8_default_scales(o.target);
    l.scale_a = scales[0].granularity;
    l.scale_b = scales[1].granularity;
    l.scale_a_format = scales[0].format;
    l.scale_b_format = scales[1].format;
  }
  return o;
}

gg::GemmPlan plan_of(const gg_problem* p) {
  const gg::GemmOptions o = options_of(p);
  return gg::plan_gemm(p->m, p->n, p->k, o);
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
    const gg::GemmPlan plan = plan_of(problem);
    std::string out = plan.source != gg::PlanSource::Named ? gg::explain_plan(plan) + "\n" : std::string();
    gg::ExplainOptions eo;
    eo.steps = false;
    eo.limits = gg::limits_for(plan.target);
    out += gg::explain(plan.build(), eo);
    *text = copy_out(out);
  });
}

gg_status gg_emit(const gg_problem* problem, char** text) {
  return guarded([&] {
    check_out(text);
    const gg::GemmPlan plan = plan_of(problem);
    gg::LowerOptions lo;
    lo.limits = gg::limits_for(plan.target);
    *text = copy_out(gg::emit_cuda(plan.build(), lo).source);
  });
}

void gg_free(void* text) { std::free(text); }

int gg_gpu_available(void) { return gg::rt::gpu_available() ? 1 : 0; }

gg_status gg_gemm(const gg_problem* problem, const void* a, const void* b, void* d, void* stream) {
  return guarded([&] {
    gg::GemmOptions o = options_of(problem);
    if (gg::dtype_is_fp8(o.in))
      gg::throw_user_error("not-in-abi", "FP8 operands through the C ABI need their scale factors, which gg_gemm "
                           "does not take yet (C++: gg::gemm_fp8)");
    o.stream = static_cast<cudaStream_t>(stream);
    gg::gemm(a, b, d, problem->m, problem->n, problem->k, o);
  });
}

}  // extern "C"
