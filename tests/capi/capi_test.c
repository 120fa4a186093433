/* The C ABI from C (compiled as C99): explain and emit through it, each error path's status and
 * rule id, and gg_gemm refused where there is no GPU. Exit 0: every check held; 77: skipped parts
 * are reported, not counted as passes. */
#include <stdio.h>
#include <string.h>

#include "capi/gemmgen.h"

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    ++failures;
    fprintf(stderr, "FAILED: %s (rule '%s': %s)\n", what, gg_last_error_rule(), gg_last_error_message());
  }
}

/* The status, the rule id and (where given) the message of the thread's last error. */
static void check_error(gg_status status, gg_status expected, const char* rule, const char* what) {
  check(status == expected && strcmp(gg_last_error_rule(), rule) == 0 && strlen(gg_last_error_message()) > 0, what);
}
static void check_message(const char* message, const char* what) {
  check(strcmp(gg_last_error_message(), message) == 0, what);
}

int main(void) {
  gg_problem p;
  char* text = NULL;
  gg_problem_init(&p, 4096, 4096, 4096);
  check(strlen(gg_version()) > 0, "gg_version names a version");

  check(gg_explain(&p, &text) == GG_OK && text != NULL && strstr(text, "kernel sm_90a") != NULL,
        "gg_explain of the planner's auto plan prints its kernel");
  check(strlen(gg_last_error_rule()) == 0, "a call that succeeds leaves no last error");
  gg_free(text);

  p.schedule = "v10";
  check(gg_emit(&p, &text) == GG_OK && text != NULL && strstr(text, "__global__") != NULL &&
            strstr(text, "extern \"C\" int") != NULL,
        "gg_emit of v10 writes a kernel and its host entry");
  gg_free(text);

  p.arch = GG_SM100A;
  check(gg_emit(&p, &text) == GG_OK && text != NULL && strstr(text, "tcgen05") != NULL,
        "gg_emit for sm_100a writes a tcgen05 kernel");
  gg_free(text);

  /* Every error path: a status, a rule id, a message; no text handed out. */
  text = NULL;
  p.schedule = "v99";
  check_error(gg_emit(&p, &text), GG_USER_ERROR, "unknown-schedule", "an unknown schedule");
  check(text == NULL, "no text on an error");
  p.schedule = NULL;
  p.arch = GG_SM90A;
  p.in = (gg_dtype)42;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "unknown-dtype", "an unknown dtype code");
  check_message("dtype code 42: legal are GG_F16, GG_BF16, GG_F32, GG_E4M3 and GG_E5M2", "the dtype code's message");
  p.in = GG_BF16;
  p.arch = (gg_arch)7;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "unknown-arch", "an unknown arch code");
  check_message("arch code 7: legal are GG_SM90A and GG_SM100A", "the arch code's message");
  p.arch = GG_SM90A;
  check_error(gg_explain(NULL, &text), GG_USER_ERROR, "null-argument", "a null problem");
  check_message("the problem is a null pointer", "the null problem's message");
  check_error(gg_explain(&p, NULL), GG_USER_ERROR, "null-argument", "a null out-pointer");
  check_message("the text out-pointer is a null pointer", "the null out-pointer's message");
  p.in = GG_E4M3;
  check_error(gg_gemm(&p, NULL, NULL, NULL, NULL), GG_USER_ERROR, "not-in-abi", "FP8 through gg_gemm");
  check_message("FP8 operands through the C ABI need their scale factors, which gg_gemm does not take yet (C++: "
                "gg::gemm_fp8)", "the FP8 refusal's message");
  p.in = GG_BF16;
  p.lda = 100; /* K-major A's rows 100 elements apart, fewer than K */
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "bad-leading-dim", "a leading dimension under the row");
  p.lda = 0;

  if (!gg_gpu_available()) {
    check_error(gg_gemm(&p, NULL, NULL, NULL, NULL), GG_CUDA_ERROR, "cuda", "gg_gemm without a GPU");
    printf("capi: no GPU: gg_gemm's launch not run (refused with rule 'cuda' as it must be)\n");
  }
  if (failures) return 1;
  printf("capi: all checks passed\n");
  return 0;
}
