// check_sync: every legal kernel passes; bugs planted into the lowered IR (after lower(),
// before check_sync runs again) are caught with a message that names the barrier or buffer.
#include "codegen/check_sync.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "codegen/lower.h"
#include "dsl/error.h"
#include "planted_bugs.h"
#include "schedules/tutorial.h"

using namespace gg;
using namespace gg::kir;

namespace {

Definition gemm(int64_t m, int64_t n, int64_t k, DType out = DType::BF16) {
  return make_gemm(m, n, k, DType::BF16, out);
}

Schedule step(int v, int64_t m = 1024, int64_t n = 1024, int64_t k = 1024, DType out = DType::BF16) {
  return tutorial_schedule(v, gemm(m, n, k, out));
}

// Tutorial step v with another tile and, when `stages` is set, another pipeline depth: its
// directives replayed with the tile, the MMA's n and the circular buffer replaced.
Schedule variant(int v, const Definition& def, int64_t tm, int64_t tn, int64_t tk, int stages = 0) {
  Schedule base = tutorial_schedule(v, def);
  Schedule s(def);
  for (Directive d : base.directives()) {
    if (auto* t = std::get_if<TileD>(&d)) *t = {tm, tn, tk};
    if (auto* m = std::get_if<MmaD>(&d)) m->n = static_cast<int>(tn);
    if (auto* c = std::get_if<CircularBufferD>(&d); c && stages) *c = {c->axis, stages, stages - 1};
    s.apply(d);
  }
  return s;
}

// Tutorial step v with each directive passed through `edit` (which may change it).
Schedule edited(int v, const Definition& def, const std::function<void(Directive&)>& edit) {
  const Schedule base = tutorial_schedule(v, def);
  Schedule s(def);
  for (Directive d : base.directives()) {
    edit(d);
    s.apply(d);
  }
  return s;
}

// Tutorial step v at 1024^3 with `stages` stages of which `prefetch` are filled ahead.
Schedule with_pipeline(int v, int stages, int prefetch) {
  return edited(v, gemm(1024, 1024, 1024), [&](Directive& d) {
    if (auto* c = std::get_if<CircularBufferD>(&d)) *c = {c->axis, stages, prefetch};
  });
}

// Tutorial step v (v9 or v10) at 1024^3 with a cluster of `ctas` CTAs along x.
Schedule with_cluster(int v, int ctas) {
  return edited(v, gemm(1024, 1024, 1024), [&](Directive& d) {
    if (auto* c = std::get_if<ClusterD>(&d)) *c = {ctas, 1, 1};
  });
}

// Tutorial step v (v9 or v10) at 1024^3 multicasting `operand` instead of B.
Schedule with_multicast(int v, const std::string& operand) {
  return edited(v, gemm(1024, 1024, 1024), [&](Directive& d) {
    if (auto* c = std::get_if<MulticastD>(&d)) c->operand = operand;
  });
}

using testing::sync_error;

// ---- planting bugs

// Where a node sits: inside the k loop, inside an if.
struct Spot {
  int k_loop = 0, branch = 0;
};

// Rewrites the nodes of kind T that `pick` selects (at most `limit` of them) into what
// `edit` makes of a copy; an edit returning nullptr deletes the node.
template <class T>
class Plant : public Mutator {
 public:
  using Pick = std::function<bool(const T&, const Spot&)>;
  using Edit = std::function<StmtPtr(std::shared_ptr<T>)>;
  Plant(Pick pick, Edit edit, int limit) : pick_(std::move(pick)), edit_(std::move(edit)), limit_(limit) {}
  int edits = 0;

  StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
    const int k = f->var == "k_tile";
    place_.k_loop += k;
    StmtPtr out = Mutator::mutate_For(f);
    place_.k_loop -= k;
    return out;
  }
  StmtPtr mutate_If(const std::shared_ptr<const If>& i) override {
    ++place_.branch;
    StmtPtr out = Mutator::mutate_If(i);
    --place_.branch;
    return out;
  }
#define GG_PLANT(N)                                                \
  StmtPtr mutate_##N(const std::shared_ptr<const N>& n) override { \
    if constexpr (std::is_same_v<T, N>) {                          \
      if (edits < limit_ && pick_(*n, place_)) {                   \
        ++edits;                                                   \
        return edit_(std::make_shared<N>(*n));                     \
      }                                                            \
    }                                                              \
    return Mutator::mutate_##N(n);                                 \
  }
  GG_KIR_LEAF_NODES(GG_PLANT)
