// The WGMMA shared-memory descriptor (runtime/device/smem_desc.h) against the PTX ISA's
// "Matrix Descriptor Format" for sm_90: each field at its bits, the swizzle-mode codes, and
// the k-step advance. The printer takes its swizzle code from the same header, so a wrong
// code here would be a wrong code in every emitted kernel.
#include "runtime/device/smem_desc.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>

using namespace gg::dev;

namespace {

uint64_t field(uint64_t desc, int lo, int bits) { return (desc >> lo) & ((uint64_t(1) << bits) - 1); }

}  // namespace

TEST_CASE("descriptor fields sit where the PTX ISA puts them") {
  const uint64_t d = make_smem_desc(0x3A40, 0x120, 0x400, kDescSwizzle64B, 5);
  CHECK(field(d, 0, 14) == 0x3A40 >> 4);   // start address >> 4, bits 0-13
  CHECK(field(d, 14, 2) == 0);
  CHECK(field(d, 16, 14) == 0x120 >> 4);   // leading dimension byte offset >> 4, bits 16-29
  CHECK(field(d, 30, 2) == 0);
  CHECK(field(d, 32, 14) == 0x400 >> 4);   // stride dimension byte offset >> 4, bits 32-45
  CHECK(field(d, 46, 3) == 0);
  CHECK(field(d, 49, 3) == 5);             // base offset, bits 49-51
  CHECK(field(d, 52, 10) == 0);
  CHECK(field(d, 62, 2) == 2);             // swizzle mode, bits 62-63
}

TEST_CASE("the 128B K-major descriptor the tutorial kernels use, as one number") {
  // smem 0x400, leading offset 16 (unused), stride 1024 (one 8-row atom of 128-byte rows), 128B
  CHECK(make_smem_desc(0x400, 16, 1024, kDescSwizzle128B) == 0x4000004000010040ull);
}

TEST_CASE("swizzle-mode codes: 0 none, 1 128B, 2 64B, 3 32B") {
  CHECK(descriptor_swizzle_mode(128) == 1);
  CHECK(descriptor_swizzle_mode(64) == 2);
  CHECK(descriptor_swizzle_mode(32) == 3);
  CHECK(descriptor_swizzle_mode(0) == 0);
  CHECK(descriptor_swizzle_mode(16) == 0);
}

TEST_CASE("fields are masked to their width and the advance moves only the start address") {
  // Shared-memory windows are below 256 KB: 18 address bits, 14 after the shift.
  const uint64_t d = make_smem_desc(0x3FFF0, 16, 1024, kDescSwizzle128B);
  CHECK(field(d, 0, 14) == 0x3FFF);
  CHECK(field(d, 16, 14) == 1);
  const uint64_t base = make_smem_desc(0x1000, 16, 1024, kDescSwizzle128B);
  const uint64_t step = smem_desc_advance(base, 32);  // the k16 step inside a 128-byte bf16 row
  CHECK(field(step, 0, 14) == (0x1000 + 32) >> 4);
  CHECK((step & ~uint64_t(0x3FFF)) == (base & ~uint64_t(0x3FFF)));
  CHECK(step == make_smem_desc(0x1000 + 32, 16, 1024, kDescSwizzle128B));
}

TEST_CASE("smem_desc_add of a buffer's descriptor is the descriptor of the moved address, hi word untouched") {
  // The printed kernels build every MMA operand descriptor this way: the buffer's descriptor plus
  // the byte offset / 16. Over the whole 228 KB window, each swizzle mode and both leading offsets
  // it must equal the descriptor made from the moved address.
  for (unsigned mode : {kDescSwizzle128B, kDescSwizzle64B, kDescSwizzle32B})
    for (unsigned leading : {16u, 8192u})
      for (unsigned base : {0u, 1024u, 0x24000u})
        for (unsigned offset = 0; base + offset < 228u * 1024u; offset += 16 * 97) {
          const uint64_t moved = smem_desc_add(make_smem_desc(base, leading, 1024, mode), offset / 16);
          REQUIRE(moved == make_smem_desc(base + offset, leading, 1024, mode));
        }
  // The add stays in the low word: the start address field at its top plus one carries into bit
  // 14 (reserved, which addresses inside shared memory never reach), not into the stride field.
  const uint64_t top = make_smem_desc(0x3FFF0, 16, 1024, kDescSwizzle128B);
  CHECK(field(smem_desc_add(top, 1), 32, 14) == 1024 >> 4);
}

namespace {

// The PTX ISA's tensor swizzling modes as tables: within one repeat of the pattern (8 rows of
// `swizzle_bytes`), row r's 16-byte chunk at position p holds chunk table[r][p] of that row (the
// XOR pattern is its own inverse, so it also says where chunk p goes). Written out by hand from
// the ISA's figures, not computed with the function under test.
constexpr int k128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
                            {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                            {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
constexpr int k64[8][4] = {{0, 1, 2, 3}, {0, 1, 2, 3}, {1, 0, 3, 2}, {1, 0, 3, 2},
                           {2, 3, 0, 1}, {2, 3, 0, 1}, {3, 2, 1, 0}, {3, 2, 1, 0}};
constexpr int k32[8][2] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}, {1, 0}, {1, 0}, {1, 0}, {1, 0}};

template <int Chunks>
void check_table(const int (&table)[8][Chunks], int swizzle_bytes) {
  CAPTURE(swizzle_bytes);
  for (unsigned repeat : {0u, 1u, 5u}) {  // the pattern repeats every 8 rows
    const unsigned base = repeat * 8u * unsigned(swizzle_bytes);
    for (unsigned r = 0; r < 8; ++r) {
      for (unsigned c = 0; c < unsigned(Chunks); ++c) {
        for (unsigned byte : {0u, 5u, 15u}) {  // a byte keeps its place inside its chunk
          CAPTURE(r);
          CAPTURE(c);
          const unsigned logical = base + r * unsigned(swizzle_bytes) + c * 16u + byte;
          const unsigned expected = base + r * unsigned(swizzle_bytes) + unsigned(table[r][c]) * 16u + byte;
          CHECK(swizzle_offset(logical, swizzle_bytes) == expected);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("swizzle_offset places 16-byte chunks as the PTX ISA's 128B, 64B and 32B swizzle tables do") {
  check_table(k128, 128);
  check_table(k64, 64);
  check_table(k32, 32);
  for (unsigned off : {0u, 17u, 1000u, 123456u}) CHECK(swizzle_offset(off, 0) == off);  // no swizzle
  static_assert(swizzle_offset(128 + 16, 128) == 128);  // row 1 swaps chunks 0 and 1; usable in constexpr
}
