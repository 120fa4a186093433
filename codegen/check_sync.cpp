#include "codegen/check_sync.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/resources.h"
#include "codegen/target/sm100/tcgen05.h"
#include "dsl/error.h"
#include "runtime/tensor_map.h"

namespace gg {

namespace {

using namespace kir;

std::string str(int64_t v) { return std::to_string(v); }

// ============================================================ values

// Bindings under which index expressions are evaluated: variables with a value, and lets
// whose value needs a binding made later (`consumer = warpgroup - 1`, per warpgroup).
struct Env {
  std::map<std::string, int64_t> vars;
  std::map<std::string, ExprPtr> lets;
};

std::optional<int64_t> value_of(const ExprPtr& e, const Env& env, int depth = 0) {
  if (!e || depth > 32) return std::nullopt;
  if (e->kind == ExprKind::Int) return e->value;
  if (e->kind == ExprKind::Var) {
    if (auto v = env.vars.find(e->name); v != env.vars.end()) return v->second;
    if (auto l = env.lets.find(e->name); l != env.lets.end()) return value_of(l->second, env, depth + 1);
    return std::nullopt;
  }
  if (e->kind == ExprKind::Wide || e->kind == ExprKind::Narrow) return value_of(e->a, env, depth);
  if (e->kind == ExprKind::Load) {  // a device array's element, bound like a variable
    const auto index = value_of(e->a, env, depth);
    if (!index) return std::nullopt;
    if (auto v = env.vars.find(element_name(e->name, *index)); v != env.vars.end()) return v->second;
    return std::nullopt;
  }
  auto a = value_of(e->a, env, depth), b = value_of(e->b, env, depth);
  if (!a || !b) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Add:
      return *a + *b;
    case ExprKind::Sub:
      return *a - *b;
    case ExprKind::Mul:
      return *a * *b;
    case ExprKind::Div:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(*a / *b);  // C semantics, as printed
    case ExprKind::Mod:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(*a % *b);
    case ExprKind::Min:
      return std::min(*a, *b);
    case ExprKind::Max:
      return std::max(*a, *b);
    case ExprKind::Lt:
      return int64_t(*a < *b);
    case ExprKind::Ge:
      return int64_t(*a >= *b);
    case ExprKind::Eq:
      return int64_t(*a == *b);
    case ExprKind::And:
      return int64_t(*a && *b);
    case ExprKind::Call:  // a device helper's host twin (the tile orders)
      return call_device_helper(e->name, *a, *b);
    default:
      return std::nullopt;
  }
}

// True when `e` names the running warpgroup, directly or through a let.
bool names_warpgroup(const ExprPtr& e, const Env& env, int depth = 0) {
  if (!e || depth > 32) return false;
  if (e->kind == ExprKind::Var) {
    if (e->name == "warpgroup") return true;
    auto l = env.lets.find(e->name);
    return l != env.lets.end() && names_warpgroup(l->second, env, depth + 1);
  }
  return names_warpgroup(e->a, env, depth) || names_warpgroup(e->b, env, depth);
}

// A let takes its value now when it can, else keeps its expression for later bindings.
void bind_let(Env& env, const Let& l) {
  if (auto v = value_of(l.value, env)) {
    env.vars[l.name] = *v;
    env.lets.erase(l.name);
  } else {
    env.lets[l.name] = l.value;
    env.vars.erase(l.name);
  }
}

// The checker keys its barrier state by the names the kernel declares.
const std::string kFull = barrier_name(Barrier::Full), kEmpty = barrier_name(Barrier::Empty);

std::string bar_text(const BarrierRef& b) { return barrier_name(b.array) + "[" + to_c(b.index) + "]"; }
std::string bar_text(const std::string& array, int64_t index) { return array + "[" + str(index) + "]"; }

// ============================================================ what the code is checked against

int swizzle_of(rt::Swizzle s) {
  switch (s) {
    case rt::Swizzle::B32:
      return 32;
    case rt::Swizzle::B64:
      return 64;
    case rt::Swizzle::B128:
      return 128;
    case rt::Swizzle::None:
      return 0;
  }
  return 0;
}

int64_t box_bytes(const rt::TensorMapSpec& t) {
  return int64_t(t.box_rows) * int64_t(t.box_cols) * rt::elem_bytes(t.elem);
}

std::string box_text(const std::string& map, const rt::TensorMapSpec& t) {
  return map + " box " + str(t.box_rows) + "x" + str(t.box_cols) + " " + rt::elem_name(t.elem) + " = " +
         str(box_bytes(t)) + " B";
}

// The operand a GgGemmArgs tensor-map field or a shared operand buffer belongs to: "map_b"
// and "smem_B" both name B.
std::string operand_letter(const std::string& name) {
  for (const char* prefix : {"map_", "smem_"}) {
    const std::string p = prefix;
    if (name.size() == p.size() + 1 && name.compare(0, p.size(), p) == 0)
      return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(name.back()))));
  }
  return "";
}


// The plan's roles, pipeline and buffers and the launch's tensor maps describe a lowered
// kernel; a kernel whose plan has no roles is a hand-assembled fragment (a test), and only
// the checks that need neither plan nor launch apply to it.
struct Facts {
  Facts(const KernelPlan& p, const rt::LaunchSpec& l) : plan(p), launch(l) {}
  const KernelPlan& plan;
  const rt::LaunchSpec& launch;
  bool declared = false;
  int cluster = 1;                           // CTAs of a cluster, each a possible sender and receiver
  int cta_warpgroups = 1;                    // warpgroups of the block
  std::map<std::string, int> init_arrivals;  // barrier array -> arrivals of one phase
  std::map<std::string, std::set<int64_t>> init_indices;

  const rt::TensorMapSpec* map(rt::Operand operand) const {
    for (const auto& t : launch.tensor_maps)
      if (t.operand == operand) return &t;
    return nullptr;
  }
  // Bytes of one pipeline stage of an operand buffer; 0 for other buffers.
  int64_t stage_bytes(const std::string& buffer) const {
    if (!declared) return 0;
    for (const StagedOperand& o : plan.operands)
      if (buffer == buffer_name(o.buffer)) return o.smem.bytes();
    return 0;
  }
  bool is_full(const std::string& array) const { return declared && array == kFull; }
  bool has_empty() const { return declared && plan.pipeline.empty_barriers; }
  bool is_empty(const std::string& array) const { return has_empty() && array == kEmpty; }
};

// Every element of a barrier array gets the same arrival count: stage indices are computed
// at run time, so a per-fill count can only be compared with one number per array.
class InitCollector : public Visitor {
 public:
  explicit InitCollector(Facts& f) : f_(f) {}
  void visit_MbarrierInit(const MbarrierInit& n) override {
    int64_t index = 0;
    GG_INTERNAL_CHECK(is_const(n.bar.index, &index),
                      "MbarrierInit " + bar_text(n.bar) + ": the index is not a constant");
    GG_INTERNAL_CHECK(n.arrivals >= 1, "MbarrierInit " + bar_text(n.bar) + " expects " + str(n.arrivals) +
                                           " arrivals: a phase needs at least one");
    auto [it, fresh] = f_.init_arrivals.emplace(barrier_name(n.bar.array), n.arrivals);
    GG_INTERNAL_CHECK(fresh || it->second == n.arrivals,
                      "MbarrierInit " + bar_text(n.bar) + " expects " + str(n.arrivals) + " arrivals but another " +
                          barrier_name(n.bar.array) + " stage expects " + str(it->second) +
                          ": stage indices are computed at run time, so every stage must expect the same arrivals");
    GG_INTERNAL_CHECK(f_.init_indices[barrier_name(n.bar.array)].insert(index).second,
                      "MbarrierInit " + bar_text(n.bar) + " initializes the barrier twice");
  }

 private:
  Facts& f_;
};

Facts make_facts(const Kernel& k) {
  Facts f(k.plan, k.launch);
  f.declared = !k.plan.roles.empty();
  f.cluster = std::max(1, k.plan.cluster_size);
  f.cta_warpgroups = std::max(1, k.plan.threads / kWarpgroupThreads);
  InitCollector(f).visit(k.body);
  return f;
}

// ============================================================ roles

// The threads that run a statement: a warp role, or the whole CTA outside the role branch.
struct RoleView {
  std::string name;
  int first = 0, warpgroups = 1;
  int threads() const { return warpgroups * kWarpgroupThreads; }
  int first_warp() const { return first * 4; }
  int end_warp() const { return (first + warpgroups) * 4; }
};

RoleView whole_cta(const Facts& f) { return {"(outside the warp roles)", 0, f.cta_warpgroups}; }

// How many threads run the body of `e` in `role`: one per distinct warp of the role that the
// warp expression names across the role's warpgroups (`warpgroup * 4`: one per warpgroup; a
// constant: one; a warp outside the role: none).
int64_t elections(const ElectOne& e, const RoleView& role, const Env& env) {
  if (e.each_warp) return role.end_warp() - role.first_warp();
  std::set<int64_t> warps;
  for (int wg = role.first; wg < role.first + role.warpgroups; ++wg) {
    Env at = env;
    at.vars["warpgroup"] = wg;
    auto w = value_of(e.warp, at);
    GG_INTERNAL_CHECK(w.has_value(), "ElectOne in role '" + role.name + "': cannot tell which warp " + to_c(e.warp) +
                                         " elects (a variable the checker does not know)");
    if (*w >= role.first_warp() && *w < role.end_warp()) warps.insert(*w);
  }
  return static_cast<int64_t>(warps.size());
}

// ============================================================ structure: counts per fill and release

// What one fill or release does to one barrier element, per receiving CTA of the cluster.
struct Tally {
  std::string array, role;
  bool tx = false;                        // an expect_tx or a TMA load completes on it
  std::vector<int64_t> announced;         // per CTA: expect_tx bytes of its fill
  std::vector<int64_t> arrivals, landed;  // per receiving CTA
  std::string loads;                      // the loads, for messages
};

// One iteration of a loop, one branch of an if, or a role's straight-line code: the unit in
// which a fill announces and lands its bytes and a release makes its arrivals.
struct Scope {
  std::map<std::string, Tally> bars;  // by the barrier element's text, "full_bar[(k_tile % 2)]"
  std::set<std::string> expected;     // barrier elements with an expect_tx so far
};

// A walk over the tree with its role context: per-scope barrier accounting (rules 1, 2),
// waits without arrivals (3), init placement (4), named barriers and CTA barriers (6),
// shared-buffer layouts (7), abstract nodes (8).
class StructureCheck : public Visitor {
 public:
  explicit StructureCheck(const Facts& f) : f_(f), role_(whole_cta(f)), senders_(size_t(f.cluster), true) {}

  void run(const StmtPtr& body) {
    scopes_.emplace_back();
    visit(body);
    close_scope();
    check_waits_have_arrivals();
    check_named_counts();
    check_exit_sync();
    check_tmem_freed();
    check_register_split();
    if (f_.declared) {
      check_layouts();
      check_map_operands();
      check_boxes();
    }
  }
  bool has_roles() const { return !roles_.empty(); }

  void abstract(NodeKind k) {
    GG_INTERNAL_CHECK(false, std::string("abstract node left after lowering: ") + node_kind_name(k));
  }
  void visit_LoadTile(const LoadTile& n) override { abstract(n.kind); }
  void visit_AcquireStage(const AcquireStage& n) override { abstract(n.kind); }
  void visit_ComputeTile(const ComputeTile& n) override { abstract(n.kind); }
  void visit_FinishCompute(const FinishCompute& n) override { abstract(n.kind); }
  void visit_AcquireAccumulator(const AcquireAccumulator& n) override { abstract(n.kind); }
  void visit_ReleaseStage(const ReleaseStage& n) override { abstract(n.kind); }
  void visit_WriteTile(const WriteTile& n) override { abstract(n.kind); }

  void visit_Let(const Let& l) override { lets_.lets[l.name] = l.value; }

  // ---- the register split (setmaxnreg): a role that only loads gives registers back, a role
  // that computes beside it takes them, each once, at a count the instruction takes, and the
  // roles' counts fit the register file together.
  void visit_SetMaxNReg(const SetMaxNReg& n) override {
    const std::string who = "role '" + role_.name + "'";
    GG_INTERNAL_CHECK(in_role_, "setmaxnreg outside a warp role: the whole CTA would share one count");
    GG_INTERNAL_CHECK(n.regs >= 24 && n.regs <= 256 && n.regs % 8 == 0,
                      who + ": setmaxnreg " + str(n.regs) + " (the count is a multiple of 8 in [24, 256])");
    GG_INTERNAL_CHECK(!set_regs_.count(role_.name), who + " sets its register count twice");
    const RoleShape* shape = nullptr;
    for (const RoleShape& r : f_.plan.roles)
      if (r.name == role_.name) shape = &r;
    GG_INTERNAL_CHECK(shape != nullptr, who + ": setmaxnreg in a role the plan does not have");
    const bool loads_only = shape->issues_loads && !shape->computes;
    GG_INTERNAL_CHECK(n.increase != loads_only,
                      who + ": setmaxnreg." + (n.increase ? "inc" : "dec") + " " + str(n.regs) + ", but a role that " +
                          (loads_only ? "only issues loads gives registers back (.dec)"
                                      : "computes beside a producer takes them (.inc)"));
    set_regs_[role_.name] = int64_t(n.regs) * role_.warpgroups * kWarpgroupThreads;
  }
  void check_register_split() const {
    int64_t total = 0;
    for (const auto& [role, regs] : set_regs_) total += regs;
    GG_INTERNAL_CHECK(total <= kRegisterFile, "the roles' setmaxnreg counts take " + str(total) + " registers, over the " +
                                                  str(kRegisterFile) + " of the register file");
  }

