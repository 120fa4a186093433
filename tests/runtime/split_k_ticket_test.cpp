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

// Claimed first (two splits): the ticket in the counter's low 16 bits, the stored count in its high
// 16 bits. Whatever order the claims and counts interleave in, exactly one claim is last, and the
// last sees every other split's count only once they all counted.
TEST_CASE("claim_is_last and others_stored: one last claim; the count complete only after every other split's") {
  for (unsigned splits = 1; splits <= 64; ++splits) {
    unsigned word = 0, last = 0;
    for (unsigned taken = 0; taken < splits; ++taken) {
      // a split that claimed already may have counted its sums in between: the low bits alone decide
      const unsigned before = word;
      last += gg::dev::claim_is_last(before, splits);
      word += 1;
      if (!gg::dev::claim_is_last(before, splits)) {
        CHECK_FALSE(gg::dev::others_stored(word, splits));
        word += gg::dev::stored_increment();
      }
    }
    CHECK(last == 1);
    CHECK(gg::dev::others_stored(word, splits));
    CHECK(gg::dev::others_stored(word - 1, splits));  // the last's own claim does not matter
    if (splits > 1) CHECK_FALSE(gg::dev::others_stored(word - gg::dev::stored_increment(), splits));
  }
}
