#include "codegen/kernel_ir.h"

#include <sstream>

#include "dsl/error.h"
#include "runtime/tensor_map.h"

namespace gg::kir {

const char* node_kind_name(NodeKind k) {
  switch (k) {
#define GG_KIR_NAME(N) \
  case NodeKind::N: return #N;
    GG_KIR_NODES(GG_KIR_NAME)
#undef GG_KIR_NAME
  }
  GG_INTERNAL_CHECK(false, "unhandled node kind");
}

StmtPtr block(std::vector<StmtPtr> body) {
  auto b = std::make_shared<Block>();
  for (auto& s : body)
    if (s) b->body.push_back(std::move(s));
  return b;
}

StmtPtr comment(std::string text) {
  auto c = std::make_shared<Comment>();
  c->text = std::move(text);
  return c;
}

const char* loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::Other: return "";
    case LoopKind::Tiles: return "tile loop";
    case LoopKind::KTiles: return "k-tile loop";
    case LoopKind::Subtiles: return "subtile loop";
    case LoopKind::Drain: return "drain loop";
  }
  return "";
}

std::string buffer_name(Buffer b) {
  switch (b) {
    case Buffer::A: return "smem_A";
    case Buffer::B: return "smem_B";
    case Buffer::D: return "smem_D";
    case Buffer::ScaleA: return "smem_SA";
    case Buffer::ScaleB: return "smem_SB";
  }
  return "?";
}

std::string barrier_name(Barrier b) {
  switch (b) {
    case Barrier::Full: return "full_bar";
    case Barrier::Empty: return "empty_bar";
    case Barrier::C: return "c_bar";
    case Barrier::MmaDone: return "mma_done_bar";
    case Barrier::AccEmpty: return "acc_empty_bar";
  }
  return "?";
}

std::string tmem_slot_name() { return "tmem_slot"; }

StmtPtr ElectionAwareMutator::mutate_ElectOne(const std::shared_ptr<const ElectOne>& e) {
  const bool outer = elected_;
  elected_ = true;
  StmtPtr out = Mutator::mutate_ElectOne(e);
  elected_ = outer;
  return out;
}

std::string tensor_map_field(rt::Operand o) {
  if (o == rt::Operand::ScaleA) return "map_scale_a";
  if (o == rt::Operand::ScaleB) return "map_scale_b";
  if (o == rt::Operand::Aux) return "map_aux";
  std::string letter = rt::operand_name(o);
  return "map_" + std::string(1, static_cast<char>(letter[0] - 'A' + 'a'));
}

std::string wgmma_wrapper_name(const WgmmaIssue& n) {
  return "wgmma_m" + std::to_string(n.m) + "n" + std::to_string(n.n) + "k" + std::to_string(n.k) + "_f32_" + n.dtype;
}

StmtPtr for_loop(std::string v, ExprPtr begin, ExprPtr end, StmtPtr body, std::string origin, bool unroll) {
  auto f = std::make_shared<For>();
  f->var = std::move(v);
  f->begin = std::move(begin);
  f->end = std::move(end);
  f->step = imm(1);
  f->body = std::move(body);
  f->origin = std::move(origin);
  f->unroll = unroll;
  return f;
}

StmtPtr search_loop(std::string v, ExprPtr begin, ExprPtr end, ExprPtr cond, StmtPtr body, std::string origin) {
  auto f = std::make_shared<For>(*as<For>(for_loop(std::move(v), std::move(begin), std::move(end), std::move(body),
                                                   std::move(origin))));
  f->while_cond = std::move(cond);
  return f;
}

StmtPtr if_then(ExprPtr cond, StmtPtr then_body, StmtPtr else_body) {
  auto i = std::make_shared<If>();
  i->cond = std::move(cond);
  i->then_body = std::move(then_body);
  i->else_body = std::move(else_body);
  return i;
}

StmtPtr let(std::string name, ExprPtr value, std::string type) {
  auto l = std::make_shared<Let>();
  l->type = std::move(type);
  l->name = std::move(name);
  l->value = std::move(value);
  return l;
}

