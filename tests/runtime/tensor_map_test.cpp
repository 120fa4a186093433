// Tensor map checks that run before any driver call.
#include "runtime/tensor_map.h"

#include <doctest/doctest.h>

#include "runtime/cuda_error.h"
#include "runtime/launch.h"

using gg::rt::ElemType;
using gg::rt::Operand;
using gg::rt::Swizzle;
using gg::rt::TensorMapSpec;
using gg::rt::TiledMapArgs;
using gg::rt::tiled_map_args;

namespace {

alignas(16) char fake_matrix[16];

TensorMapSpec bf16_spec(uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols, Swizzle swizzle) {
  TensorMapSpec spec;
  spec.elem = ElemType::BF16;
  spec.rows = rows;
  spec.cols = cols;
  spec.box_rows = box_rows;
  spec.box_cols = box_cols;
  spec.swizzle = swizzle;
  return spec;
}

}  // namespace

TEST_CASE("tensor map specs are checked before encoding") {
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 256, 64, 64, Swizzle::B128), fake_matrix).empty());
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 256, 64, 128, Swizzle::B128), fake_matrix) ==
        "a box row (256 bytes) exceeds the 128-byte swizzle span");
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 100, 64, 64, Swizzle::B128), fake_matrix) ==
        "its row pitch (200 bytes) is not a multiple of 16");
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 256, 300, 64, Swizzle::B128), fake_matrix) ==
        "box dimensions must be in [1, 256]");
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 256, 64, 64, Swizzle::B128), fake_matrix + 8) ==
        "its base pointer is not 16-byte aligned");
  CHECK(gg::rt::tensor_map_spec_problem(bf16_spec(256, 256, 64, 32, Swizzle::B32), fake_matrix) ==
        "a box row (64 bytes) exceeds the 32-byte swizzle span");
}

TEST_CASE("a bad spec names the operand and the problem without touching the driver") {
  TensorMapSpec spec = bf16_spec(256, 256, 64, 128, Swizzle::B128);
  spec.operand = Operand::B;
  try {
    gg::rt::encode_tensor_map(spec, fake_matrix);
    FAIL("expected a CudaError");
  } catch (const gg::rt::CudaError& error) {
    CHECK(std::string(error.what()) ==
          "cannot encode tensor map for operand B (bf16 256x256, box 64x128): a box row (256 bytes) exceeds the "
          "128-byte swizzle span");
  }
}

TEST_CASE("tensor map shapes are resolved from, and checked against, the problem") {
  gg::rt::GemmProblem problem;
  problem.m = 512;
  problem.n = 256;
  problem.k = 128;
  problem.out_type = ElemType::F32;

  TensorMapSpec a = bf16_spec(0, 0, 64, 64, Swizzle::B128);
  a.operand = Operand::A;
  const TensorMapSpec resolved_a = gg::rt::resolve_tensor_map_spec(a, problem);
  CHECK(resolved_a.rows == 512);
  CHECK(resolved_a.cols == 128);

  TensorMapSpec b = a;
  b.operand = Operand::B;
  CHECK(gg::rt::resolve_tensor_map_spec(b, problem).rows == 256);

  TensorMapSpec d = bf16_spec(0, 0, 64, 32, Swizzle::B128);
  d.operand = Operand::D;
  CHECK_THROWS_WITH_AS(gg::rt::resolve_tensor_map_spec(d, problem),
                       "tensor map for operand D is bf16 but the problem's operand is f32", gg::rt::CudaError);
  d.elem = ElemType::F32;
  CHECK(gg::rt::resolve_tensor_map_spec(d, problem).cols == 256);

  TensorMapSpec stale = bf16_spec(512, 64, 64, 64, Swizzle::B128);
  CHECK_THROWS_WITH_AS(gg::rt::resolve_tensor_map_spec(stale, problem),
                       "tensor map for operand A was generated for a stored 512x64 matrix but the problem's operand is 512x128",
                       gg::rt::CudaError);
}

