#ifndef GG_DEV_STAGE_ROWS_CUH
#define GG_DEV_STAGE_ROWS_CUH
// Staged operands: rows TMA cannot address (a row pitch that is not a 16-byte multiple: K odd for
// a K-major bf16 operand) copied into a buffer whose rows are padded to whole GG_STAGE_PITCH_BYTES, so
// the GEMM that follows on the stream loads them with TMA. Each thread writes one 16-byte piece of
// the copy from the element loads that cover it (a source row may start at any 2-byte address);
// the padding past a row's end is written as zeros.
namespace gg::dev {

// The pieces of the copy a thread writes: one per 16 bytes of each destination row.
static __device__ __forceinline__ long long stage_pieces(const GgStageCopy& c) {
  return GG_STAGE_COPY_PIECES(c);
}

static __device__ __forceinline__ void stage_piece(const GgStageCopy& c, long long piece) {
  const long long per_row = c.dst_pitch * c.elem_bytes / 16, row_index = piece / per_row;
  const long long matrix = row_index / c.rows, row = row_index % c.rows;
  const int per_piece = 16 / c.elem_bytes;
  const long long col = piece % per_row * per_piece;
  unsigned words[4] = {0u, 0u, 0u, 0u};
  if (c.elem_bytes == 2) {
    const unsigned short* src =
        static_cast<const unsigned short*>(c.src) + matrix * c.src_matrix_stride + row * c.src_pitch + col;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (col + e < c.cols) words[e / 2] |= static_cast<unsigned>(__ldg(src + e)) << (16 * (e % 2));
  } else {
    const unsigned char* src =
        static_cast<const unsigned char*>(c.src) + matrix * c.src_matrix_stride + row * c.src_pitch + col;
#pragma unroll
    for (int e = 0; e < 16; ++e)
      if (col + e < c.cols) words[e / 4] |= static_cast<unsigned>(__ldg(src + e)) << (8 * (e % 4));
  }
  unsigned char* dst = static_cast<unsigned char*>(c.dst) +
                       (matrix * c.dst_matrix_stride + row * c.dst_pitch + col) * c.elem_bytes;
  *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
}

// Every copy of `args`, the threads of the grid striding over their pieces.
static __device__ __forceinline__ void stage_rows(const GgStageArgs& args) {
  const long long first = stage_pieces(args.copies[0]);
  const long long total = first + (args.count > 1 ? stage_pieces(args.copies[1]) : 0);
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    if (i < first) stage_piece(args.copies[0], i);
    else stage_piece(args.copies[1], i - first);
  }
}

}  // namespace gg::dev

#endif  // GG_DEV_STAGE_ROWS_CUH
