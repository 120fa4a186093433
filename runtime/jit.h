#pragma once
// Compiling kernel source to a CUBIN with NVRTC, through the on-disk kernel cache.
// Needs no GPU: NVRTC assembles for the named architecture itself.
#include <stdexcept>
#include <string>
#include <vector>

namespace gg::rt {

// NVRTC rejected the source; the message carries NVRTC's log.
class JitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CompiledKernel {
  std::string kernel_name;   // as written in the source (name expression)
  std::string lowered_name;  // the symbol to look up in the module
  std::string arch;
  std::vector<char> cubin;
  std::string log;         // NVRTC's warnings; empty for a cache hit
  std::string cache_key;   // 32 hex digits
  bool from_cache = false;
};

struct JitOptions {
  bool use_cache = true;
  std::vector<std::string> extra_options;  // appended to the NVRTC options, part of the cache key
  // NVRTC's -minimal: no texture or surface functions, no device-runtime (cudadevrt) functions or
  // device-side launches, no runtime API types. Emitted kernels use none of them; it cut NVRTC's
  // front end from about 22 to 16 ms on a v10 kernel with the same CUBIN, byte for byte.
  bool minimal = true;
  // NVRTC's own cache of compiled programs (CUDA 12.9+, kept in the driver's compute cache, so
  // only where a driver is installed). Off (-no-cache) to time a compile as a first use would.
  bool nvrtc_cache = true;
};

// Compiles `source` (which may #include any runtime/device header by its file name,
// e.g. "tma.cuh") for `arch` ("sm_90a", "sm_100a", ...) with -std=c++17 -default-device
// (-minimal unless options.minimal is false) and no fast math. Throws JitError on a compile error.
CompiledKernel compile_kernel(const std::string& source, const std::string& kernel_name,
                              const std::string& arch = "sm_90a", const JitOptions& options = {});

// "nvrtc <major>.<minor>"
std::string nvrtc_version();

// NVRTC compiles this process has run (compile_kernel calls the disk cache did not answer).
uint64_t nvrtc_compiles();

// gemmgen's version (the project's in CMakeLists.txt): with NVRTC's it makes cache entries of other
// builds stale; the first line of an emitted .cu and `gemmgen --version` name it.
std::string gemmgen_version();

// "driver 13.0", or "driver none" where no driver is installed: part of the cache key, so a
// driver change (which decides which CUBINs load) recompiles instead of loading a stale entry.
std::string driver_version();

}  // namespace gg::rt
