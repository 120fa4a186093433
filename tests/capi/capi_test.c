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
  check_message("gg_gemm takes A, B and D only; FP8 factors, groups, C and a bias come through gg_gemm_ex's "
                "gg_tensors", "the FP8 refusal's message");
  /* FP8 through gg_explain: the target's recipe by default, the named granularity otherwise. */
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "scales A per 1x128") != NULL &&
            strstr(text, "scales B per 128x128") != NULL,
        "gg_explain of an FP8 problem names DeepGEMM's factors");
  gg_free(text);
  p.scale_b = GG_SCALE_TENSOR;
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "scales B per tensor") != NULL,
        "GG_SCALE_TENSOR replaces B's blocks");
  gg_free(text);
  p.scale_b = (gg_scale)9;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "bad-scale", "an unknown scale code");
  check_message("scale_b code 9: legal are GG_SCALE_DEFAULT, GG_SCALE_NONE, GG_SCALE_TENSOR, GG_SCALE_ROW, "
                "GG_SCALE_1X128 and GG_SCALE_128X128", "the scale code's message");
  p.scale_b = GG_SCALE_DEFAULT;
  p.in = GG_BF16;
  {
    gg_tensors t;
    memset(&t, 0, sizeof t);
    check_error(gg_gemm_ex(&p, NULL, NULL), GG_USER_ERROR, "null-argument", "null tensors");
    check_message("the tensors are a null pointer", "the null tensors' message");
    t.scale_a = &t; /* any non-null pointer: refused before a launch */
    check_error(gg_gemm_ex(&p, &t, NULL), GG_USER_ERROR, "bad-scale", "factors for bf16 operands");
    check_message("scale factors given for bf16 operands; only FP8 (GG_E4M3, GG_E5M2) operands take them",
                  "the 16-bit factors' message");
    t.scale_a = NULL;
    p.beta = 0.5;
    check_error(gg_gemm_ex(&p, &t, NULL), GG_USER_ERROR, "null-argument", "beta without C");
    check_message("beta is 0.500000 but the tensors' c is null", "the missing C's message");
    p.beta = 0.0;
    p.bias = GG_BIAS_ROWS;
    check_error(gg_gemm_ex(&p, &t, NULL), GG_USER_ERROR, "null-argument", "a bias without its vector");
    p.bias = (gg_bias)5;
    check_error(gg_explain(&p, &text), GG_USER_ERROR, "bad-epilogue", "an unknown bias code");
    check_message("bias code 5: legal are GG_BIAS_NONE, GG_BIAS_COLS and GG_BIAS_ROWS", "the bias code's message");
    p.bias = GG_BIAS_COLS;
    p.activation = GG_GELU;
    check(gg_explain(&p, &text) == GG_OK && strstr(text, "gelu") != NULL && strstr(text, "bias") != NULL,
          "the epilogue is planned: bias, then gelu");
    gg_free(text);
    p.activation = (gg_activation)8;
    check_error(gg_explain(&p, &text), GG_USER_ERROR, "bad-epilogue", "an unknown activation code");
    p.activation = GG_ACT_NONE;
    p.bias = GG_BIAS_NONE;
  }
  /* Groups: planned through their source; layouts their source fixes are not the caller's. */
  p.source = GG_MASKED;
  p.batch = 8;
  p.m = 256;
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "masked") != NULL, "gg_explain of masked groups");
  gg_free(text);
  p.source = GG_CONTIGUOUS;
  p.m = 8192;
  p.expected_m = 4096;
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "contiguous") != NULL && strstr(text, "M=4096") != NULL,
        "gg_explain of contiguous groups, planned for expected_m");
  gg_free(text);
  p.ldd = 9000;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "grouped-layout", "a leading dimension on groups");
  check_message("a grouped problem's operands are dense, K-major, with D row-major (A [m,k] or [groups,m,k], B "
                "[groups,n,k]); leave the majors, leading dimensions and strides at gg_problem_init's values",
                "the grouped layout's message");
  p.ldd = 0;
  p.source = GG_VARLEN_K; /* planned for a K it reads at run time; A and B hold the tokens along K */
  p.expected_m = 0;
  p.m = 256;
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "varlen_k") != NULL && strstr(text, "mn-major") != NULL,
        "gg_explain of variable-K groups");
  gg_free(text);
  p.in = GG_E4M3;
  {
    gg_tensors t;
    memset(&t, 0, sizeof t);
    check_error(gg_gemm_ex(&p, &t, NULL), GG_USER_ERROR, "not-lowered", "FP8 variable-K groups");
    check_message("variable-K groups (GG_VARLEN_K) take 16-bit operands; FP8 groups are masked or contiguous",
                  "the FP8 variable-K refusal's message");
  }
  p.in = GG_BF16;
  p.source = (gg_source)6;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "unknown-source", "an unknown source code");
  check_message("problem source code 6: legal are GG_DENSE, GG_MASKED, GG_CONTIGUOUS and GG_VARLEN_K", "the source's message");
  /* A schedule text schedules the struct's problem; its errors name the line. */
  gg_problem_init(&p, 1000, 1024, 512);
  p.schedule_text = "problem m=1 n=1 k=1\ntile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\n"
                    "bind m_o block.y\nbind n_o block.x\ncache_read A tma\ncache_read B tma\n"
                    "cache_write cast shared tma\ncircular_buffer k_o 3 2\n";
  check(gg_explain(&p, &text) == GG_OK && strstr(text, "circular buffer 3 stage(s)") != NULL &&
            strstr(text, "M=1000 N=1024 K=512") != NULL,
        "gg_explain of a schedule text over the struct's sizes");
  gg_free(text);
  check(gg_emit(&p, &text) == GG_OK && strstr(text, "__global__") != NULL, "gg_emit of a schedule text");
  gg_free(text);
  p.schedule_text = "tile 128 128 64\ncircular_buffer q_o 3 2\n";
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "unknown-axis", "a schedule text naming no axis");
  check(strncmp(gg_last_error_message(), "line 2: ", 8) == 0, "a schedule text's error names its line");
  p.schedule_text = "tile 128 128 64\nepilogue relu\n";
  p.activation = GG_GELU;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "bad-epilogue", "an epilogue in both places");
  check_message("the schedule text has epilogue lines and the problem names an epilogue (beta, bias or activation); "
                "give it in one place", "the two epilogues' message");
  p.activation = GG_ACT_NONE;
  p.source = GG_MASKED;
  p.batch = 2;
  check_error(gg_explain(&p, &text), GG_USER_ERROR, "not-in-abi", "a schedule text on groups");
  gg_problem_init(&p, 4096, 4096, 4096);
  check(gg_loaded_kernels() == 0, "no kernel loaded before a launch");
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
