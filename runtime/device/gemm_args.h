#ifndef GG_GEMM_ARGS_H
#define GG_GEMM_ARGS_H
// The one kernel parameter of every gemmgen kernel, passed by value as __grid_constant__.
// Shared verbatim by the host runtime and the device code (embedded into emitted .cu),
// so it uses no headers (and an include guard, not #pragma once, which warns when the
// text is pasted into a .cu).
struct alignas(128) GgTensorMap {  // CUDA 13 aligns CUtensorMap to 128 bytes
  unsigned long long opaque[16];
};

struct GgGemmArgs {
  GgTensorMap map_a, map_b, map_c, map_d;  // filled for the operands LaunchSpec lists
  GgTensorMap map_scale_a;                 // FP8: A's scale factors, [ceil(K/128)][M rounded up to 4] fp32
  GgTensorMap map_aux;                     // a saved output (the pre-activation), laid out as D
  GgTensorMap map_scale_b;                 // FP8 on sm_100a: B's UE8M0 factors in their atoms (A's in map_scale_a)
  const void* a;                           // [M, K]: a[b * stride_a + m * lda + k] (MN-major: k * lda + m)
  const void* b;                           // [N, K]: b[b * stride_b + n * ldb + k] (MN-major: k * ldb + n)
  const void* c;                           // [M, N] as D, ldc and stride_c; read when beta != 0
  void* d;                                 // [M, N]: d[b * stride_d + m * ldd + n] (column-major: n * ldd + m)
  const void* bias;                        // [N] or [M], output dtype
  void* workspace;                         // LaunchSpec::workspace_bytes of zeroed scratch (split-K)
  long long m, n, k;
  float alpha, beta;
  long long lda, ldb, ldc, ldd;            // elements between stored rows
  long long batch;                         // matrices per launch
  long long stride_a, stride_b, stride_c, stride_d;  // elements between matrices (0: one for all)
  const int* group_rows;                   // masked groups: the rows in use of each of the batch's matrices
  const int* group_offsets;                // contiguous: batch + 1 row offsets of A and D; varlen_k: of K
  // Pointer-array groups: GG_GROUP_MAP_SLOTS tensor maps per group (slot = operand: A, B, C, D),
  // written by the launch's map builder, and each group's M, N, K (3 ints per group).
  const GgTensorMap* group_maps;
  const int* group_sizes;
  // FP8 scale factors, laid out as the kernel's problem line says (A's per 1x128 MN-major through map_scale_a).
  // UE8M0 factors (sm_100a) are bytes in their atoms, passed through these pointers' type.
  const float* scale_a;
  const float* scale_b;
  // A saved second output (Definition::set_saved_output): [M, N] in D's type, laid out as D (ldd,
  // stride_d).
  void* aux;
  // Reductions into side vectors (Definition::add_reduction), fp32: [batch][M] row sums and
  // [batch][N] column sums.
  float* row_reduction;
  float* col_reduction;
};

#define GG_GROUP_MAP_SLOTS 4

// The L2 promotion a tensor map of rows `pitch_bytes` apart asks for, in bytes (256 or 128). Where
// rows start 16 bytes into a 32-byte sector, 256-byte promotion cost the loads 5-18% on an H200
// (1472 x 2264 x 14408 bf16: 632 -> 703 TFLOP/s with 128); on sector-aligned rows 256 stays.
#define GG_TENSOR_MAP_L2_PROMOTION_BYTES(pitch_bytes) ((pitch_bytes) % 32 == 0 ? 256 : 128)

// Staged operands (rt::staged_matrix): the launch's copy kernel `<kernel>_stage` writes A's and
// B's rows, padded to whole GG_STAGE_PITCH_BYTES, into aligned copies that the GEMM's TMA loads read.
// One copy per staged operand: `matrices` matrices of `rows` rows of `cols` elements, rows
// src_pitch (dst_pitch) elements and matrices src_matrix_stride (dst_matrix_stride) apart.
#define GG_STAGE_COPIES 2
// A copy's rows lie a multiple of 32 bytes apart, not only the 16 TMA needs: on an H100, TMA loads
// of rows that start 16 bytes into a 32-byte sector ran at half the rate (2048 x 3072 x 7000 bf16,
// K-major rows of 14000 bytes: 4x the L2 requests of K = 7168, 371 against 718 TFLOP/s).
#define GG_STAGE_PITCH_BYTES 32
#define GG_STAGE_THREADS 256     // the copy kernel's CTA
#define GG_STAGE_CTAS_PER_SM 8   // its grid: at most this many CTAs per SM, striding over the pieces
struct GgStageCopy {
  const void* src;
  void* dst;
  long long rows, cols, matrices;
  long long src_pitch, dst_pitch;
  long long src_matrix_stride, dst_matrix_stride;
  int elem_bytes;
};
struct GgStageArgs {
  GgStageCopy copies[GG_STAGE_COPIES];
  int count;
};
// A copy's 16-byte pieces of destination rows: a copy thread writes one each (stage_rows.cuh), and
// the launches (LoadedKernel, the emitted host entry) size the copy's grid by them.
#define GG_STAGE_COPY_PIECES(c) ((c).matrices * (c).rows * ((c).dst_pitch * (c).elem_bytes / 16))

// The map builder's one parameter (pointer-array groups): per operand slot, a template map (box,
// swizzle, element type; its address, sizes and stride are replaced), a device array of one
// pointer per group (nullptr: the slot is unused) and one of leading dimensions in elements; whether
// the stored matrix is transposed (an MN-major A or B: its rows run along K) and its element bytes.
struct GgGroupMapArgs {
  GgTensorMap templates[GG_GROUP_MAP_SLOTS];
  const void* const* pointers[GG_GROUP_MAP_SLOTS];
  const long long* lds[GG_GROUP_MAP_SLOTS];
  int transposed[GG_GROUP_MAP_SLOTS];
  int elem_bytes[GG_GROUP_MAP_SLOTS];
  const int* sizes;     // M, N, K of each group
  int groups;
  GgTensorMap* maps;    // out: GG_GROUP_MAP_SLOTS * groups
};

#endif  // GG_GEMM_ARGS_H
