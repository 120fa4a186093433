#include "runtime/unfused_epilogue.h"

#include <cuda.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

#include "runtime/cuda_error.h"
#include "runtime/device_info.h"
#include "runtime/driver_api.h"
#include "runtime/jit.h"

namespace gg::rt {
namespace {

constexpr int kMaxOps = 8;
constexpr unsigned kThreads = 256, kPerThread = 4;  // a block covers 1024 columns of one row

// The kernel's one parameter; the device source declares the same struct.
struct Op {
  int kind, activation;
  float scalar;
};
struct Args {
  void* d;
  const void* c;
  const void* bias;
  void* aux;  // the saved output, laid out as D (save_after >= 0)
  long long rows, cols, ldd, ldc;
  int d_type, c_type, bias_type, op_count;  // types: 0 bf16, 1 f16, 2 f32
  int vector;  // 16-byte pieces of D (and C) per thread: rows, strides and pointers allow it
  int save_after;
  Op ops[kMaxOps];
  float* row_sums;  // reductions (after >= 0): [rows], [cols]
  float* col_sums;
  int row_after, row_squares, col_after, col_squares;
};

// Types and kinds as numbered above and in UnfusedOp (Activation's order: none, relu, gelu, silu).
constexpr const char* kSource = R"(
#include "epilogue.cuh"
struct Op { int kind, activation; float scalar; };
struct Args {
  void* d; const void* c; const void* bias; void* aux;
  long long rows, cols, ldd, ldc;
  int d_type, c_type, bias_type, op_count;
  int vector, save_after;
  Op ops[8];
  float* row_sums; float* col_sums;
  int row_after, row_squares, col_after, col_squares;
};

__device__ float load(const void* base, long long i, int type) {
  return type == 0 ? gg::dev::load_bf16(base, i) : type == 1 ? gg::dev::load_f16(base, i) : gg::dev::load_f32(base, i);
}
__device__ float act(int which, float x) {
  return which == 1 ? gg::dev::relu(x) : which == 2 ? gg::dev::gelu_tanh(x) : which == 3 ? gg::dev::silu(x) : x;
}
__device__ float act_grad(int which, float x) {
  return which == 1 ? gg::dev::relu_grad(x) : which == 2 ? gg::dev::gelu_tanh_grad(x)
       : which == 3 ? gg::dev::silu_grad(x) : 1.0f;
}

// What the reductions add for one value: its term (or 0) for the row's sum and the column's.
struct Terms { float row, col; };
__device__ void reduce_at(const Args& a, int o, float v, Terms& t) {
  if (o == a.row_after) t.row = a.row_squares ? v * v : v;
  if (o == a.col_after) t.col = a.col_squares ? v * v : v;
}
// The ops on one value, `c` its element of C; the value after the first save_after of them goes
// to `saved`, the reductions' terms to `t`.
__device__ float apply(const Args& a, float v, long long row, long long col, float c, float& saved, Terms& t) {
  for (int o = 0; o < a.op_count; ++o) {
    if (o == a.save_after) saved = v;
    reduce_at(a, o, v, t);
    const Op op = a.ops[o];
    switch (op.kind) {
      case 0: v *= op.scalar; break;
      case 1: v += op.scalar * c; break;
      case 2: v += load(a.bias, row, a.bias_type); break;
      case 3: v += load(a.bias, col, a.bias_type); break;
      case 4: v = act(op.activation, v); break;
      case 5: v *= act_grad(op.activation, c); break;
    }
  }
  if (a.op_count == a.save_after) saved = v;
  reduce_at(a, a.op_count, v, t);
  return v;
}
// The warp's sum of `v` to `at` (lanes whose `mine` is false add 0).
__device__ void warp_add(float* at, float v) {
  for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(0xffffffffu, v, mask);
  if (threadIdx.x % 32 == 0) atomicAdd(at, v);
}

// One 16-byte piece of D per thread (8 16-bit values or 4 f32), C's alike (C has D's type), and
// the saved output's.
__device__ float unpack(unsigned word, int half, int type) {
  return type == 0 ? (half ? gg::dev::unpack_hi_bf16(word) : gg::dev::unpack_lo_bf16(word))
                   : (half ? gg::dev::unpack_hi_f16(word) : gg::dev::unpack_lo_f16(word));
}

// The piece's row term goes to `row_term`; its column terms are added to col_terms[0..7].
__device__ void vector_piece(const Args& a, long long row, long long col, float& row_term, float* col_terms) {
  const long long at = row * a.ldd + col, c_at = row * a.ldc + col;
  const long long bytes = a.d_type == 2 ? 4 : 2;
  uint4 bits = *reinterpret_cast<const uint4*>(static_cast<const char*>(a.d) + at * bytes), kept = bits;
  uint4 c_bits = make_uint4(0, 0, 0, 0);
  if (a.c != nullptr) c_bits = *reinterpret_cast<const uint4*>(static_cast<const char*>(a.c) + c_at * bytes);
  unsigned* words = reinterpret_cast<unsigned*>(&bits);
  const unsigned* c_words = reinterpret_cast<const unsigned*>(&c_bits);
  unsigned* saved_words = reinterpret_cast<unsigned*>(&kept);
  if (a.d_type == 2) {
    for (int j = 0; j < 4; ++j) {
      float saved = 0.0f;
      Terms t = {0.0f, 0.0f};
      words[j] = __float_as_uint(apply(a, __uint_as_float(words[j]), row, col + j, __uint_as_float(c_words[j]), saved, t));
      saved_words[j] = __float_as_uint(saved);
      row_term += t.row;
      col_terms[j] += t.col;
    }
  } else {
    for (int j = 0; j < 4; ++j) {
      const float lo = unpack(words[j], 0, a.d_type), hi = unpack(words[j], 1, a.d_type);
      float s0 = 0.0f, s1 = 0.0f;
      Terms t0 = {0.0f, 0.0f}, t1 = {0.0f, 0.0f};
      const float x = apply(a, lo, row, col + 2 * j, unpack(c_words[j], 0, a.d_type), s0, t0);
      const float y = apply(a, hi, row, col + 2 * j + 1, unpack(c_words[j], 1, a.d_type), s1, t1);
      row_term += t0.row + t1.row;
      col_terms[2 * j] += t0.col;
      col_terms[2 * j + 1] += t1.col;
      words[j] = a.d_type == 0 ? gg::dev::pack2_bf16(x, y) : gg::dev::pack2_f16(x, y);
      saved_words[j] = a.d_type == 0 ? gg::dev::pack2_bf16(s0, s1) : gg::dev::pack2_f16(s0, s1);
    }
  }
  *reinterpret_cast<uint4*>(static_cast<char*>(a.d) + at * bytes) = bits;
  if (a.save_after >= 0) *reinterpret_cast<uint4*>(static_cast<char*>(a.aux) + at * bytes) = kept;
}

__device__ void store(void* base, long long at, int type, float v) {
  if (type == 0) gg::dev::store_bf16(base, at, v);
  else if (type == 1) gg::dev::store_f16(base, at, v);
  else gg::dev::store_f32(base, at, v);
}

// Each thread a piece of columns, walking rows gridDim.y apart: a row's terms meet across the
// warp and by atomicAdd; a column's across the thread's rows, then by atomicAdd.
extern "C" __global__ void __launch_bounds__(256) gg_unfused_epilogue(const __grid_constant__ Args a) {
  float col_terms[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (a.vector) {
    const long long per_piece = a.d_type == 2 ? 4 : 8;
    const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * per_piece;
    for (long long row = blockIdx.y; row < a.rows; row += gridDim.y) {
      float row_term = 0.0f;
      if (col < a.cols) vector_piece(a, row, col, row_term, col_terms);
      if (a.row_after >= 0) warp_add(a.row_sums + row, row_term);
    }
    if (a.col_after >= 0 && col < a.cols)
      for (int j = 0; j < per_piece; ++j) atomicAdd(a.col_sums + col + j, col_terms[j]);
    return;
  }
  for (long long row = blockIdx.y; row < a.rows; row += gridDim.y) {
    float row_term = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long col = (static_cast<long long>(blockIdx.x) * 4 + j) * blockDim.x + threadIdx.x;
      if (col >= a.cols) continue;
      const long long at = row * a.ldd + col, c_at = row * a.ldc + col;
      float saved = 0.0f;
      Terms t = {0.0f, 0.0f};
      const float c = a.c != nullptr ? load(a.c, c_at, a.c_type) : 0.0f;
      store(a.d, at, a.d_type, apply(a, load(a.d, at, a.d_type), row, col, c, saved, t));
      if (a.save_after >= 0) store(a.aux, at, a.d_type, saved);
      row_term += t.row;
      col_terms[j] += t.col;
    }
    if (a.row_after >= 0) warp_add(a.row_sums + row, row_term);
  }
  for (int j = 0; j < 4 && a.col_after >= 0; ++j) {
    const long long col = (static_cast<long long>(blockIdx.x) * 4 + j) * blockDim.x + threadIdx.x;
    if (col < a.cols) atomicAdd(a.col_sums + col, col_terms[j]);
  }
}
)";

int type_code(ElemType t) {
  switch (t) {
    case ElemType::BF16: return 0;
    case ElemType::F16: return 1;
    case ElemType::F32: return 2;
    default: throw std::invalid_argument("run_unfused_epilogue: D, C and the bias must be bf16, f16 or f32");
  }
}

CUfunction unfused_kernel() {
  static const CUfunction kernel = [] {
    const DeviceInfo info = device_info();
    const std::string arch = "sm_" + std::to_string(info.compute_major * 10 + info.compute_minor);
    const CompiledKernel compiled = compile_unfused_epilogue_kernel(arch);
    return load_function(compiled.cubin, compiled.lowered_name, "run_unfused_epilogue");
  }();
  return kernel;
}

}  // namespace

