// The cluster launch path: CTAs read their cluster identity, rank 0 multicasts a TMA
// tile into both CTAs' shared memory, and each CTA signals its peer through a remote
// mbarrier arrive before storing its half of the tile.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "runtime/cuda_error.h"
#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/reference.h"

namespace {

const char* kSource = R"(
#include "gemm_args.h"
#include "cluster.cuh"
#include "mbarrier.cuh"
#include "smem.cuh"
#include "tma.cuh"
using namespace gg::dev;

constexpr unsigned kTileBytes = 64 * 64 * 2;

extern "C" __global__ void __launch_bounds__(128, 1) cluster_multicast(const __grid_constant__ GgGemmArgs args) {
  extern __shared__ unsigned char smem[];
  const unsigned tile = (smem_addr(smem) + 1023u) & ~1023u;  // same offset in every CTA
  const unsigned full_bar = tile + kTileBytes;
  const unsigned peer_bar = full_bar + 8;
  const unsigned rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(full_bar, 1);
    mbarrier_init(peer_bar, 1);
    fence_mbarrier_init();
  }
  cluster_sync();  // both CTAs' barriers exist before any remote traffic reaches them

  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full_bar, kTileBytes);
    if (rank == 0) tma_load_2d_multicast(tile, &args.map_a, full_bar, 0, 64 * cluster_id_x(), 0x3);
    mbarrier_arrive_cluster(peer_bar, rank ^ 1u);
  }
  mbarrier_wait_parity(full_bar, 0);
  mbarrier_wait_parity(peer_bar, 0);

  if (threadIdx.x == 0) {
    unsigned* ids = static_cast<unsigned*>(const_cast<void*>(args.c)) + 4 * blockIdx.x;
    ids[0] = rank;
    ids[1] = cluster_num_ctas();
    ids[2] = cluster_id_x();
    ids[3] = map_shared_to_cta(tile, rank) == map_shared_to_cta(tile, rank ^ 1u) ? 0u : 1u;
    // Rank r stores rows [32 r, 32 r + 32) of the tile it received.
    tma_store_2d(&args.map_d, tile + rank * 32 * 128, 0, 64 * cluster_id_x() + 32 * rank);
    bulk_commit_group();
    bulk_wait_group_read<0>();
  }
  cluster_sync();  // no CTA leaves while its peer may still touch its shared memory
}
)";

}  // namespace

TEST_CASE("cluster {2,1,1}: identity, TMA multicast and remote mbarrier arrive") {
  using gg::rt::ElemType;
  gg::rt::DeviceBuffer a(ElemType::BF16, 128 * 64);
  gg::rt::DeviceBuffer d(ElemType::BF16, 128 * 64);
  gg::rt::DeviceBuffer ids(ElemType::F32, 4 * 4);
  const auto host_a = gg::rt::fill_random_uniform(a, 5);
  gg::rt::fill_poison(d);

  gg::rt::LaunchSpec spec;
  spec.kernel_name = "cluster_multicast";
  spec.grid = {4, 1, 1};
  spec.cluster = {2, 1, 1};
  spec.block = {128, 1, 1};
  spec.dynamic_smem_bytes = 64 * 64 * 2 + 1024 + 64;
  gg::rt::TensorMapSpec map_a;
  map_a.operand = gg::rt::Operand::A;
  map_a.box_rows = 64;
  map_a.box_cols = 64;
  gg::rt::TensorMapSpec map_d = map_a;
  map_d.operand = gg::rt::Operand::D;
  map_d.box_rows = 32;
  spec.tensor_maps = {map_a, map_d};

  gg::rt::GemmProblem problem;
  problem.a = a.data();
  problem.c = ids.data();
  problem.d = d.data();
  problem.m = 128;
  problem.n = 64;
  problem.k = 64;

  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kSource, "cluster_multicast"), spec);
  kernel.launch_and_wait(problem);

  const std::vector<float> id_values = ids.download();
  for (uint32_t block = 0; block < 4; ++block) {
    CAPTURE(block);
    CHECK(std::bit_cast<uint32_t>(id_values[4 * block + 0]) == block % 2);  // rank in cluster
    CHECK(std::bit_cast<uint32_t>(id_values[4 * block + 1]) == 2);          // CTAs per cluster
    CHECK(std::bit_cast<uint32_t>(id_values[4 * block + 2]) == block / 2);  // cluster id
    CHECK(std::bit_cast<uint32_t>(id_values[4 * block + 3]) == 1);          // peers' windows differ
  }
  CHECK(gg::rt::count_poisoned(d) == 0);
  CHECK(d.download() == host_a);  // each half came through the multicast
}

TEST_CASE("a grid that is not a whole number of clusters is refused with the launch shape") {
  const char* source = R"(
#include "gemm_args.h"
extern "C" __global__ void noop(const __grid_constant__ GgGemmArgs) {}
)";
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  spec.grid = {3, 1, 1};
  spec.cluster = {2, 1, 1};
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(source, "noop"), spec);
  CHECK_THROWS_WITH_AS(kernel.launch(gg::rt::GemmProblem{}),
                       "kernel 'noop' (grid {3,1,1}, block {128,1,1}, cluster {2,1,1}, 0 bytes dynamic smem): "
                       "the grid is not a whole number of clusters",
                       gg::rt::CudaError);
}