SmemDescOffsets smem_desc_offsets(const WgmmaLayout& l) {
  return {l.mn_major ? l.atom_bytes : 16, 8 * int64_t(l.swizzle_bytes)};
}

StmtPtr mutable_let(std::string name, ExprPtr value, std::string type) {
  auto l = std::make_shared<Let>(*as<Let>(let(std::move(name), std::move(value), std::move(type))));
  l->mutable_var = true;
  return l;
}

StmtPtr assign(std::string name, ExprPtr value) {
  auto a = std::make_shared<Assign>();
  a->name = std::move(name);
  a->value = std::move(value);
  return a;
}

StmtPtr elect_one(StmtPtr body, ExprPtr warp) {
  auto e = std::make_shared<ElectOne>();
  e->body = std::move(body);
  e->warp = warp ? std::move(warp) : imm(0);
  return e;
}

StmtPtr elect_one_each_warp(StmtPtr body) {
  auto e = std::make_shared<ElectOne>();
  e->body = std::move(body);
  e->warp = imm(0);
  e->each_warp = true;
  return e;
}

StmtPtr warp_role(std::string role, int first_warpgroup, int warpgroups, StmtPtr body) {
  auto r = std::make_shared<WarpRole>();
  r->role = std::move(role);
  r->first_warpgroup = first_warpgroup;
  r->warpgroups = warpgroups;
  r->body = std::move(body);
  return r;
}

void Visitor::visit(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind) {
#define GG_KIR_DISPATCH(N) \
  case NodeKind::N: visit_##N(static_cast<const N&>(*s)); return;
    GG_KIR_NODES(GG_KIR_DISPATCH)
#undef GG_KIR_DISPATCH
  }
}

// Default handlers walk into children and do nothing else.
#define GG_KIR_VISIT_LEAF(N) \
  void Visitor::visit_##N(const N&) {}
GG_KIR_LEAF_NODES(GG_KIR_VISIT_LEAF)
#undef GG_KIR_VISIT_LEAF

void Visitor::visit_Block(const Block& b) {
  for (const auto& s : b.body) visit(s);
}
ExprPtr own_begin(const For& f) { return f.dealt > 1 ? f.begin + var(f.dealt_by) * f.step : f.begin; }
ExprPtr own_step(const For& f) { return f.dealt > 1 ? f.step * imm(f.dealt) : f.step; }

void Visitor::visit_For(const For& f) { visit(f.body); }
void Visitor::visit_ElectOne(const ElectOne& e) { visit(e.body); }
void Visitor::visit_WarpRole(const WarpRole& r) { visit(r.body); }
void Visitor::visit_If(const If& i) {
  visit(i.then_body);
  visit(i.else_body);
}

StmtPtr Mutator::mutate(const StmtPtr& s) {
  if (!s) return s;
  switch (s->kind) {
#define GG_KIR_MDISPATCH(N) \
  case NodeKind::N: return mutate_##N(std::static_pointer_cast<const N>(s));
    GG_KIR_NODES(GG_KIR_MDISPATCH)
#undef GG_KIR_MDISPATCH
  }
  GG_INTERNAL_CHECK(false, "unhandled node kind");
}

#define GG_KIR_MUTATE_LEAF(N) \
  StmtPtr Mutator::mutate_##N(const std::shared_ptr<const N>& n) { return n; }
GG_KIR_LEAF_NODES(GG_KIR_MUTATE_LEAF)
#undef GG_KIR_MUTATE_LEAF

StmtPtr Mutator::mutate_Block(const std::shared_ptr<const Block>& b) {
  std::vector<StmtPtr> body;
  for (const auto& s : b->body) {
    StmtPtr m = mutate(s);
    if (auto inner = as<Block>(m); inner && m != s) {
      body.insert(body.end(), inner->body.begin(), inner->body.end());  // splice replacements
    } else if (m) {
      body.push_back(m);
    }
  }
  return block(std::move(body));
}

StmtPtr Mutator::mutate_For(const std::shared_ptr<const For>& f) {
  auto copy = std::make_shared<For>(*f);
  copy->body = mutate(f->body);
  if (!copy->body) copy->body = block({});
  return copy;
}

