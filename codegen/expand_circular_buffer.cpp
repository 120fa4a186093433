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

// The warp-specialized k loop's pipeline state (ExpandRoleRings) and how many steps it unrolls.
constexpr const char* kPipeStage = "pipe_stage";
constexpr const char* kPipePhase = "pipe_phase";
constexpr int kFp8KLoopUnroll = 8;

// `s` at stage `stage` of fill f: a wait for fill f to land takes parity `landed` (f % 2), the
// producer's wait before fill f for the release of fill f - 1 parity `released` ((f + 1) % 2,
// which a fresh barrier passes).
StmtPtr restage_with(const StmtPtr& s, ExprPtr stage, ExprPtr landed, ExprPtr released) {
  if (auto a = as<AcquireStage>(s)) {
    auto c = std::make_shared<AcquireStage>(*a);
    c->stage = stage;
    c->parity = a->to_fill ? released : landed;
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
// At the running count's fill f, and at the pipeline state's stage and phase (ExpandRoleRings).
StmtPtr restage(const StmtPtr& s, ExprPtr stage, ExprPtr fill) {
  return restage_with(s, std::move(stage), fill % imm(2), (fill + imm(1)) % imm(2));
}
StmtPtr restage_at(const StmtPtr& s, ExprPtr stage, const ExprPtr& phase) {
  return restage_with(s, std::move(stage), phase, imm(1) - phase);
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
  ExpandRoleRings(const PipelinePlan& pl, bool persistent, bool has_k_loop, bool empty_k_loops, int unroll)
      : pl_(pl), persistent_(persistent), has_k_loop_(has_k_loop), empty_k_loops_(empty_k_loops), unroll_(unroll) {}

  // A persistent role's pipeline state lives beside its running count, across its units: each
  // unit's k loop advances it by the unit's k tiles, as the unit advances k_done.
  StmtPtr mutate_Block(const std::shared_ptr<const Block>& b) override {
    std::vector<StmtPtr> out;
    for (const StmtPtr& s : b->body) {
      out.push_back(mutate(s));
      const Let* l = as<Let>(s);
      if (has_k_loop_ && l && l->name == "k_done") {
        const ExprPtr S = imm(pl_.stages);
        out.push_back(mutable_let(kPipeStage, l->value % S));
        out.push_back(mutable_let(kPipePhase, l->value / S % imm(2)));
      }
    }
    return block(out);
  }

  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    if (f->kind == LoopKind::Drain) return f;  // its stages and phases follow the fill count already
    if (f->kind == LoopKind::Tiles && f->dealt > 1) {
      // Units dealt in turn (ping-pong): k_done passes the other warpgroups' units too, so each
      // unit's k loop takes its state from the running count.
      dealt_ = true;
      StmtPtr out = Mutator::mutate_For(f);
      dealt_ = false;
      return out;
    }
    if (f->kind != LoopKind::KTiles) return Mutator::mutate_For(f);
    auto body = as<Block>(f->body);
    GG_INTERNAL_CHECK(body != nullptr, "k loop body is not a block");
    ExprPtr S = imm(pl_.stages), k = var(f->var);
    const int lag = pl_.mma_in_flight;
    GG_INTERNAL_CHECK(lag <= 1, "a release lag beyond one k step is not generated");
    // The pipeline state (CUTLASS's PipelineState): the stage of the running count's k tile and
    // the parity of its fill, set from the running count before the loop and advanced at the end
    // of each step, so no step divides by the stage count (whose quotient ptxas keeps in vector
    // registers, and with it every descriptor and barrier address of the step).
    const ExprPtr run0 = running(persistent_, imm(0));
    const ExprPtr stage = var(kPipeStage), phase = var(kPipePhase);
    bool computes = false;
    std::vector<StmtPtr> iteration;
    for (const auto& s : body->body) {
      if (auto c = as<ComputeTile>(s)) {
        computes = true;
        auto n = std::make_shared<ComputeTile>(*c);
        n->stage = stage;
        n->in_flight = lag;
        if (pl_.release_in_compute) n->release = release(stage);
        iteration.push_back(n);
      } else if (as<ReleaseStage>(s) && pl_.release_in_compute) {
        GG_INTERNAL_CHECK(lag == 0, "a release inside the compute cannot lag");
        GG_INTERNAL_CHECK(computes, "a k loop's release before its compute");
      } else if (as<ReleaseStage>(s) && lag > 0) {
        iteration.push_back(if_then(k >= imm(lag), release((stage + S - imm(lag)) % S)));
      } else {
        iteration.push_back(restage_at(s, stage, phase));
      }
    }
    iteration.push_back(assign(kPipeStage, stage + imm(1)));
    iteration.push_back(if_then(stage == S, block({assign(kPipeStage, imm(0)), assign(kPipePhase, imm(1) - phase)})));
    auto loop = std::make_shared<For>(*f);
    loop->body = block(iteration);
    loop->origin = f->origin + ", circular buffer of " + std::to_string(pl_.stages) + " stages" +
                   (computes ? "" : " (producer: waits for a released stage before each fill)");
    // FP8: unrolled by a few steps, so ptxas keeps the state and the descriptors in uniform
    // registers and schedules a step's waits under the previous step's promotion (at 4096 x 7168
    // x 16384 on an H100: 1145 -> 1350 TFLOP/s with the state above; the JIT's compile takes 0.6
    // -> 2.1 s, so 16-bit kernels, which gained nothing measurable, stay rolled).
    // (Their trip count is a constant now: kept a loop, as ptxas otherwise unrolls short ones whole.)
    if (unroll_ > 1) loop->unroll_by = unroll_;
    else loop->rolled = true;
    // Without a running count (one unit per CTA) the state starts with the loop; dealt units set it
    // from the count; else it is the role's (mutate_Block).
    StmtPtr state = block({});
    if (!persistent_) state = block({mutable_let(kPipeStage, imm(0)), mutable_let(kPipePhase, imm(0))});
    if (dealt_) state = block({assign(kPipeStage, run0 % S), assign(kPipePhase, run0 / S % imm(2))});
    if (!computes || lag == 0) return block({state, loop});
    ExprPtr last = running(persistent_, var("k_tiles") - imm(1));
    // A unit may run no k tiles (a variable-K group with none): then it holds no stage to release.
    StmtPtr release_last = release(last % S);
    if (empty_k_loops_) release_last = if_then(var("k_tiles") >= imm(1), release_last);
    return block({state, loop, std::make_shared<FinishCompute>(), release_last});
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
  int unroll_;          // the k loop's #pragma unroll (0: none)
  bool dealt_ = false;  // inside a tile loop dealt among warpgroups
};

}  // namespace

Kernel expand_circular_buffer(Kernel k) {
  const KernelPlan& p = k.plan;
  if (p.warp_specialized) {
    const int unroll = dtype_is_fp8(p.in) && p.promotion.on && p.k_tiles_constant() ? kFp8KLoopUnroll : 0;
    k.body = ExpandRoleRings(p.pipeline, p.persistent, !p.k_loop.empty(), p.k_per_unit(), unroll).mutate(k.body);
    return k;
  }
  if (p.k_loop.empty()) return k;  // one k tile: nothing to pipeline
  ExpandOneRoleRing ring(p.pipeline, p.persistent);
  k.body = ring.mutate(k.body);
  GG_INTERNAL_CHECK(ring.expanded, "no k loop found to circular-buffer");
  return k;
}

}  // namespace gg
