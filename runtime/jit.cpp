#include "runtime/jit.h"

#include <atomic>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "runtime/cuda_libraries.h"
#include "runtime/embedded_headers.h"
#include "runtime/hash.h"
#include "runtime/kernel_cache.h"

#ifndef GEMMGEN_VERSION_STRING
#error "GEMMGEN_VERSION_STRING is defined by runtime/CMakeLists.txt"
#endif

namespace gg::rt {
namespace {

void check_nvrtc(nvrtcResult status, const std::string& what) {
  if (status != NVRTC_SUCCESS) throw JitError(what + ": " + nvrtc_api().error_string(status));
}

class Program {
 public:
  Program(const std::string& source, const std::vector<const char*>& header_texts,
          const std::vector<const char*>& header_names) {
    check_nvrtc(nvrtc_api().create_program(&program_, source.c_str(), "gemmgen_kernel.cu",
                                   static_cast<int>(header_texts.size()), header_texts.data(), header_names.data()),
                "nvrtcCreateProgram");
  }
  ~Program() { nvrtc_api().destroy_program(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::vector<std::string> nvrtc_options(const std::string& arch, const JitOptions& options) {
  std::vector<std::string> all = {"--gpu-architecture=" + arch, "-std=c++17", "-default-device"};
  if (options.minimal) all.push_back("-minimal");
  if (!options.nvrtc_cache) all.push_back("-no-cache");
  all.insert(all.end(), options.extra_options.begin(), options.extra_options.end());
  return all;
}

// Everything the CUBIN depends on: source, includable headers, options, compiler.
std::string cache_key(const std::string& source, const std::string& kernel_name,
                      const std::vector<std::string>& options) {
  auto hash_all = [&](uint64_t state) {
    state = hash_field(state, source);
    state = hash_field(state, kernel_name);
    for (const std::string& option : options) state = hash_field(state, option);
    for (std::string_view name : device_header_names()) {
      state = hash_field(state, name);
      state = hash_field(state, device_header_source(name));
    }
    state = hash_field(state, nvrtc_version());
    state = hash_field(state, driver_version());
    return hash_field(state, gemmgen_version());
  };
  // Two differently seeded 64-bit hashes: a collision would silently run the wrong kernel.
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(hash_all(kFnv1aOffsetBasis)),
                static_cast<unsigned long long>(hash_all(fnv1a64("gemmgen second key seed"))));
  return hex;
}

// Payload layout: lowered-name length (u32), lowered name, cubin.
std::string encode_payload(const CompiledKernel& kernel) {
  const auto name_bytes = static_cast<uint32_t>(kernel.lowered_name.size());
  std::string payload(sizeof(name_bytes), '\0');
  std::memcpy(payload.data(), &name_bytes, sizeof(name_bytes));
  payload += kernel.lowered_name;
  payload.append(kernel.cubin.data(), kernel.cubin.size());
  return payload;
}

std::optional<CompiledKernel> decode_payload(const std::string& payload) {
  uint32_t name_bytes = 0;
  if (payload.size() < sizeof(name_bytes)) return std::nullopt;
  std::memcpy(&name_bytes, payload.data(), sizeof(name_bytes));
  if (payload.size() - sizeof(name_bytes) < name_bytes) return std::nullopt;
  CompiledKernel kernel;
  kernel.lowered_name = payload.substr(sizeof(name_bytes), name_bytes);
  kernel.cubin.assign(payload.begin() + static_cast<std::ptrdiff_t>(sizeof(name_bytes) + name_bytes), payload.end());
  return kernel;
}

CompiledKernel run_nvrtc(const std::string& source, const std::string& kernel_name, const std::string& arch,
                         const std::vector<std::string>& options) {
  // NVRTC wants NUL-terminated names and texts.
  std::vector<std::string> names, texts;
  for (std::string_view name : device_header_names()) {
    names.emplace_back(name);
    texts.emplace_back(device_header_source(name));
  }
  std::vector<const char*> header_names, header_texts;
  for (size_t i = 0; i < names.size(); ++i) {
    header_names.push_back(names[i].c_str());
    header_texts.push_back(texts[i].c_str());
  }
  Program program(source, header_texts, header_names);
  check_nvrtc(nvrtc_api().add_name_expression(program.get(), kernel_name.c_str()), "nvrtcAddNameExpression");

  std::vector<const char*> option_ptrs;
  for (const std::string& option : options) option_ptrs.push_back(option.c_str());
  const nvrtcResult compiled =
      nvrtc_api().compile_program(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());

  CompiledKernel kernel;
  size_t log_size = 0;
  check_nvrtc(nvrtc_api().get_program_log_size(program.get(), &log_size), "nvrtcGetProgramLogSize");
  kernel.log.resize(log_size);
  check_nvrtc(nvrtc_api().get_program_log(program.get(), kernel.log.data()), "nvrtcGetProgramLog");
  while (!kernel.log.empty() && (kernel.log.back() == '\0' || kernel.log.back() == '\n')) kernel.log.pop_back();
  if (compiled != NVRTC_SUCCESS) {
    throw JitError("NVRTC could not compile kernel '" + kernel_name + "' for " + arch + ": " +
                   nvrtc_api().error_string(compiled) + "\n" + kernel.log);
  }

  const char* lowered = nullptr;
  check_nvrtc(nvrtc_api().get_lowered_name(program.get(), kernel_name.c_str(), &lowered), "nvrtcGetLoweredName");
  kernel.lowered_name = lowered;
  size_t cubin_size = 0;
  check_nvrtc(nvrtc_api().get_cubin_size(program.get(), &cubin_size), "nvrtcGetCUBINSize");
  kernel.cubin.resize(cubin_size);
  check_nvrtc(nvrtc_api().get_cubin(program.get(), kernel.cubin.data()), "nvrtcGetCUBIN");
  return kernel;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtc_api().version(&major, &minor), "nvrtcVersion");
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

std::string gemmgen_version() { return GEMMGEN_VERSION_STRING; }

std::string driver_version() {
  int version = 0;
  // 0 when no driver is installed: NVRTC still compiles, and a later driver misses these entries
  if (cudaDriverGetVersion(&version) != cudaSuccess || version == 0) return "driver none";
  return "driver " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

namespace {
std::atomic<uint64_t> nvrtc_compile_count{0};
}  // namespace

uint64_t nvrtc_compiles() { return nvrtc_compile_count.load(std::memory_order_relaxed); }

CompiledKernel compile_kernel(const std::string& source, const std::string& kernel_name, const std::string& arch,
                              const JitOptions& options) {
  if (arch.rfind("sm_", 0) != 0) {
    throw JitError("compile_kernel needs a real architecture such as sm_90a to produce a CUBIN, got '" + arch + "'");
  }
  const std::vector<std::string> all_options = nvrtc_options(arch, options);
  const std::string key = cache_key(source, kernel_name, all_options);

  if (options.use_cache) {
    if (auto payload = kernel_cache_lookup(key)) {
      if (auto cached = decode_payload(*payload)) {
        cached->kernel_name = kernel_name;
        cached->arch = arch;
        cached->cache_key = key;
        cached->from_cache = true;
        return *std::move(cached);
      }
    }
  }
  nvrtc_compile_count.fetch_add(1, std::memory_order_relaxed);
  CompiledKernel kernel = run_nvrtc(source, kernel_name, arch, all_options);
  kernel.kernel_name = kernel_name;
  kernel.arch = arch;
  kernel.cache_key = key;
  if (options.use_cache) kernel_cache_store(key, encode_payload(kernel));
  return kernel;
}

}  // namespace gg::rt
