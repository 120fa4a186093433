#include "codegen/loop_nest.h"

#include <charconv>
#include <sstream>
#include <unordered_map>

#include "codegen/resources.h"
#include "dsl/error.h"

namespace gg {

namespace {


std::string number(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  GG_INTERNAL_CHECK(res.ec == std::errc(), "to_chars failed");
  return std::string(buf, res.ptr);
}

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : sep) + x;
  return s;
}

char root_letter(Root r) { return r == Root::M ? 'm' : r == Root::N ? 'n' : 'k'; }

// The tile coordinate along root r: the tile-level loops over r ("m_o"; "tile.m" for an axis
// fused from several dimensions), or "0" when r is not tiled.
std::string tile_coordinate(const Domain& dom, Root r) {
  std::vector<std::string> parts;
  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level != Level::Tile || !(a.roots & unsigned(r))) continue;
    parts.push_back(a.roots == unsigned(r) ? a.name : a.name + "." + root_letter(r));
  }
  if (parts.empty()) return "0";
  return parts.size() == 1 ? parts[0] : "(" + join(parts, ", ") + ")";
}

NestLoop loop_of(const Axis& a, const Schedule& s) {
  NestLoop l;
  l.axes = {a.name};
  l.extents = {a.extent};
  l.binding = a.binding;
  if (auto cb = s.circular_buffer_of(); cb && cb->axis == a.name) l.pipeline = cb;
  if (a.binding == Binding::Persistent) l.persist = s.persistence();
  return l;
}

// Nests `inner` statements inside `loops`, outermost first; returns the outermost node list.
std::vector<NestNode> nest(const std::vector<NestLoop>& loops, std::vector<NestNode> inner) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    NestNode n{*it, std::move(inner)};
    inner.clear();
    inner.push_back(std::move(n));
  }
  return inner;
}

struct Context {
  const Schedule& s;
  const Definition& def;
  const Domain& dom;
  int64_t tm, tn, tk;
  int stages;
  std::vector<NestLoop> outer;  // tile loops over output tiles (grid, persistent, serial, unbound)
  std::vector<NestLoop> kloops; // tile loops over k
};

std::vector<NestNode> loads(const Context& c, const std::string& stage_index) {
  std::vector<NestNode> out;
  const auto& ops = c.def.matmul_node().operands;
  const auto multicast = c.s.multicast_operands();
  for (size_t i = 0; i < ops.size(); ++i) {
    LoadStmt l;
    l.tensor = c.def.node(ops[i]).name;
    l.index = {tile_coordinate(c.dom, i == 0 ? Root::M : Root::N), tile_coordinate(c.dom, Root::K)};
    l.rows = i == 0 ? c.tm : c.tn;
    l.cols = c.tk;
    l.method = c.s.read_method(l.tensor).value_or(CopyMethod::Sync);
    l.element_copy = l.method == CopyMethod::Sync && !vector_rows(c.def, c.def.node(ops[i]));
    l.stages = c.stages;
    if (c.stages > 1) l.stage_index = stage_index;
    for (const auto& m : multicast)
      if (m == l.tensor) l.multicast_ctas = multicast_ctas(c.s, int(i));
    if (i == 1 && cta_pair_mma(c.s)) {
      l.rows /= 2;
      l.pair_half = true;
    }
    out.push_back(NestNode{l, {}});
  }
  return out;
}

NestNode mma(const Context& c, bool whole_tile = false) {
  MmaStmt m;
  m.mma = c.s.mma_shape();
  m.warpgroups = whole_tile ? 1 : c.s.warpgroups_per_tile();
  const Axis* wg = c.dom.bound_to(Binding::Warpgroup);
  bool wg_on_n = wg && wg->roots == unsigned(Root::N);
  if (wg) m.warpgroup_axis = wg->name;
  m.tile_m = wg_on_n ? c.tm : ceil_div(c.tm, m.warpgroups);
  m.tile_n = wg_on_n ? ceil_div(c.tn, m.warpgroups) : c.tn;
  m.tile_k = c.tk;
  Target t = m.mma ? m.mma->target : Target::Sm90a;
  m.accumulator = t == Target::Sm100a ? Place::Tmem : Place::Registers;
  if (auto w = c.s.write_of(c.def.matmul_node().name)) m.accumulator = w->place;
  if (m.mma) {
    int64_t per_issue_m = m.mma->m == 256 ? 128 : m.mma->m;  // m256 spans a CTA pair
    m.rep_m = ceil_div(m.tile_m, per_issue_m);
    m.rep_n = ceil_div(m.tile_n, m.mma->n);
    m.rep_k = ceil_div(m.tile_k, m.mma->k);
  }
  return NestNode{m, {}};
}

