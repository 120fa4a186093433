#pragma once
// On-disk cache of compiled kernels. Directory: $GEMMGEN_CACHE_DIR, else
// $XDG_CACHE_HOME/gemmgen, else ~/.cache/gemmgen (read at every call). Each entry is
// <dir>/<key>.ggk: a header (magic, format version, payload length, payload checksum)
// then the payload. Entries are written to a temporary file and renamed into place,
// so readers never see a partial entry; an entry that fails its checks anyway (a disk
// problem, a hand edit) is deleted and reported as a miss.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gg::rt {

struct KernelCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t corrupt_entries_discarded = 0;
  uint64_t write_failures = 0;
};

KernelCacheStats kernel_cache_stats();
void reset_kernel_cache_stats();

// nullopt when no location can be derived from the environment (caching is then off).
std::optional<std::filesystem::path> kernel_cache_dir();

std::filesystem::path kernel_cache_entry_path(const std::filesystem::path& dir, std::string_view key);

// The payload stored under `key`, or nullopt (missing, unreadable or corrupt).
std::optional<std::string> kernel_cache_lookup(std::string_view key);

// Best effort: a cache that cannot be written counts a write failure and is skipped.
void kernel_cache_store(std::string_view key, std::string_view payload);

}  // namespace gg::rt