#undef GG_PLANT

 private:
  Pick pick_;
  Edit edit_;
  int limit_;
  Spot place_;
};

constexpr int kAll = 1 << 30;

template <class T>
Kernel plant(Kernel k, typename Plant<T>::Pick pick, typename Plant<T>::Edit edit, int limit = kAll) {
  Plant<T> p(std::move(pick), std::move(edit), limit);
  k.body = p.mutate(k.body);
  REQUIRE_MESSAGE(p.edits > 0, "the bug found nothing to plant into");
  return k;
}

template <class T>
bool anywhere(const T&, const Spot&) {
  return true;
}
template <class T>
StmtPtr remove(std::shared_ptr<T>) {
  return nullptr;
}

// The index of the consumer's wait on the full barrier in its k loop: the stage it reads now.
ExprPtr current_stage(const Kernel& k) {
  struct Find : Visitor {
    int k_loop = 0;
    ExprPtr stage;
    void visit_For(const For& f) override {
      k_loop += f.kind == LoopKind::KTiles;
      Visitor::visit_For(f);
      k_loop -= f.kind == LoopKind::KTiles;
    }
    void visit_MbarrierWait(const MbarrierWait& w) override {
      if (k_loop && w.bar.array == Barrier::Full) stage = w.bar.index;
    }
  } find;
  find.visit(k.body);
  REQUIRE(find.stage != nullptr);
  return find.stage;
}

// One-role kernels release a stage with the CTA barrier after the MMAs: the k loop's last one.
Kernel drop_last_sync_in_k_loop(Kernel k) {
  struct Drop : Mutator {
    int dropped = 0;
    StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
      auto out = std::make_shared<For>(*as<For>(Mutator::mutate_For(f)));
      auto body = as<Block>(out->body);
      if (f->var != "k_tile" || !body) return out;
      std::vector<StmtPtr> stmts = body->body;
      for (auto it = stmts.rbegin(); it != stmts.rend(); ++it)
        if (as<SyncThreads>(*it)) {
          stmts.erase(std::next(it).base());
          ++dropped;
          break;
        }
      out->body = block(stmts);
      return out;
    }
  } drop;
  k.body = drop.mutate(k.body);
  REQUIRE(drop.dropped > 0);
  return k;
}

// Moves every MbarrierInit from before the role branch to the start of the first role.
Kernel init_inside_first_role(Kernel k) {
  std::vector<StmtPtr> inits;
  k = plant<MbarrierInit>(k, anywhere<MbarrierInit>, [&](std::shared_ptr<MbarrierInit> n) -> StmtPtr {
    inits.push_back(n);
    return nullptr;
  });
  struct Prepend : Mutator {
    StmtPtr first;
    bool done = false;
    StmtPtr mutate_WarpRole(const std::shared_ptr<const WarpRole>& r) override {
      if (done) return r;
      done = true;
      auto copy = std::make_shared<WarpRole>(*r);
      copy->body = block({first, r->body});
      return copy;
    }
  } prepend;
  prepend.first = elect_one(block(inits));
  k.body = prepend.mutate(k.body);
  return k;
}

// In every block, each expect_tx moves behind the TMA loads that follow it.
Kernel expect_after_loads(Kernel k) {
  struct Reorder : Mutator {
    int moved = 0;
    StmtPtr mutate_Block(const std::shared_ptr<const Block>& b) override {
      std::vector<StmtPtr> stmts = as<Block>(Mutator::mutate_Block(b))->body;
      for (size_t i = 0; i + 1 < stmts.size(); ++i)
        if (as<MbarrierArriveExpectTx>(stmts[i]) && as<TmaLoad>(stmts[i + 1])) {
          std::swap(stmts[i], stmts[i + 1]);
          ++moved;
          ++i;
        }
      return block(stmts);
    }
  } reorder;
  k.body = reorder.mutate(k.body);
  REQUIRE(reorder.moved > 0);
  return k;
}

int64_t box_bytes(const Kernel& k, rt::Operand op) {
  for (const auto& t : k.launch.tensor_maps)
    if (t.operand == op) return int64_t(t.box_rows) * t.box_cols * rt::elem_bytes(t.elem);
  return 0;
}

