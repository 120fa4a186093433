// The tcgen05 operands (runtime/device/tcgen05_desc.h) against the PTX ISA's tables: the sm_100
// shared-memory descriptor (Table 40: its version field and swizzle codes differ from sm_90's), the
// kind::f16 instruction descriptor (Table 42), TMEM addresses and the m64/m128 data-path rows. The
// printer emits calls to these and the simulator builds the same values, so a wrong bit here would
// be wrong in every sm_100a kernel; the simulator decodes them with its own reading of the tables.
#include "runtime/device/tcgen05_desc.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include "runtime/device/smem_desc.h"

using namespace gg::dev;

namespace {

uint64_t field(uint64_t v, int lo, int bits) { return (v >> lo) & ((uint64_t(1) << bits) - 1); }

}  // namespace

TEST_CASE("tcgen05 shared-memory descriptor: each field where Table 40 puts it") {
  const uint64_t d = make_tcgen05_smem_desc(0x3A40, 0x120, 0x400, kTcgen05Swizzle64B);
  CHECK(field(d, 0, 14) == 0x3A40 >> 4);  // start address
  CHECK(field(d, 14, 2) == 0);
  CHECK(field(d, 16, 14) == 0x120 >> 4);  // leading dimension byte offset
  CHECK(field(d, 30, 2) == 0);
  CHECK(field(d, 32, 14) == 0x400 >> 4);  // stride dimension byte offset
  CHECK(field(d, 46, 3) == 1);            // the fixed constant 0b001
  CHECK(field(d, 49, 3) == 0);            // base offset
  CHECK(field(d, 52, 1) == 0);            // leading dimension mode: relative
  CHECK(field(d, 53, 8) == 0);
  CHECK(field(d, 61, 3) == 4);            // 64B swizzle
  // The K-major 128B operand the tutorial kernels use, as one number.
  CHECK(make_tcgen05_smem_desc(0x400, 16, 1024, kTcgen05Swizzle128B) == 0x4000404000010040ull);
}

TEST_CASE("tcgen05 swizzle codes are 2 (128B), 4 (64B), 6 (32B), unlike wgmma's 1, 2, 3") {
  CHECK(tcgen05_swizzle_mode(128) == 2);
  CHECK(tcgen05_swizzle_mode(64) == 4);
  CHECK(tcgen05_swizzle_mode(32) == 6);
  CHECK(tcgen05_swizzle_mode(0) == 0);
  CHECK(tcgen05_swizzle_mode(16) == 0);
  for (int sb : {32, 64, 128}) {
    CAPTURE(sb);
    CHECK(tcgen05_swizzle_mode(sb) != descriptor_swizzle_mode(sb));
    // The same layout in both formats differs in the version field and the swizzle field only.
    const uint64_t sm100 = make_tcgen05_smem_desc(0x1000, 16, 8 * sb, tcgen05_swizzle_mode(sb));
    const uint64_t sm90 = make_smem_desc(0x1000, 16, 8 * sb, descriptor_swizzle_mode(sb));
    CHECK(field(sm100, 0, 46) == field(sm90, 0, 46));
  }
}

TEST_CASE("tcgen05 descriptor fields are masked to their width") {
  const uint64_t d = make_tcgen05_smem_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, 7);
  CHECK(field(d, 0, 14) == 0x3FFF);
  CHECK(field(d, 16, 14) == 0x3FFF);
  CHECK(field(d, 32, 14) == 0x3FFF);
  CHECK(field(d, 14, 2) == 0);
  CHECK(field(d, 30, 2) == 0);
  CHECK(field(d, 46, 3) == 1);
  CHECK(field(d, 61, 3) == 7);
}

TEST_CASE("kind::f16 instruction descriptor: each field where Table 42 puts it") {
  const uint32_t i = make_tcgen05_idesc_f16(kTcgen05TypeBF16, 128, 256, 0, 0);
  CHECK(field(i, 0, 4) == 0);   // dense, no saturate
  CHECK(field(i, 4, 2) == 1);   // D: F32
  CHECK(field(i, 6, 1) == 0);
  CHECK(field(i, 7, 3) == 1);   // A: BF16
  CHECK(field(i, 10, 3) == 1);  // B: BF16
  CHECK(field(i, 13, 2) == 0);  // no negation
  CHECK(field(i, 15, 1) == 0);  // A K-major
  CHECK(field(i, 16, 1) == 0);  // B K-major
  CHECK(field(i, 17, 6) == 256 >> 3);
  CHECK(field(i, 23, 1) == 0);
  CHECK(field(i, 24, 5) == 128 >> 4);
  CHECK(field(i, 29, 3) == 0);
  CHECK(i == 0x08400490u);
  const uint32_t t = make_tcgen05_idesc_f16(kTcgen05TypeF16, 64, 16, 1, 1);
  CHECK(field(t, 7, 3) == 0);   // A: F16
  CHECK(field(t, 10, 3) == 0);  // B: F16
  CHECK(field(t, 15, 1) == 1);  // A MN-major (transposed)
  CHECK(field(t, 16, 1) == 1);  // B MN-major
  CHECK(field(t, 17, 6) == 2);
  CHECK(field(t, 24, 5) == 4);
}

TEST_CASE("TMEM addresses: lane in bits 16-31, column in bits 0-15") {
  CHECK(tmem_address(0, 0, 0) == 0);
  CHECK(tmem_address(0x40, 32, 96) == (32u << 16) + 0x40 + 96);
  CHECK((tmem_address(0, 127, 511) >> 16) == 127);
  CHECK((tmem_address(0, 127, 511) & 0xFFFF) == 511);
}

TEST_CASE("data-path rows: m128 lane r holds row r; m64 a block's rows in half of each warp's lanes") {
  for (int lane = 0; lane < 128; ++lane) CHECK(tmem_lane_row(128, lane) == lane);
  CHECK(tmem_lane_row(64, 0) == 0);
  CHECK(tmem_lane_row(64, 15) == 15);
  CHECK(tmem_lane_row(64, 16) == 64);   // the second block, in lanes 16.. of the quarter
  CHECK(tmem_lane_row(64, 31) == 79);
  CHECK(tmem_lane_row(64, 32) == 16);   // warp 1's quarter: rows 16..31 of the first block
  CHECK(tmem_lane_row(64, 127) == 127);
  std::set<int> rows;
  for (int lane = 0; lane < 128; ++lane) rows.insert(tmem_lane_row(64, lane));
  CHECK(rows.size() == 128);  // two m64 blocks fill the 128 lanes, each row once
  CHECK(*rows.rbegin() == 127);
}
