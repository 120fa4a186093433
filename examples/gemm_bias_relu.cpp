// D = relu(A * B^T + Bias[n]) in bf16 on Hopper: define it, schedule it with primitive calls
// (tutorial v5, spelled out), print what the schedule does, write the standalone .cu and,
// when a GPU is present, run it and check it against cuBLAS.
//   example_gemm_bias_relu [OUT.cu]      (default gemm_bias_relu.cu)
#include <fstream>
#include <iostream>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/gemm_check.h"
#include "dsl/error.h"
#include "runtime/device_info.h"

int main(int argc, char** argv) try {
  using namespace gg;
  const int64_t M = 4096, N = 4096, K = 4096;

  // What to compute.
  Definition def;
  Tensor a = def.input("A", {M, K}, DType::BF16), b = def.input("B", {N, K}, DType::BF16);
  Tensor bias = def.input("Bias", {N}, DType::BF16);
  def.set_output(def.cast(def.relu(def.add_bias(def.matmul(a, b), bias, BiasAlong::Cols)), DType::BF16));

  // How: 128x128x64 tiles on a grid of CTAs, WGMMA, TMA in and out, a 2-stage k pipeline.
  Schedule s(def);
  s.tile(128, 128, 64).inline_op("bias").inline_op("relu").inline_op("cast").mma(64, 128, 16, Target::Sm90a);
  s.bind("k_o", Binding::Serial).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  s.cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma).cache_write("cast", Place::Shared, CopyMethod::Tma);
  s.circular_buffer("k_o", 2);

  ExplainOptions final_nests;
  final_nests.steps = false;
  std::cout << explain(s, final_nests);
  const std::string path = argc > 1 ? argv[1] : "gemm_bias_relu.cu";
  EmittedKernel kernel = emit_cuda(s);
  std::ofstream(path) << kernel.source;
  std::cout << "\nwrote " << path << ": " << kernel.kernel_name << ", host entry " << kernel.launch_function << "\n";

  if (!rt::gpu_available()) {
    std::cout << "no GPU: not run (compile " << path << " with nvcc -gencode=arch=compute_90a,code=sm_90a)\n";
    return 0;
  }
  CheckOptions timed;
  timed.bench = true;
  CheckReport report = check_on_gpu(s, timed);
  std::cout << format_report(report);
  return report.passed ? 0 : 1;
} catch (const gg::CompileError& e) {
  std::cerr << "error[" << e.rule() << "]: " << e.message() << "\n";
  return 2;
}
