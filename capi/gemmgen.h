/* gemmgen's C ABI: plain C functions over device pointers, for other languages' FFIs (Python's
 * ctypes package in python/gemmgen, Rust, Julia). No C++ type crosses it; every function returns a
 * status, and the thread's last error (its rule id and message) is kept for gg_last_error_*.
 * Installed as <prefix>/include/gemmgen/gemmgen.h beside libgemmgen_c.so. */
#ifndef GEMMGEN_H
#define GEMMGEN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The exported functions (the library hides every other symbol). */
#define GG_API __attribute__((visibility("default")))

/* What a call came to: GG_USER_ERROR is a problem or schedule gemmgen refuses (the rule id says
 * which: "smem-limit", "unknown-dtype", "not-lowered", ...), GG_CUDA_ERROR a launch CUDA refused or
 * no GPU ("cuda"), GG_INTERNAL_ERROR a bug in gemmgen ("internal"). */
typedef enum gg_status { GG_OK = 0, GG_USER_ERROR = 2, GG_INTERNAL_ERROR = 3, GG_CUDA_ERROR = 4 } gg_status;

typedef enum gg_dtype { GG_F16 = 0, GG_BF16 = 1, GG_F32 = 2, GG_E4M3 = 3, GG_E5M2 = 4 } gg_dtype;

typedef enum gg_arch { GG_SM90A = 0, GG_SM100A = 1 } gg_arch;

/* D[M,N] = A[M,K] * B[N,K]^T, batched: how the matrices lie in memory and what computes them.
 * Fill with gg_problem_init, then change what differs. */
typedef struct gg_problem {
  int64_t m, n, k;
  gg_dtype in, out;                      /* A and B; D (default: in, bf16 for FP8) */
  int a_m_major, b_n_major, d_m_major;   /* 0: A and B K-major, D row-major; 1: the other way */
  int64_t lda, ldb, ldd;                 /* elements between stored rows; 0: dense */
  int64_t batch;                         /* matrices per call */
  int64_t stride_a, stride_b, stride_d;  /* elements between matrices; -1: dense, 0: one for all (A, B) */
  gg_arch arch;
  const char* schedule;                  /* NULL or "auto": the planner's choice; else a built-in ("v10") */
} gg_problem;

/* Defaults for an m x n x k bf16 problem: dense K-major operands, a row-major D, one matrix, sm_90a. */
GG_API void gg_problem_init(gg_problem* problem, int64_t m, int64_t n, int64_t k);

GG_API const char* gg_version(void);

/* This thread's last error: its rule id and message ("" after a call that succeeded). The strings
 * stay valid until this thread's next gemmgen call. */
GG_API const char* gg_last_error_rule(void);
GG_API const char* gg_last_error_message(void);

/* The plan's loop nests, resources and checks (gemmgen explain), or the standalone CUDA source
 * (gemmgen emit), as a NUL-terminated string in *text that the caller frees with gg_free. */
GG_API gg_status gg_explain(const gg_problem* problem, char** text);
GG_API gg_status gg_emit(const gg_problem* problem, char** text);
GG_API void gg_free(void* text);

/* Whether a GPU and driver are present. */
GG_API int gg_gpu_available(void);

/* D = A * B^T on device pointers (16-byte aligned), asynchronous on `stream` (a cudaStream_t;
 * NULL: the default stream). The first call of a configuration JIT-compiles its kernel; later
 * calls of any M reuse it. */
GG_API gg_status gg_gemm(const gg_problem* problem, const void* a, const void* b, void* d, void* stream);

#ifdef __cplusplus
}
#endif

#endif /* GEMMGEN_H */
