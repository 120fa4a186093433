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

// Stage and phase follow the running k-tile count (k_done: k tiles of earlier tiles of a
// persistent CTA), not the tile-local one.
ExprPtr running(bool persistent, ExprPtr k) { return persistent ? var("k_done") + std::move(k) : std::move(k); }

StmtPtr restage(const StmtPtr& s, ExprPtr stage, ExprPtr fill) {
  if (auto a = as<AcquireStage>(s)) {
    auto c = std::make_shared<AcquireStage>(*a);
    c->stage = stage;
    // The consumer waits for fill f to land (parity f % 2); the producer, before fill f,
    // waits for the release of fill f - 1 (parity (f + 1) % 2, which a fresh barrier passes).
    c->parity = a->to_fill ? (fill + imm(1)) % imm(2) : fill % imm(2);
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
  if (auto l = as<LoadTile>(s)) return retarget(*l, l->k_tile, stage);
  return s;
}

StmtPtr release(ExprPtr stage) {
  auto r = std::make_shared<ReleaseStage>();
  r->stage = std::move(stage);
  return r;
}

// One role loads and computes: loads run `prefetch` k tiles ahead of the MMAs, and the
// prologue fills the first stages before the loop.
class ExpandOneRoleRing : public Mutator {
 public:
  ExpandOneRoleRing(const PipelinePlan& pl, bool persistent) : pl_(pl), persistent_(persistent) {}
  bool expanded = false;

  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    if (f->kind != LoopKind::KTiles) return Mutator::mutate_For(f);
    auto body = as<Block>(f->body);
    GG_INTERNAL_CHECK(body != nullptr, "k loop body is not a block");
    // A fill: its loads, and the wait for the stage's release where a stage has an empty barrier.
    std::vector<StmtPtr> fill, rest;
    for (const auto& s : body->body) {
      const AcquireStage* a = as<AcquireStage>(s);
      if (as<LoadTile>(s) || (a && a->to_fill)) fill.push_back(s);
      else rest.push_back(s);
    }
    GG_INTERNAL_CHECK(!fill.empty(), "k loop without loads");
    expanded = true;
    ExprPtr S = imm(pl_.stages), P = imm(pl_.prefetch), k = var(f->var), k_tiles = var("k_tiles");
    ExprPtr run = running(persistent_, k);

    // The prologue's fill of k tile `fill` and the refill of k tile k + P, each into the stage its
    // running count names.
    std::vector<StmtPtr> prologue_loads, refill_loads;
    const ExprPtr first_run = running(persistent_, var("fill")), later_run = run + P;
    for (const StmtPtr& s : fill) {
      if (auto l = as<LoadTile>(s)) {
        ExprPtr fill_stage = persistent_ ? first_run % S : var("fill");
        prologue_loads.push_back(retarget(*l, var("fill"), fill_stage));
        refill_loads.push_back(retarget(*l, k + P, later_run % S));
      } else {
        prologue_loads.push_back(restage(s, first_run % S, first_run / S));
        refill_loads.push_back(restage(s, later_run % S, later_run / S));
      }
    }
    std::vector<StmtPtr> iteration;
    if (pl_.prefetch > 0)
      iteration.push_back(if_then(k + P < k_tiles, block(refill_loads)));
    else
      iteration.insert(iteration.end(), refill_loads.begin(), refill_loads.end());
    for (const auto& s : rest) iteration.push_back(restage(s, run % S, run / S));

    std::vector<StmtPtr> out;
    if (pl_.prefetch > 0)
      out.push_back(for_loop("fill", imm(0), min(P, k_tiles), block(prologue_loads),
                             "circular buffer prologue: fill " + std::to_string(pl_.prefetch) + " of " +
                                 std::to_string(pl_.stages) + " stages"));
    auto loop = std::make_shared<For>(*f);
    loop->body = block(iteration);
    loop->origin = f->origin + (pl_.stages > 1 ? ", circular buffer of " + std::to_string(pl_.stages) + " stages" : "");
    out.push_back(loop);
    return block(out);
  }

 private:
  const PipelinePlan& pl_;
  bool persistent_;
};

