// One warpgroup multiplies a TMA-loaded, 128B-swizzled 64x64 A tile by an N x 64 B
// tile with four wgmma m64nNk16 steps: checks the descriptor encoding, the k step
// inside a swizzle row, the generated wrappers and the accumulator fragment layout.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/reference.h"

namespace {

const char* kSourceTemplate = R"(
#include "gemm_args.h"
#include "mbarrier.cuh"
#include "smem.cuh"
#include "tma.cuh"
#include "smem_desc.h"
#include "wgmma.cuh"
#include "wgmma_mma.cuh"
using namespace gg::dev;

constexpr int N = @N@;

extern "C" __global__ void __launch_bounds__(128, 1) wgmma_tile(const __grid_constant__ GgGemmArgs args) {
  extern __shared__ unsigned char smem[];
  const unsigned a_tile = (smem_addr(smem) + 1023u) & ~1023u;  // 64 rows x 128 bytes
  const unsigned b_tile = a_tile + 64 * 128;                   // N rows x 128 bytes
  const unsigned bar = b_tile + N * 128;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, (64 + N) * 128);
    tma_load_2d(a_tile, &args.map_a, bar, 0, 0);
    tma_load_2d(b_tile, &args.map_b, bar, 0, 0);
  }
  mbarrier_wait_parity(bar, 0);

  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    // K-major, 128B swizzle: 8-row atoms 1024 bytes apart; k16 = 32 bytes along the row.
    const unsigned long long desc_a = make_smem_desc(a_tile + 32 * k, 16, 1024, kDescSwizzle128B);
    const unsigned long long desc_b = make_smem_desc(b_tile + 32 * k, 16, 1024, kDescSwizzle128B);
    wgmma_m64n@N@k16_f32_@IN@(d, desc_a, desc_b, k > 0 ? 1u : 0u);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
#pragma unroll
  for (int i = 0; i < N / 2; ++i) wgmma_fence_operand(d[i]);

  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* out = static_cast<float*>(args.d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const unsigned row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const unsigned col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    out[row * N + col] = d[i];
  }
}
)";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

enum class Data { SmallIntegers, Random };

void check_wgmma(int n, gg::rt::ElemType in_type, Data data) {
  using gg::rt::ElemType;
  CAPTURE(n);
  CAPTURE(gg::rt::elem_name(in_type));
  const int64_t m = 64, k = 64;
  gg::rt::DeviceBuffer a(in_type, static_cast<size_t>(m * k));
  gg::rt::DeviceBuffer b(in_type, static_cast<size_t>(n * k));
  gg::rt::DeviceBuffer d(ElemType::F32, static_cast<size_t>(m * n));
  const auto host_a = data == Data::SmallIntegers ? gg::rt::fill_small_integers(a, 1) : gg::rt::fill_random_uniform(a, 1);
  const auto host_b = data == Data::SmallIntegers ? gg::rt::fill_small_integers(b, 2) : gg::rt::fill_random_uniform(b, 2);
  gg::rt::fill_poison(d);

  gg::rt::LaunchSpec spec;
  spec.kernel_name = "wgmma_tile";
  spec.block = {128, 1, 1};
  spec.dynamic_smem_bytes = static_cast<unsigned>(1024 + (64 + n) * 128 + 64);
  gg::rt::TensorMapSpec map_a;
  map_a.operand = gg::rt::Operand::A;
  map_a.elem = in_type;
  map_a.box_rows = 64;
  map_a.box_cols = 64;
  gg::rt::TensorMapSpec map_b = map_a;
  map_b.operand = gg::rt::Operand::B;
  map_b.box_rows = static_cast<uint32_t>(n);
  spec.tensor_maps = {map_a, map_b};

  gg::rt::GemmProblem problem;
  problem.a = a.data();
  problem.b = b.data();
  problem.d = d.data();
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.in_type = in_type;
  problem.out_type = ElemType::F32;

  std::string source = replace_all(kSourceTemplate, "@N@", std::to_string(n));
  source = replace_all(source, "@IN@", gg::rt::elem_name(in_type));
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(source, "wgmma_tile"), spec);
  kernel.launch_and_wait(problem);

  CHECK(gg::rt::count_poisoned(d) == 0);
  const auto ref = gg::rt::host_gemm_reference(host_a, host_b, m, n, k);
  const auto got = d.download();
  const std::vector<double> got_rows = gg::rt::gather_rows(got, n, ref.rows);
  if (data == Data::SmallIntegers) {
    size_t wrong = 0;
    for (size_t i = 0; i < got_rows.size(); ++i) wrong += got_rows[i] != ref.values[i];
    CHECK(wrong == 0);  // integer products and sums are exact in fp32
  } else {
    CHECK(gg::rt::relative_frobenius_error(got_rows, ref.values) < 1e-5);
  }
}

}  // namespace

TEST_CASE("wgmma m64n64k16 bf16 from 128B-swizzled shared memory matches the host exactly") {
  check_wgmma(64, gg::rt::ElemType::BF16, Data::SmallIntegers);
  check_wgmma(64, gg::rt::ElemType::BF16, Data::Random);
}

TEST_CASE("other generated widths and f16 inputs") {
  for (int n : {8, 96, 128, 192, 256}) check_wgmma(n, gg::rt::ElemType::BF16, Data::SmallIntegers);
  for (int n : {64, 256}) check_wgmma(n, gg::rt::ElemType::F16, Data::SmallIntegers);
  check_wgmma(256, gg::rt::ElemType::F16, Data::Random);
}