NestNode epilogue(const Context& c, Place from) {
  EpilogueStmt e;
  e.from = from;
  // Each op's compute_at axes, in one pass over the directives (not one per op).
  std::unordered_map<std::string, std::string> at_axes;
  for (const auto& d : c.s.directives())
    if (auto* ca = std::get_if<ComputeAtD>(&d)) {
      std::string& detail = at_axes[ca->op];
      detail += (detail.empty() ? "" : ", @ ") + ca->axis;
    }
  for (int id : c.def.epilogue()) {
    const Node& n = c.def.node(id);
    EpilogueStmt::Op op{n.name, "", c.s.is_inlined(n.name)};
    switch (n.kind) {
      case OpKind::Scale: op.detail = "x " + number(n.scalar); break;
      case OpKind::AddScaled:
        op.detail = "+ " + number(n.scalar) + " x " + c.def.node(n.operands.at(1)).name +
                    (stages_c_in_smem(c.s) ? ", TMA-loaded into the staging buffer" : "");
        break;
      case OpKind::AddBias:
        op.detail = "+ " + c.def.node(n.operands.at(1)).name + (n.bias_along == BiasAlong::Rows ? "[m]" : "[n]");
        break;
      case OpKind::ActGrad:
        op.detail = "x " + std::string(op_name(n.activation)) + "'(" + c.def.node(n.operands.at(1)).name + ")" +
                    (stages_c_in_smem(c.s) ? ", TMA-loaded into the staging buffer" : "");
        break;
      case OpKind::Cast: op.detail = "-> " + std::string(dtype_name(n.dtype)); break;
      default: break;
    }
    if (auto at = at_axes.find(n.name); at != at_axes.end()) op.detail += (op.detail.empty() ? "@ " : ", @ ") + at->second;
    e.ops.push_back(op);
  }
  e.output = c.def.node(c.def.output()).name;
  if (auto w = c.s.write_of(e.output)) {
    e.staged = w->place == Place::Shared;
    e.store = w->method;
  }
  if (auto sub = c.s.store_subtile_of(); sub && e.staged) {
    e.subtile_cols = sub->cols;
    e.subtile_buffers = sub->buffers;
  }
  e.index = {tile_coordinate(c.dom, Root::M), tile_coordinate(c.dom, Root::N)};
  return NestNode{e, {}};
}

// The loads and/or mma inside the k loops, then the epilogue after them, inside the output
// tile loops.
// `whole_tile_mma`: one thread issues the tile's MMAs (the MMA warp), not each warpgroup its part.
std::vector<NestNode> tile_nest(const Context& c, bool with_loads, bool with_mma, bool with_epilogue,
                                bool whole_tile_mma = false) {
  std::vector<NestNode> body;
  if (with_loads) {
    std::string stage = c.kloops.empty() ? "" : c.kloops.back().axes[0] + " % " + std::to_string(c.stages);
    body = loads(c, stage);
  }
  if (with_mma) body.push_back(mma(c, whole_tile_mma));
  // A writeback alone (double-buffered TMEM) runs no k loop.
  std::vector<NestNode> per_tile = with_loads || with_mma ? nest(c.kloops, std::move(body)) : body;
  if (with_epilogue) per_tile.push_back(epilogue(c, std::get<MmaStmt>(mma(c).item).accumulator));
  return nest(c.outer, std::move(per_tile));
}

}  // namespace