  // The structure check reads a mutable variable as its declaration gave it (a running count,
  // symbolic here as the loop variables it follows are).
  void visit_Assign(const Assign&) override {}

  void visit_For(const For& f) override {
    const bool outer_drain = in_drain_;
    in_drain_ = in_drain_ || f.kind == LoopKind::Drain;
    // A trip of a loop dealt to the role's warpgroups runs on one of them.
    const std::optional<RoleView> outer = trip_view_;
    if (f.dealt > 1) trip_view_ = RoleView{role_.name + " (one warpgroup per trip)", role_.first, 1};
    scopes_.emplace_back();
    visit(f.body);
    close_scope();
    trip_view_ = outer;
    in_drain_ = outer_drain;
  }
  // A branch on the CTA's rank (a pair's leader-only code) runs in the CTAs whose rank takes it:
  // only they arrive and load in it. Other conditions leave every CTA a possible runner.
  void visit_If(const If& i) override {
    const std::vector<bool> outer = senders_;
    std::vector<bool> taken(size_t(f_.cluster), true);
    bool by_rank = f_.declared;
    for (int r = 0; by_rank && r < f_.cluster; ++r) {
      Env at = lets_;
      at.vars["blockIdx.x"] = r;
      at.vars.erase("cta_rank");
      auto v = value_of(i.cond, at);
      if (!v) by_rank = false;
      else taken[size_t(r)] = *v != 0;
    }
    // (A condition every rank evaluates alike says nothing of the ranks.)
    by_rank = by_rank && std::count(taken.begin(), taken.end(), true) % f_.cluster != 0;
    for (int branch = 0; branch < 2; ++branch) {
      if (by_rank)
        for (int r = 0; r < f_.cluster; ++r) senders_[size_t(r)] = outer[size_t(r)] && taken[size_t(r)] == (branch == 0);
      scopes_.emplace_back();
      visit(branch == 0 ? i.then_body : i.else_body);
      close_scope();
      senders_ = outer;
    }
  }
  bool sends(int rank) const { return senders_.empty() || senders_[size_t(rank)]; }
  void visit_ElectOne(const ElectOne& e) override {
    int64_t n = elections(e, runner_view(), lets_);
    GG_INTERNAL_CHECK(n > 0, "ElectOne of warp " + to_c(e.warp) + " in role '" + role_.name + "' (warps " +
                                 str(role_.first_warp()) + ".." + str(role_.end_warp() - 1) + ") never runs");
    int64_t outer = elected_;
    if (elected_ == 0) elected_ = n;
    visit(e.body);
    elected_ = outer;
  }
  void visit_WarpRole(const WarpRole& r) override {
    GG_INTERNAL_CHECK(!in_role_, "role '" + r.role + "' is nested in role '" + role_.name + "'");
    check_published_before_roles();
    RoleView view{r.role, r.first_warpgroup, r.warpgroups};
    check_role_placement(view);
    roles_.push_back(view);
    exit_synced_ = false;
    role_waited_ = false;
    role_ = view;
    in_role_ = true;
    scopes_.emplace_back();
    visit(r.body);
    close_scope();
    in_role_ = false;
    role_ = whole_cta(f_);
    tmem_.fenced_before = tmem_.synced = false;  // the roles' exit is fenced and synced anew
  }

  // ---- rule 4: init before the role branch, fenced and published by a (cluster) barrier
  void visit_MbarrierInit(const MbarrierInit& n) override {
    GG_INTERNAL_CHECK(!in_role_ && roles_.empty(),
                      "MbarrierInit " + bar_text(n.bar) + " sits " +
                          (in_role_ ? "inside role '" + role_.name + "'" : std::string("after the role branch")) +
                          ": barriers are initialized before the warp roles branch, or a role may arrive on or "
                          "wait for a barrier that is not initialized yet");
    GG_INTERNAL_CHECK(elected_ == 1, "MbarrierInit " + bar_text(n.bar) + " runs on " + str(runners()) +
                                         " threads: one thread initializes a barrier");
    publish_ = Publish::Initialized;
    init_arrays_.insert(barrier_name(n.bar.array));
  }
  void visit_FenceMbarrierInit(const FenceMbarrierInit&) override {
    if (!in_role_ && publish_ == Publish::Initialized) publish_ = Publish::Fenced;
  }
  void visit_SyncThreads(const SyncThreads&) override {
    check_whole_cta("__syncthreads (SyncThreads)");
    if (tmem_.fenced_before) tmem_.synced = true;
    if (publish_ != Publish::Fenced) return;
    GG_INTERNAL_CHECK(f_.cluster == 1,
                      "the init of " + init_arrays_text() + " is published with __syncthreads in a cluster of " +
                          str(f_.cluster) + " CTAs: peers arrive on or multicast into " + init_arrays_text() +
                          " of this CTA, so they must wait for its init at a cluster barrier (ClusterSync)");
    publish_ = Publish::Published;
  }
  void visit_ClusterSync(const ClusterSync& c) override {
    if (c.part == ClusterPart::Wait) {
      GG_INTERNAL_CHECK(in_role_ && elected_ == 0 && !trip_view_,
                        "barrier.cluster.wait (ClusterSync wait) in role '" + role_.name +
                            "' does not run on every thread of the role where it begins");
      GG_INTERNAL_CHECK(cluster_arrived_, "barrier.cluster.wait in role '" + role_.name +
                                              "' without a barrier.cluster.arrive before the role branch");
      role_waited_ = true;
      return;
    }
    check_whole_cta(c.part == ClusterPart::Arrive ? "barrier.cluster.arrive (ClusterSync arrive)"
                                                  : "barrier.cluster (ClusterSync)");
    if (c.part == ClusterPart::Arrive) {
      GG_INTERNAL_CHECK(!in_role_ && roles_.empty(), "barrier.cluster.arrive after the role branch: the roles' waits "
                                                     "are what it is for");
      cluster_arrived_ = true;
      if (publish_ == Publish::Fenced) publish_ = Publish::Arrived;
      return;
    }
    if (publish_ == Publish::Fenced) publish_ = Publish::Published;
    if (!roles_.empty() && !in_role_) exit_synced_ = true;
  }
  // With the init published by a split cluster barrier, a role reaches the barriers only after
  // its own wait: before it, a peer's (or its own CTA's) init may not be visible to it.
  void check_role_waited(const BarrierRef& bar, const char* op) const {
    if (publish_ != Publish::Arrived || !in_role_ || role_waited_) return;
    GG_INTERNAL_CHECK(false, std::string(op) + " " + bar_text(bar) + " in role '" + role_.name +
                                 "' before the role's barrier.cluster.wait: the init of " + init_arrays_text() +
                                 " reaches the role through that wait");
  }

  // ---- rule 6: named barriers. An id may depend on the warpgroup (one per ping-pong
  // consumer); every warpgroup that reaches it, by bar.sync or bar.arrive, adds its threads.
  void visit_NamedBarrierSync(const NamedBarrierSync& n) override { named(n.id, n.threads); }
  void visit_NamedBarrierArrive(const NamedBarrierArrive& n) override { named(n.id, n.threads); }
  void named(const ExprPtr& id, int threads) {
    const int limit = limits_for(f_.plan.target).named_barriers;
    for (int wg = role_.first; wg < role_.first + role_.warpgroups; ++wg) {
      Env at = lets_;
      at.vars["warpgroup"] = wg;
      auto v = value_of(id, at);
      GG_INTERNAL_CHECK(v.has_value(), "named barrier " + to_c(id) + " in role '" + role_.name +
                                           "': cannot tell its id (a variable the checker does not know)");
      const std::string name = "named barrier " + str(*v) + " in role '" + role_.name + "'";
      GG_INTERNAL_CHECK(*v != 0, name + ": id 0 is the CTA barrier that __syncthreads uses");
      GG_INTERNAL_CHECK(*v > 0 && *v < limit, name + ": ids run 1.." + str(limit - 1) + " (the device has " +
                                                  str(limit) + " named barriers)");
      GG_INTERNAL_CHECK(elected_ == 0, name + " runs on an elected thread only: every thread it counts must arrive");
      auto [use, fresh] = named_.emplace(*v, NamedUse{threads, role_.name, {}});
      GG_INTERNAL_CHECK(fresh || (use->second.role == role_.name && use->second.threads == threads),
                        name + " with " + str(threads) + " threads is also used by role '" + use->second.role +
                            "' with " + str(use->second.threads) + ": one id per purpose, one thread count per id");
      use->second.warpgroups.insert(wg);
    }
  }
  void check_named_counts() const {
    for (const auto& [id, use] : named_) {
      const int64_t reach = int64_t(use.warpgroups.size()) * kWarpgroupThreads;
      GG_INTERNAL_CHECK(use.threads == reach, "named barrier " + str(id) + " in role '" + use.role + "' counts " +
                                                  str(use.threads) + " threads, but " + str(reach) + " reach it (" +
                                                  str(int64_t(use.warpgroups.size())) +
                                                  " warpgroup(s)): the barrier completes early or never");
    }
  }