bool ws(const Kernel& k) { return k.plan.warp_specialized; }
bool multicast(const Kernel& k) { return k.plan.multicast_a || k.plan.multicast_b; }
bool drains(const Kernel& k) { return k.plan.pipeline.drain_at_exit; }

// The producer's drain loop edited by `edit`, or deleted where `edit` is empty.
Kernel with_drain(Kernel k, std::function<void(std::shared_ptr<For>)> edit) {
  struct Edit : Mutator {
    std::function<void(std::shared_ptr<For>)> edit;
    int edits = 0;
    StmtPtr mutate_For(const std::shared_ptr<const For>& f) override {
      if (f->kind != LoopKind::Drain) return Mutator::mutate_For(f);
      ++edits;
      if (!edit) return nullptr;
      auto copy = std::make_shared<For>(*f);
      edit(copy);
      return copy;
    }
  } e;
  e.edit = std::move(edit);
  k.body = e.mutate(k.body);
  REQUIRE_MESSAGE(e.edits > 0, "no drain loop to plant into");
  return k;
}
bool ping_pong(const Kernel& k) { return k.plan.ping_pong; }

// A class of bug: where it applies, how it is planted, and the barrier or buffer its
// message must name.
struct BugClass {
  std::string name;
  std::function<bool(const Kernel&)> applies;
  std::function<Kernel(const Kernel&)> plant_into;
  std::function<std::string(const Kernel&)> names;
};

// The kernel without its AccumulatorFence nodes that follow a wgmma wait (`after_wait`) or that
// precede a wgmma fence.
Kernel drop_accumulator_fences(const Kernel& k, bool after_wait) {
  struct Drop : Mutator {
    bool after = true;
    int dropped = 0;
    StmtPtr mutate_Block(const std::shared_ptr<const Block>& b) override {
      auto out = std::make_shared<Block>();
      for (size_t i = 0; i < b->body.size(); ++i) {
        const bool next_to = after ? i > 0 && as<WgmmaWait>(b->body[i - 1])
                                   : i + 1 < b->body.size() && as<WgmmaFence>(b->body[i + 1]);
        if (as<AccumulatorFence>(b->body[i]) && next_to) {
          ++dropped;
          continue;
        }
        if (StmtPtr c = mutate(b->body[i])) out->body.push_back(c);
      }
      return out;
    }
  } drop;
  drop.after = after_wait;
  Kernel bad = k;
  bad.body = drop.mutate(k.body);
  REQUIRE(drop.dropped > 0);
  return bad;
}

