// Split-K's ticket rule (ticket_is_last in runtime/device/split_k.cuh), which the device
// helper and the CPU simulator share: of the CTAs sharing a tile, exactly the one taking the last ticket reduces it.
// (Broken to `taken == splits`, no CTA reduces and the simulator's split-K tests fail: 23 of their
// assertions, checked when the rule moved into the shared header.)
#include <doctest/doctest.h>

#include "runtime/device/split_k.cuh"

TEST_CASE("ticket_is_last: only the last of `splits` tickets, for every split count") {
  for (unsigned splits = 1; splits <= 16; ++splits) {
    unsigned last = 0;
    for (unsigned taken = 0; taken < splits; ++taken) last += gg::dev::ticket_is_last(taken, splits);
    CHECK(last == 1);
    CHECK(gg::dev::ticket_is_last(splits - 1, splits));
  }
}