int64_t NestLoop::extent() const {
  int64_t e = 1;
  for (int64_t x : extents) e *= x;
  return e;
}

LoopNests make_loop_nests(const Schedule& s, const std::vector<RoleShape>& roles) {
  const Domain& dom = s.domain();
  Context c{s, s.definition(), dom, dom.tile_extent(Root::M), dom.tile_extent(Root::N), dom.tile_extent(Root::K),
            1, {}, {}};
  if (auto cb = s.circular_buffer_of()) c.stages = cb->stages;
  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level != Level::Tile) continue;
    (a.roots & unsigned(Root::K) ? c.kloops : c.outer).push_back(loop_of(a, s));
  }

  LoopNests out;
  if (auto m = s.mma_shape()) out.target = m->target;
  out.tile_m = c.tm;
  out.tile_n = c.tn;
  out.tile_k = c.tk;
  if (auto cl = s.cluster_dims()) out.cluster = *cl;
  GG_INTERNAL_CHECK(!roles.empty() && (roles.size() == 1) == !s.warp_roles(), "roles do not match warp_specialize");
  if (roles.size() == 1) {
    out.roles.push_back(RoleNest{roles[0], tile_nest(c, true, true, true), ""});
    return out;
  }
  const RoleShape& producer_shape = roles[0];
  const RoleShape& consumer_shape = roles[1];

  // Producer: the grid-bound loops stay; the tile loops it iterates (persistent, serial)
  // merge with the k loops into one stream of k tiles.
  Context p = c;
  p.outer.clear();
  std::vector<NestLoop> stream;
  for (const auto& l : c.outer) {
    bool iterates = l.binding == Binding::Persistent || l.binding == Binding::Serial || l.binding == Binding::Unroll;
    (iterates ? stream : p.outer).push_back(l);
  }
  if (!stream.empty() && !c.kloops.empty()) {
    NestLoop merged;
    merged.binding = stream.front().binding;
    for (const auto& l : stream) {
      merged.axes.insert(merged.axes.end(), l.axes.begin(), l.axes.end());
      merged.extents.insert(merged.extents.end(), l.extents.begin(), l.extents.end());
      if (l.persist) merged.persist = l.persist;
    }
    for (const auto& l : c.kloops) {
      merged.axes.insert(merged.axes.end(), l.axes.begin(), l.axes.end());
      merged.extents.insert(merged.extents.end(), l.extents.begin(), l.extents.end());
      if (l.pipeline) merged.pipeline = l.pipeline;
    }
    p.outer.push_back(merged);
    p.kloops.clear();
    std::vector<NestNode> body = loads(p, "(" + join(merged.axes, ", ") + ") % " + std::to_string(p.stages));
    RoleNest producer{producer_shape, nest(p.outer, std::move(body)), ""};
    out.roles.push_back(std::move(producer));
  } else {
    p.outer.insert(p.outer.end(), stream.begin(), stream.end());
    RoleNest producer{producer_shape, tile_nest(p, true, false, false), ""};
    out.roles.push_back(std::move(producer));
  }
  Context cons = c;
  if (s.consumer_mode() == ConsumerMode::PingPong)
    for (auto& l : cons.outer)
      if (l.binding == Binding::Persistent) l.dealt = consumer_shape.warpgroups;
  // An MMA warp (double-buffered TMEM, a CTA pair): the producer warpgroup's next warp issues
  // every tile's MMAs, and the consumers only write the accumulator (buffers) back.
  const bool mma_warp = mma_warp_issues(s);
  if (mma_warp) {
    const int buffers = s.accumulator_buffers_of();
    RoleNest mma{producer_shape, tile_nest(cons, false, true, false, true),
                 "warp " + std::to_string(producer_shape.first_warpgroup * 4 + 1) +
                     (cta_pair_mma(s) ? " of the pair's even CTA" : "") + ": one elected thread issues the MMAs, " +
                     (buffers > 1 ? "tile t into TMEM accumulator buffer t % " + std::to_string(buffers) +
                                        " once its last writeback released it"
                                  : std::string("each tile into the TMEM accumulator once the last tile's writeback "
                                                "released it"))};
    out.roles.push_back(std::move(mma));
  }
  RoleNest consumer{consumer_shape, tile_nest(cons, false, !mma_warp, true), ""};
  out.roles.push_back(std::move(consumer));
  return out;
}

