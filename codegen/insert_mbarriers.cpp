#include "codegen/insert_mbarriers.h"

#include "codegen/target/sm100/tcgen05.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

// Lowers the pipeline's abstract waits and releases per role: the consumers wait on the
// stage's full barrier and release it on its empty barrier (in every CTA that fills it);
// the producer waits on the empty barrier before a fill. Without warp roles, TMA stages
// are waited on their full barrier and released by a CTA barrier.
class LowerStageSync : public ElectionAwareMutator {
 public:
  explicit LowerStageSync(const KernelPlan& p) : p_(p) {}

  StmtPtr mutate_AcquireStage(const std::shared_ptr<const AcquireStage>& a) override {
    // With a TMEM accumulator and TMA, one thread issues the loads and one the MMAs: only their
    // warps wait for a stage (whole, so the lane elected next has waited itself). The other
    // threads have nothing to wait for, and nothing would keep them from falling two phases
    // behind (a parity wait then never returns).
    const bool one_warp_waits = p_.accumulator == Place::Tmem && p_.tma_load;
    if (a->to_fill) {
      GG_INTERNAL_CHECK(p_.pipeline.empty_barriers, "a producer acquire without empty barriers");
      StmtPtr w = wait(Barrier::Empty, a->stage, a->parity);
      return one_warp_waits && !elected_ ? by_warp(imm(0), w) : w;  // the loads' warp (lower_operand_copies)
    }
    if (p_.tma_load) {
      StmtPtr w = wait(Barrier::Full, a->stage, a->parity);
      return one_warp_waits && !elected_ ? by_warp(sm100::issuing_warp(p_), w) : w;  // or the MMA warp's loop
    }
    return block({std::make_shared<FenceProxyAsync>(), std::make_shared<SyncThreads>()});
  }

  StmtPtr mutate_ComputeTile(const std::shared_ptr<const ComputeTile>& c) override {
    if (!c->release) return c;
    auto n = std::make_shared<ComputeTile>(*c);
    n->release = mutate(c->release);
    return n;
  }

  StmtPtr mutate_ReleaseStage(const std::shared_ptr<const ReleaseStage>& r) override {
    // A TMEM accumulator's MMAs release their stage themselves: select_mma makes the release the
    // issuing thread's tcgen05.commit onto the stage's empty barrier.
    if (p_.accumulator == Place::Tmem) return r;
    if (!p_.pipeline.empty_barriers) return std::make_shared<SyncThreads>();
    // One elected thread per consumer warpgroup arrives, once in each CTA whose producer
    // writes into this stage (all CTAs of a multicast group).
    std::vector<StmtPtr> arrivals;
    const bool multicast = p_.multicast_a || p_.multicast_b;
    std::vector<ExprPtr> ctas;
    if (p_.cluster_2d()) {
      // Its column (the CTAs of its m tile, which write A's slices here) and the rest of its row
      // (those of its n tile, writing B's): X + Y - 1 CTAs.
      const int64_t x = p_.cluster.x;
      for (int64_t j = 0; j < p_.cluster.y; ++j) ctas.push_back(var("cta_rank_m") + imm(x * j));
      for (int64_t i = 1; i < x; ++i) ctas.push_back((var("cta_rank_m") + imm(i)) % imm(x) + var("cta_rank_n") * imm(x));
    } else if (multicast) {
      for (int cta = 0; cta < p_.cluster_size; ++cta) ctas.push_back(imm(cta));
    } else {
      ctas.push_back(nullptr);
    }
    for (const ExprPtr& cta : ctas) {
      auto arrive = std::make_shared<MbarrierArrive>();
      arrive->bar = {Barrier::Empty, r->stage};
      arrive->cta = cta;
      arrivals.push_back(arrive);
    }
    // FP8 with A's factors: each warp read the stage itself (LoadScaleFactors' ld.shared), so each
    // warp releases it.
    if (p_.pipeline.release_per_warp) return elect_one_each_warp(block(arrivals));
    return elect_one(block(arrivals), var("warpgroup") * imm(4));
  }

 private:
  // `s` on warp `warp` of the block only (all its lanes).
  static StmtPtr by_warp(const ExprPtr& warp, StmtPtr s) { return if_then(var("warp") == warp, std::move(s)); }
  static StmtPtr wait(Barrier array, ExprPtr stage, ExprPtr parity) {
    auto w = std::make_shared<MbarrierWait>();
    w->bar = {array, std::move(stage)};
    w->parity = std::move(parity);
    return w;
  }

  const KernelPlan& p_;
};

