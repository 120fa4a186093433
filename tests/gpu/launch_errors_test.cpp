// Driver errors come back as exceptions naming the kernel and its launch shape.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "runtime/cuda_error.h"
#include "runtime/jit.h"
#include "runtime/launch.h"

namespace {

const char* kNoop = R"(
#include "gemm_args.h"
extern "C" __global__ void noop(const __grid_constant__ GgGemmArgs) {}
)";

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const gg::rt::CudaError& error) {
    return error.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a launch the driver refuses names the kernel, grid, block, cluster and smem") {
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  spec.grid = {7, 1, 1};
  spec.block = {2048, 1, 1};  // more threads than a block may have
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kNoop, "noop"), spec);
  const std::string message = error_of([&] { kernel.launch(gg::rt::GemmProblem{}); });
  CAPTURE(message);
  CHECK(contains(message, "kernel 'noop' (grid {7,1,1}, block {2048,1,1}, cluster {1,1,1}, 0 bytes dynamic smem)"));
  CHECK(contains(message, "cuLaunchKernelEx failed: CUDA_ERROR_"));
}

TEST_CASE("asking for more shared memory than the device has fails at load, naming the kernel") {
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  spec.dynamic_smem_bytes = 1u << 20;
  const std::string message =
      error_of([&] { gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kNoop, "noop"), spec); });
  CAPTURE(message);
  CHECK(contains(message, "kernel 'noop' (grid {1,1,1}, block {128,1,1}, cluster {1,1,1}, 1048576 bytes dynamic smem)"));
  CHECK(contains(message, "setting the dynamic shared memory limit failed"));
}

TEST_CASE("a tensor map that cannot be encoded names the kernel and the operand") {
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  gg::rt::TensorMapSpec map;
  map.operand = gg::rt::Operand::B;
  map.box_rows = 64;
  map.box_cols = 64;
  spec.tensor_maps = {map};
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kNoop, "noop"), spec);
  gg::rt::GemmProblem problem;  // B is null
  problem.m = problem.n = problem.k = 64;
  const std::string message = error_of([&] { kernel.launch(problem); });
  CAPTURE(message);
  CHECK(contains(message, "kernel 'noop'"));
  CHECK(contains(message, "operand B"));
  CHECK(contains(message, "base pointer is null"));
}

TEST_CASE("an FP8 kernel launched without its scale factors is refused before the launch") {
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  spec.reads_scale_b = true;
  spec.scale_b_array = "[ceil(N/128)][ceil(K/128)] fp32";
  const gg::rt::LoadedKernel kernel(gg::rt::compile_kernel(kNoop, "noop"), spec);
  const std::string b = error_of([&] { kernel.launch(gg::rt::GemmProblem{}); });
  CAPTURE(b);
  CHECK(contains(b, "the kernel reads B's FP8 scale factors (GemmProblem::scale_b, device memory, "
                    "[ceil(N/128)][ceil(K/128)] fp32)"));
  spec.reads_scale_b = false;
  gg::rt::TensorMapSpec scales;
  scales.operand = gg::rt::Operand::ScaleA;
  spec.tensor_maps = {scales};
  const gg::rt::LoadedKernel with_a(gg::rt::compile_kernel(kNoop, "noop"), spec);
  const std::string a = error_of([&] { with_a.launch(gg::rt::GemmProblem{}); });
  CAPTURE(a);
  CHECK(contains(a, "the kernel reads A's FP8 scale factors (GemmProblem::scale_a"));
}

TEST_CASE("a kernel with a saved output launched without it, or a symmetric one at N != M, is refused") {
  gg::rt::LaunchSpec spec;
  spec.kernel_name = "noop";
  spec.writes_aux = true;
  const gg::rt::LoadedKernel saves(gg::rt::compile_kernel(kNoop, "noop"), spec);
  const std::string aux = error_of([&] { saves.launch(gg::rt::GemmProblem{}); });
  CAPTURE(aux);
  CHECK(contains(aux, "the kernel stores a saved second output (GemmProblem::aux, device memory of D's type laid "
                      "out as D)"));
  spec.writes_aux = false;
  spec.symmetric = true;
  const gg::rt::LoadedKernel symmetric(gg::rt::compile_kernel(kNoop, "noop"), spec);
  gg::rt::GemmProblem problem;
  problem.m = 256;
  problem.n = 128;
  const std::string square = error_of([&] { symmetric.launch(problem); });
  CAPTURE(square);
  CHECK(contains(square, "the kernel computes D = A * A^T, M x M, but M=256 and N=128"));
}