// ---- printing ---------------------------------------------------------------------------

namespace {

std::string range(int64_t extent) { return "[0, " + std::to_string(extent) + ")"; }

std::string persist_note(const PersistD& p) {
  const std::string order =
      p.raster == Raster::Hilbert    ? "along a Hilbert curve (hilbert)"
      : p.raster == Raster::Triangle ? "the tiles on and above the diagonal first, in row bands of " + std::to_string(p.group)
                                     : (p.raster == Raster::RowMajor ? "row-major" : "column-major") +
                                           std::string(" in groups of ") + std::to_string(p.group);
  return p.m_axis + " x " + p.n_axis + " tiles, " + order + ", each CTA strides by the grid";
}

std::string pipeline_note(const CircularBufferD& cb) {
  return "circular buffer " + std::to_string(cb.stages) + " stage(s), prefetch " + std::to_string(cb.prefetch);
}

std::string loop_line(const NestLoop& l) {
  std::ostringstream os;
  if (l.axes.size() > 1) {
    std::vector<std::string> ranges;
    for (int64_t e : l.extents) ranges.push_back(range(e));
    os << "for (" << join(l.axes, ", ") << ") in " << join(ranges, " x ") << " " << binding_name(l.binding)
       << ", merged: k tiles stream across tile boundaries";
    // Only a warp-specialized producer streams k tiles across tiles: it refills a stage as soon as
    // the consumers release it, so a prefetch distance below stages - 1 changes nothing.
    if (l.pipeline) {
      os << "; " << pipeline_note(*l.pipeline);
      if (l.pipeline->prefetch < l.pipeline->stages - 1)
        os << " (no effect under warp_specialize: the producer refills each stage once it is released)";
    }
    return os.str();
  }
  const std::string& a = l.axes[0];
  switch (l.binding) {
    case Binding::None:
      os << a << " = 0";
      if (l.extent() > 1) os << "  (unbound: only tile 0 of " << l.extent() << " runs)";
      return os.str();
    case Binding::BlockX:
    case Binding::BlockY:
    case Binding::BlockZ:
    case Binding::Cluster:
      os << "parallel " << a << " in " << range(l.extent()) << " -> " << binding_name(l.binding);
      break;
    case Binding::Persistent:
      os << "for " << a << " in " << range(l.extent()) << " persistent";
      if (l.persist) os << " (" << persist_note(*l.persist) << ")";
      if (l.dealt > 1)
        os << ", dealt in turn to " << l.dealt << " consumer warpgroups (ping-pong: each computes whole tiles; "
           << "one's epilogue runs under the other's MMAs)";
      break;
    default:
      os << "for " << a << " in " << range(l.extent()) << " " << binding_name(l.binding);
      break;
  }
  if (l.pipeline) os << ", " << pipeline_note(*l.pipeline);
  return os.str();
}

std::string load_line(const LoadStmt& l) {
  std::ostringstream os;
  os << "load " << l.tensor << "[" << join(l.index, ", ") << "] " << l.rows << " x " << l.cols << " -> smem";
  if (l.stages > 1) os << " stage " << l.stage_index;
  os << " (" << (l.method == CopyMethod::Tma ? "TMA" : l.element_copy ? "synchronous element copy" : "synchronous copy");
  if (l.multicast_ctas > 0) os << ", multicast to " << l.multicast_ctas << " CTAs";
  if (l.pair_half) os << ", this CTA's half of the pair's " << l.tensor << " tile, completing on the even CTA's barrier";
  os << ")";
  return os.str();
}

std::string place_text(Place p) {
  return p == Place::Tmem ? "tmem" : p == Place::Shared ? "shared memory" : "registers";
}

std::string mma_line(const MmaStmt& m) {
  std::ostringstream os;
  if (!m.mma) {
    os << "multiply-accumulate " << m.tile_m << " x " << m.tile_n << " += " << m.tile_m << " x " << m.tile_k
       << " * (" << m.tile_n << " x " << m.tile_k << ")^T  (no mma instruction chosen)";
  } else {
    os << "mma m" << m.mma->m << "n" << m.mma->n << "k" << m.mma->k << " x (" << m.rep_m << " m x " << m.rep_n
       << " n x " << m.rep_k << " k)";
  }
  if (m.mma && m.mma->m == 256 && m.mma->target == Target::Sm100a)
    os << " over the CTA pair (the even CTA issues; each CTA's 128 rows land in its TMEM)";
  if (m.warpgroups > 1)
    os << " per warpgroup on its " << m.tile_m << " x " << m.tile_n << " part (" << m.warpgroups << " warpgroups over "
       << m.warpgroup_axis << ")";
  os << " -> acc fp32 in " << place_text(m.accumulator);
  return os.str();
}

std::string epilogue_line(const EpilogueStmt& e) {
  std::ostringstream os;
  std::vector<std::string> ops, missing;
  for (const auto& op : e.ops) {
    std::string t = op.name + (op.detail.empty() ? "" : " (" + op.detail + ")");
    (op.applied ? ops : missing).push_back(t);
  }
  os << "epilogue " << (ops.empty() ? "(no ops)" : join(ops, ", "));
  if (!missing.empty()) os << " [not inlined, never computed: " << join(missing, ", ") << "]";
  os << ": " << place_text(e.from);
  if (e.staged) os << " -> smem staging";
  if (e.subtile_cols > 0)
    os << " in " << e.subtile_cols << "-column subtiles (" << e.subtile_buffers << " buffers per warpgroup, a store in flight per buffer)";
  os << " -> " << (e.store == CopyMethod::Tma ? "TMA store " : "store ") << e.output << "[" << join(e.index, ", ")
     << "]";
  return os.str();
}

void print_node(std::ostringstream& os, const NestNode& n, int depth) {
  os << std::string(size_t(depth) * 2, ' ') << print_nest_node(n) << "\n";
  for (const auto& child : n.body) print_node(os, child, depth + 1);
}

}  // namespace

