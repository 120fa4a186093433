// elect.sync, named barriers, setmaxnreg, stmatrix (plain and transposed), packing
// and shared loads/stores, run on the GPU and checked value by value.
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
#include "epilogue.cuh"
#include "fence.cuh"
#include "named_barrier.cuh"
#include "setmaxnreg.cuh"
#include "smem.cuh"
#include "stmatrix.cuh"
#include "warp.cuh"
using namespace gg::dev;

// Output words: [0] warps that elected a lane, [1..256] stmatrix tile, [257..512]
// stmatrix.trans tile, [600..] scalar checks.
extern "C" __global__ void __launch_bounds__(384, 1) warp_helpers(const __grid_constant__ GgGemmArgs args) {
  __shared__ __align__(16) unsigned short tile[256];
  __shared__ __align__(16) unsigned short tile_t[256];
  __shared__ __align__(16) unsigned scratch[8];
  __shared__ unsigned elected_warps;
  unsigned* out = static_cast<unsigned*>(args.d);
  // The producer/consumer split of a 3-warpgroup kernel: 40 + 2 * 232 registers per
  // thread-triple fit the 64K register file.
  if (warpgroup_index_in_block() == 0) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
  }
  if (threadIdx.x == 0) elected_warps = 0;
  __syncthreads();
  if (elect_one_sync()) atomicAdd(&elected_warps, 1u);

  if (warp_index_in_block() == 0) {
    const unsigned lane = lane_index();
    // Register j holds row lane/4, columns 2*(lane%4)+{0,1} of matrix j; element
    // (r, c) of matrix j has the value j*64 + r*8 + c.
    unsigned regs[4];
    for (unsigned j = 0; j < 4; ++j) {
      const unsigned first = j * 64 + (lane / 4) * 8 + 2 * (lane % 4);
      regs[j] = first | ((first + 1) << 16);
    }
    // Lane l gives the address of row l%8 of matrix l/8.
    const unsigned row_offset = ((lane / 8) * 64 + (lane % 8) * 8) * 2;
    stmatrix_x4(smem_addr(tile) + row_offset, regs[0], regs[1], regs[2], regs[3]);
    stmatrix_x4_trans(smem_addr(tile_t) + row_offset, regs[0], regs[1], regs[2], regs[3]);
  }
  // Warpgroups 1 and 2 signal, warpgroup 0 waits: 384 threads in all on barrier 2.
  if (warpgroup_index_in_block() != 0) {
    named_barrier_arrive(2, 384);
  } else {
    named_barrier_sync(2, 384);
  }
  named_barrier_sync(1, 384);

  if (threadIdx.x == 0) {
    out[0] = elected_warps;
    for (int i = 0; i < 256; ++i) {
      out[1 + i] = tile[i];
      out[257 + i] = tile_t[i];
    }
    out[600] = pack2_bf16(1.0f, -2.0f);
    out[601] = pack2_f16(1.0f, -2.0f);
    const unsigned s = smem_addr(scratch);
    st_shared_u32(s, 0xDEADBEEFu);
    out[602] = ld_shared_u32(s);
    st_shared_v4_u32(s + 16, 1u, 2u, 3u, 4u);
    unsigned x, y, z, w;
    ld_shared_v4_u32(s + 16, x, y, z, w);
    out[603] = x * 1000 + y * 100 + z * 10 + w;
    fence_proxy_async_shared_cta();
  }
  if (threadIdx.x == 37) out[604] = lane_index();
}
)";

}  // namespace

TEST_CASE("warp-level helpers behave as documented") {
  gg::rt::DeviceBuffer words(gg::rt::ElemType::F32, 1024);
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "warp_helpers";
  spec.block = {384, 1, 1};
  gg::rt::GemmProblem problem;
  problem.d = words.data();
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kSource, "warp_helpers"), spec);
  kernel.launch_and_wait(problem);

  std::vector<uint32_t> out;
  for (float v : words.download()) out.push_back(std::bit_cast<uint32_t>(v));
  CHECK(out[0] == 12);  // one elected lane in each of the 12 warps
  size_t wrong = 0, wrong_transposed = 0;
  for (uint32_t j = 0; j < 4; ++j) {
    for (uint32_t r = 0; r < 8; ++r) {
      for (uint32_t c = 0; c < 8; ++c) {
        const uint32_t at = j * 64 + r * 8 + c;
        wrong += out[1 + at] != at;
        wrong_transposed += out[257 + at] != j * 64 + c * 8 + r;
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(wrong_transposed == 0);
  CHECK(out[600] == 0xC0003F80u);  // bf16 {1.0 low, -2.0 high}
  CHECK(out[601] == 0xC0003C00u);  // f16
  CHECK(out[602] == 0xDEADBEEFu);
  CHECK(out[603] == 1234u);
  CHECK(out[604] == 5u);
}
