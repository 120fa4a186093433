#include "runtime/hash.h"

#include <string>

namespace gg::rt {

uint64_t fnv1a64(std::string_view bytes, uint64_t state) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  for (char c : bytes) {
    state ^= static_cast<unsigned char>(c);
    state *= kPrime;
  }
  return state;
}

uint64_t hash_field(uint64_t state, std::string_view piece) {
  return fnv1a64(piece, fnv1a64(std::to_string(piece.size()) + ":", state));
}

}  // namespace gg::rt