std::vector<BugClass> bug_classes() {
  auto always = [](const Kernel&) { return true; };
  auto tma = [](const Kernel& k) { return k.plan.tma_load; };
  auto full = [](const Kernel&) { return std::string("full_bar["); };
  auto empty = [](const Kernel&) { return std::string("empty_bar["); };
  auto named = [](std::string s) { return [s](const Kernel&) { return s; }; };
  return {
      {"expect_tx bytes off by 2", tma,
       [](const Kernel& k) {
         return plant<MbarrierArriveExpectTx>(
             k, anywhere<MbarrierArriveExpectTx>,
             [](auto n) -> StmtPtr {
               n->bytes -= 2;
               return n;
             },
             1);
       },
       full},
      {"TmaLoad box map swapped (A reads map_b)", tma,
       [](const Kernel& k) {
         return plant<TmaLoad>(
             k, [](const TmaLoad& n, const Spot&) { return n.map == rt::Operand::A; },
             [](auto n) -> StmtPtr {
               n->map = rt::Operand::B;
               return n;
             },
             1);
       },
       // Boxes of different sizes break the byte count; equal ones the buffer's operand.
       [](const Kernel& k) {
         return std::string(box_bytes(k, rt::Operand::A) != box_bytes(k, rt::Operand::B) ? "full_bar[" : "smem_A");
       }},
      {"full_bar init arrivals +1", tma,
       [](const Kernel& k) {
         return plant<MbarrierInit>(
             k, [](const MbarrierInit& n, const Spot&) { return n.bar.array == Barrier::Full; },
             [](auto n) -> StmtPtr {
               n->arrivals += 1;
               return n;
             });
       },
       full},
      {"one full_bar stage's init arrivals -1", tma,
       [](const Kernel& k) {
         return plant<MbarrierInit>(
             k, [](const MbarrierInit& n, const Spot&) { return n.bar.array == Barrier::Full; },
             [](auto n) -> StmtPtr {
               n->arrivals -= 1;
               return n;
             },
             1);
       },
       full},
      {"empty_bar init arrivals +1", ws,
       [](const Kernel& k) {
         return plant<MbarrierInit>(
             k, [](const MbarrierInit& n, const Spot&) { return n.bar.array == Barrier::Empty; },
             [](auto n) -> StmtPtr {
               n->arrivals += 1;
               return n;
             });
       },
       empty},
      {"stage release deleted (k loop)", always,
       [](const Kernel& k) {
         if (!ws(k)) return drop_last_sync_in_k_loop(k);  // one role: the CTA barrier after the MMAs
         return plant<MbarrierArrive>(
             k, [](const MbarrierArrive& n, const Spot& p) { return p.k_loop && n.bar.array == Barrier::Empty; },
             remove<MbarrierArrive>);
       },
       [](const Kernel& k) {
         return std::string(ws(k) ? "empty_bar[" : k.plan.tma_load ? "full_bar[" : "smem_A");
       }},
      {"every empty_bar arrive deleted", ws,
       [](const Kernel& k) {
         return plant<MbarrierArrive>(
             k, [](const MbarrierArrive& n, const Spot&) { return n.bar.array == Barrier::Empty; },
             remove<MbarrierArrive>);
       },
       empty},
      {"remote arrive's cta dropped", multicast,
       [](const Kernel& k) {
         return plant<MbarrierArrive>(
             k, [](const MbarrierArrive& n, const Spot&) { return n.cta != nullptr; },
             [](auto n) -> StmtPtr {
               n->cta = nullptr;
               return n;
             },
             1);
       },
       empty},
      {"fence.proxy.async deleted", always,
       [](const Kernel& k) { return plant<FenceProxyAsync>(k, anywhere<FenceProxyAsync>, remove<FenceProxyAsync>); },
       [](const Kernel& k) { return std::string(k.plan.tma_store ? "smem_D" : "smem_A"); }},
      {"named barrier thread count wrong", [](const Kernel& k) { return k.plan.tma_store; },
       [](const Kernel& k) {
         return plant<NamedBarrierSync>(
             k, anywhere<NamedBarrierSync>,
             [](auto n) -> StmtPtr {
               n->threads += 128;
               return n;
             },
             1);
       },
       named("named barrier ")},  // the first one: the staging barrier, or a ping-pong turn
      {"named barrier id 0", [](const Kernel& k) { return k.plan.tma_store; },
       [](const Kernel& k) {
         return plant<NamedBarrierSync>(k, anywhere<NamedBarrierSync>, [](auto n) -> StmtPtr {
           n->id = imm(0);
           return n;
         });
       },
       named("named barrier 0")},
      {"named barrier id 16", [](const Kernel& k) { return k.plan.tma_store; },
       [](const Kernel& k) {
         return plant<NamedBarrierSync>(k, anywhere<NamedBarrierSync>, [](auto n) -> StmtPtr {
           n->id = imm(16);
           return n;
         });
       },
       named("named barrier 16")},
      {"wgmma swizzle 64, operands 128", [](const Kernel& k) { return k.plan.operand(rt::Operand::A).smem.swizzle_bytes == 128; },
       [](const Kernel& k) {
         return plant<WgmmaIssue>(k, anywhere<WgmmaIssue>, [](auto n) -> StmtPtr {
           n->a_layout.swizzle_bytes = n->b_layout.swizzle_bytes = 64;
           return n;
         });
       },
       named("smem_A")},
      {"staging swizzle differs from map_d", [](const Kernel& k) { return k.plan.tma_store; },
       [](const Kernel& k) {
         return plant<EpilogueStore>(k, anywhere<EpilogueStore>, [](auto n) -> StmtPtr {
           n->staging_swizzle_bytes /= 2;
           return n;
         });
       },
       named("smem_D")},
      {"stage released early (wgmma wait<1>)", tma,
       [](const Kernel& k) {
         if (!ws(k))  // one role: the CTA barrier release follows a wait that leaves the group running
           return plant<WgmmaWait>(
               k, [](const WgmmaWait& w, const Spot& p) { return p.k_loop && w.pending == 0; },
               [](auto n) -> StmtPtr {
                 n->pending = 1;
                 return n;
               });
         ExprPtr now = current_stage(k);
         return plant<MbarrierArrive>(
             k, [](const MbarrierArrive& n, const Spot& p) { return p.k_loop && n.bar.array == Barrier::Empty; },
             [now](auto n) -> StmtPtr {
               n->bar.index = now;
               return n;
             });
       },
       [](const Kernel& k) { return std::string(ws(k) ? "empty_bar[" : "full_bar["); }},
      {"full_bar wait parity flipped", tma,
       [](const Kernel& k) {
         return plant<MbarrierWait>(
             k, [](const MbarrierWait& n, const Spot&) { return n.bar.array == Barrier::Full; },
             [](auto n) -> StmtPtr {
               n->parity = (n->parity + imm(1)) % imm(2);
               return n;
             });
       },
       full},
      {"MbarrierInit moved after the role branch", tma, init_inside_first_role, named("full_bar[0]")},
      {"fence.mbarrier_init deleted", tma,
       [](const Kernel& k) {
         return plant<FenceMbarrierInit>(k, anywhere<FenceMbarrierInit>, remove<FenceMbarrierInit>);
       },
       named("full_bar")},
      {"expect_tx moved after its TMA loads", tma, expect_after_loads, full},
      {"phases restart every unit (the running count k_done never advances)",
       [](const Kernel& k) { return k.plan.persistent && !k.plan.warp_specialized; },
       [](const Kernel& k) {
         return plant<Assign>(
             k, [](const Assign& a, const Spot&) { return a.name == "k_done"; },
             [](auto n) -> StmtPtr {
               n->value = var("k_done");
               return n;
             });
       },
       named("full_bar[")},
      {"a ping-pong consumer's unit keeps its own pipeline state (not re-set past the other's k tiles)",
       [](const Kernel& k) { return k.plan.ping_pong; },
       [](const Kernel& k) {
         return plant<Assign>(
             k, [](const Assign& a, const Spot&) { return a.name == "pipe_stage" && to_c(a.value).find("k_done") != std::string::npos; },
             [](auto n) -> StmtPtr {
               n->value = var("pipe_stage");
               return n;
             });
       },
       named("full_bar[")},
      {"the pipeline state never advances (each k step waits on the same stage)",
       [](const Kernel& k) { return k.plan.warp_specialized && !k.plan.k_loop.empty(); },
       [](const Kernel& k) {
         return plant<Assign>(
             k, [](const Assign& a, const Spot&) { return a.name == "pipe_stage"; },
             [](auto n) -> StmtPtr {
               n->value = var("pipe_stage");
               return n;
             });
       },
       [](const Kernel& k) { return std::string(ws(k) ? "empty_bar[" : "full_bar["); }},
      {"accumulator fence after the wgmma wait dropped", [](const Kernel& k) { return k.plan.accumulator == Place::Registers; },
       [](const Kernel& k) { return drop_accumulator_fences(k, true); },
       named("without wgmma_fence_operand on the accumulator")},
      {"accumulator fence before the wgmma fence dropped", [](const Kernel& k) { return k.plan.accumulator == Place::Registers; },
       [](const Kernel& k) { return drop_accumulator_fences(k, false); },
       named("wgmma fence without wgmma_fence_operand")},
      {"producer's setmaxnreg takes registers (.inc)", ws,
       [](const Kernel& k) {
         return plant<SetMaxNReg>(
             k, [](const SetMaxNReg& n, const Spot&) { return !n.increase; },
             [](auto n) -> StmtPtr {
               n->increase = true;
               return n;
             });
       },
       named("role 'producer': setmaxnreg.inc")},
      {"consumers' setmaxnreg over the register file",
       [](const Kernel& k) { return ws(k) && compute_role(k.plan).warpgroups > 1; },
       [](const Kernel& k) {
         return plant<SetMaxNReg>(
             k, [](const SetMaxNReg& n, const Spot&) { return n.increase; },
             [](auto n) -> StmtPtr {
               n->regs = 256;
               return n;
             });
       },
       named("over the 65536 of the register file")},
      {"ClusterSync replaced by SyncThreads", [](const Kernel& k) { return k.plan.cluster_size > 1; },
       [](const Kernel& k) {
         return plant<ClusterSync>(
             k, anywhere<ClusterSync>, [](auto) -> StmtPtr { return std::make_shared<SyncThreads>(); }, 1);
       },
       named("full_bar")},
      {"ping-pong turn guard always false", ping_pong,
       [](const Kernel& k) {
         struct Skip : Mutator {
           int skipped = 0;
           StmtPtr mutate_If(const std::shared_ptr<const If>& i) override {
             if (!as<NamedBarrierSync>(i->then_body) || as<NamedBarrierSync>(i->then_body)->threads != 256)
               return Mutator::mutate_If(i);
             ++skipped;
             return if_then(imm(0) == imm(1), i->then_body);
           }
         } skip;
         Kernel out = k;
         out.body = skip.mutate(k.body);
         REQUIRE(skip.skipped > 0);
         return out;
       },
       named("without taking the turn")},
      {"ping-pong turn wait deleted", ping_pong,
       [](const Kernel& k) {
         return plant<NamedBarrierSync>(
             k, [](const NamedBarrierSync& n, const Spot&) { return n.threads == 2 * kWarpgroupThreads; },
             remove<NamedBarrierSync>);
       },
       named("named barrier 3")},
      {"ping-pong turn passed to itself", ping_pong,
       [](const Kernel& k) {
         return plant<NamedBarrierArrive>(k, anywhere<NamedBarrierArrive>, [](auto n) -> StmtPtr {
           n->id = imm(kTurnBarrier) + var("consumer");
           return n;
         });
       },
       named("named barrier 3")},
      {"ping-pong turn passed before the mainloop", ping_pong,
       [](const Kernel& k) {
         // The pass moves to just after the turn is taken, ahead of the k loop's waits.
         struct Move : Mutator {
           StmtPtr pass;
           StmtPtr mutate_Block(const std::shared_ptr<const Block>& b) override {
             std::vector<StmtPtr> stmts = as<Block>(Mutator::mutate_Block(b))->body;
             for (size_t i = 0; i < stmts.size(); ++i) {
               auto branch = as<If>(stmts[i]);
               if (branch && as<NamedBarrierArrive>(branch->then_body)) {
                 pass = stmts[i];
                 stmts.erase(stmts.begin() + static_cast<long>(i));
                 break;
               }
             }
             for (size_t i = 0; pass && i < stmts.size(); ++i) {
               auto branch = as<If>(stmts[i]);
               if (branch && as<NamedBarrierSync>(branch->then_body)) {
                 stmts.insert(stmts.begin() + static_cast<long>(i) + 1, pass);
                 break;
               }
             }
             return block(stmts);
           }
         } move;
         Kernel out = k;
         out.body = move.mutate(k.body);
         REQUIRE(move.pass != nullptr);
         return out;
       },
       named("after passing the turn on")},
      // The first bulk wait is the one before a staging buffer is rewritten (the last is at exit);
      // it matters where a buffer is written twice: a later tile, or a later lap of the buffers.
      {"staging rewritten a store early (wait <N>)",
       [](const Kernel& k) {
         return k.plan.tma_store && (k.plan.persistent || k.plan.staging.subtiles > k.plan.staging.buffers);
       },
       [](const Kernel& k) {
         return plant<BulkWaitRead>(
             k, [seen = 0](const BulkWaitRead&, const Spot&) mutable { return ++seen == 1; },
             [](auto n) -> StmtPtr {
               n->pending += 1;
               return n;
             });
       },
       named("while the TMA store of bulk group")},
      {"consumer warpgroups share one staging",
       [](const Kernel& k) { return k.plan.tma_store && k.plan.consumer_warpgroups > 1; },
       [](const Kernel& k) {
         return plant<EpilogueStore>(k, anywhere<EpilogueStore>, [](auto n) -> StmtPtr {
           n->staging.offset = imm(0);
           return n;
         });
       },
       named("smem_D")},
      {"a role's cluster wait deleted", [](const Kernel& k) { return k.plan.cluster_size > 1; },
       [](const Kernel& k) {
         return plant<ClusterSync>(
             k, [](const ClusterSync& c, const Spot&) { return c.part == ClusterPart::Wait; }, remove<ClusterSync>, 1);
       },
       named("before the role's barrier.cluster.wait")},
      // sm_90a clusters exit after the producer's drain instead of a cluster barrier (the sm_100a
      // kernels' exit barrier is planted out in tests/simulator/tcgen05_test.cpp).
      {"producer's drain deleted", drains, [](const Kernel& k) { return with_drain(k, nullptr); }, named("empty_bar")},
      {"drain one stage short", drains,
       [](const Kernel& k) {
         return with_drain(k, [](std::shared_ptr<For> f) { f->end = f->end - imm(1); });
       },
       named("drain never waits on empty_bar[")},
  };
}