// Warp roles: the producer fills stage run % S after the consumers released its previous
// fill; the consumers wait for each fill, and release a stage once the MMAs reading it are
// done: `mma_in_flight` k steps later, and the last ones after the k loop.
class ExpandRoleRings : public Mutator {
 public:
  ExpandRoleRings(const PipelinePlan& pl, bool persistent, bool has_k_loop, bool empty_k_loops)
      : pl_(pl), persistent_(persistent), has_k_loop_(has_k_loop), empty_k_loops_(empty_k_loops) {}

  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    if (f->kind == LoopKind::Drain) return f;  // its stages and phases follow the fill count already
    if (f->kind != LoopKind::KTiles) return Mutator::mutate_For(f);
    auto body = as<Block>(f->body);
    GG_INTERNAL_CHECK(body != nullptr, "k loop body is not a block");
    ExprPtr S = imm(pl_.stages), k = var(f->var), run = running(persistent_, k);
    const int lag = pl_.mma_in_flight;
    GG_INTERNAL_CHECK(lag <= 1, "a release lag beyond one k step is not generated");
    bool computes = false;
    std::vector<StmtPtr> iteration;
    for (const auto& s : body->body) {
      if (auto c = as<ComputeTile>(s)) {
        computes = true;
        auto n = std::make_shared<ComputeTile>(*c);
        n->stage = run % S;
        n->in_flight = lag;
        if (pl_.release_in_compute) n->release = release(run % S);
        iteration.push_back(n);
      } else if (as<ReleaseStage>(s) && pl_.release_in_compute) {
        GG_INTERNAL_CHECK(lag == 0, "a release inside the compute cannot lag");
        GG_INTERNAL_CHECK(computes, "a k loop's release before its compute");
      } else if (as<ReleaseStage>(s) && lag > 0) {
        iteration.push_back(if_then(k >= imm(lag), release((run - imm(lag)) % S)));
      } else {
        iteration.push_back(restage(s, run % S, run / S));
      }
    }
    auto loop = std::make_shared<For>(*f);
    loop->body = block(iteration);
    loop->origin = f->origin + ", circular buffer of " + std::to_string(pl_.stages) + " stages" +
                   (computes ? "" : " (producer: waits for a released stage before each fill)");
    if (!computes || lag == 0) return loop;
    ExprPtr last = running(persistent_, var("k_tiles") - imm(1));
    // A unit may run no k tiles (a variable-K group with none): then it holds no stage to release.
    StmtPtr release_last = release(last % S);
    if (empty_k_loops_) release_last = if_then(var("k_tiles") >= imm(1), release_last);
    return block({loop, std::make_shared<FinishCompute>(), release_last});
  }

  // K fits one tile: the single k step still cycles through the stages across tiles.
  StmtPtr mutate_AcquireStage(const std::shared_ptr<const AcquireStage>& a) override { return one_step(a); }
  StmtPtr mutate_LoadTile(const std::shared_ptr<const LoadTile>& l) override { return one_step(l); }
  StmtPtr mutate_ComputeTile(const std::shared_ptr<const ComputeTile>& c) override { return one_step(c); }
  StmtPtr mutate_ReleaseStage(const std::shared_ptr<const ReleaseStage>& r) override { return one_step(r); }

 private:
  StmtPtr one_step(const StmtPtr& s) const {
    GG_INTERNAL_CHECK(!has_k_loop_, "a pipeline node outside the k loop");
    ExprPtr run = running(persistent_, imm(0));
    return restage(s, run % imm(pl_.stages), run / imm(pl_.stages));
  }

  const PipelinePlan& pl_;
  bool persistent_, has_k_loop_, empty_k_loops_;
};

}  // namespace

Kernel expand_circular_buffer(Kernel k) {
  const KernelPlan& p = k.plan;
  if (p.warp_specialized) {
    k.body = ExpandRoleRings(p.pipeline, p.persistent, !p.k_loop.empty(), p.k_per_unit()).mutate(k.body);
    return k;
  }
  if (p.k_loop.empty()) return k;  // one k tile: nothing to pipeline
  ExpandOneRoleRing ring(p.pipeline, p.persistent);
  k.body = ring.mutate(k.body);
  GG_INTERNAL_CHECK(ring.expanded, "no k loop found to circular-buffer");
  return k;
}

}  // namespace gg
