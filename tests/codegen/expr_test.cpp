// exact_quotient: the printer divides shared-memory offsets by 16 with it, so a wrong quotient
// addresses the wrong bytes and a refused one costs instructions; both are pinned here.
#include <doctest/doctest.h>

#include <map>

#include "codegen/expr.h"

using namespace gg::kir;

namespace {
// Checks q == e / d wherever the variables take the listed values (ExprPtr's == builds IR, so
// pointers are compared through get()).
void check_quotient(const ExprPtr& e, int64_t d, const ExprPtr& q) {
  REQUIRE(q.get() != nullptr);
  for (int64_t s = 0; s < 4; ++s)
    for (int64_t kk = 0; kk < 8; ++kk)
      for (int64_t c = 0; c < 3; ++c) {
        const std::map<std::string, int64_t> vars = {{"s", s}, {"kk", kk}, {"c", c}};
        const int64_t whole = evaluate(e, vars);
        REQUIRE(whole % d == 0);
        REQUIRE(evaluate(q, vars) == whole / d);
      }
}
}  // namespace

TEST_CASE("exact_quotient carries the division into terms that are multiples of the divisor") {
  const ExprPtr s = var("s"), kk = var("kk"), c = var("c");
  // The shape of a wgmma operand's offset: stage, k step across and within 128-byte rows, row block.
  const ExprPtr offset = s * imm(32768) +
                         (kk * imm(32) / imm(128) * imm(32768) + (c * imm(2) + imm(1)) * imm(64) * imm(128)) +
                         kk * imm(32) % imm(128);
  const ExprPtr q = exact_quotient(offset, 16);
  check_quotient(offset, 16, q);
  CHECK(to_c(q).find("32768") == std::string::npos);  // the stage's stride became 2048
  CHECK(to_c(exact_quotient(imm(4096), 16)) == "256");
  check_quotient(kk * imm(32) - imm(16), 16, exact_quotient(kk * imm(32) - imm(16), 16));
  check_quotient(imm(48) * kk, 16, exact_quotient(imm(48) * kk, 16));
  CHECK(exact_quotient(kk, 1).get() == kk.get());
}

TEST_CASE("exact_quotient refuses what it cannot prove a multiple") {
  const ExprPtr kk = var("kk");
  CHECK(exact_quotient(kk * imm(8), 16).get() == nullptr);             // a multiple of 16 only for even kk
  CHECK(exact_quotient(kk * imm(32) + imm(8), 16).get() == nullptr);   // one term off
  CHECK(exact_quotient(kk * imm(32) / imm(2), 16).get() == nullptr);   // a division's quotient is not tracked
  CHECK(exact_quotient(kk * imm(32) % imm(24), 16).get() == nullptr);  // the modulus is not a multiple
  CHECK(exact_quotient(imm(40), 16).get() == nullptr);
  CHECK(exact_quotient(min(kk * imm(16), imm(64)), 16).get() == nullptr);
}