struct Config {
  std::string name;
  Kernel kernel;
};

std::vector<Config> bug_configs() {
  return {
      {"v2", lower(step(2, 128, 128, 512))},
      {"v5", lower(step(5))},
      // K of 17 k tiles: a running count that never advances then lands on another phase
      {"v6", lower(step(6, 1024, 1024, 1088))},
      {"v8", lower(step(8))},
      {"v9", lower(step(9))},
      {"v10", lower(step(10))},
      {"v8 64x256", lower(variant(8, gemm(1024, 1024, 1024), 64, 256, 64))},
      {"pingpong", lower(ping_pong_schedule(gemm(1024, 1024, 1088)))},  // 17 k tiles: a skipped turn moves the phase
  };
}

}  // namespace

TEST_CASE("check_sync passes every tutorial kernel v1..v10") {
  struct Shape {
    int v;
    int64_t m, n, k;
  };
  const std::vector<Shape> shapes = {{1, 128, 128, 64},      {2, 128, 128, 512},    {3, 1024, 1024, 1024},
                                     {4, 1024, 1024, 1024},  {5, 1024, 1024, 1024}, {6, 1024, 1024, 1024},
                                     {7, 1024, 1024, 1024},  {8, 1024, 1024, 1024}, {9, 1024, 1024, 1024},
                                     {10, 1024, 1024, 1024}, {6, 1000, 704, 520},   {8, 384, 256, 64},
                                     {9, 384, 1024, 1024},   {10, 2048, 512, 4096}, {7, 4096, 4096, 4096}};
  for (const Shape& s : shapes) {
    CAPTURE(s.v);
    CAPTURE(s.m);
    CAPTURE(s.k);
    Kernel k;
    REQUIRE_NOTHROW(k = lower(step(s.v, s.m, s.n, s.k)));  // lower() ends with check_sync
    CHECK_MESSAGE(sync_error(k).empty(), sync_error(k));
  }
}

