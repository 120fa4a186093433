// TMA load (128B swizzle, completing on an mbarrier) and TMA store through the
// runtime's tensor maps and launch: output equals input, and shared memory holds the
// 128B swizzle pattern the wgmma descriptors assume.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/reference.h"

namespace {

const char* kSource = R"(
#include "gemm_args.h"
#include "mbarrier.cuh"
#include "smem.cuh"
#include "tma.cuh"
using namespace gg::dev;

constexpr unsigned kTileBytes = 64 * 64 * 2;

extern "C" __global__ void __launch_bounds__(128, 1) tma_roundtrip(const __grid_constant__ GgGemmArgs args) {
  extern __shared__ unsigned char smem[];
  // 128B swizzle is a function of address bits 4-9: align the tile to 1024 bytes.
  const unsigned tile = (smem_addr(smem) + 1023u) & ~1023u;
  const unsigned bar = tile + kTileBytes;
  if (threadIdx.x == 0) {
    prefetch_tensormap(&args.map_a);
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  const int col = blockIdx.x * 64, row = blockIdx.y * 64;
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, kTileBytes);  // a partial box still counts whole (zero-filled)
    tma_load_2d(tile, &args.map_a, bar, col, row);
  }
  mbarrier_wait_parity(bar, 0);

  // The tile's bytes as they lie in shared memory, for the host to check the swizzle.
  uint4* raw = reinterpret_cast<uint4*>(const_cast<void*>(args.c)) + (blockIdx.y * gridDim.x + blockIdx.x) * (kTileBytes / 16);
  for (unsigned i = threadIdx.x; i < kTileBytes / 16; i += blockDim.x) {
    uint4 v;
    ld_shared_v4_u32(tile + 16 * i, v.x, v.y, v.z, v.w);
    raw[i] = v;
  }
  if (threadIdx.x == 0) {
    tma_store_2d(&args.map_d, tile, col, row);
    bulk_commit_group();
    bulk_wait_group_read<0>();  // shared memory must outlive the store's reads
  }
}
)";

// Byte offset of element (r, c) of a 64-row x 128-byte bf16 tile under the 128B
// swizzle: the 16-byte chunk index is XORed with the row index mod 8.
size_t swizzled_offset(size_t r, size_t c) {
  const size_t chunk = (c * 2) / 16, within = (c * 2) % 16;
  return r * 128 + ((chunk ^ (r % 8)) * 16) + within;
}

void check_roundtrip(int64_t rows, int64_t cols) {
  CAPTURE(rows);
  CAPTURE(cols);
  using gg::rt::ElemType;
  gg::rt::DeviceBuffer in(ElemType::BF16, static_cast<size_t>(rows * cols));
  gg::rt::DeviceBuffer out(ElemType::BF16, static_cast<size_t>(rows * cols));
  gg::rt::DeviceBuffer raw(ElemType::BF16, 4 * 64 * 64);
  std::vector<float> values(in.count());
  for (size_t i = 0; i < values.size(); ++i) values[i] = gg::rt::bf16_value(static_cast<uint16_t>(0x3C00 + i));
  in.upload(values);
  gg::rt::fill_poison(out);

  gg::rt::LaunchSpec spec;
  spec.kernel_name = "tma_roundtrip";
  spec.grid = {2, 2, 1};
  spec.block = {128, 1, 1};
  spec.dynamic_smem_bytes = 64 * 64 * 2 + 1024 + 64;
  gg::rt::TensorMapSpec map;
  map.elem = ElemType::BF16;
  map.box_rows = 64;
  map.box_cols = 64;
  map.swizzle = gg::rt::Swizzle::B128;
  map.operand = gg::rt::Operand::A;
  spec.tensor_maps.push_back(map);
  map.operand = gg::rt::Operand::D;
  spec.tensor_maps.push_back(map);

  gg::rt::GemmProblem problem;
  problem.a = in.data();
  problem.c = raw.data();
  problem.d = out.data();
  problem.m = rows;
  problem.n = cols;
  problem.k = cols;
  problem.in_type = problem.out_type = ElemType::BF16;

  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kSource, "tma_roundtrip"), spec);
  kernel.launch_and_wait(problem);

  CHECK(gg::rt::count_poisoned(out) == 0);
  CHECK(out.download() == values);

  // Every element of every tile where the swizzle says; zeros outside the matrix.
  const std::vector<float> dump = raw.download();
  size_t misplaced = 0;
  for (size_t tile_row = 0; tile_row < 2; ++tile_row) {
    for (size_t tile_col = 0; tile_col < 2; ++tile_col) {
      const size_t tile_index = tile_row * 2 + tile_col;
      for (size_t r = 0; r < 64; ++r) {
        for (size_t c = 0; c < 64; ++c) {
          const size_t gr = tile_row * 64 + r, gc = tile_col * 64 + c;
          const bool inside = gr < static_cast<size_t>(rows) && gc < static_cast<size_t>(cols);
          const float expected = inside ? values[gr * static_cast<size_t>(cols) + gc] : 0.0f;
          misplaced += dump[tile_index * 4096 + swizzled_offset(r, c) / 2] != expected;
        }
      }
    }
  }
  CHECK(misplaced == 0);
}

}  // namespace

TEST_CASE("TMA load then store round-trips a bf16 matrix through 128B-swizzled shared memory") {
  check_roundtrip(128, 128);
}

TEST_CASE("TMA zero-fills reads outside the matrix and clips writes to it") {
  check_roundtrip(100, 120);
}