// Each role waits at the cluster barrier the init arrived on before its first barrier operation:
// right after its setmaxnreg, so that the barrier's round trip overlaps the register handover.
class WaitInEachRole : public Mutator {
 public:
  int roles = 0;
  StmtPtr mutate_WarpRole(const std::shared_ptr<const WarpRole>& r) override {
    auto wait = std::make_shared<ClusterSync>();
    wait->part = ClusterPart::Wait;
    std::vector<StmtPtr> body = {wait, r->body};
    if (auto b = as<Block>(r->body); b && !b->body.empty() && as<SetMaxNReg>(b->body.front())) {
      body = b->body;
      body.insert(body.begin() + 1, wait);
    }
    auto copy = std::make_shared<WarpRole>(*r);
    copy->body = block(body);
    ++roles;
    return copy;
  }
};

StmtPtr init_array(Barrier array, int stages, int arrivals) {
  std::vector<StmtPtr> init;
  for (int s = 0; s < stages; ++s) {
    auto i = std::make_shared<MbarrierInit>();
    i->bar = {array, imm(s)};
    i->arrivals = arrivals;
    init.push_back(i);
  }
  return block(init);
}

}  // namespace

Kernel insert_mbarriers(Kernel k) {
  const KernelPlan& p = k.plan;
  const PipelinePlan& pl = p.pipeline;
  k.body = LowerStageSync(p).mutate(k.body);
  if (!p.tma_load && !p.epilogue.staged_c && !pl.empty_barriers) return k;
  // Initialized by one thread before the role branch; the fence and the CTA (or cluster)
  // barrier publish them to every role and to the peers that multicast into them.
  std::vector<StmtPtr> init;
  std::string what = "mbarriers:";
  if (p.tma_load) {
    init.push_back(init_array(Barrier::Full, pl.stages, pl.full_arrivals));
    what += " one 'full' barrier per stage";
  }
  if (p.accumulator == Place::Tmem) {
    init.push_back(init_array(Barrier::Empty, pl.stages, pl.empty_arrivals));
    what += std::string(p.tma_load ? "," : "") + " one 'empty' barrier per stage (" +
            std::to_string(pl.empty_arrivals) + " arrival: the tcgen05.commit of the MMAs reading it)";
  } else if (p.tma_load && pl.empty_barriers) {
    init.push_back(init_array(Barrier::Empty, pl.stages, pl.empty_arrivals));
    what += ", one 'empty' barrier per stage (" + std::to_string(pl.empty_arrivals) + " arrivals: " +
            std::to_string(warpgroups_per_tile(p)) + " consumer warpgroup(s) x " +
            std::to_string(pl.empty_arrivals / warpgroups_per_tile(p)) + " CTA(s) reading the stage)";
  }
  if (p.epilogue.staged_c) {
    init.push_back(init_array(Barrier::C, p.staging.count(), 1));
    what += std::string(init.size() > 1 ? "," : "") +
            (p.staging.count() > 1 ? " one per staging buffer for C loaded into it" : " one for C loaded into the staging buffer");
  }
  if (p.accumulator == Place::Tmem) {
    const int accumulators = sm100::tmem_accumulators(p);
    init.push_back(init_array(Barrier::MmaDone, accumulators, 1));
    what += p.tmem_double_buffered
                ? ", one 'mma_done' barrier per accumulator buffer (the tcgen05.commit after a tile's last MMA)"
            : accumulators > 1 ? ", one 'mma_done' barrier per ping-pong consumer (the tcgen05.commit after its tile's last MMA)"
                               : ", one 'mma_done' barrier (the tcgen05.commit after a tile's last MMA)";
  }
  if (p.mma_warp) {
    // A CTA pair: the writeback threads of both CTAs arrive on the leader's.
    const int readers = compute_role(p).threads() * (p.cta_pair ? 2 : 1);
    init.push_back(init_array(Barrier::AccEmpty, sm100::tmem_accumulators(p), readers));
    what += ", one 'acc_empty' barrier per accumulator buffer (" + std::to_string(readers) + " arrivals: every " +
            (p.cta_pair ? "writeback thread of both CTAs of the pair" : "writeback thread") +
            " once its TMEM reads are done)";
  }
  init.push_back(std::make_shared<FenceMbarrierInit>());
  StmtPtr publish = std::make_shared<SyncThreads>();
  if (p.cluster_size > 1) {
    // Every thread arrives once the init is fenced; each role waits where it begins (the peers'
    // barriers must be initialized before it multicasts or arrives into them).
    WaitInEachRole waits;
    StmtPtr roles = waits.mutate(k.body);
    auto arrive = std::make_shared<ClusterSync>();
    if (waits.roles > 0) {
      arrive->part = ClusterPart::Arrive;
      k.body = roles;
    }
    publish = arrive;
  }
  std::vector<StmtPtr> body = {comment(what), elect_one(block(init)), publish, k.body};
  // No CTA of a cluster may exit while a peer can still arrive on its barriers: a cluster
  // barrier at exit, unless the producer's drain already waited for the peers' last releases.
  if (p.cluster_size > 1 && !pl.drain_at_exit)
    body.push_back(block({comment("every CTA of the cluster is done with its peers' barriers"),
                          std::make_shared<ClusterSync>()}));
  k.body = block(body);
  return k;
}

}  // namespace gg
