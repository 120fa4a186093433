#pragma once
// Points the kernel cache (runtime/kernel_cache.h) at a fresh directory for a test's lifetime.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/kernel_cache.h"

namespace gg::testing {

// Points the kernel cache at a fresh directory for the test's lifetime.
class ScratchCacheDir {
 public:
  explicit ScratchCacheDir(const std::string& tag)
      : dir_(std::filesystem::temp_directory_path() /
             ("gemmgen-cache-test-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    const char* old = std::getenv("GEMMGEN_CACHE_DIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    ::setenv("GEMMGEN_CACHE_DIR", dir_.c_str(), 1);
    gg::rt::reset_kernel_cache_stats();
  }
  ~ScratchCacheDir() {
    if (had_old_) {
      ::setenv("GEMMGEN_CACHE_DIR", old_.c_str(), 1);
    } else {
      ::unsetenv("GEMMGEN_CACHE_DIR");
    }
    std::filesystem::remove_all(dir_);
  }
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
  bool had_old_ = false;
  std::string old_;
};

}  // namespace gg::testing