CompiledKernel compile_unfused_epilogue_kernel(const std::string& arch) {
  return compile_kernel(kSource, "gg_unfused_epilogue", arch);
}

void run_unfused_epilogue(const UnfusedEpilogue& e, void* d, const void* c, const void* bias, int64_t rows,
                          int64_t cols, int64_t ldd, int64_t ldc, void* aux, cudaStream_t stream, float* row_sums,
                          float* col_sums) {
  if (e.ops.size() > size_t(kMaxOps))
    throw std::invalid_argument("run_unfused_epilogue: " + std::to_string(e.ops.size()) + " ops; at most " +
                                std::to_string(kMaxOps));
  if (e.save_after > static_cast<int>(e.ops.size()) || (e.save_after >= 0 && aux == nullptr))
    throw std::invalid_argument("run_unfused_epilogue: a saved output after op " + std::to_string(e.save_after) +
                                " of " + std::to_string(e.ops.size()) + (aux ? "" : " with no aux pointer"));
  for (const auto& [r, sums, what] : {std::tuple{e.rows, row_sums, "row"}, std::tuple{e.cols, col_sums, "column"}})
    if (r.after > static_cast<int>(e.ops.size()) || (r.after >= 0 && sums == nullptr))
      throw std::invalid_argument(std::string("run_unfused_epilogue: a ") + what + " reduction after op " +
                                  std::to_string(r.after) + " of " + std::to_string(e.ops.size()) +
                                  (sums ? "" : " with no vector"));
  // The sums meet by atomicAdd: from zero.
  if (e.rows.after >= 0) check_cuda(cudaMemsetAsync(row_sums, 0, size_t(rows) * 4, stream), "zeroing the row sums");
  if (e.cols.after >= 0) check_cuda(cudaMemsetAsync(col_sums, 0, size_t(cols) * 4, stream), "zeroing the column sums");
  Args args{};
  args.d = d;
  args.row_sums = row_sums;
  args.col_sums = col_sums;
  args.row_after = e.rows.after;
  args.row_squares = e.rows.squares;
  args.col_after = e.cols.after;
  args.col_squares = e.cols.squares;
  bool reads_c = false;
  for (const UnfusedOp& op : e.ops)
    reads_c = reads_c || op.kind == UnfusedOp::Kind::AddC || op.kind == UnfusedOp::Kind::ActivationGrad;
  args.c = reads_c ? c : nullptr;  // the kernel reads C where it is given
  args.bias = bias;
  args.aux = aux;
  args.rows = rows;
  args.cols = cols;
  args.ldd = ldd;
  args.ldc = ldc;
  args.d_type = type_code(e.d);
  args.c_type = type_code(e.c);
  args.bias_type = type_code(e.bias);
  args.op_count = static_cast<int>(e.ops.size());
  args.save_after = e.save_after;
  for (size_t i = 0; i < e.ops.size(); ++i)
    args.ops[i] = {static_cast<int>(e.ops[i].kind), static_cast<int>(e.ops[i].activation),
                   static_cast<float>(e.ops[i].scalar)};
  // 16-byte pieces where every row of D (and C of D's type, and the saved output) starts on one and
  // holds whole ones
  const int64_t per_piece = 16 / elem_bytes(e.d);
  const auto aligned = [&](const void* p, int64_t ld) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % per_piece == 0;
  };
  args.vector = cols % per_piece == 0 && aligned(d, ldd) && (!reads_c || (e.c == e.d && aligned(c, ldc))) &&
                        (e.save_after < 0 || aligned(aux, ldd))
                    ? 1
                    : 0;
  const int64_t per_block = args.vector ? kThreads * per_piece : kThreads * kPerThread;
  const int64_t blocks_x = (cols + per_block - 1) / per_block;
  // A column reduction adds each thread's sums once: a few waves of blocks, each walking many rows.
  const int64_t rows_apart = e.cols.after >= 0 ? std::max<int64_t>(1, 2048 / blocks_x) : 65535;
  launch_function(unfused_kernel(), static_cast<unsigned>(blocks_x),
                  static_cast<unsigned>(std::min<int64_t>(rows, rows_apart)), kThreads, &args, stream,
                  "run_unfused_epilogue");
}

}  // namespace gg::rt
