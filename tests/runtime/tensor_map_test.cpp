// Tensor map checks that run before any driver call.
#include "runtime/tensor_map.h"

#include <doctest/doctest.h>

#include "runtime/cuda_error.h"
#include "runtime/launch.h"

using gg::rt::ElemType;
using gg::rt::Operand;
using gg::rt::Swizzle;
using gg::rt::TensorMapSpec;

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
                       "tensor map for operand A was generated for 512x64 but the problem's operand is 512x128",
                       gg::rt::CudaError);
}