TEST_CASE("check_sync passes other tiles, k tiles, stage counts and output types") {
  const Definition def = gemm(1024, 1024, 1024);
  struct Named {
    std::string name;
    Schedule s;
  };
  Schedule one_role_two_wg = step(5);
  one_role_two_wg.split("m_i", 64, "m_wg", "m_mma").bind("m_wg", Binding::Warpgroup);
  Schedule warp_roles_only = step(5);
  warp_roles_only.warp_specialize(40, 232);
  std::vector<Named> schedules = {
      {"v5 k tile 32", variant(5, def, 128, 128, 32)},
      {"v8 k tile 32", variant(8, def, 128, 128, 32)},
      {"v10 k tile 32", variant(10, def, 128, 128, 32)},
      {"v5 k tile 128", variant(5, def, 128, 128, 128)},
      {"v8 k tile 128, 3 stages", variant(8, def, 128, 128, 128, 3)},
      {"v10 k tile 128, 3 stages", variant(10, def, 128, 128, 128, 3)},
      {"v5 3 stages", variant(5, def, 128, 128, 64, 3)},
      {"v8 3 stages", variant(8, def, 128, 128, 64, 3)},
      {"v10 3 stages", variant(10, def, 128, 128, 64, 3)},
      {"v8 tile 64x256", variant(8, def, 64, 256, 64)},
      {"v9 tile 64x256", variant(9, def, 64, 256, 64)},
      {"v5 f32 output", step(5, 1024, 1024, 1024, DType::F32)},
      {"v8 f32 output", step(8, 1024, 1024, 1024, DType::F32)},
      {"v10 f32 output", step(10, 1024, 1024, 1024, DType::F32)},
      {"v5 two warpgroups in one role", one_role_two_wg},
      {"v5 prefetch 1 of 3 stages", with_pipeline(5, 3, 1)},
      {"v10 prefetch 1 of 3 stages", with_pipeline(10, 3, 1)},
      {"v9 cluster of 4", with_cluster(9, 4)},
      {"v10 multicast A", with_multicast(10, "A")},
      {"v10 f16", tutorial_schedule(10, make_gemm(1024, 1024, 1024, DType::F16, DType::F16))},
      {"v5 + warp roles, not persistent", warp_roles_only},
      {"v10 tails 1000x1000x1000", step(10, 1000, 1000, 1000)},
      {"pingpong", ping_pong_schedule(def)},
      {"pingpong odd m tiles (no multicast)", ping_pong_schedule(gemm(640, 1024, 1024))},
      {"pingpong K of one tile", ping_pong_schedule(gemm(1024, 1024, 64))},
      {"pingpong f32 output", ping_pong_schedule(gemm(1024, 1024, 1024, DType::F32))},
      {"pingpong 3 stages, k tile 32", [&] {
         Schedule p = variant(9, def, 128, 128, 32, 3);
         p.ping_pong();
         return p;
       }()},
  };
  for (const Named& n : schedules) {
    CAPTURE(n.name);
    Kernel k;
    REQUIRE_NOTHROW(k = lower(n.s));
    CHECK_MESSAGE(sync_error(k).empty(), sync_error(k));
  }
}

