#pragma once
// UE8M0 scale factors (one byte each, the value 2^(byte - 127): an fp32 power of two's exponent
// byte) in CUTLASS's Sm1xx block-scaled atoms, which sm_100a's tcgen05.cp .32x128b.warpx4 copies
// into Tensor Memory whole: per 128 rows and 4 blocks of 128 along K one atom of 512 bytes, the
// factor of row 32 j + i of the 128 and k block q of the 4 at byte 16 i + 4 j + q (row i of the
// copy's 32 x 16-byte image goes to TMEM lane i, its word j to column j); a 128-row block's atoms
// follow one another along K. No dependencies: the definition, the runtime and the tests share it.
#include <cstdint>

namespace gg::rt {

inline constexpr int64_t kUe8m0AtomBytes = 512, kUe8m0AtomRows = 128, kUe8m0AtomKBlocks = 4;

// Atoms along K for K elements (each k block 128 of them).
inline int64_t ue8m0_atoms_along_k(int64_t k) {
  const int64_t k_blocks = (k + 127) / 128;
  return (k_blocks + kUe8m0AtomKBlocks - 1) / kUe8m0AtomKBlocks;
}
// The bytes of a rows x k operand's factors.
inline int64_t ue8m0_atoms_bytes(int64_t rows, int64_t k) {
  return (rows + kUe8m0AtomRows - 1) / kUe8m0AtomRows * ue8m0_atoms_along_k(k) * kUe8m0AtomBytes;
}
// The byte of row r's factor of k block kb.
inline int64_t ue8m0_byte_index(int64_t k, int64_t r, int64_t kb) {
  const int64_t in_block = r % kUe8m0AtomRows;
  const int64_t atom = r / kUe8m0AtomRows * ue8m0_atoms_along_k(k) + kb / kUe8m0AtomKBlocks;
  return atom * kUe8m0AtomBytes + in_block % 32 * 16 + in_block / 32 * 4 + kb % kUe8m0AtomKBlocks;
}

}  // namespace gg::rt
