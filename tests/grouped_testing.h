#pragma once
// Shared by the grouped-GEMM simulator tests (masked, contiguous, variable K): lowering on a
// device of few SMs (so persistent CTAs walk several units), a schedule without its cluster, the
// offsets of groups of given sizes, and the planted bugs every grouped walk must catch.
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "codegen/lower.h"
#include "dsl/schedule.h"
#include "planted_bugs.h"

namespace gg::testing {

inline Kernel lowered_on(const Schedule& s, int sms) {
  LowerOptions o;
  o.limits = hopper();
  o.limits.sms = sms;
  return lower(s, o);
}

inline Schedule without_cluster(const Schedule& s) {
  std::vector<Directive> kept;
  for (const Directive& d : s.directives())
    if (!std::holds_alternative<ClusterD>(d) && !std::holds_alternative<MulticastD>(d)) kept.push_back(d);
  return apply_directives(s.definition(), kept, {});
}

// The offsets of groups of these sizes, one after another from `first`.
inline std::vector<int64_t> offsets_of(const std::vector<int64_t>& sizes, int64_t first = 0) {
  std::vector<int64_t> offsets = {first};
  for (int64_t rows : sizes) offsets.push_back(offsets.back() + rows);
  return offsets;
}

// One role's pipeline state skips a stage at each unit's first k tile (as a running count that
// skipped a unit's k tiles would): the roles' stages and phases part.
inline Kernel with_pipeline_state_skipped(Kernel k) {
  int seen = 0;
  Plant state(rewrite<kir::Assign>(
      [&](kir::Assign& a) {
        if (seen++ == 0) a.value = a.value + (kir::var("k_tile") == kir::imm(0));
      },
      [](const kir::Assign& a) {  // the advance, pipe_stage + 1 (not its wrap to 0 or a re-set)
        return a.name == "pipe_stage" && kir::to_c(a.value).find("pipe_stage") != std::string::npos;
      }));
  k.body = state.mutate(k.body);
  GG_INTERNAL_CHECK(state.planted > 0, "no pipeline state to plant into");
  return k;
}

// The first role (the producer) alone maps its units one m tile on: it loads another tile's
// rows (and another group's operands) than the consumers compute and store.
inline Kernel with_producer_walk_shifted(Kernel k) {
  int seen = 0;
  Plant producer_only([&](const kir::StmtPtr& n) -> std::optional<kir::StmtPtr> {
    const kir::Let* l = kir::as<kir::Let>(n);
    if (!l || l->name != "virtual_m" || seen++ > 0) return std::nullopt;
    auto c = std::make_shared<kir::Let>(*l);
    c->value = l->value + kir::imm(1);
    return kir::StmtPtr(c);
  });
  k.body = producer_only.mutate(k.body);
  GG_INTERNAL_CHECK(producer_only.planted == 1, "no walk to plant into");
  return k;
}

// The named let, changed by `delta` rows (a group's bound read one row early or late).
inline Kernel with_let_shifted(Kernel k, const std::string& name, int64_t delta) {
  Plant shift(rewrite<kir::Let>([&](kir::Let& l) { l.value = l.value + kir::imm(delta); },
                                [&](const kir::Let& l) { return l.name == name; }));
  k.body = shift.mutate(k.body);
  GG_INTERNAL_CHECK(shift.planted > 0, "no let '" + name + "' to plant into");
  return k;
}

}  // namespace gg::testing
