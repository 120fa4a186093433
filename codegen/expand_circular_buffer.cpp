#include "codegen/expand_circular_buffer.h"

#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

std::shared_ptr<LoadTile> retarget(const LoadTile& l, ExprPtr k_tile, ExprPtr stage) {
  auto copy = std::make_shared<LoadTile>(l);
  copy->k_tile = std::move(k_tile);
  copy->stage = std::move(stage);
  return copy;
}

class ExpandRing : public Mutator {
 public:
  ExpandRing(int stages, int prefetch, bool persistent)
      : stages_(stages), prefetch_(prefetch), persistent_(persistent) {}
  bool expanded = false;

  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    if (f->var != "k_tile") return Mutator::mutate_For(f);
    auto body = as<Block>(f->body);
    GG_INTERNAL_CHECK(body != nullptr, "k loop body is not a block");
    std::vector<const LoadTile*> loads;
    std::vector<StmtPtr> rest;
    for (const auto& s : body->body) {
      if (auto l = as<LoadTile>(s)) loads.push_back(l);
      else rest.push_back(s);
    }
    GG_INTERNAL_CHECK(!loads.empty(), "k loop without loads");
    expanded = true;
    ExprPtr S = imm(stages_), P = imm(prefetch_), k = var("k_tile"), k_tiles = var("k_tiles");
    // Stage and phase follow the running k-tile count (k_done: k tiles of earlier tiles of a
    // persistent CTA), not the tile-local one.
    ExprPtr run = persistent_ ? var("k_done") + k : k;

    std::vector<StmtPtr> prologue_loads, refill_loads;
    for (const LoadTile* l : loads) {
      ExprPtr fill_stage = persistent_ ? (var("k_done") + var("fill")) % S : var("fill");
      prologue_loads.push_back(retarget(*l, var("fill"), fill_stage));
      refill_loads.push_back(retarget(*l, k + P, (run + P) % S));
    }
    std::vector<StmtPtr> iteration;
    if (prefetch_ > 0)
      iteration.push_back(if_then(k + P < k_tiles, block(refill_loads)));
    else
      iteration.insert(iteration.end(), refill_loads.begin(), refill_loads.end());
    for (const auto& s : rest) iteration.push_back(restage(s, run % S, (run / S) % imm(2)));

    std::vector<StmtPtr> out;
    if (prefetch_ > 0)
      out.push_back(for_loop("fill", imm(0), min(P, k_tiles), block(prologue_loads),
                             "circular buffer prologue: fill " + std::to_string(prefetch_) + " of " +
                                 std::to_string(stages_) + " stages"));
    auto loop = std::make_shared<For>(*f);
    loop->body = block(iteration);
    loop->origin = f->origin + (stages_ > 1 ? ", circular buffer of " + std::to_string(stages_) + " stages" : "");
    out.push_back(loop);
    return block(out);
  }

 private:
  static StmtPtr restage(const StmtPtr& s, ExprPtr stage, ExprPtr parity) {
    if (auto a = as<AcquireStage>(s)) {
      auto c = std::make_shared<AcquireStage>(*a);
      c->stage = stage;
      c->parity = parity;
      return c;
    }
    if (auto c = as<ComputeTile>(s)) {
      auto n = std::make_shared<ComputeTile>(*c);
      n->stage = stage;
      return n;
    }
    if (auto r = as<ReleaseStage>(s)) {
      auto n = std::make_shared<ReleaseStage>(*r);
      n->stage = stage;
      return n;
    }
    return s;
  }

  int stages_, prefetch_;
  bool persistent_;
};

}  // namespace

Kernel expand_circular_buffer(Kernel k) {
  if (k.plan.k_loop.empty()) return k;  // one k tile: nothing to pipeline
  ExpandRing ring(k.plan.stages, k.plan.prefetch, k.plan.persistent);
  k.body = ring.mutate(k.body);
  GG_INTERNAL_CHECK(ring.expanded, "no k loop found to circular-buffer");
  return k;
}

}  // namespace gg