StmtPtr Mutator::mutate_ElectOne(const std::shared_ptr<const ElectOne>& e) {
  auto copy = std::make_shared<ElectOne>(*e);
  copy->body = mutate(e->body);
  if (!copy->body) copy->body = block({});
  return copy;
}

StmtPtr Mutator::mutate_WarpRole(const std::shared_ptr<const WarpRole>& r) {
  auto copy = std::make_shared<WarpRole>(*r);
  copy->body = mutate(r->body);
  if (!copy->body) copy->body = block({});
  return copy;
}

StmtPtr Mutator::mutate_If(const std::shared_ptr<const If>& i) {
  auto copy = std::make_shared<If>(*i);
  copy->then_body = mutate(i->then_body);
  copy->else_body = mutate(i->else_body);
  if (!copy->then_body) copy->then_body = block({});
  return copy;
}

namespace {

std::string bar(const BarrierRef& b) { return barrier_name(b.array) + "[" + to_c(b.index) + "]"; }
std::string smem(const SmemRef& r) { return buffer_name(r.buffer) + "+" + to_c(r.offset); }
std::string batch_text(const ExprPtr& batch) { return batch ? " batch=" + to_c(batch) : ""; }
std::string group_text(const ExprPtr& group) { return group ? " of group " + to_c(group) : ""; }

class Dumper : public Visitor {
 public:
  std::ostringstream os;
  int depth = 0;
  void line(const std::string& s) { os << std::string(static_cast<size_t>(depth) * 2, ' ') << s << "\n"; }
  void nested(const StmtPtr& s) {
    ++depth;
    visit(s);
    --depth;
  }

