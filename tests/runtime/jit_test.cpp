// NVRTC needs no GPU: these tests compile sm_90a kernels on any machine.
#include "runtime/jit.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/embedded_headers.h"
#include "scratch_cache_dir.h"
#include "runtime/kernel_cache.h"

namespace {

using gg::testing::ScratchCacheDir;

const char* kTinyKernel = R"(
#include "gemm_args.h"
extern "C" __global__ void tiny(const __grid_constant__ GgGemmArgs args) {
  static_cast<float*>(args.d)[threadIdx.x] = args.alpha;
}
)";

// Kernels that call every device helper, so ptxas (inside NVRTC) checks the inline
// PTX of each for sm_90a. Every generated wgmma width and input type is called.
std::string all_helpers_kernel() {
  std::string source = R"(
#include "gemm_args.h"
#include "cluster.cuh"
#include "epilogue.cuh"
#include "fence.cuh"
#include "mbarrier.cuh"
#include "named_barrier.cuh"
#include "setmaxnreg.cuh"
#include "smem.cuh"
#include "stmatrix.cuh"
#include "tma.cuh"
#include "warp.cuh"
#include "smem_desc.h"
#include "wgmma.cuh"
#include "wgmma_mma.cuh"
using namespace gg::dev;
)";
  // One small kernel per width: ptxas handles many small kernels much faster than one
  // kernel holding every accumulator array.
  for (int n = 8; n <= 256; n += 8) {
    const std::string w = std::to_string(n), half = std::to_string(n / 2);
    source += "extern \"C\" __global__ void wgmma_n" + w + "(const __grid_constant__ GgGemmArgs args) {\n";
    source += "  float d[" + half + "] = {};\n";
    source += "  const unsigned long long desc = make_smem_desc(0, 16, 1024, kDescSwizzle128B);\n";
    source += "  wgmma_fence();\n";
    source += "  wgmma_m64n" + w + "k16_f32_bf16(d, desc, smem_desc_advance(desc, 32), 0);\n";
    source += "  wgmma_m64n" + w + "k16_f32_f16<0, 1>(d, desc, desc, 1);\n";
    source += "  wgmma_commit_group();\n  wgmma_wait_group<0>();\n";
    source += "  for (int i = 0; i < " + half + "; ++i) static_cast<float*>(args.d)[i * 128 + threadIdx.x] = d[i];\n}\n";
  }
  source += R"(
extern "C" __global__ void __launch_bounds__(256, 1) all_helpers(const __grid_constant__ GgGemmArgs args) {
  __shared__ alignas(1024) unsigned char tile[16384];
  __shared__ unsigned long long bars[2];
  const unsigned smem = smem_addr(tile), bar = smem_addr(&bars[0]), peer_bar = smem_addr(&bars[1]);
  if (warpgroup_index_in_block() == 0) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
  }
  if (elect_one_sync()) {
    mbarrier_init(bar, 1);
    mbarrier_init(peer_bar, cluster_num_ctas());
    fence_mbarrier_init();
  }
  cluster_arrive_relaxed();
  cluster_wait();
  if (threadIdx.x == 0) {
    prefetch_tensormap(&args.map_a);
    mbarrier_expect_tx(bar, 16384);
    mbarrier_arrive_expect_tx(bar, 0);
    tma_load_2d(smem, &args.map_a, bar, 0, 0);
    tma_load_2d_multicast(smem + 8192, &args.map_b, bar, 64, 0, static_cast<unsigned short>(0x3));
    mbarrier_arrive_cluster(peer_bar, cluster_ctarank() ^ 1u);
  }
  mbarrier_wait_parity(bar, 0);
  if (threadIdx.x == 32) mbarrier_arrive(bar);
  named_barrier_sync(1, 256);
  named_barrier_arrive(2, 128);
  unsigned x, y, z, w;
  ld_shared_v4_u32(smem + 16 * lane_index(), x, y, z, w);
  st_shared_v4_u32(smem + 16 * lane_index(), x + 1, y, z, w);
  st_shared_u32(smem, ld_shared_u32(smem) + warp_index_in_block() + cluster_id_x() + cluster_id_y() + cluster_id_z() +
                          map_shared_to_cta(smem, 0));
  stmatrix_x4(smem + 16 * lane_index(), pack2_bf16(1.0f, 2.0f), pack2_f16(3.0f, 4.0f), x, y);
  stmatrix_x4_trans(smem + 16 * lane_index(), z, w, x, y);
  fence_proxy_async_shared_cta();
  cluster_sync();
  if (threadIdx.x == 0) {
    tma_store_2d(&args.map_d, smem, 0, 0);
    bulk_commit_group();
    bulk_wait_group_read<0>();
    bulk_wait_group<0>();
  }
}
)";
  return source;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("NVRTC assembles every device helper for sm_90a") {
  gg::rt::JitOptions no_cache;
  no_cache.use_cache = false;
  const gg::rt::CompiledKernel kernel = gg::rt::compile_kernel(all_helpers_kernel(), "all_helpers", "sm_90a", no_cache);
  CHECK(kernel.lowered_name == "all_helpers");
  CHECK(kernel.cubin.size() > 1000);
  CHECK_FALSE(kernel.from_cache);
  // An ELF image: what cuModuleLoadData takes.
  CHECK(std::string(kernel.cubin.data() + 1, 3) == "ELF");
}

