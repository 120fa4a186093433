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

/* Where the problems come from (DeepGEMM's grouped layouts, for mixture-of-experts layers).
 * GG_DENSE: one problem, or `batch` of them. GG_MASKED: `batch` groups of at most m rows each, A
 * [batch, m, k], B [batch, n, k], D [batch, m, n] dense, each group's rows in use read by the kernel
 * from gg_tensors.groups. GG_CONTIGUOUS: `batch` groups sharing A [m, k] and D [m, n] (one group's
 * rows after another's), B [batch, n, k], the groups' row offsets (batch + 1 of them) read by the
 * kernel from gg_tensors.groups. GG_VARLEN_K (QuACK's varlen_k, a mixture-of-experts layer's weight
 * gradients): `batch` groups sharing the k rows of A [k, m] and B [k, n] (the tokens along K),
 * D[g] = A[o_g:o_{g+1}, :]^T * B[o_g:o_{g+1}, :] into D [batch, m, n], the offsets o along K (batch + 1
 * of them) from gg_tensors.groups; K is read at run time. Grouped operands are dense, K-major (GG_VARLEN_K: rows of tokens), D row-major. */
typedef enum gg_source { GG_DENSE = 0, GG_MASKED = 1, GG_CONTIGUOUS = 2, GG_VARLEN_K = 3 } gg_source;

/* FP8 factors' granularity: the target's recipe (sm_90a: fp32 factors, A's per 1x128, B's per
 * 128x128; sm_100a: UE8M0 factors per 1x128 for both), none (a factor of 1), one per tensor, one
 * per row, one per row and 128 of K, one per 128 x 128 block. */
typedef enum gg_scale {
  GG_SCALE_DEFAULT = 0, GG_SCALE_NONE = 1, GG_SCALE_TENSOR = 2, GG_SCALE_ROW = 3, GG_SCALE_1X128 = 4,
  GG_SCALE_128X128 = 5
} gg_scale;

/* The epilogue's bias (one value per output column, or per row) and activation. */
typedef enum gg_bias { GG_BIAS_NONE = 0, GG_BIAS_COLS = 1, GG_BIAS_ROWS = 2 } gg_bias;
typedef enum gg_activation { GG_ACT_NONE = 0, GG_RELU = 1, GG_GELU = 2, GG_SILU = 3 } gg_activation;

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
  gg_source source;                      /* GG_DENSE, or groups (`batch` of them) */
  int64_t expected_m;                    /* 0: planned for m; else for this many rows (a group's, when
                                            masked), and the kernel serves every m: one JIT for a
                                            decode loop (DeepGEMM's expected_m) */
  /* D = activation(alpha * A * B^T + beta * C + bias); C is laid out as D, bias is of D's type. */
  double alpha, beta;                    /* beta 0: no C */
  gg_bias bias;
  gg_activation activation;
  gg_scale scale_a, scale_b;             /* FP8 operands' factors */
  int scale_a_k_major, scale_b_mn_major; /* the 2-D factors' majors; 0: DeepGEMM's (A's MN-major,
                                            [k blocks][m rounded up to 4]; B's K-major) */
  const char* schedule_text;             /* NULL, or a schedule file's text (dsl/schedule_text.h)
                                            whose directives schedule this problem in place of
                                            `schedule`: its `problem` line's orientation is kept,
                                            its sizes and types are this struct's; its `epilogue`
                                            lines apply where the struct names no epilogue. Dense
                                            problems only. */
} gg_problem;

/* The device memory a call reads and writes (16-byte aligned), laid out as its gg_problem says. */
typedef struct gg_tensors {
  const void* a;
  const void* b;
  void* d;
  const void* c;         /* beta's C (beta != 0) */
  const void* bias;      /* the bias vector (bias != GG_BIAS_NONE) */
  const void* scale_a;   /* FP8 factors: fp32, or UE8M0 bytes in 128x4 atoms on sm_100a; NULL: 1 */
  const void* scale_b;
  const int* groups;     /* GG_MASKED: each group's rows in use; GG_CONTIGUOUS: the row offsets */
} gg_tensors;

/* Defaults for an m x n x k bf16 problem: dense K-major operands, a row-major D, one matrix, sm_90a,
 * alpha 1 and no other epilogue, FP8 factors as the target's recipe has them. */
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

/* Every problem gg_problem describes: FP8 with its factors, groups, the epilogue. Asynchronous on
 * `stream`; after a configuration's first call on a stream a call allocates nothing and
 * synchronizes nothing, so it may be captured in a CUDA graph. */
GG_API gg_status gg_gemm_ex(const gg_problem* problem, const gg_tensors* tensors, void* stream);

/* How many kernels this process has loaded for gg_gemm and gg_gemm_ex (each JIT-compiled or read
 * from the disk cache). */
GG_API int64_t gg_loaded_kernels(void);

#ifdef __cplusplus
}
#endif

#endif /* GEMMGEN_H */