  // ---- rules 1, 2, 3: barrier accounting
  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx& n) override {
    check_role_waited(n.bar, "arrive.expect_tx on");
    arrived_.insert(barrier_name(n.bar.array));
    scopes_.back().expected.insert(bar_text(n.bar));
    Tally& t = tally(n.bar);
    t.tx = true;
    for (int r = 0; r < f_.cluster; ++r) {
      if (!sends(r)) continue;
      // A pair's odd CTA arrives announcing nothing: both CTAs' boxes complete on the leader's.
      if (!(n.leader_only && r % 2 == 1)) t.announced[size_t(r)] += n.bytes * runners_of(n.bar);
      t.arrivals[size_t(r)] += runners_of(n.bar);
    }
  }
  void visit_MbarrierArrive(const MbarrierArrive& n) override {
    check_role_waited(n.bar, "arrive on");
    arrived_.insert(barrier_name(n.bar.array));
    Tally& t = tally(n.bar);
    if (n.cta) {
      cross_cta_.insert(barrier_name(n.bar.array));
      remote_arrivals_.insert(barrier_name(n.bar.array));
    }
    for (int r = 0; r < f_.cluster; ++r)
      if (sends(r)) t.arrivals[size_t(n.cta ? target_cta(n, r) : r)] += runners_of(n.bar);
  }
  void visit_MbarrierWait(const MbarrierWait& n) override {
    check_role_waited(n.bar, "wait on");
    waits_.push_back({bar_text(n.bar), barrier_name(n.bar.array), role_.name});
    if (in_drain_) drained_.insert(barrier_name(n.bar.array));
  }
  void visit_TmaLoad(const TmaLoad& n) override {
    check_role_waited(n.bar, "TMA load completing on");
    GG_INTERNAL_CHECK(scopes_.back().expected.count(bar_text(n.bar)),
                      "TMA load completes on " + bar_text(n.bar) + " in role '" + role_.name +
                          "' without an expect-tx before it in the same fill");
    if (!f_.declared) return;
    const rt::TensorMapSpec* m = &use_map(buffer_name(n.dst.buffer), n.map, "TmaLoad into", "reads", "TmaLoad from ");
    Tally& t = tally(n.bar);
    t.tx = true;
    t.loads += (t.loads.empty() ? "" : "; ") + box_text(tensor_map_field(n.map), *m) +
               (n.multicast_mask ? " multicast with mask " + str(n.multicast_mask) : "");
    for (int r = 0; r < f_.cluster; ++r)
      if (sends(r))
        for (int c : receivers(n, r)) t.landed[size_t(c)] += box_bytes(*m) * runners_of(n.bar);
    if (n.multicast_mask) cross_cta_.insert(barrier_name(n.bar.array));
  }

  // ---- rule 7: layouts of shared buffers
  void visit_TmaStore(const TmaStore& n) override {
    if (!f_.declared) return;
    use_map(buffer_name(n.src.buffer), n.map, "TmaStore from", "writes", "TmaStore to ");
  }
  // A TMA copy between `buffer` and tensor map `map`: the launch lists the map, and the
  // buffer's swizzle is the map's.
  const rt::TensorMapSpec& use_map(const std::string& buffer, rt::Operand operand, const std::string& op,
                                   const char* verb, const std::string& layout_what) {
    const std::string map = tensor_map_field(operand);
    const rt::TensorMapSpec* m = f_.map(operand);
    GG_INTERNAL_CHECK(m != nullptr, op + " " + buffer + " " + verb + " tensor map " + map +
                                        ", which the launch does not list");
    layout(buffer, swizzle_of(m->swizzle), layout_what + map, m->transposed);
    map_uses_.push_back({buffer, map, op});
    return *m;
  }
  void visit_SyncCopyTile(const SyncCopyTile& n) override {
    layout(buffer_name(n.dst.buffer), n.swizzle_bytes, "SyncCopyTile of " + n.source, n.mn_major);
  }
  void visit_WgmmaIssue(const WgmmaIssue& n) override {
    layout(buffer_name(n.a.buffer), n.a_layout.swizzle_bytes, "WgmmaIssue (operand A)", n.a_layout.mn_major);
    layout(buffer_name(n.b.buffer), n.b_layout.swizzle_bytes, "WgmmaIssue (operand B)", n.b_layout.mn_major);
  }

  // ---- rule 10: Tensor Memory (sm_100a). One warp allocates before the role branch; every thread
  // reads its address after a barrier that follows the allocation (the warp's tcgen05 fence before
  // it); tcgen05.mma and tcgen05.commit run on one thread, tcgen05.ld on whole warps; after the roles,
  // a fence and a CTA barrier, then the allocating warp frees the columns once.
  void visit_TmemAlloc(const TmemAlloc& n) override {
    GG_INTERNAL_CHECK(!in_role_ && roles_.empty(), "TmemAlloc sits " +
                                                       (in_role_ ? "inside role '" + role_.name + "'"
                                                                 : std::string("after the role branch")) +
                                                       ": TMEM is allocated before the warp roles branch");
    GG_INTERNAL_CHECK(elected_ == 0, "TmemAlloc on an elected thread: tcgen05.alloc is .sync.aligned, a whole warp runs it");
    GG_INTERNAL_CHECK(!tmem_.allocated, "TMEM is allocated twice (the first allocation relinquished the CTA's permit)");
    GG_INTERNAL_CHECK(n.columns >= 32 && n.columns <= 512 && (n.columns & (n.columns - 1)) == 0,
                      "TmemAlloc of " + str(n.columns) + " columns: a power of 2 from 32 to 512");
    GG_INTERNAL_CHECK(!f_.declared || n.columns == f_.plan.tmem_columns,
                      "TmemAlloc of " + str(n.columns) + " columns, but the plan's accumulator takes " +
                          str(f_.plan.tmem_columns));
    auto warp = value_of(n.warp, lets_);
    GG_INTERNAL_CHECK(warp.has_value(), "TmemAlloc by warp " + to_c(n.warp) + ": not a warp the checker can tell");
    tmem_ = TmemUse{};
    tmem_.allocated = true;
    tmem_.warp = *warp;
    tmem_.columns = n.columns;
  }
  void visit_Tcgen05Fence(const Tcgen05Fence& n) override {
    if (!n.after && tmem_.allocated && !in_role_) tmem_.fenced_before = true;
  }
  void visit_TmemBaseLoad(const TmemBaseLoad& n) override {
    GG_INTERNAL_CHECK(tmem_.allocated && tmem_.synced,
                      "TmemBaseLoad of " + n.name + " " +
                          (tmem_.allocated ? "before a barrier after tcgen05.alloc (with tcgen05.fence::before_thread_sync "
                                             "by the allocating warp before it): the address may not be written yet"
                                           : "with no TmemAlloc before it"));
    tmem_.base_loaded = true;
    tmem_.fenced_before = tmem_.synced = false;
  }
  void visit_Tcgen05Mma(const Tcgen05Mma& n) override {
    GG_INTERNAL_CHECK(tmem_.base_loaded, "tcgen05.mma in role '" + role_.name + "' before the TMEM address is loaded");
    GG_INTERNAL_CHECK(runners() == 1, "tcgen05.mma in role '" + role_.name + "' runs on " + str(runners()) +
                                          " threads: one thread issues each MMA for the CTA");
    layout(buffer_name(n.a.buffer), n.a_layout.swizzle_bytes, "Tcgen05Mma (operand A)", n.a_layout.mn_major);
    layout(buffer_name(n.b.buffer), n.b_layout.swizzle_bytes, "Tcgen05Mma (operand B)", n.b_layout.mn_major);
  }
  // A commit is one arrival on its barrier, counted with the others (rule 1).
  void visit_Tcgen05Commit(const Tcgen05Commit& n) override {
    check_role_waited(n.bar, "tcgen05.commit onto");
    GG_INTERNAL_CHECK(runners() == 1, "tcgen05.commit onto " + bar_text(n.bar) + " in role '" + role_.name +
                                          "' runs on " + str(runners()) +
                                          " threads: the thread that issued the MMAs commits them, once");
    arrived_.insert(barrier_name(n.bar.array));
    Tally& t = tally(n.bar);
    // Multicast: each sending CTA's commit arrives once in every CTA of the mask.
    for (int r = 0; r < f_.cluster; ++r)
      for (int c = 0; sends(r) && c < f_.cluster; ++c)
        if (n.multicast_mask ? (n.multicast_mask >> c) & 1u : c == r) t.arrivals[size_t(c)] += runners_of(n.bar);
    GG_INTERNAL_CHECK((n.multicast_mask >> f_.cluster) == 0, "tcgen05.commit onto " + bar_text(n.bar) +
                                                                 " multicasts to a CTA outside the cluster of " +
                                                                 str(f_.cluster));
    if (n.multicast_mask) {
      cross_cta_.insert(barrier_name(n.bar.array));
      remote_arrivals_.insert(barrier_name(n.bar.array));
    }
  }
  void visit_TmemLoad(const TmemLoad& n) override {
    GG_INTERNAL_CHECK(tmem_.base_loaded, "tcgen05.ld in role '" + role_.name + "' before the TMEM address is loaded");
    GG_INTERNAL_CHECK(elected_ == 0, "tcgen05.ld into " + n.dst + " on an elected thread: it is .sync.aligned, the "
                                     "whole warp loads its lanes");
  }
  void visit_TmemDealloc(const TmemDealloc& n) override {
    GG_INTERNAL_CHECK(tmem_.allocated && !tmem_.freed, std::string("TmemDealloc ") +
                                                           (tmem_.freed ? "frees TMEM twice" : "without a TmemAlloc"));
    GG_INTERNAL_CHECK(!in_role_ && !roles_.empty(), "TmemDealloc inside role '" + role_.name +
                                                        "': TMEM is freed after every role is done with it");
    GG_INTERNAL_CHECK(elected_ == 0, "TmemDealloc on an elected thread: tcgen05.dealloc is .sync.aligned");
    auto warp = value_of(n.warp, lets_);
    GG_INTERNAL_CHECK(warp && *warp == tmem_.warp, "TmemDealloc by warp " + to_c(n.warp) + ", but warp " +
                                                       str(tmem_.warp) + " allocated the TMEM: the allocating warp frees it");
    GG_INTERNAL_CHECK(n.columns == tmem_.columns, "TmemDealloc of " + str(n.columns) + " columns, " +
                                                      str(tmem_.columns) + " allocated");
    GG_INTERNAL_CHECK(tmem_.synced, "TmemDealloc without tcgen05.fence::before_thread_sync and a CTA barrier after "
                                    "the roles: a warp may still read the accumulator");
    tmem_.freed = true;
  }
  void check_tmem_freed() const {
    GG_INTERNAL_CHECK(!tmem_.allocated || tmem_.freed, "TMEM is allocated but never freed (tcgen05.dealloc before exit)");
  }
  void visit_EpilogueStore(const EpilogueStore& n) override {
    // staged transposed: the buffer's rows run along the tile's columns, as a column-major map's do
    // (a mirror's along the tile's columns too, which are the rows of the row-major D it is stored to)
    if (n.staged)
      layout(buffer_name(n.staging.buffer), n.staging_swizzle_bytes, "EpilogueStore (staging)",
             n.transposed_staging && !n.mirror);
  }

 private:
  // Arrived: fenced, and every thread arrived at the cluster barrier; each role is published to
  // by its own wait there.
  enum class Publish { None, Initialized, Fenced, Arrived, Published };
  // The CTA's TMEM allocation as the walk has seen it.
  struct TmemUse {
    bool allocated = false, base_loaded = false, freed = false;
    bool fenced_before = false, synced = false;  // outside the roles: a fence::before_thread_sync, then __syncthreads
    int64_t warp = -1;
    int columns = 0;
  };
  struct NamedUse {
    int threads = 0;
    std::string role;
    std::set<int> warpgroups;  // of the role, that sync or arrive on it
  };
  struct Wait {
    std::string bar, array, role;
  };
  struct Access {
    int swizzle = 0;
    bool mn_major = false;  // the rows run along K (a transposed operand)
    std::string who;
  };
  struct MapUse {
    std::string buffer, map, what;
  };

  const RoleView& runner_view() const { return trip_view_ ? *trip_view_ : role_; }
  int64_t runners() const { return elected_ ? elected_ : runner_view().threads(); }
  // The runners that reach one element of `b`: all of them, or where the index names the
  // warpgroup (a barrier per consumer warpgroup), those of one warpgroup.
  int64_t runners_of(const BarrierRef& b) const {
    return names_warpgroup(b.index, lets_) ? runners() / runner_view().warpgroups : runners();
  }

  Tally& tally(const BarrierRef& b) {
    Tally& t = scopes_.back().bars[bar_text(b)];
    if (t.arrivals.empty()) {
      t.array = barrier_name(b.array);
      t.role = role_.name;
      t.arrivals.assign(size_t(f_.cluster), 0);
      t.landed.assign(size_t(f_.cluster), 0);
      t.announced.assign(size_t(f_.cluster), 0);
    }
    return t;
  }

  // The CTA a remote arrive from CTA `rank` lands in.
  // The kernel's lets evaluated in CTA `rank` of the cluster (its block index along x).
  Env at_rank(int rank) const {
    Env at = lets_;
    at.vars["blockIdx.x"] = rank;
    at.vars["cta_rank"] = rank;
    return at;
  }

  int target_cta(const MbarrierArrive& n, int rank) const {
    auto c = value_of(n.cta, at_rank(rank));
    GG_INTERNAL_CHECK(c.has_value(), "MbarrierArrive " + bar_text(n.bar) + " in role '" + role_.name +
                                         "': cannot tell which CTA cta=" + to_c(n.cta) + " names");
    GG_INTERNAL_CHECK(*c >= 0 && *c < f_.cluster, "MbarrierArrive " + bar_text(n.bar) + " in role '" + role_.name +
                                                      "' arrives in CTA " + str(*c) + " of a cluster of " +
                                                      str(f_.cluster));
    return static_cast<int>(*c);
  }

  // The CTAs whose barrier a load from CTA `rank` completes on: its own, every CTA of the multicast
  // mask, or (a CTA pair's) the pair's even CTA.
  std::vector<int> receivers(const TmaLoad& n, int rank) const {
    if (n.to_pair_leader) return {rank - rank % 2};
    if (!n.multicast_mask) return {rank};
    unsigned mask = n.multicast_mask;
    if (n.multicast_shift) {  // a two-dimensional cluster's row or column: the shift follows the rank
      auto shift = value_of(n.multicast_shift, at_rank(rank));
      GG_INTERNAL_CHECK(shift && *shift >= 0 && *shift < 16, "TmaLoad into " + buffer_name(n.dst.buffer) +
                                                                  ": cannot tell the multicast shift " +
                                                                  to_c(n.multicast_shift) + " of CTA " + str(rank));
      mask <<= *shift;
    }
    std::vector<int> out;
    for (int c = 0; c < 32; ++c) {
      if (!((mask >> c) & 1u)) continue;
      GG_INTERNAL_CHECK(c < f_.cluster, "TmaLoad into " + buffer_name(n.dst.buffer) + " multicasts to CTA " + str(c) +
                                            " of a cluster of " + str(f_.cluster));
      out.push_back(c);
    }
    return out;
  }

  // Rules 1 and 2 for one scope: per barrier element and receiving CTA, the bytes landed
  // equal the bytes announced, and the arrivals equal the init count.
  void close_scope() {
    Scope s = std::move(scopes_.back());
    scopes_.pop_back();
    if (!f_.declared) return;
    for (const auto& [key, t] : s.bars) check_fill(key, t);
  }
  void check_fill(const std::string& key, const Tally& t) const {
    auto init = f_.init_arrivals.find(t.array);
    GG_INTERNAL_CHECK(init != f_.init_arrivals.end(),
                      key + " in role '" + t.role + "' is arrived on, but no MbarrierInit initializes " + t.array);
    for (int c = 0; c < f_.cluster; ++c) {
      const std::string in_cta = f_.cluster > 1 ? " in CTA " + str(c) : "";
      // A pair's writebacks all release the leader's accumulator buffers: none arrives in the odd CTA.
      if (f_.plan.cta_pair && t.array == barrier_name(Barrier::AccEmpty) && c % 2 == 1) {
        GG_INTERNAL_CHECK(t.arrivals[size_t(c)] == 0, key + " in role '" + t.role + "': " + str(t.arrivals[size_t(c)]) +
                                                          " arrivals land in the pair's odd CTA " + str(c) +
                                                          ", whose acc_empty barriers no MMA warp waits on");
        continue;
      }
      GG_INTERNAL_CHECK(!t.tx || t.landed[size_t(c)] == t.announced[size_t(c)],
                        key + " in role '" + t.role + "': expect_tx announces " + str(t.announced[size_t(c)]) +
                            " bytes per fill, but the TMA loads completing on it land " + str(t.landed[size_t(c)]) +
                            " bytes" + in_cta + " (" + (t.loads.empty() ? "no loads" : t.loads) +
                            "): the phase completes early or never");
      GG_INTERNAL_CHECK(t.arrivals[size_t(c)] == init->second,
                        key + " in role '" + t.role + "': " + str(t.arrivals[size_t(c)]) + " arrivals per " +
                            (t.tx ? "fill" : "release") + " land" + in_cta + ", but MbarrierInit gives " + t.array +
                            " " + str(init->second) + ": the phase completes early or never");
    }
  }

  void check_waits_have_arrivals() const {
    for (const Wait& w : waits_) {
      GG_INTERNAL_CHECK(arrived_.count(w.array), "role '" + w.role + "' waits on " + w.bar +
                                                     ", but no code arrives on " + w.array +
                                                     ": the wait never completes");
      GG_INTERNAL_CHECK(!f_.declared || f_.init_arrivals.count(w.array),
                        "role '" + w.role + "' waits on " + w.bar + ", which no MbarrierInit initializes");
    }
  }

  void check_published_before_roles() const {
    if (!roles_.empty() || publish_ == Publish::None) return;
    GG_INTERNAL_CHECK(publish_ == Publish::Published || publish_ == Publish::Arrived, "the init of " + init_arrays_text() +
                                                          " is not published before the role branch: it needs "
                                                          "fence.mbarrier_init, then " +
                                                          (f_.cluster > 1 ? "a cluster barrier" : "__syncthreads") +
                                                          ", before any role arrives or waits");
  }

  // A CTA of a cluster exits only after its peers are done arriving and multicasting into it:
  // a cluster barrier after the roles, or a drain. A drain waits, before its role exits, for the
  // last phase of every barrier array peers arrive on; the peers' multicast loads complete on
  // full barriers this CTA's consumers wait for before they exit (check_fills_acquired).
  void check_exit_sync() const {
    if (f_.cluster == 1 || cross_cta_.empty() || exit_synced_) return;
    std::string arrays;
    for (const auto& a : cross_cta_) arrays += (arrays.empty() ? "" : ", ") + a;
    GG_INTERNAL_CHECK(!drained_.empty(), "peers arrive on or multicast into " + arrays +
                                             " of other CTAs, but neither a cluster barrier after the roles nor a "
                                             "producer's drain keeps a CTA from exiting while they do");
    for (const auto& a : remote_arrivals_)
      GG_INTERNAL_CHECK(drained_.count(a), "peers arrive on " + a + " of other CTAs, but the drain waits only on " +
                                               *drained_.begin() + " and no cluster barrier after the roles keeps a "
                                               "CTA from exiting while they arrive");
  }

  void check_role_placement(const RoleView& r) const {
    if (!f_.declared) return;
    GG_INTERNAL_CHECK(r.first >= 0 && r.warpgroups >= 1 && r.first + r.warpgroups <= f_.cta_warpgroups,
                      "role '" + r.name + "' runs warpgroups " + str(r.first) + ".." + str(r.first + r.warpgroups - 1) +
                          " of a block of " + str(f_.cta_warpgroups));
    for (const RoleView& o : roles_)
      GG_INTERNAL_CHECK(r.first + r.warpgroups <= o.first || o.first + o.warpgroups <= r.first,
                        "roles '" + r.name + "' and '" + o.name + "' share a warpgroup");
  }

  void check_whole_cta(const std::string& what) const {
    GG_INTERNAL_CHECK(elected_ == 0 && role_.first == 0 && role_.warpgroups == f_.cta_warpgroups,
                      what + " in role '" + role_.name + "'" + (elected_ ? " on an elected thread" : "") +
                          ": every thread of the CTA must arrive, and this code does not run on all of them");
  }

  std::string init_arrays_text() const {
    std::string s;
    for (const auto& a : init_arrays_) s += (s.empty() ? "" : ", ") + a;
    return s;
  }

  void layout(const std::string& buffer, int swizzle, const std::string& who, bool mn_major = false) {
    layouts_[buffer].push_back({swizzle, mn_major, who + " in role '" + role_.name + "'"});
  }
  void check_layouts() const {
    for (const auto& [buffer, uses] : layouts_)
      for (const Access& a : uses) {
        GG_INTERNAL_CHECK(a.swizzle == uses.front().swizzle,
                          buffer + ": " + uses.front().who + " lays it out with the " + str(uses.front().swizzle) +
                              "B swizzle, but " + a.who + " with " + str(a.swizzle) +
                              "B: writer and readers of a shared buffer must agree on its layout");
        GG_INTERNAL_CHECK(a.mn_major == uses.front().mn_major,
                          buffer + ": " + uses.front().who + " lays its rows along " +
                              (uses.front().mn_major ? "K" : "M or N") + ", but " + a.who + " along " +
                              (a.mn_major ? "K" : "M or N") +
                              ": writer and readers of a shared buffer must agree on which dimension is contiguous");
      }
  }
  // Each map moves its own operand's tiles; C's tile may also land in D's staging buffer (the
  // staged beta*C, read back and overwritten by the epilogue).
  void check_map_operands() const {
    for (const MapUse& u : map_uses_)
      GG_INTERNAL_CHECK(operand_letter(u.map).empty() || operand_letter(u.buffer).empty() ||
                            operand_letter(u.map) == operand_letter(u.buffer) ||
                            (operand_letter(u.map) == "C" && operand_letter(u.buffer) == "D"),
                        u.what + " " + u.buffer + " uses tensor map " + u.map + ": operand " + operand_letter(u.map) +
                            "'s tiles and operand " + operand_letter(u.buffer) + "'s buffer");
  }
  // The shared layout is [atoms][rows][swizzle bytes]: each box is one swizzle atom wide (A's
  // FP8 scale factors are one unswizzled row per stage).
  void check_boxes() const {
    for (const auto& t : f_.launch.tensor_maps) {
      if (t.operand == rt::Operand::ScaleA || t.operand == rt::Operand::ScaleB) {
        GG_INTERNAL_CHECK(t.swizzle == rt::Swizzle::None && t.box_rows == 1,
                          "the tensor map of an operand's scale factors moves other boxes than one unswizzled row");
        continue;
      }
      const int64_t row_bytes = int64_t(t.box_cols) * rt::elem_bytes(t.elem);
      GG_INTERNAL_CHECK(row_bytes == swizzle_of(t.swizzle),
                        "the tensor map of operand " + std::string(rt::operand_name(t.operand)) + " has boxes " +
                            str(row_bytes) + " bytes wide but a " + str(swizzle_of(t.swizzle)) +
                            "B swizzle: a box is one atom wide");
    }
  }

  const Facts& f_;
  RoleView role_;
  std::vector<bool> senders_;  // the CTA ranks that run the code being walked
  std::optional<RoleView> trip_view_;  // inside a dealt loop: the one warpgroup running a trip
  bool in_role_ = false;
  int64_t elected_ = 0;  // threads running an ElectOne's body; 0 outside one
  Env lets_;
  std::map<std::string, int64_t> set_regs_;  // role -> registers its setmaxnreg gives all its threads
  static constexpr int64_t kRegisterFile = 65536;
  std::vector<Scope> scopes_;
  std::vector<RoleView> roles_;
  Publish publish_ = Publish::None;
  std::set<std::string> init_arrays_, arrived_, cross_cta_;
  std::set<std::string> remote_arrivals_, drained_;  // arrays peers arrive on; arrays a drain waits on
  bool exit_synced_ = false, in_drain_ = false;
  bool cluster_arrived_ = false, role_waited_ = false;  // the split cluster barrier: arrive, this role's wait
  TmemUse tmem_;
  std::vector<Wait> waits_;
  std::map<int, NamedUse> named_;
  std::map<std::string, std::vector<Access>> layouts_;
  std::vector<MapUse> map_uses_;
};