TEST_CASE("the device headers also compile pasted into one source, as an emitted .cu carries them") {
  std::string source;
  for (std::string_view name : gg::rt::device_header_names()) {
    if (name != "host_entry.cuh") source += gg::rt::device_header_source(name);
  }
  source += "extern \"C\" __global__ void pasted(const __grid_constant__ GgGemmArgs args) {\n"
            "  if (gg::dev::elect_one_sync()) static_cast<unsigned*>(args.d)[0] = gg::dev::cluster_ctarank();\n}\n";
  gg::rt::JitOptions no_cache;
  no_cache.use_cache = false;
  CHECK_NOTHROW(gg::rt::compile_kernel(source, "pasted", "sm_90a", no_cache));
}

// An emitted kernel embeds only the headers it calls into (codegen/device_helpers.cpp), so any
// subset must compile: each header stands alone after gemm_args.h.
TEST_CASE("each device header compiles alone after gemm_args.h") {
  gg::rt::JitOptions no_cache;
  no_cache.use_cache = false;
  for (std::string_view name : gg::rt::device_header_names()) {
    if (name == "host_entry.cuh" || name == "gemm_args.h") continue;
    CAPTURE(name);
    const std::string source = std::string(gg::rt::device_header_source("gemm_args.h")) +
                               std::string(gg::rt::device_header_source(name)) +
                               "extern \"C\" __global__ void alone(const __grid_constant__ GgGemmArgs args) {\n"
                               "  static_cast<float*>(args.d)[threadIdx.x] = args.alpha;\n}\n";
    CHECK_NOTHROW(gg::rt::compile_kernel(source, "alone", "sm_90a", no_cache));
  }
}

TEST_CASE("a second compile of the same kernel is a cache hit") {
  ScratchCacheDir cache("hit");
  const auto first = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK_FALSE(first.from_cache);
  CHECK(gg::rt::kernel_cache_stats().misses == 1);
  CHECK(std::filesystem::exists(gg::rt::kernel_cache_entry_path(cache.path(), first.cache_key)));

  const auto second = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK(second.from_cache);
  CHECK(gg::rt::kernel_cache_stats().hits == 1);
  CHECK(second.cubin == first.cubin);
  CHECK(second.lowered_name == first.lowered_name);
  CHECK(second.cache_key == first.cache_key);
}