std::string print_nest_node(const NestNode& node) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NestLoop>) return loop_line(x);
        if constexpr (std::is_same_v<T, LoadStmt>) return load_line(x);
        if constexpr (std::is_same_v<T, MmaStmt>) return mma_line(x);
        if constexpr (std::is_same_v<T, EpilogueStmt>) return epilogue_line(x);
      },
      node.item);
}

std::string print_loop_nests(const LoopNests& nests) {
  std::ostringstream os;
  os << "kernel " << target_name(nests.target) << ", tile " << nests.tile_m << " x " << nests.tile_n << " x "
     << nests.tile_k;
  if (nests.cluster.x * nests.cluster.y * nests.cluster.z > 1)
    os << ", cluster " << nests.cluster.x << " x " << nests.cluster.y << " x " << nests.cluster.z;
  os << "\n";
  for (size_t i = 0; i < nests.roles.size(); ++i) {
    const RoleNest& r = nests.roles[i];
    const RoleShape& shape = r.shape;
    if (!r.warp.empty()) {
      os << "  " << shape.name << ", " << r.warp << "\n";
      for (const auto& n : r.body) print_node(os, n, 2);
      continue;
    }
    os << "  " << shape.name << ": " << shape.warpgroups << " warpgroup(s), " << shape.threads() << " threads";
    if (shape.declared) os << ", setmaxnreg " << shape.regs;
    if (shape.issues_loads && shape.computes) os << "; every thread loads and computes";
    else if (shape.issues_loads) os << "; one elected thread issues the loads";
    else if (i > 0 && !nests.roles[i - 1].warp.empty()) os << "; epilogue";
    else os << "; mma and epilogue";
    os << "\n";
    for (const auto& n : r.body) print_node(os, n, 2);
  }
  return os.str();
}

}  // namespace gg