  void visit_Block(const Block& b) override { Visitor::visit_Block(b); }
  void visit_For(const For& f) override {
    line(std::string(f.unroll ? "unrolled " : f.rolled ? "rolled " : "") + "for " + f.var + " in [" + to_c(f.begin) + ", " + to_c(f.end) +
         ") step " + to_c(f.step) + (f.while_cond ? " while " + to_c(f.while_cond) : std::string()) +
         (f.dealt > 1 ? " dealt " + std::to_string(f.dealt) + "-way by " + f.dealt_by : std::string()) +
         (f.origin.empty() ? "" : "  // " + f.origin) +
         (f.kind == LoopKind::Other ? "" : std::string(" [") + loop_kind_name(f.kind) + "]"));
    nested(f.body);
  }
  void visit_If(const If& i) override {
    line("if " + to_c(i.cond));
    nested(i.then_body);
    if (i.else_body) {
      line("else");
      nested(i.else_body);
    }
  }
  void visit_ElectOne(const ElectOne& e) override {
    line(e.each_warp ? std::string("elect one thread of each warp") : "elect one thread of warp " + to_c(e.warp));
    nested(e.body);
  }
  void visit_WarpRole(const WarpRole& r) override {
    line("role " + r.role + ": warpgroups [" + std::to_string(r.first_warpgroup) + ", " +
         std::to_string(r.first_warpgroup + r.warpgroups) + ")");
    nested(r.body);
  }
  void visit_Comment(const Comment& c) override { line("// " + c.text); }
  void visit_Let(const Let& l) override {
    line(std::string(l.mutable_var ? "var " : "") + l.type + " " + l.name + " = " + to_c(l.value));
  }
  void visit_Assign(const Assign& a) override { line(a.name + " := " + to_c(a.value)); }
  void visit_LoadTile(const LoadTile& n) override {
    line(std::string("LoadTile ") + rt::operand_name(n.operand) + " tile=" + to_c(n.tile) + " k_tile=" + to_c(n.k_tile) + " stage=" + to_c(n.stage) +
         batch_text(n.batch) + (n.k_first ? " k_first=" + to_c(n.k_first) : ""));
  }
  template <class Node>
  static std::string tmem_chunk(const Node& n) {
    return n.fragment == Fragment::TmemLanes ? " (TMEM chunk from element " + to_c(n.element0) + ")" : "";
  }
  static std::string workspace(const SplitKWorkspace& w) {
    return "workspace[" + std::to_string(w.slots) + " slots][" + std::to_string(w.splits) + " splits][" +
           std::to_string(w.per_thread) + "][" + std::to_string(w.threads) + " threads]";
  }
  void visit_PartialStore(const PartialStore& n) override {
    line("PartialStore " + n.accumulator + "[" + std::to_string(n.blocks) + "][" + std::to_string(n.regs) + "]" +
         tmem_chunk(n) + " -> " + workspace(n.ws) + " slot=" + to_c(n.slot) + " split=" + to_c(n.split) +
         " first_thread=" + std::to_string(n.first_thread));
  }
  void visit_TileTicket(const TileTicket& n) override {
    line("TileTicket " + n.result + " = last of " + to_c(n.arrivals) + " on counter " + to_c(n.counter) +
         " barrier=" + to_c(n.barrier) + " threads=" + std::to_string(n.threads) + " from " +
         std::to_string(n.first_thread) + (n.when ? " when " + to_c(n.when) : std::string()) +
         (n.claim ? " claimed before the store" : ""));
  }
  void visit_PartialsStored(const PartialsStored& n) override {
    line("PartialsStored on counter " + to_c(n.counter) + " slot=" + to_c(n.slot) + " split=" + to_c(n.split) +
         " by thread " + std::to_string(n.first_thread));
  }
  void visit_AwaitPartials(const AwaitPartials& n) override {
    line("AwaitPartials of " + to_c(n.arrivals) + " - 1 on counter " + to_c(n.counter) + " barrier=" + to_c(n.barrier) +
         " threads=" + std::to_string(n.threads) + " from " + std::to_string(n.first_thread));
  }
  void visit_ReductionCombine(const ReductionCombine& n) override {
    line(std::string("ReductionCombine ") + n.out + "[" + to_c(n.out_offset) + " + " + to_c(n.element0) + " + i], i < " +
         std::to_string(n.elements) + ", below " + to_c(n.limit) + " = sum over t < " + to_c(n.slots_in_band) +
         " of slot " + to_c(n.first_slot) + " + t * " + to_c(n.slot_stride) + " (" + std::to_string(n.ws.slot_floats()) +
         " floats), " + std::to_string(n.parts) + " part(s) from float " + std::to_string(n.part0) + " stride " +
         std::to_string(n.part_stride) + "; threads " + std::to_string(n.threads) + " from " + std::to_string(n.first_thread));
  }
  void visit_PartialReduce(const PartialReduce& n) override {
    line("PartialReduce " + n.accumulator + tmem_chunk(n) + " = sum over " + (n.pieces ? "the first " + to_c(n.pieces) + " splits" : "splits") +
         " of " + workspace(n.ws) + " slot=" + to_c(n.slot) + " first_thread=" + std::to_string(n.first_thread) +
         (n.own ? " own=" + to_c(n.own) + " (in registers)" : ""));
  }
  void visit_AcquireStage(const AcquireStage& n) override {
    line(std::string("AcquireStage") + (n.to_fill ? " to fill" : "") + " stage=" + to_c(n.stage) +
         " parity=" + to_c(n.parity));
  }
  void visit_ComputeTile(const ComputeTile& n) override {
    line("ComputeTile stage=" + to_c(n.stage) + " in_flight=" + std::to_string(n.in_flight) +
         (n.k_block ? " k_block=" + to_c(n.k_block) : "") + (n.batch ? " batch=" + to_c(n.batch) : "") +
         (n.k_index ? " k_index=" + to_c(n.k_index) : ""));
    if (n.release) {
      line("release once its MMAs are done:");
      nested(n.release);
    }
  }
  void visit_FinishCompute(const FinishCompute& n) override {
    line("FinishCompute" + (n.tiles_done ? " tiles_done=" + to_c(n.tiles_done) : std::string()) +
         (n.commits ? "" : " (waits only)") + (n.waits ? "" : " (commits only)"));
  }
  void visit_AcquireAccumulator(const AcquireAccumulator& n) override {
    line("AcquireAccumulator tiles_done=" + to_c(n.tiles_done));
  }
  void visit_SetMaxNReg(const SetMaxNReg& n) override {
    line(std::string("SetMaxNReg ") + (n.increase ? "inc " : "dec ") + std::to_string(n.regs));
  }
  void visit_ClusterSync(const ClusterSync& c) override {
    line(c.part == ClusterPart::Arrive ? "ClusterSync arrive (relaxed)" : c.part == ClusterPart::Wait ? "ClusterSync wait" : "ClusterSync");
  }
  void visit_ReleaseStage(const ReleaseStage& n) override { line("ReleaseStage stage=" + to_c(n.stage)); }
  void visit_WriteTile(const WriteTile& n) override {
    line("WriteTile m_tile=" + to_c(n.m_tile) + " n_tile=" + to_c(n.n_tile) + batch_text(n.batch) +
         (n.split ? " split=" + to_c(n.split) : "") + (n.pieces ? " pieces=" + to_c(n.pieces) : ""));
  }
  void visit_MbarrierInit(const MbarrierInit& n) override {
    line("MbarrierInit " + bar(n.bar) + " arrivals=" + std::to_string(n.arrivals));
  }
  void visit_FenceMbarrierInit(const FenceMbarrierInit&) override { line("FenceMbarrierInit"); }
  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx& n) override {
    line("MbarrierArriveExpectTx " + bar(n.bar) + " bytes=" + std::to_string(n.bytes) + (n.leader_only ? " (the pair's even CTA)" : ""));
  }
  void visit_MbarrierArrive(const MbarrierArrive& n) override {
    line("MbarrierArrive " + bar(n.bar) + (n.cta ? " cta=" + to_c(n.cta) : ""));
  }
  void visit_MbarrierWait(const MbarrierWait& n) override {
    line("MbarrierWait " + bar(n.bar) + " parity=" + to_c(n.parity));
  }
  void visit_TmaLoad(const TmaLoad& n) override {
    line("TmaLoad " + tensor_map_field(n.map) + group_text(n.group) + " row=" + to_c(n.row) + " col=" + to_c(n.col) +
         batch_text(n.batch) + " -> " + smem(n.dst) + " bar=" +
         bar(n.bar) + (n.multicast_mask ? " multicast=" + std::to_string(n.multicast_mask) : "") +
         (n.multicast_shift ? "<<" + to_c(n.multicast_shift) : "") + (n.to_pair_leader ? " of the pair's even CTA" : ""));
  }
  void visit_TmaStore(const TmaStore& n) override {
    line("TmaStore " + tensor_map_field(n.map) + group_text(n.group) + " row=" + to_c(n.row) + " col=" + to_c(n.col) +
         batch_text(n.batch) + " <- " + smem(n.src));
  }
  void visit_AcquireGroupMaps(const AcquireGroupMaps& n) override {
    line("AcquireGroupMaps group=" + to_c(n.group) + (n.operand ? " " + tensor_map_field(*n.operand) : ""));
  }
  void visit_BulkCommit(const BulkCommit&) override { line("BulkCommit"); }
  void visit_BulkWaitRead(const BulkWaitRead& n) override { line("BulkWaitRead " + std::to_string(n.pending)); }
  void visit_SyncCopyTile(const SyncCopyTile& n) override {
    line("SyncCopyTile " + n.source + " " + std::to_string(n.rows) + "x" + std::to_string(n.cols) + " from (" +
         to_c(n.row0) + ", " + to_c(n.col0) + ") limits (" + to_c(n.row_limit) + ", " + to_c(n.col_limit) +
         ") ld=" + to_c(n.ld) + (n.offset ? " offset=" + to_c(n.offset) : "") + " -> " + smem(n.dst) + " threads=" + std::to_string(n.threads) +
         " swizzle=" + std::to_string(n.swizzle_bytes) + (n.load_bytes == 16 ? "" : " by element") +
         (n.mn_major ? " mn-major" : ""));
    std::string lets;
    for (const auto& l : n.index.chunk) lets += " " + l.name + " = " + to_c(l.value) + ";";
    line("  per chunk of " + std::to_string(n.index.chunks) + ":" + lets + " read if " + to_c(n.index.inside) + " at " +
         to_c(n.index.element) + (n.load_bytes == 16 ? "" : ", " + to_c(n.index.valid) + " valid"));
  }
  void visit_FenceProxyAsync(const FenceProxyAsync&) override { line("FenceProxyAsync"); }
  void visit_SyncThreads(const SyncThreads&) override { line("SyncThreads"); }
  void visit_NamedBarrierSync(const NamedBarrierSync& n) override {
    line("NamedBarrierSync id=" + to_c(n.id) + " threads=" + std::to_string(n.threads));
  }
  void visit_NamedBarrierArrive(const NamedBarrierArrive& n) override {
    line("NamedBarrierArrive id=" + to_c(n.id) + " threads=" + std::to_string(n.threads));
  }
  void visit_AccumulatorDecl(const AccumulatorDecl& n) override {
    line("AccumulatorDecl " + n.name + "[" + std::to_string(n.blocks) + "][" + std::to_string(n.regs) + "]");
  }
  void visit_AccumulatorZero(const AccumulatorZero& n) override { line("AccumulatorZero " + n.name); }
  void visit_AccumulatorFence(const AccumulatorFence& n) override {
    line("AccumulatorFence " + n.name + "[" + std::to_string(n.blocks) + "][" + std::to_string(n.regs) + "]");
  }
  void visit_WgmmaFence(const WgmmaFence&) override { line("WgmmaFence"); }
  static std::string layout(const WgmmaLayout& l) {
    return "swizzle=" + std::to_string(l.swizzle_bytes) +
           (l.mn_major ? " mn-major atoms " + std::to_string(l.atom_bytes) + "B apart" : "");
  }
  void visit_WgmmaIssue(const WgmmaIssue& n) override {
    line("WgmmaIssue m" + std::to_string(n.m) + "n" + std::to_string(n.n) + "k" + std::to_string(n.k) + "." +
         n.dtype + " " + n.accumulator + "[" + to_c(n.block) + "] a=" + smem(n.a) + " " + layout(n.a_layout) +
         " b=" + smem(n.b) + " " + layout(n.b_layout) + (n.accumulate ? " accumulate=" + to_c(n.accumulate) : ""));
  }
  void visit_WgmmaCommit(const WgmmaCommit&) override { line("WgmmaCommit"); }
  void visit_WgmmaWait(const WgmmaWait& n) override { line("WgmmaWait " + std::to_string(n.pending)); }
  void visit_PromoteAccumulator(const PromoteAccumulator& n) override {
    line("PromoteAccumulator " + n.into + " += " + n.from + "[" + std::to_string(n.blocks) + "][" +
         std::to_string(n.regs) + "]" + (n.block ? " block " + to_c(n.block) : "") + (n.row_scaled ? " x sa" : "") +
         (n.col_split ? " x sb_lo before column " + to_c(n.col_split) + ", sb_hi after" : "") +
         (n.col_scaled ? " x sbc" : ""));
  }
  void visit_PrefetchScaleFactors(const PrefetchScaleFactors& n) override {
    line("PrefetchScaleFactors sb_next_lo = args.scale_b[" + to_c(n.lo) + "] sb_next_hi = " +
         (n.hi ? "args.scale_b[" + to_c(n.hi) + "]" : "sb_next_lo"));
  }
  void visit_LoadScaleFactors(const LoadScaleFactors& n) override {
    line("LoadScaleFactors" +
         (n.lo != nullptr && n.lo_next != nullptr ? " sb_lo, sb_hi = sb_next_lo, sb_next_hi (args.scale_b[" + to_c(n.lo) + "]); sb_next_lo = args.scale_b[" +
                                  to_c(n.lo_next) + "] sb_next_hi = " +
                                  (n.hi_next ? "args.scale_b[" + to_c(n.hi_next) + "]" : "sb_next_lo")
          : n.lo ? " sb_lo = args.scale_b[" + to_c(n.lo) + "] sb_hi = " + (n.hi ? "args.scale_b[" + to_c(n.hi) + "]" : "sb_lo")
                 : std::string()) +
         (n.row_scales ? " sa[" + std::to_string(n.blocks) + "][2] from " + smem(*n.row_scales) + " row0=" + to_c(n.row0)
                       : std::string()) +
         (n.a_index ? " sa[" + std::to_string(n.blocks) + "][2] = args.scale_a[" + to_c(n.a_index) +
                          (n.a_row_block ? " + min(" + to_c(n.a_row) + " + row, " + to_c(n.a_last) + ") / " +
                                               std::to_string(n.a_row_block) + " * " + to_c(n.a_row_stride)
                                         : std::string()) +
                          "]"
                    : std::string()) +
         (n.cols_index ? " sbc[" + std::to_string(n.cols / 8) + "][2] = args.scale_b[" + to_c(n.cols_index) + " + min(" +
                             to_c(n.cols_first) + " + column, " + to_c(n.cols_last) + ") * " + to_c(n.cols_stride) + "]"
                       : std::string()));
  }
  void visit_ScaleAccumulatorColumns(const ScaleAccumulatorColumns& n) override {
    line("ScaleAccumulatorColumns " + n.name + "[" + std::to_string(n.blocks) + "][" + std::to_string(n.regs) +
         "] x args.scale_b[min(" + to_c(n.first) + " + column, " + to_c(n.last) + ")]");
  }
  void visit_EpilogueStore(const EpilogueStore& n) override {
    std::string ops;
    for (const auto& op : n.ops) ops += " op" + std::to_string(int(op.kind)) + "(" + std::to_string(op.scalar) + "," + op.operand_type + ")";
    const std::string fragment =
        n.fragment == Fragment::TmemLanes ? " tmem lanes of m" + std::to_string(n.mma_m) + " blocks from row " +
                                                std::to_string(n.lane_row0)
                                          : "";
    line("EpilogueStore " + n.accumulator + fragment + " blocks=" + std::to_string(n.blocks) + " n=" + std::to_string(n.mma_n) +
         " rows/wg=" + std::to_string(n.warpgroup_rows) + " wg=" + to_c(n.warpgroup) + " at (" + to_c(n.row0) + ", " + to_c(n.col0) + ") cols [" + to_c(n.col_begin) + " +" + std::to_string(n.cols) + ") -> " +
         n.out_type + (n.staged ? " staged " + smem(n.staging) + (n.stmatrix ? " by stmatrix" : " by st.shared")
                  : (n.column_major ? " direct column-major" : " direct") + (n.ld ? " ld=" + to_c(n.ld) : "")) +
         (n.d_offset ? " d_offset=" + to_c(n.d_offset) : "") + (n.c_offset ? " c_offset=" + to_c(n.c_offset) : "") +
         (n.staging_col0 ? " staging_col0=" + to_c(n.staging_col0) : "") + ops);
    const EpilogueIndex& ix = n.index;
    auto lets = [&](const char* level, const std::vector<IndexLet>& ls) {
      if (ls.empty()) return;
      std::string text = std::string("  ") + level + ":";
      for (const auto& l : ls) text += " " + l.name + " = " + to_c(l.value) + ";";
      line(text);
    };
    lets("per thread", ix.thread);
    if (ix.lane_guard) line("  if " + to_c(ix.lane_guard));
    if (ix.group_begin) line("  groups [" + to_c(ix.group_begin) + ", " + to_c(ix.group_end) + ")");
    lets("per group", ix.group);
    lets("per bias half", ix.bias_group);
    lets("per pair", ix.pair);
    lets("per stmatrix row", ix.matrix_row);
    for (size_t e = 0; e < 2; ++e) {
      std::string text;
      if (ix.inside[e]) text += " inside " + to_c(ix.inside[e]) + ";";
      if (ix.d_element[e]) text += " D at " + to_c(ix.d_element[e]) + ";";
      if (ix.c_element[e]) text += " C at " + to_c(ix.c_element[e]) + ";";
      if (ix.partial_col[e]) text += " column partial at " + to_c(ix.partial_col[e]) + ";";
      if (!text.empty()) line("  value " + std::to_string(e) + ":" + text);
    }
    if (n.reduce) {
      std::string masks;
      for (int m : n.reduce->lane_masks) masks += " " + std::to_string(m);
      line(std::string("  reduces ") + (n.reduce->along == EpilogueReduction::Along::Rows ? "rows" : "columns") +
           (n.reduce->squares ? " (squares)" : "") + " over lanes xor" + masks +
           (ix.partial_row ? "; row partial at " + to_c(ix.partial_row) : std::string()));
    }
  }
  void visit_TmemAlloc(const TmemAlloc& n) override {
    line("TmemAlloc warp=" + to_c(n.warp) + " columns=" + std::to_string(n.columns) + (n.pair ? " cta_group::2" : "") + " -> " +
         tmem_slot_name());
  }
  void visit_TmemBaseLoad(const TmemBaseLoad& n) override { line("TmemBaseLoad " + n.name + " <- " + tmem_slot_name()); }
  void visit_TmemDealloc(const TmemDealloc& n) override {
    line("TmemDealloc warp=" + to_c(n.warp) + " " + n.base + " columns=" + std::to_string(n.columns) + (n.pair ? " cta_group::2" : ""));
  }
  void visit_Tcgen05Fence(const Tcgen05Fence& n) override {
    line(std::string("Tcgen05Fence ") + (n.after ? "after_thread_sync" : "before_thread_sync"));
  }
  void visit_Tcgen05Mma(const Tcgen05Mma& n) override {
    line("Tcgen05Mma m" + std::to_string(n.m) + "n" + std::to_string(n.n) + "k" + std::to_string(n.k) + "." + n.dtype +
         " tmem " + n.base + " lane=" + to_c(n.lane) + " column=" + to_c(n.column) + " a=" + smem(n.a) + " " +
         layout(n.a_layout) + " b=" + smem(n.b) + " " + layout(n.b_layout) + " accumulate=" + to_c(n.accumulate) +
         (n.pair ? " cta_group::2" : "") +
         (n.block_scaled() ? " block_scale sfa=" + to_c(n.scale_a_column) + " sfb=" + to_c(n.scale_b_column) +
                                 " id=" + to_c(n.scale_id)
                           : ""));
  }
  void visit_Tcgen05Copy(const Tcgen05Copy& n) override {
    line("Tcgen05Copy 32x128b.warpx4 " + n.base + " column=" + to_c(n.column) + " <- " + smem(n.src) +
         (n.pair ? " cta_group::2" : ""));
  }
  void visit_Tcgen05Commit(const Tcgen05Commit& n) override {
    line("Tcgen05Commit " + bar(n.bar) + (n.multicast_mask ? " multicast=" + std::to_string(n.multicast_mask) : "") +
         (n.pair ? " cta_group::2" : ""));
  }
  void visit_TmemLoad(const TmemLoad& n) override {
    line("TmemLoad 32x32b.x" + std::to_string(n.columns) + " " + n.dst + " <- " + n.base + " lane=" + to_c(n.lane) +
         " column=" + to_c(n.column) + (n.zero_when ? " zero when " + to_c(n.zero_when) : ""));
  }
};

}  // namespace

std::string dump(const StmtPtr& s) {
  Dumper d;
  d.visit(s);
  return d.os.str();
}

bool structurally_equal(const StmtPtr& a, const StmtPtr& b) { return dump(a) == dump(b); }

bool uses_tcgen05(const StmtPtr& s) {
  struct Finder : Visitor {
    bool found = false;
    void visit_TmemAlloc(const TmemAlloc&) override { found = true; }
    void visit_Tcgen05Mma(const Tcgen05Mma&) override { found = true; }
    void visit_TmemLoad(const TmemLoad&) override { found = true; }
    void visit_Tcgen05Copy(const Tcgen05Copy&) override { found = true; }
  } f;
  f.visit(s);
  return f.found;
}

}  // namespace gg::kir