// What the driver receives, in cuTensorMapEncodeTiled's terms: dimension 0 is the contiguous one
// (columns of a row-major matrix), the one stride is bytes between rows, the box follows the
// same order, and the swizzle enum matches the spec's span.
TEST_CASE("the encode arguments put the contiguous dimension first and strides in bytes") {
  TensorMapSpec a;  // A of a 1000 x 136 bf16 problem, a 128 x 64 box, 128B swizzle
  a.operand = Operand::A;
  a.elem = ElemType::BF16;
  a.rows = 1000;
  a.cols = 136;
  a.box_rows = 128;
  a.box_cols = 64;
  a.swizzle = Swizzle::B128;
  const TiledMapArgs x = tiled_map_args(a);
  CHECK(x.data_type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK(x.global_dims[0] == 136);
  CHECK(x.global_dims[1] == 1000);
  CHECK(x.global_strides[0] == 136 * 2);
  CHECK(x.box_dims[0] == 64);
  CHECK(x.box_dims[1] == 128);
  CHECK(x.element_strides[0] == 1);
  CHECK(x.element_strides[1] == 1);
  CHECK(x.swizzle == CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK(x.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // zeros outside: the k tail and edge tiles rely on it
  // Rows 272 bytes apart start 16 bytes into a 32-byte L2 sector every other row: 128-byte promotion.
  CHECK(x.l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);

  TensorMapSpec d = a;  // an f32 output staged in 32-column (128-byte) chunks, and narrower swizzles
  d.operand = Operand::D;
  d.elem = ElemType::F32;
  d.rows = 300;
  d.cols = 264;
  d.box_cols = 32;
  const TiledMapArgs y = tiled_map_args(d);
  CHECK(y.data_type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  CHECK(y.global_strides[0] == 264 * 4);
  CHECK(y.box_dims[0] == 32);
  CHECK(y.l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);  // rows 1056 bytes apart: whole sectors
  d.swizzle = Swizzle::B64;
  CHECK(tiled_map_args(d).swizzle == CU_TENSOR_MAP_SWIZZLE_64B);
  d.swizzle = Swizzle::B32;
  CHECK(tiled_map_args(d).swizzle == CU_TENSOR_MAP_SWIZZLE_32B);
  d.swizzle = Swizzle::None;
  CHECK(tiled_map_args(d).swizzle == CU_TENSOR_MAP_SWIZZLE_NONE);
  d.elem = ElemType::F16;
  CHECK(tiled_map_args(d).data_type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
}

// The rule the runtime's encoder and the emitted host entry share (GG_TENSOR_MAP_L2_PROMOTION_BYTES):
// 256-byte promotion for rows whole 32-byte sectors apart, 128 where rows start 16 bytes into one
// (K = 7000 bf16 ran 5-18% faster with 128 on an H200; aligned rows kept 256).
TEST_CASE("tensor maps of rows 16 bytes into an L2 sector ask for 128-byte promotion, others 256") {
  CHECK(GG_TENSOR_MAP_L2_PROMOTION_BYTES(7168 * 2) == 256);
  CHECK(GG_TENSOR_MAP_L2_PROMOTION_BYTES(7000 * 2) == 128);
  CHECK(GG_TENSOR_MAP_L2_PROMOTION_BYTES(1008 * 2) == 256);
  CHECK(GG_TENSOR_MAP_L2_PROMOTION_BYTES(776 * 1) == 128);  // an e4m3 row of 776 bytes
  TensorMapSpec b;
  b.operand = Operand::B;
  b.elem = ElemType::BF16;
  b.rows = 2264;
  b.cols = 14408;  // 28816 bytes a row: 16 into a sector
  b.box_rows = 128;
  b.box_cols = 64;
  b.swizzle = Swizzle::B128;
  CHECK(tiled_map_args(b).l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  b.row_stride = 14416;  // a padded leading dimension: 28832 bytes, whole sectors
  CHECK(tiled_map_args(b).l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}
