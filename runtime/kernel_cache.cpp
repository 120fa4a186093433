#include "runtime/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>

#include "runtime/hash.h"

namespace gg::rt {
namespace {

constexpr char kMagic[8] = {'G', 'G', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormatVersion = 1;

// magic, format version, reserved, payload length, payload checksum
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 4 + 8 + 8;

struct Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, corrupt{0}, write_failures{0};
};

Counters& counters() {
  static Counters c;
  return c;
}

template <class T>
void append_raw(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <class T>
T read_raw(const std::string& in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

std::string make_entry(std::string_view payload) {
  std::string entry(kMagic, sizeof(kMagic));
  append_raw<uint32_t>(entry, kFormatVersion);
  append_raw<uint32_t>(entry, 0);
  append_raw<uint64_t>(entry, payload.size());
  append_raw<uint64_t>(entry, fnv1a64(payload));
  entry.append(payload);
  return entry;
}

// The payload if `entry` is whole and its checksum matches.
std::optional<std::string> parse_entry(const std::string& entry) {
  if (entry.size() < kHeaderBytes || std::memcmp(entry.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  size_t offset = sizeof(kMagic);
  if (read_raw<uint32_t>(entry, offset) != kFormatVersion) return std::nullopt;
  offset += 8;
  const auto payload_bytes = read_raw<uint64_t>(entry, offset);
  const auto checksum = read_raw<uint64_t>(entry, offset + 8);
  if (entry.size() - kHeaderBytes != payload_bytes) return std::nullopt;
  std::string payload = entry.substr(kHeaderBytes);
  if (fnv1a64(payload) != checksum) return std::nullopt;
  return payload;
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

KernelCacheStats kernel_cache_stats() {
  Counters& c = counters();
  return {c.hits.load(), c.misses.load(), c.corrupt.load(), c.write_failures.load()};
}

void reset_kernel_cache_stats() {
  Counters& c = counters();
  c.hits = 0;
  c.misses = 0;
  c.corrupt = 0;
  c.write_failures = 0;
}

std::optional<std::filesystem::path> kernel_cache_dir() {
  if (std::string dir = env_or_empty("GEMMGEN_CACHE_DIR"); !dir.empty()) return std::filesystem::path(dir);
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) return std::filesystem::path(xdg) / "gemmgen";
  if (std::string home = env_or_empty("HOME"); !home.empty()) {
    return std::filesystem::path(home) / ".cache" / "gemmgen";
  }
  return std::nullopt;
}

std::filesystem::path kernel_cache_entry_path(const std::filesystem::path& dir, std::string_view key) {
  return dir / (std::string(key) + ".ggk");
}

std::optional<std::string> kernel_cache_lookup(std::string_view key) {
  Counters& c = counters();
  const auto dir = kernel_cache_dir();
  if (!dir) {
    ++c.misses;
    return std::nullopt;
  }
  const auto path = kernel_cache_entry_path(*dir, key);
  const auto entry = read_file(path);
  if (!entry) {
    ++c.misses;
    return std::nullopt;
  }
  auto payload = parse_entry(*entry);
  if (!payload) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    ++c.corrupt;
    ++c.misses;
    return std::nullopt;
  }
  ++c.hits;
  return payload;
}

void kernel_cache_store(std::string_view key, std::string_view payload) {
  const auto dir = kernel_cache_dir();
  if (!dir) return;
  std::error_code error;
  std::filesystem::create_directories(*dir, error);
  const auto final_path = kernel_cache_entry_path(*dir, key);
  // Unique per process and call, so concurrent writers never share a temporary file.
  static std::atomic<uint64_t> sequence{0};
  const auto temp_path = dir->string() + "/" + std::string(key) + ".tmp." + std::to_string(::getpid()) + "." +
                         std::to_string(sequence++) + "." + std::to_string(std::random_device{}());
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    const std::string entry = make_entry(payload);
    out.write(entry.data(), static_cast<std::streamsize>(entry.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(temp_path, error);
      ++counters().write_failures;
      return;
    }
  }
  std::filesystem::rename(temp_path, final_path, error);
  if (error) {
    std::filesystem::remove(temp_path, error);
    ++counters().write_failures;
  }
}

}  // namespace gg::rt