// ============================================================ the pipeline, run on values

// A grid-strided tile loop repeats the same per-tile code; a few tiles show the phases that
// carry from tile to tile.
constexpr int64_t kStridedTrips = 3;

// The k extent the trace runs: the problem's, but at most 2 * stages + 3 k tiles, which laps
// every stage at both parities and ends on a partial lap, and keeps the check fast.
int64_t trace_k(const KernelPlan& p) {
  const int64_t tiles = 2 * int64_t(p.pipeline.stages) + 3;
  if (p.tile_k <= 0 || p.k <= tiles * p.tile_k) return p.k;
  return tiles * p.tile_k;
}

// CTA `rank` of the first cluster. A persistent kernel is traced as if one cluster walked the
// tiles: its grid-strided loop is correct for any grid, and so every CTA runs several tiles
// (the launch's grid may give each just one).
Env base_env(const Facts& f, int rank) {
  const auto& g = f.launch.grid;
  const int64_t grid_x = f.plan.persistent ? f.cluster : int64_t(g[0]);
  Env e;
  e.vars = {
      {"args.m", f.plan.m},        {"args.n", f.plan.n}, {"args.k", trace_k(f.plan)}, {"blockIdx.x", rank},
      {"blockIdx.y", 0},           {"blockIdx.z", 0},    {"gridDim.x", grid_x},       {"gridDim.y", int64_t(g[1])},
      {"gridDim.z", int64_t(g[2])}};
  // Masked groups: every third group empty, the others full, so the traced roles pass over
  // skipped units and must keep the pipeline's running count in step across them.
  for (int64_t b = 0; f.plan.masked && b < f.plan.layouts.batch; ++b)
    e.vars[element_name("args.group_rows", b)] = b % 3 == 1 ? 0 : f.plan.m;
  // Contiguous (variable-K) groups: every third group empty, the others of M (K) / batch rows:
  // ragged tiles, and units that run no k tiles.
  const int64_t grouped = f.plan.contiguous ? f.plan.m : f.plan.varlen_k ? trace_k(f.plan) : 0;
  for (int64_t group = 0, row = 0; grouped && group <= f.plan.layouts.batch; ++group) {
    e.vars[element_name("args.group_offsets", group)] = row;
    if (group % 3 != 1) row = std::min(grouped, row + std::max<int64_t>(1, grouped / f.plan.layouts.batch));
  }
  // Pointer-array groups: every third group without rows, every fourth without K (units that run
  // no k tiles), the others' rows and columns ragged.
  for (int64_t group = 0; f.plan.pointer_array && group < f.plan.layouts.batch; ++group) {
    e.vars[element_name("args.group_sizes", 3 * group)] = group % 3 == 1 ? 0 : std::max<int64_t>(1, f.plan.m - group);
    e.vars[element_name("args.group_sizes", 3 * group + 1)] = group % 2 ? f.plan.n : std::max<int64_t>(1, f.plan.n / 2);
    e.vars[element_name("args.group_sizes", 3 * group + 2)] = group % 4 == 2 ? 0 : trace_k(f.plan);
  }
  return e;
}

// One role of one CTA, run on concrete values: loops iterate, branches are taken, and every
// barrier index, parity and stage offset is a number. It checks the pipeline (rule 9, the
// phases, the order of fills, acquisitions and releases), the proxy fences (rule 5) and the
// wgmma order (rule 8). It follows one thread of the role's first warpgroup, and the code of
// every ElectOne (what its warpgroup's elected threads do).
class RoleRun : public Visitor {
 public:
  // Traces the role as warpgroup `traced` of it runs it (its first thread and the code of
  // its elected threads).
  RoleRun(const Facts& f, RoleView role, Env env, int rank, int64_t traced)
      : f_(f), role_(std::move(role)), env_(std::move(env)), rank_(rank) {
    env_.vars["warpgroup"] = traced;
    env_.vars["warp"] = traced * 4;  // the traced thread's: the warpgroup's first warp
  }

  std::vector<int64_t> fills, acquires, releases;  // stages, in program order
  std::string who() const { return "role '" + role_.name + "'" + (f_.cluster > 1 ? " of CTA " + str(rank_) : ""); }

  // What must hold when the role's code ends.
  void finish() {
    GG_INTERNAL_CHECK(!tc_.uncommitted, who() + " ends with tcgen05.mma issued after its last tcgen05.commit");
    GG_INTERNAL_CHECK(ab_.ready.empty(), who() + " ends holding accumulator buffer " +
                                             (ab_.ready.empty() ? std::string() : str(*ab_.ready.begin())) +
                                             " (waited for, never released on acc_empty)");
    GG_INTERNAL_CHECK(!open_ && complete_ == groups_.size(),
                      who() + " ends with " + str(int64_t(groups_.size() - complete_) + (open_ ? 1 : 0)) +
                          " wgmma group(s) in flight");
    for (const auto& [wg, buffers] : buffers_)
      for (const auto& [name, b] : buffers)
        for (const StoreRead& st : b.stores)
          GG_INTERNAL_CHECK(st.read_done, who() + " ends while a TMA store of warpgroup " + str(wg) +
                                              " may still read " + name + " bytes " + range_text(st.lo, st.hi) +
                                              ": bulk_wait_group_read<0> must come before exit");
    if (f_.has_empty() && !acquires.empty()) check_released_as_acquired();
    if (!drained_stages_.empty())
      for (const auto& [s, st] : stages_)
        GG_INTERNAL_CHECK(st.fills == 0 || drained_stages_.count(s),
                          who() + "'s drain never waits on " + bar_text(kEmpty, s) +
                              ": a peer may still arrive on it for that stage's last fill after this CTA exits");
  }