TEST_CASE("the cache key changes with the source, kernel name, architecture and options") {
  ScratchCacheDir cache("key");
  const auto base = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK(gg::rt::compile_kernel(std::string(kTinyKernel) + "\n// edited\n", "tiny").cache_key != base.cache_key);
  CHECK(gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90").cache_key != base.cache_key);
  gg::rt::JitOptions with_lineinfo;
  with_lineinfo.extra_options = {"-lineinfo"};
  CHECK(gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", with_lineinfo).cache_key != base.cache_key);
  CHECK(gg::rt::kernel_cache_stats().hits == 0);
}

TEST_CASE("NVRTC's -minimal is on by default and can be turned off; it leaves the CUBIN unchanged") {
  gg::rt::JitOptions minimal, full;
  minimal.use_cache = full.use_cache = false;
  full.minimal = false;
  const auto a = gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", minimal);
  const auto b = gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", full);
  CHECK(a.cubin == b.cubin);
  CHECK(a.cache_key != b.cache_key);
  // -minimal leaves out texture objects: only the full build knows them.
  const std::string texture = "extern \"C\" __global__ void fetch(cudaTextureObject_t t, float* out) {\n"
                              "  out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);\n}\n";
  CHECK_THROWS_AS(gg::rt::compile_kernel(texture, "fetch", "sm_90a", minimal), gg::rt::JitError);
  CHECK_NOTHROW(gg::rt::compile_kernel(texture, "fetch", "sm_90a", full));
}

TEST_CASE("NVRTC's own cache can be turned off (-no-cache) without changing the CUBIN") {
  gg::rt::JitOptions cached, uncached;
  cached.use_cache = uncached.use_cache = false;
  uncached.nvrtc_cache = false;
  const auto a = gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", cached);
  const auto b = gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", uncached);
  CHECK(a.cubin == b.cubin);
  CHECK(a.cache_key != b.cache_key);  // the options are part of the key
}

TEST_CASE("a corrupt or truncated cache entry is discarded and rebuilt") {
  ScratchCacheDir cache("corrupt");
  const auto original = gg::rt::compile_kernel(kTinyKernel, "tiny");
  const auto entry = gg::rt::kernel_cache_entry_path(cache.path(), original.cache_key);
  const std::string good_bytes = read_bytes(entry);
  REQUIRE(good_bytes.size() > 64);

  SUBCASE("a flipped payload byte") {
    std::string bad = good_bytes;
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5A);
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
  }
  SUBCASE("a truncated entry") {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << good_bytes.substr(0, good_bytes.size() - 100);
  }
  SUBCASE("garbage") {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << "not a cache entry";
  }

  gg::rt::reset_kernel_cache_stats();
  const auto rebuilt = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK_FALSE(rebuilt.from_cache);
  CHECK(gg::rt::kernel_cache_stats().corrupt_entries_discarded == 1);
  CHECK(rebuilt.cubin == original.cubin);
  CHECK(read_bytes(entry) == good_bytes);  // rewritten whole

  const auto again = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK(again.from_cache);
}

TEST_CASE("the cache can be switched off per call") {
  ScratchCacheDir cache("off");
  gg::rt::JitOptions no_cache;
  no_cache.use_cache = false;
  gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", no_cache);
  CHECK_FALSE(gg::rt::compile_kernel(kTinyKernel, "tiny", "sm_90a", no_cache).from_cache);
  CHECK_FALSE(std::filesystem::exists(cache.path()));
}

TEST_CASE("a compile error reports NVRTC's log and the kernel") {
  ScratchCacheDir cache("error");
  try {
    gg::rt::compile_kernel("extern \"C\" __global__ void broken() { undeclared_thing(); }", "broken");
    FAIL("expected a JitError");
  } catch (const gg::rt::JitError& error) {
    const std::string message = error.what();
    CHECK(message.find("'broken'") != std::string::npos);
    CHECK(message.find("sm_90a") != std::string::npos);
    CHECK(message.find("undeclared_thing") != std::string::npos);
  }
  const bool entry_written = std::filesystem::exists(cache.path()) && !std::filesystem::is_empty(cache.path());
  CHECK_FALSE(entry_written);
}

TEST_CASE("invalid inline PTX is caught: NVRTC runs ptxas when it makes a CUBIN") {
  const char* bad_ptx = R"(extern "C" __global__ void bad_ptx() { asm volatile("no.such.instruction;"); })";
  CHECK_THROWS_AS(gg::rt::compile_kernel(bad_ptx, "bad_ptx", "sm_90a", gg::rt::JitOptions{false, {}, true}),
                  gg::rt::JitError);
}

TEST_CASE("a virtual architecture is refused: it yields no CUBIN") {
  CHECK_THROWS_AS(gg::rt::compile_kernel(kTinyKernel, "tiny", "compute_90a"), gg::rt::JitError);
}

TEST_CASE("version strings name NVRTC, the driver and gemmgen") {
  CHECK(gg::rt::nvrtc_version().rfind("nvrtc ", 0) == 0);
  CHECK(gg::rt::driver_version().rfind("driver ", 0) == 0);
  CHECK_FALSE(gg::rt::gemmgen_version().empty());
}

TEST_CASE("the cache key depends on nothing path-dependent: two cache directories, one key") {
  std::string first_key;
  {
    ScratchCacheDir cache("path_one");
    first_key = gg::rt::compile_kernel(kTinyKernel, "tiny").cache_key;
  }
  ScratchCacheDir other("path_two");
  const auto second = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK_FALSE(second.from_cache);  // a fresh directory, so it was compiled again
  CHECK(second.cache_key == first_key);
}

// A worker for the concurrency test below: does nothing unless started by it.
TEST_CASE("kernel cache worker (runs only inside the concurrency test)") {
  const char* rounds_text = std::getenv("GEMMGEN_CACHE_WORKER_ROUNDS");
  const char* expected_path = std::getenv("GEMMGEN_CACHE_WORKER_EXPECTED");
  if (rounds_text == nullptr || expected_path == nullptr) return;
  const std::string expected_bytes = read_bytes(expected_path);
  const std::vector<char> expected(expected_bytes.begin(), expected_bytes.end());
  const int rounds = std::atoi(rounds_text);
  int bad = 0;
  for (int i = 0; i < rounds; ++i) {
    const auto k = gg::rt::compile_kernel(kTinyKernel, "tiny");
    if (i % 10 == 3) {  // drop the entry now and then: the processes race to rebuild and rename it
      std::error_code ignored;
      std::filesystem::remove(gg::rt::kernel_cache_entry_path(std::getenv("GEMMGEN_CACHE_DIR"), k.cache_key), ignored);
    }
    bad += k.cubin != expected;
  }
  std::printf("cache worker: %d rounds, %d wrong\n", rounds, bad);
  CHECK(bad == 0);
}

// 8 processes x 50 rounds compile the same key against one cache directory, deleting the entry
// now and then: every compile returns the same CUBIN and every process exits cleanly.
TEST_CASE("8 processes compiling the same kernel at once all get the right CUBIN") {
  ScratchCacheDir cache("concurrent");
  const auto reference = gg::rt::compile_kernel(kTinyKernel, "tiny");
  const auto expected = cache.path() / "expected.cubin";
  std::ofstream(expected, std::ios::binary).write(reference.cubin.data(), static_cast<std::streamsize>(reference.cubin.size()));
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string command = "GEMMGEN_CACHE_WORKER_ROUNDS=50 GEMMGEN_CACHE_WORKER_EXPECTED='" + expected.string() +
                              "' '" + self + "' --test-case='kernel cache worker*' --no-version --minimal";
  std::vector<FILE*> workers;
  for (int p = 0; p < 8; ++p) workers.push_back(::popen(command.c_str(), "r"));
  int failures = 0, finished = 0;
  for (FILE* w : workers) {
    REQUIRE(w != nullptr);
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, w) != nullptr) {
      std::fputs(buffer, stdout);
      finished += std::string(buffer) == "cache worker: 50 rounds, 0 wrong\n";
    }
    failures += ::pclose(w) != 0;
  }
  CHECK(failures == 0);
  CHECK(finished == 8);  // every worker ran all its rounds
  const auto after = gg::rt::compile_kernel(kTinyKernel, "tiny");
  CHECK(after.cubin == reference.cubin);
}