TEST_CASE("check_sync catches bugs planted into lowered kernels, naming the barrier or buffer") {
  const std::vector<Config> configs = bug_configs();
  for (const Config& c : configs) REQUIRE_MESSAGE(sync_error(c.kernel).empty(), c.name << ": " << sync_error(c.kernel));

  std::ostringstream table;
  table << std::left << std::setw(44) << "planted bug";
  for (const Config& c : configs) table << std::setw(11) << c.name;
  table << "\n";
  int caught = 0, planted = 0;
  for (const BugClass& bug : bug_classes()) {
    table << std::setw(44) << bug.name;
    for (const Config& c : configs) {
      if (!bug.applies(c.kernel)) {
        table << std::setw(11) << "-";
        continue;
      }
      CAPTURE(bug.name);
      CAPTURE(c.name);
      ++planted;
      const std::string message = sync_error(bug.plant_into(c.kernel));
      const std::string wanted = bug.names(c.kernel);
      const bool ok = !message.empty() && message.find(wanted) != std::string::npos;
      CHECK_MESSAGE(!message.empty(), "not caught");
      CHECK_MESSAGE(message.find(wanted) != std::string::npos,
                    "the message does not name " << wanted << ": " << message);
      caught += ok;
      // GG_SHOW_SYNC_ERRORS=1 prints every message, to read what each planted bug reports.
      if (std::getenv("GG_SHOW_SYNC_ERRORS")) std::cout << bug.name << " / " << c.name << ": " << message << "\n";
      table << std::setw(11) << (ok ? "caught" : message.empty() ? "MISSED" : "unnamed");
    }
    table << "\n";
  }
  table << caught << " of " << planted << " planted bugs caught, each message naming its barrier or buffer\n";
  std::cout << table.str();
  CHECK(caught == planted);
}

