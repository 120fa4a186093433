#include "runtime/cuda_libraries.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/cuda_error.h"

namespace gg::rt {
namespace {

// A library opened once and never closed (its functions are held for the process's life).
struct Library {
  void* handle = nullptr;
  std::string name;  // the soname, for messages
};

// The directory of the cudart this process runs with: the toolkit's libraries sit beside it
// when neither the loader's path nor the program's runpath names them.
std::string cudart_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// By soname first (LD_LIBRARY_PATH, the program's runpath, the loader's cache), then beside
// cudart, then in the toolkit gemmgen was built with.
Library open_library(const std::string& soname, const char* what) {
  std::vector<std::string> tried = {soname};
  for (const std::string& dir : {cudart_directory(), std::string(GEMMGEN_CUDA_LIBRARY_DIR)})
    if (!dir.empty()) tried.push_back((std::filesystem::path(dir) / soname).string());
  std::string reason;
  for (const std::string& path : tried) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return {handle, soname};
    const char* error = dlerror();
    if (reason.empty() && error != nullptr) reason = error;
  }
  std::string places;
  for (const std::string& path : tried) places += (places.empty() ? "" : ", ") + path;
  throw CudaError(std::string("cannot open ") + what + " (" + soname + "; tried " + places + "): " + reason);
}

template <class Fn>
void resolve(const Library& library, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(library.handle, symbol));
  if (fn == nullptr) throw CudaError(library.name + " has no function " + symbol + " (a toolkit older than gemmgen's?)");
}

CublasApi load_cublas() {
  const Library lib = open_library("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), "cuBLAS, the reference GEMM");
  CublasApi api;
  // cublas_v2.h names the handle functions' _v2 symbols.
  resolve(lib, api.create, "cublasCreate_v2");
  resolve(lib, api.destroy, "cublasDestroy_v2");
  resolve(lib, api.set_stream, "cublasSetStream_v2");
  resolve(lib, api.status_string, "cublasGetStatusString");
  resolve(lib, api.gemm_ex, "cublasGemmEx");
  resolve(lib, api.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
  resolve(lib, api.gemm_grouped_batched_ex, "cublasGemmGroupedBatchedEx");
  return api;
}

CublasLtApi load_cublaslt() {
  const Library lib =
      open_library("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), "cuBLASLt, the FP8 reference GEMM");
  CublasLtApi api;
  resolve(lib, api.create, "cublasLtCreate");
  resolve(lib, api.destroy, "cublasLtDestroy");
  resolve(lib, api.version, "cublasLtGetVersion");
  resolve(lib, api.status_name, "cublasLtGetStatusName");
  resolve(lib, api.matmul_desc_create, "cublasLtMatmulDescCreate");
  resolve(lib, api.matmul_desc_destroy, "cublasLtMatmulDescDestroy");
  resolve(lib, api.matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
  resolve(lib, api.matrix_layout_create, "cublasLtMatrixLayoutCreate");
  resolve(lib, api.matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
  resolve(lib, api.preference_create, "cublasLtMatmulPreferenceCreate");
  resolve(lib, api.preference_destroy, "cublasLtMatmulPreferenceDestroy");
  resolve(lib, api.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
  resolve(lib, api.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  resolve(lib, api.matmul, "cublasLtMatmul");
  return api;
}

NvrtcApi load_nvrtc() {
  const Library lib = open_library("libnvrtc.so." + std::to_string(CUDART_VERSION / 1000), "NVRTC, the JIT compiler");
  NvrtcApi api;
  resolve(lib, api.error_string, "nvrtcGetErrorString");
  resolve(lib, api.version, "nvrtcVersion");
  resolve(lib, api.create_program, "nvrtcCreateProgram");
  resolve(lib, api.destroy_program, "nvrtcDestroyProgram");
  resolve(lib, api.add_name_expression, "nvrtcAddNameExpression");
  resolve(lib, api.compile_program, "nvrtcCompileProgram");
  resolve(lib, api.get_program_log_size, "nvrtcGetProgramLogSize");
  resolve(lib, api.get_program_log, "nvrtcGetProgramLog");
  resolve(lib, api.get_lowered_name, "nvrtcGetLoweredName");
  resolve(lib, api.get_cubin_size, "nvrtcGetCUBINSize");
  resolve(lib, api.get_cubin, "nvrtcGetCUBIN");
  return api;
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = load_cublas();
  return api;
}

const CublasLtApi& cublaslt_api() {
  static const CublasLtApi api = load_cublaslt();
  return api;
}

const NvrtcApi& nvrtc_api() {
  static const NvrtcApi api = load_nvrtc();
  return api;
}

}  // namespace gg::rt