  // Staging buffers per warpgroup, for the CTA's check that warpgroups stage apart.
  const std::map<int64_t, std::set<std::pair<int64_t, int64_t>>>& staging_at() const { return staging_at_; }
  const std::string& staging_buffer() const { return staging_buffer_; }

  void visit_For(const For& f) override {
    const int64_t begin = must(f.begin, "the start of loop " + f.var), end = must(f.end, "the end of loop " + f.var),
                  step = must(f.step, "the step of loop " + f.var);
    GG_INTERNAL_CHECK(step > 0, who() + ": loop " + f.var + " steps by " + str(step));
    if (f.dealt > 1) return dealt_loop(f, begin, end, step);
    const int64_t cap = is_const(f.step) ? std::numeric_limits<int64_t>::max() : kStridedTrips;
    const bool outer_drain = in_drain_;
    in_drain_ = in_drain_ || f.kind == LoopKind::Drain;
    int64_t trips = 0, i = begin;
    bool searched = false;  // a search loop's condition ended it
    for (; i < end && trips < cap; i += step, ++trips) {
      env_.vars[f.var] = i;
      if (f.while_cond && !must(f.while_cond, "the condition of loop " + f.var)) {
        searched = true;
        break;
      }
      if (!f.unroll) loops_.push_back({f.var, i});
      visit(f.body);
      if (!f.unroll) loops_.pop_back();
    }
    if (i < end && !searched) capped_ = true;
    in_drain_ = outer_drain;
    env_.vars.erase(f.var);
  }
  void visit_If(const If& i) override { visit(must(i.cond, "an if condition") ? i.then_body : i.else_body); }
  // The run where this CTA holds the tile's last split-K ticket: it runs the epilogue and its
  // barriers, which every other path skips whole.
  void visit_TileTicket(const TileTicket& t) override { env_.vars[t.result] = 1; }

  // A loop dealt to the role's warpgroups runs its trips in the CTA's order, each on the
  // warpgroup whose turn it is: the pipeline's fills are consumed in that order only because
  // each trip takes the turn (bar.sync) from the previous one before it waits on a stage.
  void dealt_loop(const For& f, int64_t begin, int64_t end, int64_t step) {
    GG_INTERNAL_CHECK(!dealt_wg_, who() + ": loop " + f.var + " is dealt to warpgroups inside another dealt loop");
    GG_INTERNAL_CHECK(f.dealt <= role_.warpgroups, who() + ": loop " + f.var + " is dealt " + str(f.dealt) +
                                                       " ways over " + str(role_.warpgroups) + " warpgroup(s)");
    const int64_t cap = kStridedTrips;  // as the other grid-strided loops: the producer fills that many tiles
    const Env saved = env_;
    turn_ = Turn{};
    // Each warpgroup keeps its own running counts (the mutable lets before the loop, declared
    // with its own `dealt_by` index): restored before its trip, kept after it.
    std::vector<std::map<std::string, int64_t>> own(static_cast<size_t>(f.dealt));
    // sm_100a: each ping-pong warpgroup issues, commits, waits for and reads its own accumulator.
    std::vector<Tcgen05State> own_tc(static_cast<size_t>(f.dealt), tc_);
    bool uncommitted = false;
    int64_t trip = 0;
    for (int64_t i = begin; i < end && trip < cap; i += step, ++trip) {
      const int64_t w = trip % f.dealt;
      env_.vars["warpgroup"] = role_.first + w;
      env_.vars["warp"] = (role_.first + w) * 4;  // the traced thread moves with its warpgroup
      env_.vars[f.dealt_by] = w;
      tc_ = own_tc[static_cast<size_t>(w)];
      auto& counts = own[static_cast<size_t>(w)];
      if (trip < f.dealt)
        for (const auto& [name, init] : mutable_inits_) counts[name] = must(init, "the first value of '" + name + "'");
      for (const auto& [name, value] : counts) env_.vars[name] = value;
      dealt_wg_ = role_.first + w;
      turn_.trip = trip;
      turn_.held = trip == 0;
      turn_.passed = false;
      env_.vars[f.var] = i;
      loops_.push_back({f.var + "(warpgroup " + str(role_.first + w) + ")", i});
      visit(f.body);
      loops_.pop_back();
      for (auto& [name, value] : counts) value = env_.vars.at(name);
      own_tc[static_cast<size_t>(w)] = tc_;
    }
    for (const Tcgen05State& t : own_tc) uncommitted = uncommitted || t.uncommitted;
    tc_.uncommitted = uncommitted;  // the role's end check: every warpgroup committed its MMAs
    env_ = saved;
    dealt_wg_.reset();
    turn_ = Turn{};
  }
  // The traced warpgroup runs the body of an ElectOne of one of its warps. Another warpgroup's
  // (sm_100a: the thread issuing the tile's MMAs for the role) it only observes: what its MMAs and
  // commits do to the accumulator this warpgroup reads, in the order the role's barriers give.
  void visit_ElectOne(const ElectOne& e) override {
    const int64_t first = env_.vars.at("warpgroup") * 4;
    const int64_t warp = e.each_warp ? first : must(e.warp, "the warp of an ElectOne");  // the traced warp's
    const bool outer = foreign_;
    foreign_ = foreign_ || warp < first || warp >= first + 4;
    ++elected_;
    elected_warps_.push_back(warp);
    if (foreign_) observe(e.body);
    else visit(e.body);
    elected_warps_.pop_back();
    --elected_;
    foreign_ = outer;
  }
  // Another warpgroup's elected code: its tcgen05.mma and commits onto mma_done, nothing else.
  void observe(const StmtPtr& s) {
    struct Observer : Visitor {
      RoleRun& run;
      explicit Observer(RoleRun& r) : run(r) {}
      void visit_Tcgen05Mma(const Tcgen05Mma& n) override { run.visit_Tcgen05Mma(n); }
      void visit_Tcgen05Commit(const Tcgen05Commit& n) override { run.visit_Tcgen05Commit(n); }
    } observer(*this);
    observer.visit(s);
  }
  void visit_Let(const Let& l) override {
    bind_let(env_, l);
    if (l.mutable_var) mutable_inits_[l.name] = l.value;
  }
  // The running pipeline count advances as the traced warpgroup's code advances it.
  void visit_Assign(const Assign& a) override {
    env_.vars[a.name] = must(a.value, "the new value of '" + a.name + "'");
    env_.lets.erase(a.name);
  }

