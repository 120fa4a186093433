#pragma once
// Shared by the tests that plant bugs into lowered kernels (tests/simulator): a Mutator that
// rewrites the nodes a function answers for, a rewrite of one node kind, check_sync's verdict on a
// kernel, and the simulation of a kernel with a bug planted.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "codegen/check_sync.h"
#include "codegen/kernel_ir.h"
#include "dsl/error.h"
#include "simulator/simulate.h"

namespace gg::testing {

// Rewrites the nodes `plant` answers for (nullptr deletes); the rest are kept.
class Plant : public kir::Mutator {
 public:
  using Fn = std::function<std::optional<kir::StmtPtr>(const kir::StmtPtr&)>;
  explicit Plant(Fn f) : f_(std::move(f)) {}
  int planted = 0;
#define GG_PLANT(N)                                                            \
  kir::StmtPtr mutate_##N(const std::shared_ptr<const kir::N>& n) override { \
    if (auto r = f_(n)) {                                                     \
      ++planted;                                                              \
      return *r;                                                              \
    }                                                                         \
    return Mutator::mutate_##N(n);                                            \
  }
  GG_KIR_NODES(GG_PLANT)
#undef GG_PLANT
 private:
  Fn f_;
};

template <class T>
std::shared_ptr<T> copy_of(const kir::StmtPtr& s) {
  return std::make_shared<T>(*kir::as<T>(s));
}

// A plant that rewrites every T node `matches` accepts by `change`, on a copy.
template <class T>
Plant::Fn rewrite(std::function<void(T&)> change, std::function<bool(const T&)> matches = [](const T&) { return true; }) {
  return [=](const kir::StmtPtr& s) -> std::optional<kir::StmtPtr> {
    const T* n = kir::as<T>(s);
    if (!n || !matches(*n)) return std::nullopt;
    auto c = std::make_shared<T>(*n);
    change(*c);
    return kir::StmtPtr(c);
  };
}

// A plant that deletes every T node `matches` accepts.
template <class T>
Plant::Fn drop(std::function<bool(const T&)> matches = [](const T&) { return true; }) {
  return [=](const kir::StmtPtr& s) -> std::optional<kir::StmtPtr> {
    const T* n = kir::as<T>(s);
    if (!n || !matches(*n)) return std::nullopt;
    return kir::StmtPtr(nullptr);
  };
}

// A plant that applies `first` where it answers, else `second`: one bug planted into two node kinds.
inline Plant::Fn either(Plant::Fn first, Plant::Fn second) {
  return [=](const kir::StmtPtr& s) -> std::optional<kir::StmtPtr> {
    if (auto r = first(s)) return r;
    return second(s);
  };
}

// The message of the InternalError check_sync raises on `k`; empty when it passes.
inline std::string sync_error(const Kernel& k) {
  try {
    check_sync(k);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

// check_sync's message (empty when it passed) and the simulation of a kernel with a bug planted.
struct Verdict {
  std::string sync;
  SimulationReport sim;
};
inline Verdict plant_into(const Kernel& good, const Definition& def, const Plant::Fn& bug) {
  Kernel k = good;
  Plant p(bug);
  k.body = p.mutate(k.body);
  REQUIRE(p.planted > 0);
  SimulateOptions o;
  o.max_steps = 5'000'000;
  return {sync_error(k), simulate_kernel(k, def, o)};
}

// The simulation of `good` with `bug` planted (`bug` must rewrite at least one node).
inline SimulationReport simulate_planted(const Kernel& good, const Definition& def, Plant::Fn bug) {
  Kernel k = good;
  Plant plant(std::move(bug));
  k.body = plant.mutate(k.body);
  REQUIRE(plant.planted > 0);
  return simulate_kernel(k, def);
}

}  // namespace gg::testing
