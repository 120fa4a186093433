#pragma once
// A 64-bit non-cryptographic hash (FNV-1a) for cache keys and payload checksums.
#include <cstdint>
#include <string_view>

namespace gg::rt {

constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ull;

// Continues a hash over `bytes`; chain calls to hash several pieces.
uint64_t fnv1a64(std::string_view bytes, uint64_t state = kFnv1aOffsetBasis);

// Hashes `piece` with its length first, so ("ab","c") and ("a","bc") differ.
uint64_t hash_field(uint64_t state, std::string_view piece);

}  // namespace gg::rt