  // ---- barriers: fills, acquisitions, releases
  void visit_MbarrierWait(const MbarrierWait& n) override {
    filling_.reset();
    // A wait on the barrier of a TMA load issued after the bulk wait orders this thread after
    // the previous store's reads, as a barrier would (the staged C tile).
    each_buffers([&](Buffers& buffers) {
      for (auto& [name, b] : buffers)
        std::erase_if(b.stores, [&](const StoreRead& st) { return st.read_done && st.reloaded_on == barrier_name(n.bar.array); });
    });
    tc_.fenced_after = false;
    if (n.bar.array == Barrier::MmaDone) tc_.fenced_since_wait = false;
    if (!f_.declared) return;
    const int64_t s = index_of(n.bar), parity = must(n.parity, "the parity of the wait on " + bar_text(n.bar));
    if (f_.is_full(barrier_name(n.bar.array))) acquire(s, parity);
    if (f_.is_empty(barrier_name(n.bar.array))) wait_for_release(s, parity);
    if (n.bar.array == Barrier::AccEmpty) take_buffer(s, parity);
    else if (n.bar.array == Barrier::MmaDone && double_buffered()) wait_for_buffer(s, parity);
    else if (n.bar.array == Barrier::MmaDone) wait_for_accumulator(parity);
  }
  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx& n) override {
    if (!f_.declared) return;
    const int64_t s = index_of(n.bar);
    if (f_.is_full(barrier_name(n.bar.array))) fill_write(s, bar_text(kFull, s));
  }
  void visit_TmaLoad(const TmaLoad& n) override {
    // not a structured binding: clang 14 cannot capture one in a lambda
    const std::pair<int64_t, int64_t> range = box_range(n.dst, n.map);
    const int64_t lo = range.first, hi = range.second;
    each_buffers([&](Buffers& buffers) {
      for (StoreRead& st : buffers[buffer_name(n.dst.buffer)].stores) {
        if (!overlap(st, lo, hi)) continue;
        GG_INTERNAL_CHECK(st.read_done, who() + " TMA-loads into " + buffer_name(n.dst.buffer) + " bytes " + range_text(lo, hi) +
                                            " at " + at() + " while the TMA store of bulk group #" + str(st.group) +
                                            " may still read bytes " + range_text(st.lo, st.hi) +
                                            ": a bulk_wait_group_read that retires that group comes first");
        st.reloaded_on = barrier_name(n.bar.array);
      }
    });
    if (!f_.declared) return;
    const int64_t s = index_of(n.bar);
    if (const int64_t bytes = f_.stage_bytes(buffer_name(n.dst.buffer))) {
      const int64_t dst = must(n.dst.offset, "the destination of a TmaLoad into " + buffer_name(n.dst.buffer)) / bytes;
      GG_INTERNAL_CHECK(dst == s, who() + " loads stage " + str(dst) + " of " + buffer_name(n.dst.buffer) + " but completes on " +
                                      bar_text(barrier_name(n.bar.array), s) + ", the barrier of stage " + str(s) + " (at " + at() +
                                      ")");
    }
    if (f_.is_full(barrier_name(n.bar.array))) fill_write(s, bar_text(kFull, s));
  }
  void visit_MbarrierArrive(const MbarrierArrive& n) override {
    filling_.reset();
    if (!f_.declared) return;
    const int64_t s = index_of(n.bar);
    const bool here = !n.cta || must(n.cta, "the CTA of an arrive on " + bar_text(n.bar)) == rank_;
    if (here && f_.is_empty(barrier_name(n.bar.array))) release(s);
    if (n.bar.array == Barrier::AccEmpty) release_buffer(s);
  }

  // ---- tcgen05 (sm_100a): rule 11. The MMAs run after the stage's wait (and a tcgen05 fence after
  // it), never while an epilogue may still read the accumulator they overwrite; the issuing thread's
  // commits release stages and, onto mma_done, finish the tile; tcgen05.ld reads the accumulator only
  // after the wait for the commit that follows the tile's last MMA (and a fence after that wait).
  void visit_Tcgen05Fence(const Tcgen05Fence& n) override {
    if (n.after) tc_.fenced_after = tc_.fenced_since_wait = true;
    else tc_.fenced_before = true;
    if (!n.after) ab_.unfenced_reads.clear();
  }
  void visit_Tcgen05Mma(const Tcgen05Mma& n) override {
    filling_.reset();
    GG_INTERNAL_CHECK(foreign_ || tc_.fenced_after, who() + " issues tcgen05.mma at " + at() +
                                                        " without tcgen05.fence::after_thread_sync since its last barrier or wait");
    GG_INTERNAL_CHECK(!tc_.reads_pending, who() + " issues tcgen05.mma at " + at() +
                                              ", overwriting the TMEM accumulator, while the previous tile's tcgen05.ld "
                                              "may still read it (no tcgen05.fence::before_thread_sync and barrier of "
                                              "the role between them)");
    GG_INTERNAL_CHECK(!elected_warps_.empty(), who() + " issues tcgen05.mma at " + at() + " on every thread");
    const int64_t warp = elected_warps_.back();
    GG_INTERNAL_CHECK(tc_.mma_warp < 0 || tc_.mma_warp == warp, who() + " issues tcgen05.mma from warps " +
                                                                    str(tc_.mma_warp) + " and " + str(warp) +
                                                                    ": one thread issues and commits the MMAs");
    tc_.mma_warp = warp;
    if (double_buffered()) fill_buffer(buffer_of(n.column, "the TMEM column of a tcgen05.mma"));
    tc_.uncommitted = tc_.unfinished = true;
    tc_.accumulator_ready = false;
    if (!foreign_) mma_stage(n.a, n.b, "Tcgen05Mma", "tcgen05.mma");
  }
  // A tcgen05.cp of a stage's scale factors into TMEM: issued like an MMA (the thread that issues
  // them, after a fence since its wait: the copy precedes its MMAs in the tensor pipe only from one
  // thread), reading a stage it holds through the async proxy, released by the same commit.
  void visit_Tcgen05Copy(const Tcgen05Copy& n) override {
    GG_INTERNAL_CHECK(tc_.fenced_after, who() + " issues tcgen05.cp at " + at() +
                                            " without tcgen05.fence::after_thread_sync since its last barrier or wait");
    GG_INTERNAL_CHECK(!elected_warps_.empty(), who() + " issues tcgen05.cp at " + at() + " on every thread");
    const int64_t warp = elected_warps_.back();
    GG_INTERNAL_CHECK(tc_.mma_warp < 0 || tc_.mma_warp == warp,
                      who() + " issues tcgen05.cp from warp " + str(warp) + " and tcgen05.mma from warp " +
                          str(tc_.mma_warp) + ": the copy orders before the MMAs only from the same thread");
    tc_.mma_warp = warp;
    tc_.uncommitted = true;
    const std::string buffer = buffer_name(n.src.buffer);
    async_read(buffer, "tcgen05.cp");
    if (const int64_t bytes = f_.stage_bytes(buffer))
      check_readable(must(n.src.offset, "the source of a tcgen05.cp") / bytes, buffer);
  }
  // An MMA reads operands `a` and `b` through the async proxy: one stage of each, the same, which
  // the thread holds. The stage, where the buffers are the pipeline's.
  std::optional<int64_t> mma_stage(const SmemRef& a, const SmemRef& b, const char* node, const std::string& what) {
    async_read(buffer_name(a.buffer), node);
    async_read(buffer_name(b.buffer), node);
    const int64_t a_bytes = f_.stage_bytes(buffer_name(a.buffer)), b_bytes = f_.stage_bytes(buffer_name(b.buffer));
    if (!a_bytes || !b_bytes) return std::nullopt;
    const int64_t sa = must(a.offset, "the A address of a " + what) / a_bytes;
    const int64_t sb = must(b.offset, "the B address of a " + what) / b_bytes;
    GG_INTERNAL_CHECK(sa == sb, who() + " issues a " + what + " on stage " + str(sa) + " of " + buffer_name(a.buffer) +
                                    " and stage " + str(sb) + " of " + buffer_name(b.buffer) + " (at " + at() + ")");
    check_readable(sa, buffer_name(a.buffer));
    return sa;
  }
  void visit_Tcgen05Commit(const Tcgen05Commit& n) override {
    filling_.reset();
    GG_INTERNAL_CHECK(!elected_warps_.empty(), who() + " commits onto " + bar_text(n.bar) + " on every thread");
    GG_INTERNAL_CHECK(tc_.mma_warp < 0 || elected_warps_.back() == tc_.mma_warp,
                      who() + " commits onto " + bar_text(n.bar) + " at " + at() + " from warp " +
                          str(elected_warps_.back()) + ", but warp " + str(tc_.mma_warp) +
                          "'s thread issued the MMAs: a commit tracks only its own thread's MMAs");
    tc_.uncommitted = false;
    if (!f_.declared) return;
    const int64_t s = index_of(n.bar);
    const bool here = !n.multicast_mask || ((n.multicast_mask >> rank_) & 1u);
    if (here && !foreign_ && f_.is_empty(barrier_name(n.bar.array))) release(s);
    if (n.bar.array == Barrier::MmaDone) {
      ++tc_.finish_commits;
      tc_.unfinished = false;
      if (double_buffered() && !foreign_) finish_buffer(s);
    }
  }
  // Wait #i on mma_done is for commit #i (parity i % 2); the accumulator is final when that commit
  // came after the last MMA.
  void wait_for_accumulator(int64_t parity) {
    const int64_t i = tc_.finish_waits++;
    GG_INTERNAL_CHECK(i < tc_.finish_commits, who() + " waits on " + barrier_name(Barrier::MmaDone) + " at " + at() +
                                                  " for commit #" + str(i) + ", which comes later or never: it waits forever");
    GG_INTERNAL_CHECK(parity == i % 2, who() + " waits on " + barrier_name(Barrier::MmaDone) + " with parity " +
                                           str(parity) + " for commit #" + str(i) + ", whose phase has parity " +
                                           str(i % 2) + " (at " + at() + ")");
    tc_.accumulator_ready = i == tc_.finish_commits - 1 && !tc_.unfinished;
  }
  void visit_TmemLoad(const TmemLoad& n) override {
    if (double_buffered()) return read_buffer(n);
    GG_INTERNAL_CHECK(tc_.accumulator_ready,
                      who() + " reads the TMEM accumulator into " + n.dst + " at " + at() + " without waiting on " +
                          barrier_name(Barrier::MmaDone) +
                          " for the tcgen05.commit after the tile's last MMA: the MMAs may still write it");
    GG_INTERNAL_CHECK(tc_.fenced_since_wait, who() + " reads the TMEM accumulator at " + at() +
                                                 " without tcgen05.fence::after_thread_sync after the wait for it");
    tc_.reads_pending = true;
  }

  // ---- double-buffered TMEM (rule 12): the role issuing the MMAs takes a buffer (a wait on its
  // acc_empty barrier, parity as a producer's), fills it, and commits onto its mma_done (mma2ld);
  // the writeback waits on that mma_done, reads the buffer, orders its reads (tcgen05 fence before)
  // and arrives on acc_empty (ld2mma). Which buffer an MMA or a read touches is its TMEM column.
  // The two roles' sequences are compared per CTA (check_accumulator_handoff).
  bool double_buffered() const { return f_.declared && f_.plan.mma_warp; }
  int64_t buffer_of(const ExprPtr& column, const std::string& what) const {
    const int64_t columns = sm100::tmem_placement(f_.plan).columns();
    return must(column, what) / columns;
  }
  void take_buffer(int64_t b, int64_t parity) {
    const int64_t n = ab_.takes[b]++;
    GG_INTERNAL_CHECK(parity == (n + 1) % 2, who() + " waits on " + bar_text(barrier_name(Barrier::AccEmpty), b) + " with parity " +
                                                 str(parity) + " before its fill #" + str(n) + " of accumulator buffer " +
                                                 str(b) + ", which needs parity " + str((n + 1) % 2) + " (at " + at() + ")");
    ab_.taken.insert(b);
  }
  void fill_buffer(int64_t b) {
    GG_INTERNAL_CHECK(ab_.taken.count(b), who() + " issues tcgen05.mma into TMEM accumulator buffer " + str(b) + " at " +
                                              at() + " without waiting on " + bar_text(barrier_name(Barrier::AccEmpty), b) +
                                              " for the writeback's release (ld2mma): it overwrites the buffer while the "
                                              "previous tile's tcgen05.ld may still read it");
    GG_INTERNAL_CHECK(!ab_.filling || *ab_.filling == b, who() + " issues tcgen05.mma into accumulator buffers " +
                                                             str(*ab_.filling) + " and " + str(b) + " at " + at() +
                                                             " between two commits onto " + barrier_name(Barrier::MmaDone));
    ab_.filling = b;
  }
  void finish_buffer(int64_t b) {
    GG_INTERNAL_CHECK(ab_.taken.count(b) && (!ab_.filling || *ab_.filling == b),
                      who() + " commits onto " + bar_text(barrier_name(Barrier::MmaDone), b) + " at " + at() +
                          (ab_.filling ? " after MMAs into accumulator buffer " + str(*ab_.filling)
                                       : " for accumulator buffer " + str(b) + ", which it did not take") +
                          ": the writeback waiting on it reads a buffer whose MMAs it was not told of");
    ab_.taken.erase(b);
    ab_.filling.reset();
    ab_.committed.push_back(b);
  }
  void wait_for_buffer(int64_t b, int64_t parity) {
    const int64_t n = ab_.waits[b]++;
    GG_INTERNAL_CHECK(parity == n % 2, who() + " waits on " + bar_text(barrier_name(Barrier::MmaDone), b) + " with parity " +
                                           str(parity) + " for commit #" + str(n) + " of accumulator buffer " + str(b) +
                                           ", whose phase has parity " + str(n % 2) + " (at " + at() + ")");
    ab_.ready.insert(b);
    ab_.waited.push_back(b);
  }
  void read_buffer(const TmemLoad& n) {
    const int64_t b = buffer_of(n.column, "the TMEM column of a tcgen05.ld");
    GG_INTERNAL_CHECK(ab_.ready.count(b), who() + " reads TMEM accumulator buffer " + str(b) + " into " + n.dst + " at " +
                                              at() + " without waiting on " + bar_text(barrier_name(Barrier::MmaDone), b) +
                                              " for the commit after its tile's last MMA since it last released it: "
                                              "the MMAs may still write it");
    GG_INTERNAL_CHECK(tc_.fenced_since_wait, who() + " reads the TMEM accumulator at " + at() +
                                                 " without tcgen05.fence::after_thread_sync after the wait for it");
    ab_.unfenced_reads.insert(b);
  }
  void release_buffer(int64_t b) {
    GG_INTERNAL_CHECK(ab_.ready.count(b), who() + " arrives on " + bar_text(barrier_name(Barrier::AccEmpty), b) + " at " + at() +
                                              " without holding accumulator buffer " + str(b) +
                                              " (no wait on its mma_done since its last release)");
    GG_INTERNAL_CHECK(!ab_.unfenced_reads.count(b),
                      who() + " arrives on " + bar_text(barrier_name(Barrier::AccEmpty), b) + " at " + at() +
                          " with no tcgen05.fence::before_thread_sync after its tcgen05.ld of the buffer: the MMA warp "
                          "may overwrite the buffer while those reads still run");
    ab_.ready.erase(b);
    ab_.released.push_back(b);
  }

  // The buffers this role committed (issuing) or waited for and released (writeback), in order.
  const std::vector<int64_t>& buffers_committed() const { return ab_.committed; }
  const std::vector<int64_t>& buffers_waited() const { return ab_.waited; }
  const std::vector<int64_t>& buffers_released() const { return ab_.released; }

  // ---- wgmma groups
  // The accumulator registers are pinned (AccumulatorFence) between the thread's and the MMAs'
  // accesses: after the thread writes them (zeroing) and before a wgmma fence, and after a wgmma
  // wait before the thread reads them; else the compiler may move those accesses across.
  void visit_AccumulatorZero(const AccumulatorZero&) override { acc_pinned_ = false; }
  void visit_AccumulatorFence(const AccumulatorFence&) override { acc_pinned_ = true; }
  void require_pinned(const std::string& what) const {
    GG_INTERNAL_CHECK(acc_pinned_, who() + " at " + at() + ": " + what + " without wgmma_fence_operand on the "
                                   "accumulator since the thread or the MMAs last wrote it (AccumulatorFence)");
  }
  void visit_WgmmaFence(const WgmmaFence&) override {
    require_pinned("wgmma fence");
    filling_.reset();
    open_ = true;
    open_stages_.clear();
  }
  void visit_WgmmaIssue(const WgmmaIssue& n) override {
    GG_INTERNAL_CHECK(open_, "wgmma issued without a wgmma fence before it (" + who() + " at " + at() + ")");
    if (auto stage = mma_stage(n.a, n.b, "WgmmaIssue", "wgmma")) open_stages_.insert(*stage);
  }
  void visit_WgmmaCommit(const WgmmaCommit&) override {
    GG_INTERNAL_CHECK(open_, "wgmma commit without a group (" + who() + " at " + at() + ")");
    groups_.push_back({open_stages_, at()});
    open_ = false;
  }
  void visit_WgmmaWait(const WgmmaWait& n) override {
    GG_INTERNAL_CHECK(!groups_.empty(), "wgmma wait without a committed group (" + who() + " at " + at() + ")");
    if (groups_.size() > size_t(n.pending)) complete_ = std::max(complete_, groups_.size() - size_t(n.pending));
    last_wait_ = n.pending;
    acc_pinned_ = false;
  }
  // (A TMEM chunk's registers come from its tcgen05.ld, after the MMAs' commit: no wgmma fence.)
  void visit_PartialStore(const PartialStore& n) override {
    if (n.fragment == Fragment::Wgmma) require_pinned("the split-K partial store's read of the accumulator");
  }
  void visit_PartialReduce(const PartialReduce& n) override {
    if (n.own && n.fragment == Fragment::Wgmma) require_pinned("the split-K reduction's read of its own sums in the accumulator");
  }
  void visit_EpilogueStore(const EpilogueStore& n) override {
    if (n.fragment == Fragment::Wgmma) require_pinned("the epilogue's read of the accumulator");
    GG_INTERNAL_CHECK(!open_ && complete_ == groups_.size(),
                      "epilogue reads the accumulator before every wgmma completed: " + who() + " at " + at() +
                          " has " + str(int64_t(groups_.size() - complete_) + (open_ ? 1 : 0)) +
                          " group(s) in flight (the last wgmma wait before it must be <0>)");
    if (!n.staged) return;
    const int64_t bytes = int64_t(n.warpgroup_rows) * n.cols * dtype_bytes(parse_dtype(n.out_type));
    const auto [lo, hi] = range_of(n.staging, bytes);
    generic_write(buffer_name(n.staging.buffer), "EpilogueStore", lo, hi);
    if (!f_.declared) return;
    staging_at_[dealt_wg_ ? *dealt_wg_ : env_.vars.at("warpgroup")].insert({lo, hi});
    staging_buffer_ = buffer_name(n.staging.buffer);
  }

  // ---- shared memory through the generic and the async proxy
  void visit_SyncCopyTile(const SyncCopyTile& n) override {
    generic_write(buffer_name(n.dst.buffer), "SyncCopyTile", 0, kWholeBuffer);
    if (const int64_t bytes = f_.stage_bytes(buffer_name(n.dst.buffer))) {
      const int64_t s = must(n.dst.offset, "the destination of a SyncCopyTile") / bytes;
      fill_write(s, "stage " + str(s) + " of " + buffer_name(n.dst.buffer));
    }
  }
  void visit_FenceProxyAsync(const FenceProxyAsync&) override {
    each_buffers([&](Buffers& buffers) {
      for (auto& [name, b] : buffers)
        if (b.proxy == Proxy::Written && (elected_ == 0 || b.written_elected)) b.proxy = Proxy::Clean;
    });
  }
  // Bulk groups are counted per warpgroup (its storing thread commits them); a store belongs to
  // the group its warpgroup commits next.
  void visit_TmaStore(const TmaStore& n) override {
    async_read(buffer_name(n.src.buffer), "TmaStore to " + tensor_map_field(n.map));
    const std::pair<int64_t, int64_t> range = box_range(n.src, n.map);
    const int64_t lo = range.first, hi = range.second;
    each_warpgroup([&](int64_t wg, Buffers& buffers) {
      buffers[buffer_name(n.src.buffer)].stores.push_back({committed_[wg], lo, hi, false, ""});
    });
  }
  void visit_BulkCommit(const BulkCommit&) override {
    each_warpgroup([&](int64_t wg, Buffers&) { ++committed_[wg]; });
  }
  // wait_group_read<N>: every group but the newest N has read its source.
  void visit_BulkWaitRead(const BulkWaitRead& n) override {
    each_warpgroup([&](int64_t wg, Buffers& buffers) {
      for (auto& [name, b] : buffers)
        for (StoreRead& st : b.stores)
          if (st.group < committed_[wg] - n.pending) st.read_done = true;
    });
  }
  void visit_SyncThreads(const SyncThreads&) override { barrier(true); }
  // An arrive alone orders nothing for the role; a wait (or a whole barrier) meets every thread.
  void visit_ClusterSync(const ClusterSync& c) override {
    if (c.part != ClusterPart::Arrive) barrier(true);
  }
  // In a dealt trip a named barrier orders the warpgroup running it (its staging barrier) or
  // hands it the turn; it is never a barrier of the whole role.
  void visit_NamedBarrierSync(const NamedBarrierSync& n) override {
    if (turn_.trip > 0) {
      auto from = turn_.passed_on.find(must(n.id, "a named barrier id"));
      if (from != turn_.passed_on.end() && from->second == turn_.trip - 1) turn_.held = true;
    }
    // A ping-pong consumer's own barrier orders its own reads of its own accumulator (sm_100a).
    barrier((n.threads == role_.threads() && !dealt_wg_) ||
            (dealt_wg_ && n.threads == kWarpgroupThreads && sm100::tmem_accumulators(f_.plan) > 1));
  }
  void visit_NamedBarrierArrive(const NamedBarrierArrive& n) override {
    if (turn_.trip < 0) return;
    turn_.passed_on[must(n.id, "a named barrier id")] = turn_.trip;
    turn_.passed = true;
  }

 private:
  struct Group {
    std::set<int64_t> stages;
    std::string at;
  };
  struct StageState {
    int64_t fills = 0, waits = 0;
    bool held = false;            // acquired: waited on its fill, not released or refilled since
    bool synced = false;          // a barrier of the whole role since its last (synchronous) fill
    bool release_waited = false;  // the producer waited on its empty barrier since its last fill
    bool released_sync = false;   // a synchronous copy's fill was released (on its empty barrier)
  };
  enum class Proxy { Clean, Written, Published };
  // A TMA store's read of bytes [lo, hi) of a buffer, until a barrier (or the wait on a TMA
  // load refilling them) tells every thread of the warpgroup that it is done.
  struct StoreRead {
    int64_t group = 0;         // the warpgroup's bulk group
    int64_t lo = 0, hi = 0;
    bool read_done = false;    // a bulk wait retired the group (for the storing thread)
    std::string reloaded_on;   // ... then a TMA load completing on this barrier refilled the bytes
  };
  struct BufferState {
    Proxy proxy = Proxy::Clean;
    bool written_elected = false;
    std::string writer;
    std::vector<StoreRead> stores;
  };
  using Buffers = std::map<std::string, BufferState>;
  struct Turn {
    int64_t trip = -1;          // the trip of the dealt loop running now; -1 outside one
    bool held = false;          // its warpgroup took the turn (or it is the first trip)
    bool passed = false;        // ... and has passed it on since
    std::map<int64_t, int64_t> passed_on;  // named barrier id -> the trip that last arrived on it
  };

  // Bulk groups and proxy fences belong to threads: in a dealt trip only its warpgroup's
  // buffer states change; elsewhere every warpgroup of the role runs the statement.
  template <class F>
  void each_warpgroup(F f) {
    if (dealt_wg_) return f(*dealt_wg_, buffers_[*dealt_wg_]);
    const int64_t traced = env_.vars.at("warpgroup");
    if (buffers_.empty()) buffers_[traced];
    for (auto& [wg, buffers] : buffers_) f(wg, buffers);
  }
  template <class F>
  void each_buffers(F f) {
    each_warpgroup([&](int64_t, Buffers& buffers) { f(buffers); });
  }

  static constexpr int64_t kWholeBuffer = std::numeric_limits<int64_t>::max();
  static bool overlap(const StoreRead& st, int64_t lo, int64_t hi) { return st.lo < hi && lo < st.hi; }
  static std::string range_text(int64_t lo, int64_t hi) {
    return hi == kWholeBuffer ? std::string("(all)") : "[" + str(lo) + ", " + str(hi) + ")";
  }
  // The bytes an access at `ref` covers; the whole buffer where the offset is not a number here.
  std::pair<int64_t, int64_t> range_of(const SmemRef& ref, int64_t bytes) const {
    auto v = value_of(ref.offset, env_);
    if (!v || bytes <= 0) return {0, kWholeBuffer};
    return {*v, *v + bytes};
  }
  std::pair<int64_t, int64_t> box_range(const SmemRef& ref, rt::Operand map) const {
    const rt::TensorMapSpec* m = f_.map(map);
    return range_of(ref, m ? int64_t(m->box_rows) * m->box_cols * rt::elem_bytes(m->elem) : 0);
  }

  int64_t must(const ExprPtr& e, const std::string& what) const {
    auto v = value_of(e, env_);
    GG_INTERNAL_CHECK(v.has_value(), "check_sync cannot evaluate " + what + " = " + (e ? to_c(e) : "null") + " in " +
                                         who() + " at " + at() + " (a variable it does not know)");
    return *v;
  }
  std::string at() const {
    std::string s;
    for (const auto& [v, i] : loops_) s += (s.empty() ? "" : " ") + v + "=" + str(i);
    return s.empty() ? "the role's start" : s;
  }
  int64_t index_of(const BarrierRef& b) const {
    const int64_t s = must(b.index, "the index of " + bar_text(b));
    auto init = f_.init_indices.find(barrier_name(b.array));
    GG_INTERNAL_CHECK(
        init != f_.init_indices.end() && init->second.count(s),
        who() + " uses " + bar_text(barrier_name(b.array), s) + ", which no MbarrierInit initializes (at " + at() + ")");
    return s;
  }

  // The consumer's wait for fill #n of stage s passes on phase n, of parity n % 2.
  void acquire(int64_t s, int64_t parity) {
    StageState& st = stages_[s];
    const int64_t fill = st.waits++;
    const std::string bar = bar_text(kFull, s);
    GG_INTERNAL_CHECK(turn_.trip < 0 || turn_.held,
                      who() + " waits on " + bar + " at " + at() + " in turn #" + str(turn_.trip) +
                          " of a loop dealt to its warpgroups without taking the turn (no bar.sync on the named "
                          "barrier the previous turn arrived on): a warpgroup running ahead passes a parity wait on a "
                          "phase two fills behind");
    GG_INTERNAL_CHECK(!turn_.passed, who() + " waits on " + bar + " at " + at() +
                                         " after passing the turn on: the next warpgroup may already wait on the "
                                         "stages this one still reads");
    GG_INTERNAL_CHECK(parity == fill % 2, who() + " waits on " + bar + " with parity " + str(parity) + " for fill #" +
                                              str(fill) + " of the stage, whose phase has parity " + str(fill % 2) +
                                              " (at " + at() + ")");
    GG_INTERNAL_CHECK(fills.empty() || st.fills > fill, who() + " waits on " + bar + " for fill #" + str(fill) +
                                                            " before it issues that fill: it waits forever (at " +
                                                            at() + ")");
    st.held = true;
    acquires.push_back(s);
  }

  // The producer's wait before fill #n of stage s passes once release #n-1 completed phase
  // n-1 (parity (n-1) % 2); before the first fill, parity 1 passes on the fresh barrier.
  // A drain's wait counts the fills of every tile; a trace that capped the tile loop filled fewer,
  // so there its parity is left to the simulator, which runs every tile.
  void wait_for_release(int64_t s, int64_t parity) {
    StageState& st = stages_[s];
    if (in_drain_) drained_stages_.insert(s);
    GG_INTERNAL_CHECK((in_drain_ && capped_) || parity == (st.fills + 1) % 2, who() + " waits on " + bar_text(kEmpty, s) +
                                                        " with parity " + str(parity) + " before fill #" +
                                                        str(st.fills) + " of the stage, which needs parity " +
                                                        str((st.fills + 1) % 2) + " (at " + at() + ")");
    st.release_waited = true;
  }

  // A write into stage s (expect_tx, TMA load or synchronous copy); the first of a fill
  // checks that the stage is free: released by its readers (the empty barrier, or a barrier
  // of the whole role after a wgmma wait that completed every group reading it).
  void fill_write(int64_t s, const std::string& what) {
    if (filling_ == s) return;
    filling_ = s;
    StageState& st = stages_[s];
    if (f_.has_empty()) {
      GG_INTERNAL_CHECK(st.release_waited, who() + " fills " + what + " without waiting on " +
                                               bar_text(kEmpty, s) + " for its readers' release (at " +
                                               at() + ")");
      st.release_waited = false;
    }
    for (size_t g = synced_complete_; g < groups_.size(); ++g)
      GG_INTERNAL_CHECK(
          !groups_[g].stages.count(s),
          who() + " refills " + what + " at " + at() + " while the wgmma group issued at " + groups_[g].at +
              " may still read the stage: " +
              (g >= complete_ ? "the last wgmma wait (<" + str(last_wait_) + ">) leaves it in flight"
                              : std::string("no barrier of the whole role since the wait that completed it")) +
              "; a stage is released only after a wait that leaves none of its readers in flight");
    GG_INTERNAL_CHECK(!(open_ && open_stages_.count(s)),
                      who() + " refills " + what + " at " + at() + " while an open wgmma group reads it");
    ++st.fills;
    st.held = false;
    st.synced = false;
    st.released_sync = false;
    fills.push_back(s);
  }

  void check_readable(int64_t s, const std::string& buffer) {
    const StageState& st = stages_[s];
    if (f_.plan.tma_load)
      GG_INTERNAL_CHECK(st.held, who() + " reads stage " + str(s) + " of " + buffer + " at " + at() +
                                     " without holding " + bar_text(kFull, s) +
                                     ": no wait on its fill since the stage was released or refilled");
    else
      GG_INTERNAL_CHECK(st.fills > 0 && st.synced, who() + " reads stage " + str(s) + " of " + buffer + " at " + at() +
                                                       " before a barrier makes its synchronous copy visible");
  }

  // Rule 9: releasing stage s lets the producer overwrite it, so no wgmma group reading it
  // may still run: after wgmma_wait_group<N>, the last N groups may.
  void release(int64_t s) {
    const std::string bar = bar_text(kEmpty, s);
    StageState& st = stages_[s];
    // A synchronous copy's stage is held from the barrier after it (no full barrier).
    const bool held = f_.plan.tma_load ? st.held : st.synced && !st.released_sync;
    GG_INTERNAL_CHECK(held, who() + " releases " + bar + " at " + at() +
                                " without holding the stage (never acquired on " + bar_text(kFull, s) +
                                ", or released already)");
    if (!f_.plan.tma_load) st.released_sync = true;
    for (size_t g = complete_; g < groups_.size(); ++g)
      GG_INTERNAL_CHECK(!groups_[g].stages.count(s),
                        who() + " releases " + bar + " at " + at() + " after wgmma_wait_group<" + str(last_wait_) +
                            ">, while the wgmma group issued at " + groups_[g].at + " may still read stage " + str(s) +
                            ": a release after wait<N> may only name a stage "
                            "read N+1 or more groups ago (the stage released early)");
    GG_INTERNAL_CHECK(!(open_ && open_stages_.count(s)),
                      who() + " releases " + bar + " at " + at() + " while an open wgmma group reads the stage");
    st.held = false;
    releases.push_back(s);
  }

  // Each acquired fill is released once, in the order acquired: else a producer's wait on
  // the empty barrier of a stage never completes, or it refills a stage still read.
  void check_released_as_acquired() const {
    const std::string& full = kFull;
    const std::string& empty = kEmpty;
    const size_t n = std::min(acquires.size(), releases.size());
    for (size_t i = 0; i < n; ++i)
      GG_INTERNAL_CHECK(acquires[i] == releases[i], who() + " releases " + bar_text(empty, releases[i]) +
                                                        " as release #" + str(int64_t(i)) + ", but its acquisition #" +
                                                        str(int64_t(i)) + " was " + bar_text(full, acquires[i]) +
                                                        ": each acquired stage is released once, in the order "
                                                        "acquired (a release is missing or out of order)");
    GG_INTERNAL_CHECK(releases.size() >= acquires.size(),
                      who() + " acquires " + str(int64_t(acquires.size())) + " fills but releases " +
                          str(int64_t(releases.size())) + ": acquisition #" + str(int64_t(releases.size())) + " of " +
                          bar_text(full, acquires[releases.size()]) + " is never released on " +
                          bar_text(empty, acquires[releases.size()]) +
                          ", so the producer's wait before refilling that stage never completes");
    GG_INTERNAL_CHECK(releases.size() == acquires.size(),
                      who() + " releases " + bar_text(empty, releases.back()) + " more often than it acquires stages");
  }

  void barrier(bool whole_role) {
    filling_.reset();
    tc_.fenced_after = false;
    if (whole_role && tc_.fenced_before) tc_.reads_pending = false;
    tc_.fenced_before = false;
    each_buffers([&](Buffers& buffers) {
      for (auto& [name, b] : buffers) {
        if (b.proxy == Proxy::Written) b.proxy = Proxy::Published;
        std::erase_if(b.stores, [](const StoreRead& st) { return st.read_done; });
      }
    });
    if (!whole_role) return;
    synced_complete_ = complete_;
    for (auto& [s, st] : stages_) st.synced = true;
  }

  // Rule 5: a generic-proxy write read by the async proxy needs fence.proxy.async by the
  // writing threads before the barrier that orders the write and the read.
  void generic_write(const std::string& buffer, const std::string& what, int64_t lo, int64_t hi) {
    each_buffers([&](Buffers& buffers) {
      BufferState& b = buffers[buffer];
      for (const StoreRead& st : b.stores)
        GG_INTERNAL_CHECK(!overlap(st, lo, hi),
                          who() + " " + what + " rewrites " + buffer + " bytes " + range_text(lo, hi) + " at " + at() +
                              " while the TMA store of bulk group #" + str(st.group) + " may still read bytes " +
                              range_text(st.lo, st.hi) + ": the storing thread's bulk_wait_group_read retiring that "
                              "group, then a barrier, come first");
      b.proxy = Proxy::Written;
      b.written_elected = elected_ > 0;
      b.writer = what;
    });
  }
  void async_read(const std::string& buffer, const std::string& what) {
    each_buffers([&](Buffers& buffers) {
      auto it = buffers.find(buffer);
      if (it == buffers.end() || it->second.proxy == Proxy::Clean) return;
      GG_INTERNAL_CHECK(
          false, who() + " " + what + " reads " + buffer + " through the async proxy at " + at() + " after " +
                     it->second.writer + " wrote it through the generic proxy with no fence.proxy.async " +
                     (it->second.proxy == Proxy::Published ? "by the writing threads before the barrier between them"
                                                           : "between them"));
    });
  }

  const Facts& f_;
  RoleView role_;
  Env env_;
  int rank_;
  int elected_ = 0;
  std::vector<std::pair<std::string, int64_t>> loops_;
  bool open_ = false;
  bool acc_pinned_ = true;  // AccumulatorFence since the last accumulator write (zeroing, a wgmma wait)
  std::set<int64_t> open_stages_;
  std::vector<Group> groups_;
  size_t complete_ = 0;         // groups [0, complete_) are done for this thread
  size_t synced_complete_ = 0;  // ... and [0, synced_complete_) for every thread of the role
  int last_wait_ = 0;
  std::map<int64_t, StageState> stages_;
  std::optional<int64_t> filling_;  // the stage the current fill writes
  std::map<int64_t, Buffers> buffers_;           // per warpgroup
  std::map<int64_t, int64_t> committed_;         // per warpgroup: bulk groups committed
  std::optional<int64_t> dealt_wg_;              // the warpgroup running the current dealt trip
  std::map<std::string, ExprPtr> mutable_inits_;  // the declared value of each mutable let (dealt_loop)
  Turn turn_;
  std::map<int64_t, std::set<std::pair<int64_t, int64_t>>> staging_at_;  // per warpgroup: staged byte ranges
  std::string staging_buffer_;
  std::vector<int64_t> elected_warps_;  // the warps of the enclosing ElectOnes
  bool foreign_ = false;                 // in an ElectOne of another warpgroup of the role
  bool in_drain_ = false;                // in the producer's drain loop (LoopKind::Drain)
  bool capped_ = false;                  // a grid-strided loop ran fewer trips than the kernel would
  std::set<int64_t> drained_stages_;     // stages the drain waited on
  // tcgen05: what the traced thread (and its warp's elected one) has issued, committed and waited for.
  struct Tcgen05State {
    int64_t mma_warp = -1;          // the warp whose elected thread issues the MMAs
    bool uncommitted = false;       // MMAs since the last commit
    bool unfinished = false;        // MMAs since the last commit onto mma_done
    int64_t finish_commits = 0, finish_waits = 0;
    bool accumulator_ready = false;  // waited for the commit after the last MMA
    bool fenced_after = false;       // tcgen05.fence::after_thread_sync since the last barrier or wait
    bool fenced_since_wait = false;  // ... since the last wait on mma_done
    bool fenced_before = false;      // tcgen05.fence::before_thread_sync since the last barrier
    bool reads_pending = false;      // tcgen05.ld since the last fenced barrier of the whole role
  } tc_;
  struct AccumulatorBuffers {
    std::map<int64_t, int64_t> takes, waits;  // per buffer: waits on its acc_empty, on its mma_done
    std::set<int64_t> taken;                  // taken for MMAs, not committed since
    std::optional<int64_t> filling;           // the buffer the MMAs since the last commit write
    std::set<int64_t> ready;                  // waited for, not released since
    std::set<int64_t> unfenced_reads;         // read since the last tcgen05.fence::before_thread_sync
    std::vector<int64_t> committed, waited, released;
  } ab_;
};