TEST_CASE("check_sync messages say what broke: bytes, arrivals, the release after wait<1>") {
  Kernel k = lower(step(10));
  std::string bytes = sync_error(plant<MbarrierArriveExpectTx>(
      k, anywhere<MbarrierArriveExpectTx>,
      [](auto n) -> StmtPtr {
        n->bytes -= 2;
        return n;
      },
      1));
  CHECK_MESSAGE(bytes.find("expect_tx announces 49150 bytes per fill, but the TMA loads completing on it land 49152") !=
                    std::string::npos,
                bytes);
  std::string arrivals = sync_error(plant<MbarrierArrive>(
      k, [](const MbarrierArrive& n, const Spot&) { return n.cta != nullptr; },
      [](auto n) -> StmtPtr {
        n->cta = nullptr;
        return n;
      },
      1));
  CHECK_MESSAGE(
      arrivals.find("role 'consumer': 2 arrivals per release land in CTA 0, but MbarrierInit gives empty_bar 4") !=
          std::string::npos,
      arrivals);
  ExprPtr now = current_stage(k);
  std::string early = sync_error(plant<MbarrierArrive>(
      k, [](const MbarrierArrive& n, const Spot& p) { return p.k_loop && n.bar.array == Barrier::Empty; },
      [now](auto n) -> StmtPtr {
        n->bar.index = now;
        return n;
      }));
  CHECK_MESSAGE(early.find("after wgmma_wait_group<1>") != std::string::npos, early);
  CHECK_MESSAGE(early.find("role 'consumer'") != std::string::npos, early);
}