// The roles of one CTA: lets outside the roles bind for all of them; each role runs on its own.
class CtaRun {
 public:
  CtaRun(const Facts& f, int rank) : f_(f), rank_(rank), env_(base_env(f, rank)) {}

  // Each role traced from its first warpgroup: the pipeline's fills and acquisitions.
  std::vector<RoleRun> runs;

  void run(const StmtPtr& body, bool has_roles) {
    if (!has_roles)  // a fragment: the whole body is one role of the whole CTA
      run_role(RoleView{"all", 0, f_.cta_warpgroups}, body);
    else
      walk(body);
    check_staging_disjoint();
  }

 private:
  void walk(const StmtPtr& s) {
    if (auto b = as<Block>(s)) {
      for (const auto& c : b->body) walk(c);
    } else if (auto l = as<Let>(s)) {
      bind_let(env_, *l);
    } else if (auto r = as<WarpRole>(s)) {
      run_role(RoleView{r->role, r->first_warpgroup, r->warpgroups}, r->body);
    }
  }

  // The role's other warpgroups run the same code on their own barriers and buffers; each is
  // traced too, for what it stages.
  void run_role(const RoleView& role, const StmtPtr& body) {
    for (int64_t wg = role.first; wg < role.first + role.warpgroups; ++wg) {
      RoleRun r(f_, role, env_, rank_, wg);
      r.visit(body);
      r.finish();
      for (const auto& [owner, ranges] : r.staging_at()) staging_at_[owner].insert(ranges.begin(), ranges.end());
      if (!r.staging_buffer().empty()) staging_buffer_ = r.staging_buffer();
      if (wg == role.first) runs.push_back(std::move(r));
    }
  }

  // Each warpgroup tracks its own stores' reads, so the warpgroups must stage apart.
  void check_staging_disjoint() const {
    for (auto a = staging_at_.begin(); a != staging_at_.end(); ++a)
      for (auto b = std::next(a); b != staging_at_.end(); ++b)
        for (const auto& [alo, ahi] : a->second)
          for (const auto& [blo, bhi] : b->second)
            GG_INTERNAL_CHECK(ahi <= blo || bhi <= alo,
                              "CTA " + str(rank_) + ": warpgroups " + str(a->first) + " and " + str(b->first) +
                                  " stage output at bytes [" + str(alo) + ", " + str(ahi) + ") and [" + str(blo) +
                                  ", " + str(bhi) + ") of " + staging_buffer_ + ": they overwrite each other's rows "
                                  "while a store reads them");
  }

  const Facts& f_;
  int rank_;
  Env env_;
  std::map<int64_t, std::set<std::pair<int64_t, int64_t>>> staging_at_;
  std::string staging_buffer_;
};

// The stages the loading role fills, in order, are the stages the computing role acquires:
// a wait for a fill that never comes hangs, a fill nobody waits for overwrites a stage.
void check_fills_acquired(const std::vector<RoleRun>& runs) {
  const RoleRun* loader = nullptr;
  for (const RoleRun& r : runs)
    if (!r.fills.empty()) {
      if (loader) return;  // several loading roles: their interleaving is not modelled
      loader = &r;
    }
  const std::string& full = kFull;
  for (const RoleRun& r : runs) {
    if (r.acquires.empty()) continue;
    GG_INTERNAL_CHECK(loader != nullptr,
                      r.who() + " waits on " + bar_text(full, r.acquires.front()) + ", but no role fills the pipeline");
    const auto& a = r.acquires;
    const auto& l = loader->fills;
    for (size_t i = 0; i < std::min(a.size(), l.size()); ++i)
      GG_INTERNAL_CHECK(a[i] == l[i], r.who() + " acquires " + bar_text(full, a[i]) + " as acquisition #" +
                                          str(int64_t(i)) + ", but fill #" + str(int64_t(i)) + " of " + loader->who() +
                                          " goes to " + bar_text(full, l[i]));
    GG_INTERNAL_CHECK(a.size() <= l.size(), r.who() + " waits on " + bar_text(full, a[l.size()]) + " for fill #" +
                                                str(int64_t(l.size())) + ", which " + loader->who() +
                                                " never issues: the wait never completes");
    GG_INTERNAL_CHECK(a.size() >= l.size(), loader->who() + " fills " + bar_text(full, l[a.size()]) + " (fill #" +
                                                str(int64_t(a.size())) + ") that " + r.who() + " never waits for");
  }
}

// Double-buffered TMEM: the writeback waits for the buffers in the order the MMA warp commits them
// (a wait for a commit that never comes hangs; a buffer committed and never waited for is never
// released, so the MMA warp's next wait for it hangs), and releases each once, in that order.
// A CTA pair's writebacks wait for the buffers its leader's MMA warp commits (`leader`).
void check_accumulator_handoff(const std::vector<RoleRun>& runs, const std::vector<RoleRun>& leader) {
  const RoleRun* issuing = nullptr;
  const RoleRun* writeback = nullptr;
  for (const RoleRun& r : leader)
    if (!r.buffers_committed().empty()) issuing = &r;
  for (const RoleRun& r : runs)
    if (!r.buffers_waited().empty()) writeback = &r;
  if (!issuing && !writeback) return;
  GG_INTERNAL_CHECK(issuing && writeback, (issuing ? issuing->who() + " commits accumulator buffers that no role waits for"
                                                   : writeback->who() + " waits for accumulator buffers that no role commits"));
  const auto text = [](const std::vector<int64_t>& v) {
    std::string t;
    for (size_t i = 0; i < v.size() && i < 8; ++i) t += (t.empty() ? "" : " ") + str(v[i]);
    return "[" + t + (v.size() > 8 ? " ..." : "") + "]";
  };
  GG_INTERNAL_CHECK(issuing->buffers_committed() == writeback->buffers_waited(),
                    writeback->who() + " waits for accumulator buffers " + text(writeback->buffers_waited()) + ", but " +
                        issuing->who() + " commits " + text(issuing->buffers_committed()) +
                        ": a wait for a commit that never comes hangs");
  GG_INTERNAL_CHECK(writeback->buffers_released() == writeback->buffers_waited(),
                    writeback->who() + " releases accumulator buffers " + text(writeback->buffers_released()) +
                        " after waiting for " + text(writeback->buffers_waited()) +
                        ": each buffer it read is released once, in order, or the MMA warp's wait for it hangs");
}

void check_pipeline(const Facts& f, const StmtPtr& body, bool has_roles) {
  std::vector<std::vector<RoleRun>> ctas;
  for (int rank = 0; rank < f.cluster; ++rank) {
    CtaRun cta(f, rank);
    cta.run(body, has_roles);
    if (f.declared && f.plan.tma_load) check_fills_acquired(cta.runs);
    ctas.push_back(std::move(cta.runs));
  }
  if (!f.declared || !f.plan.mma_warp) return;
  for (int rank = 0; rank < f.cluster; ++rank)
    check_accumulator_handoff(ctas[size_t(rank)], ctas[size_t(f.plan.cta_pair ? rank - rank % 2 : rank)]);
}

}  // namespace

Kernel check_sync(Kernel k) {
  const Facts facts = make_facts(k);
  StructureCheck structure(facts);
  structure.run(k.body);
  check_pipeline(facts, k.body, structure.has_roles());
  return k;
}

}  // namespace gg
