#include "codegen/index_check.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "codegen/analyze_schedule.h"
#include "codegen/tile_order.h"
#include "dsl/error.h"
#include "runtime/device/tile_order.h"

namespace gg {

namespace {

const char* raster_name(Raster r) {
  return r == Raster::RowMajor ? "row-major" : r == Raster::ColumnMajor ? "column-major" : r == Raster::Hilbert ? "hilbert" : "triangle";
}
// "row-major, group 8"; the Hilbert order has no group.
std::string order_name(const Relation& r) {
  return std::string(raster_name(r.raster)) + (r.raster == Raster::Hilbert ? "" : ", group " + std::to_string(r.group));
}

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

// One loop of the nest as the check runs it.
struct Loop {
  enum class Kind { Range, Cta, Dealt, PersistTile } kind = Kind::Range;
  int axis = -1;       // Range, PersistTile: the leaf it assigns
  int64_t extent = 0;  // Range: trip count; Cta: the persistent grid; Dealt: consumers; PersistTile: tiles
};

// One relation replayed in reverse (leaves -> roots).
struct Op {
  Relation::Kind kind = Relation::Kind::Split;
  int a = -1, b = -1, c = -1;  // Split: parent, outer, inner. Merge/Persist: outer, inner, fused.
  int64_t factor = 1;          // Split: factor; Merge: inner extent
  bool k = false;              // operates on reduction axes (its predicate is the k predicate)
  int table = -1;              // Persist: index into Plan::persist_tables
};

// Everything the check needs, resolved to integer ids; built once from a LoopNest.
struct Plan {
  std::vector<Axis> axes;
  std::unordered_map<std::string, int> id;
  std::vector<int> leaves;
  std::vector<bool> k_leaf;       // per axis id
  int root_m = -1, root_n = -1, root_k = -1;
  std::vector<Loop> loops;        // outermost first
  size_t first_non_grid = 0;      // loops before it enumerate CTAs
  size_t first_intra = 0;         // loops from here on lie inside one tile (the block of the tile check)
  std::vector<Op> ops;            // in replay order (the relations reversed)
  std::vector<const Relation*> op_relation;
  std::vector<std::vector<TileCoord>> persist_tables;
  int persistent_leaf = -1;
  int64_t grid = 1;               // persistent CTAs
  int64_t dealt = 1;              // consumer warpgroups taking a CTA's tiles in turn
  std::vector<std::string> problems;  // structural failures

  int lookup(const std::string& name, const char* what) {
    auto it = id.find(name);
    if (it == id.end()) {
      problems.push_back(std::string(what) + " names axis '" + name + "', which the nest does not hold");
      return -1;
    }
    return it->second;
  }
};

std::string level_name(Level l) { return l == Level::Tile ? "tile" : "intra"; }

Plan make_plan(const LoopNest& nest, const IndexCheckOptions& opt) {
  Plan p;
  p.axes = nest.axes;
  for (size_t i = 0; i < p.axes.size(); ++i)
    if (!p.id.emplace(p.axes[i].name, static_cast<int>(i)).second)
      p.problems.push_back("axis '" + p.axes[i].name + "' is listed twice");
  p.root_m = p.lookup("m", "the problem");
  p.root_n = p.lookup("n", "the problem");
  p.root_k = p.lookup("k", "the problem");
  p.k_leaf.assign(p.axes.size(), false);

  std::vector<bool> known(p.axes.size(), false);
  for (const auto& name : nest.leaves) {
    int a = p.lookup(name, "the loop order");
    if (a < 0) continue;
    if (known[static_cast<size_t>(a)]) p.problems.push_back("leaf '" + name + "' appears twice in the loop order");
    known[static_cast<size_t>(a)] = true;
    p.leaves.push_back(a);
    const Axis& ax = p.axes[static_cast<size_t>(a)];
    if (ax.extent < 1) p.problems.push_back("leaf '" + name + "' has extent " + std::to_string(ax.extent));
    if ((ax.roots & unsigned(Root::K)) && ax.roots != unsigned(Root::K))
      p.problems.push_back("leaf '" + name + "' mixes the reduction axis k with m/n");
    if (ax.roots == unsigned(Root::K)) p.k_leaf[static_cast<size_t>(a)] = true;
    if (ax.binding == Binding::Persistent) {
      if (p.persistent_leaf >= 0) p.problems.push_back("two leaves are bound to persistent");
      p.persistent_leaf = a;
    }
  }

  // Relations, replayed from the last applied to the first; each must find its inputs known.
  for (auto it = nest.relations.rbegin(); it != nest.relations.rend(); ++it) {
    const Relation& r = *it;
    Op op;
    op.kind = r.kind;
    if (r.kind == Relation::Kind::Split) {
      op.a = p.lookup(r.parent, "a split");
      op.b = p.lookup(r.outer, "a split");
      op.c = p.lookup(r.inner, "a split");
      op.factor = r.factor;
      if (op.factor < 1) p.problems.push_back("split of '" + r.parent + "' has factor " + std::to_string(r.factor));
    } else {
      op.a = p.lookup(r.outer, r.kind == Relation::Kind::Merge ? "a merge" : "persist");
      op.b = p.lookup(r.inner, r.kind == Relation::Kind::Merge ? "a merge" : "persist");
      op.c = p.lookup(r.fused, r.kind == Relation::Kind::Merge ? "a merge" : "persist");
      op.factor = r.factor;
      if (r.kind == Relation::Kind::Merge && op.factor < 1)
        p.problems.push_back("merge into '" + r.fused + "' has inner extent " + std::to_string(r.factor));
    }
    if (op.a < 0 || op.b < 0 || op.c < 0) continue;
    auto known_at = [&](int x) { return bool(known[static_cast<size_t>(x)]); };
    const auto& names = p.axes;
    std::vector<int> inputs = r.kind == Relation::Kind::Split ? std::vector<int>{op.b, op.c} : std::vector<int>{op.c};
    std::vector<int> outputs = r.kind == Relation::Kind::Split ? std::vector<int>{op.a} : std::vector<int>{op.a, op.b};
    for (int x : inputs)
      if (!known_at(x))
        p.problems.push_back("axis '" + names[static_cast<size_t>(x)].name +
                             "' is used by a relation but is neither a leaf nor derived from the leaves");
    for (int x : outputs) known[static_cast<size_t>(x)] = true;
    RootSet roots = 0;
    for (int x : {op.a, op.b, op.c}) roots |= names[static_cast<size_t>(x)].roots;
    if ((roots & unsigned(Root::K)) && roots != unsigned(Root::K))
      p.problems.push_back("a relation among '" + names[static_cast<size_t>(op.a)].name + "', '" +
                           names[static_cast<size_t>(op.b)].name + "', '" + names[static_cast<size_t>(op.c)].name +
                           "' mixes the reduction axis k with m/n");
    op.k = roots == unsigned(Root::K);
    if (r.kind == Relation::Kind::Persist) {
      op.table = static_cast<int>(p.persist_tables.size());
      p.persist_tables.emplace_back();  // filled by the checker
    }
    p.ops.push_back(op);
    p.op_relation.push_back(&r);
  }
  for (int r : {p.root_m, p.root_n, p.root_k})
    if (r >= 0 && !known[static_cast<size_t>(r)])
      p.problems.push_back("root axis '" + p.axes[static_cast<size_t>(r)].name +
                           "' is not recovered from the leaves by the relations");

  // The loops, outermost first: CTAs (grid-bound leaves, then the persistent CTA index), the
  // persistent tile loop, the other tile-level leaves, then the leaves inside one tile.
  if (opt.persistent_grid < 1) p.problems.push_back("the persistent grid must be >= 1 CTA");
  p.grid = std::max<int64_t>(1, opt.persistent_grid);
  for (int a : p.leaves) {
    const Axis& ax = p.axes[static_cast<size_t>(a)];
    if (binding_is_grid(ax.binding) && ax.binding != Binding::Persistent)
      p.loops.push_back(Loop{Loop::Kind::Range, a, ax.extent});
  }
  if (p.persistent_leaf >= 0) p.loops.push_back(Loop{Loop::Kind::Cta, -1, p.grid});
  p.first_non_grid = p.loops.size();
  if (nest.dealt < 1) p.problems.push_back("tiles dealt to " + std::to_string(nest.dealt) + " consumers");
  if (nest.dealt > 1 && p.persistent_leaf < 0) p.problems.push_back("tiles dealt to consumers without a persistent loop");
  p.dealt = std::max<int64_t>(1, nest.dealt);
  if (p.persistent_leaf >= 0 && p.dealt > 1) p.loops.push_back(Loop{Loop::Kind::Dealt, -1, p.dealt});
  if (p.persistent_leaf >= 0)
    p.loops.push_back(Loop{Loop::Kind::PersistTile, p.persistent_leaf, p.axes[size_t(p.persistent_leaf)].extent});
  for (int a : p.leaves) {
    const Axis& ax = p.axes[static_cast<size_t>(a)];
    if (!binding_is_grid(ax.binding) && ax.level == Level::Tile)
      p.loops.push_back(Loop{Loop::Kind::Range, a, ax.extent});
  }
  p.first_intra = p.loops.size();
  for (int a : p.leaves) {
    const Axis& ax = p.axes[static_cast<size_t>(a)];
    if (!binding_is_grid(ax.binding) && ax.level == Level::Intra)
      p.loops.push_back(Loop{Loop::Kind::Range, a, ax.extent});
  }
  return p;
}

std::string loop_comment(const Axis& ax) {
  std::string s = level_name(ax.level);
  if (ax.binding != Binding::None) s += ", " + std::string(binding_name(ax.binding));
  if (binding_is_grid(ax.binding)) s = "grid: " + s;
  return s;
}

std::string format_plan(const LoopNest& nest, const Plan& p) {
  std::ostringstream os;
  os << "problem M=" << nest.m << " N=" << nest.n << " K=" << nest.k << "; loops, outermost first:\n";
  std::string indent = "  ";
  auto line = [&](const std::string& code, const std::string& comment) {
    std::string l = indent + code;
    if (l.size() < 52) l.resize(52, ' ');
    os << l << "  // " << comment << "\n";
    indent += "  ";
  };
  for (const Loop& l : p.loops) {
    if (l.kind == Loop::Kind::Cta) {
      line("for cta in [0, " + std::to_string(l.extent) + ")", "grid: persistent CTAs");
    } else if (l.kind == Loop::Kind::Dealt) {
      line("for consumer in [0, " + std::to_string(l.extent) + ")", "ping-pong: the CTA's tiles taken in turn");
    } else if (l.kind == Loop::Kind::PersistTile) {
      const std::string& t = p.axes[static_cast<size_t>(l.axis)].name;
      line("for " + t + " = cta" + (p.dealt > 1 ? " + consumer * " + std::to_string(p.grid) : std::string()) + "; " +
               t + " < " + std::to_string(l.extent) + "; " + t + " += " + std::to_string(p.grid * p.dealt),
           "persistent tile loop");
    } else {
      const Axis& ax = p.axes[static_cast<size_t>(l.axis)];
      line("for " + ax.name + " in [0, " + std::to_string(l.extent) + ")", loop_comment(ax));
    }
  }
  os << "index math, applied in this order:\n";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    const Relation& r = *p.op_relation[i];
    auto nm = [&](int x) { return p.axes[static_cast<size_t>(x)].name; };
    auto ext = [&](int x) { return std::to_string(p.axes[static_cast<size_t>(x)].extent); };
    if (op.kind == Relation::Kind::Split)
      os << "  " << nm(op.a) << " = " << nm(op.b) << " * " << op.factor << " + " << nm(op.c) << "   (predicated "
         << nm(op.a) << " < " << ext(op.a) << ")\n";
    else if (op.kind == Relation::Kind::Merge)
      os << "  " << nm(op.a) << " = " << nm(op.c) << " / " << op.factor << ", " << nm(op.b) << " = " << nm(op.c)
         << " % " << op.factor << "\n";
    else
      os << "  (" << nm(op.a) << ", " << nm(op.b) << ") = persistent_tile(" << nm(op.c) << "; " << ext(op.a) << " x "
         << ext(op.b) << " tiles, " << order_name(r) << ")\n";
  }
  return os.str();
}

class Checker {
 public:
  Checker(const LoopNest& nest, const IndexCheckOptions& opt, IndexCheckReport& rep)
      : nest_(nest), opt_(opt), rep_(rep), p_(make_plan(nest, opt)) {
    rep_.loop_nest = format_plan(nest, p_);
  }

  void run() {
    for (const auto& msg : p_.problems) fail(IndexFailure::Kind::Structure, msg);
    if (!p_.problems.empty()) return;
    M_ = nest_.m;
    N_ = nest_.n;
    K_ = nest_.k;
    if (M_ < 1 || N_ < 1 || K_ < 1) {
      fail(IndexFailure::Kind::Structure, "the problem " + std::to_string(M_) + " x " + std::to_string(N_) + " x " +
                                              std::to_string(K_) + " is empty");
      return;
    }
    int64_t total = 1;
    for (const Loop& l : p_.loops)
      if (l.kind != Loop::Kind::Cta) total = saturating_mul(total, l.extent);  // the CTAs share the tiles
    int64_t volume = saturating_mul(saturating_mul(M_, N_), K_);
    if (total > opt_.max_points || volume > opt_.max_points) {
      fail(IndexFailure::Kind::TooLarge, "the nest runs " + std::to_string(total) + " iterations over " +
                                             std::to_string(volume) + " products; the limit is " +
                                             std::to_string(opt_.max_points) + " (the check never samples)");
      return;
    }
    if (!check_persistent_tables()) return;
    v_.assign(p_.axes.size(), 0);
    assign_ops_to_loops();
    reduced_.assign(static_cast<size_t>(volume), 0);
    written_.assign(static_cast<size_t>(M_ * N_), 0);
    descend(0);
    finish();
  }

 private:
  void count(IndexFailure::Kind kind, int64_t n) {
    rep_.failure_count += n;
    rep_.failures_by_kind[size_t(kind)] += n;
  }
  void fail(IndexFailure::Kind kind, const std::string& msg) {
    count(kind, 1);
    if (room()) rep_.failures.push_back({kind, msg});
  }
  // Builds the message only when it will be kept: a broken nest can fail millions of times.
  template <class F>
  void fail_lazy(IndexFailure::Kind kind, F&& message) {
    count(kind, 1);
    if (room()) rep_.failures.push_back({kind, message()});
  }
  bool room() const { return static_cast<int>(rep_.failures.size()) < opt_.max_failures; }

  // The persistent tile order must be a bijection onto the tile grid, and the CTAs' strided loop
  // must visit every tile index exactly once. False when the nest cannot be enumerated at all.
  bool check_persistent_tables() {
    bool ok = true;
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const Op& op = p_.ops[i];
      if (op.kind != Relation::Kind::Persist) continue;
      const Relation& r = *p_.op_relation[i];
      int64_t tm = p_.axes[size_t(op.a)].extent, tn = p_.axes[size_t(op.b)].extent, T = p_.axes[size_t(op.c)].extent;
      if (T != tm * tn) {
        fail(IndexFailure::Kind::PersistentMap, "persist: '" + r.fused + "' has " + std::to_string(T) +
                                                    " tiles but the grid is " + std::to_string(tm) + " x " +
                                                    std::to_string(tn));
        ok = false;
        continue;
      }
      auto& table = p_.persist_tables[size_t(op.table)];
      table.resize(size_t(T));
      std::vector<int64_t> hit(size_t(T), -1);
      auto head = [&] {
        return "persist (" + order_name(r) + ", " +
               std::to_string(tm) + " x " + std::to_string(tn) + " tiles): ";
      };
      for (int64_t t = 0; t < T; ++t) {
        TileCoord c = opt_.persistent_map ? opt_.persistent_map(t, tm, tn, r.raster, r.group)
                                          : persistent_tile(t, tm, tn, r.raster, r.group,
                                                            triangle_ratio(nest_.tile_m, nest_.tile_n));
        table[size_t(t)] = c;
        auto where = [&] {
          return head() + "tile index " + std::to_string(t) + " -> (" + r.outer + "=" + std::to_string(c.m) + ", " +
                 r.inner + "=" + std::to_string(c.n) + ")";
        };
        if (c.m < 0 || c.m >= tm || c.n < 0 || c.n >= tn) {
          fail_lazy(IndexFailure::Kind::PersistentMap, [&] { return where() + " lies outside the tile grid"; });
          continue;
        }
        int64_t& h = hit[size_t(c.m * tn + c.n)];
        if (h >= 0)
          fail_lazy(IndexFailure::Kind::PersistentMap,
                    [&] { return where() + ", which tile index " + std::to_string(h) + " maps to already"; });
        h = t;
      }
      for (int64_t x = 0; x < T; ++x)
        if (hit[size_t(x)] < 0)
          fail_lazy(IndexFailure::Kind::PersistentMap, [&] {
            return head() + "no tile index maps to (" + r.outer + "=" + std::to_string(x / tn) + ", " + r.inner + "=" +
                   std::to_string(x % tn) + ")";
          });
    }
    if (p_.persistent_leaf >= 0) {
      int64_t T = p_.axes[size_t(p_.persistent_leaf)].extent;
      std::vector<int> visits(size_t(T), 0);
      for (int64_t cta = 0; cta < p_.grid; ++cta)
        for (int64_t w = 0; w < p_.dealt; ++w)
          for (int64_t t = cta + w * p_.grid; t < T; t += p_.dealt * p_.grid) ++visits[size_t(t)];
      for (int64_t t = 0; t < T; ++t)
        if (visits[size_t(t)] != 1) {
          fail(IndexFailure::Kind::PersistentVisit, "persistent tile index " + std::to_string(t) + " is visited " +
                                                        std::to_string(visits[size_t(t)]) + " times by " +
                                                        std::to_string(p_.grid) + " CTAs");
        }
    }
    // A wrong but complete table still runs: the counts below prove what it breaks.
    return ok;
  }

  // Runs the loops from `level` inward. Each loop recomputes only the relations whose inputs it
  // changed (ops_at_[level]); the predicates accumulate level by level.
  void descend(size_t level) {
    if (level == p_.first_non_grid && !witness_mode_) ++rep_.ctas;
    if (level == p_.first_intra) begin_block();
    size_t last = p_.loops.size();
    if (level == last) {
      visit(level);
    } else if (level + 1 == last && last != p_.first_intra && last != p_.first_non_grid &&
               p_.loops[level].kind == Loop::Kind::Range) {
      // The innermost loop, without a call per iteration.
      if (!witness_mode_) {
        sweep_innermost(level);
      } else {
        for (int64_t i = 0; i < p_.loops[level].extent; ++i) {
          v_[size_t(p_.loops[level].axis)] = i;
          apply_level(level);
          visit(last);
        }
      }
    } else {
      const Loop& l = p_.loops[level];
      switch (l.kind) {
        case Loop::Kind::Range:
          for (int64_t i = 0; i < l.extent; ++i) {
            v_[size_t(l.axis)] = i;
            apply_level(level);
            descend(level + 1);
          }
          break;
        case Loop::Kind::Cta:
          for (cta_ = 0; cta_ < l.extent; ++cta_) {
            apply_level(level);
            descend(level + 1);
          }
          break;
        case Loop::Kind::Dealt:
          for (consumer_ = 0; consumer_ < l.extent; ++consumer_) {
            apply_level(level);
            descend(level + 1);
          }
          break;
        case Loop::Kind::PersistTile:
          for (int64_t t = cta_ + consumer_ * p_.grid; t < l.extent; t += p_.dealt * p_.grid) {
            v_[size_t(l.axis)] = t;
            apply_level(level);
            descend(level + 1);
          }
          break;
      }
    }
    if (level == p_.first_intra) end_block();
  }

  // Replays relations (in replay order); sets the predicate of the output part (m, n) or of the
  // reduction part (k) when a split's parent runs past its extent.
  [[gnu::always_inline]] inline void run_ops(const std::vector<Op>& ops, int64_t* v, bool& pm, bool& pk) const {
    const int64_t* ext = ext_.data();
    for (const Op& op : ops) {
      switch (op.kind) {
        case Relation::Kind::Split: {
          int64_t parent = v[op.b] * op.factor + v[op.c];
          v[op.a] = parent;
          if (parent >= ext[op.a]) (op.k ? pk : pm) = true;
          break;
        }
        case Relation::Kind::Merge:
          v[op.a] = v[op.c] / op.factor;
          v[op.b] = v[op.c] % op.factor;
          if (v[op.a] >= ext[op.a]) (op.k ? pk : pm) = true;
          break;
        case Relation::Kind::Persist: {
          const auto& table = p_.persist_tables[size_t(op.table)];
          int64_t t = v[op.c];
          if (t < 0 || t >= static_cast<int64_t>(table.size())) {
            (op.k ? pk : pm) = true;
            break;
          }
          v[op.a] = table[size_t(t)].m;
          v[op.b] = table[size_t(t)].n;
          break;
        }
      }
    }
  }

  // Replays the relations that the loop at `level` feeds; the predicates of the output part and
  // of the reduction part are kept apart: the writeback depends only on the first.
  void apply_level(size_t level) {
    bool pm = pred_mn_[level], pk = pred_k_[level];
    run_ops(ops_at_[level], v_.data(), pm, pk);
    pred_mn_[level + 1] = pm;
    pred_k_[level + 1] = pk;
    int a = p_.loops[level].axis;
    k_first_[level + 1] = k_first_[level] && !(a >= 0 && p_.k_leaf[size_t(a)] && v_[size_t(a)] != 0);
  }

  // The innermost loop, where nearly all the time goes: visit()'s counting with the state in
  // locals; rare events (out of bounds, a second count) go out of line.
  void sweep_innermost(size_t level) {
    const Loop& l = p_.loops[level];
    int64_t* v = v_.data();
    const std::vector<Op>& ops = ops_at_[level];
    const size_t axis = size_t(l.axis);
    const bool pm0 = pred_mn_[level], pk0 = pred_k_[level], kf0 = k_first_[level];
    const bool axis_k = p_.k_leaf[axis];
    const size_t im = size_t(p_.root_m), in = size_t(p_.root_n), ik = size_t(p_.root_k);
    const int64_t M = M_, N = N_, K = K_;
    uint8_t* red = reduced_.data();
    uint8_t* wr = written_.data();
    int64_t predicated = 0, reductions = 0, writes = 0;
    bool any = block_any_;
    int64_t lo[3] = {lo_[0], lo_[1], lo_[2]}, hi[3] = {hi_[0], hi_[1], hi_[2]};
    const int64_t m0 = v[im], n0 = v[in];
    if (axis_k && (pm0 || (m0 >= 0 && m0 < M && n0 >= 0 && n0 < N))) {
      // The common case, a k loop innermost: its relations touch k axes only (make_plan rejects
      // relations that mix k with m, n), so m, n and their predicate hold for the whole sweep,
      // and the writeback's representative iteration is the first one.
      if (pm0) {
        rep_.points += l.extent;
        rep_.predicated += l.extent;
        return;
      }
      if (kf0) {
        ++rep_.writes;
        uint8_t& w = wr[m0 * N + n0];
        if (w < 255) ++w;
        if (w == 2) note_dup(write_dups_, m0 * N + n0);
      }
      const int64_t base = (m0 * N + n0) * K;
      int64_t klo = std::numeric_limits<int64_t>::max(), khi = -1;
      for (int64_t i = 0; i < l.extent; ++i) {
        v[axis] = i;
        bool pm = false, pk = pk0;
        run_ops(ops, v, pm, pk);
        const int64_t k = v[ik];
        if (pk) {
          ++predicated;
          continue;
        }
        if (k < 0 || k >= K) {
          out_of_bounds_product(m0, n0, k);
          continue;
        }
        ++reductions;
        uint8_t& c = red[base + k];
        if (c < 255) ++c;
        if (c == 2) note_dup(reduce_dups_, base + k);
        klo = std::min(klo, k);
        khi = std::max(khi, k);
      }
      if (reductions > 0) {
        if (!any) {
          any = true;
          lo[0] = hi[0] = m0;
          lo[1] = hi[1] = n0;
          lo[2] = klo;
          hi[2] = khi;
        }
        lo[0] = std::min(lo[0], m0), hi[0] = std::max(hi[0], m0);
        lo[1] = std::min(lo[1], n0), hi[1] = std::max(hi[1], n0);
        lo[2] = std::min(lo[2], klo), hi[2] = std::max(hi[2], khi);
      }
      rep_.points += l.extent;
      rep_.predicated += predicated;
      rep_.reductions += reductions;
      block_any_ = any;
      for (int r = 0; r < 3; ++r) lo_[r] = lo[r], hi_[r] = hi[r];
      return;
    }
    for (int64_t i = 0; i < l.extent; ++i) {
      v[axis] = i;
      bool pm = pm0, pk = pk0;
      run_ops(ops, v, pm, pk);
      const int64_t m = v[im], n = v[in], k = v[ik];
      if (!pm && kf0 && !(axis_k && i != 0)) {
        if (m < 0 || m >= M || n < 0 || n >= N) {
          out_of_bounds_write(m, n);
        } else {
          ++writes;
          uint8_t& w = wr[m * N + n];
          if (w < 255) ++w;
          if (w == 2) note_dup(write_dups_, m * N + n);
        }
      }
      if (pm || pk) {
        ++predicated;
        continue;
      }
      if (m < 0 || m >= M || n < 0 || n >= N || k < 0 || k >= K) {
        out_of_bounds_product(m, n, k);
        continue;
      }
      ++reductions;
      uint8_t& c = red[(m * N + n) * K + k];
      if (c < 255) ++c;
      if (c == 2) note_dup(reduce_dups_, (m * N + n) * K + k);
      if (any) {
        lo[0] = std::min(lo[0], m), hi[0] = std::max(hi[0], m);
        lo[1] = std::min(lo[1], n), hi[1] = std::max(hi[1], n);
        lo[2] = std::min(lo[2], k), hi[2] = std::max(hi[2], k);
      } else {
        any = true;
        lo[0] = hi[0] = m;
        lo[1] = hi[1] = n;
        lo[2] = hi[2] = k;
      }
    }
    rep_.points += l.extent;
    rep_.predicated += predicated;
    rep_.reductions += reductions;
    rep_.writes += writes;
    block_any_ = any;
    for (int r = 0; r < 3; ++r) lo_[r] = lo[r], hi_[r] = hi[r];
  }

  void note_dup(std::vector<int64_t>& dups, int64_t key) {
    if (dups.size() < size_t(opt_.max_failures)) dups.push_back(key);
  }
  void out_of_bounds_write(int64_t m, int64_t n) {
    fail_lazy(IndexFailure::Kind::OutOfBounds, [&] {
      return "the writeback of (m=" + std::to_string(m) + ", n=" + std::to_string(n) +
             ") is not predicated off but lies outside " + std::to_string(M_) + " x " + std::to_string(N_) + "; at " +
             where();
    });
  }
  void out_of_bounds_product(int64_t m, int64_t n, int64_t k) {
    fail_lazy(IndexFailure::Kind::OutOfBounds, [&] {
      return "the product (m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
             ") is not predicated off but lies outside " + std::to_string(M_) + " x " + std::to_string(N_) + " x " +
             std::to_string(K_) + "; at " + where();
    });
  }

  // Which loop feeds each relation: the innermost loop among its inputs' leaves.
  void assign_ops_to_loops() {
    std::vector<int> level_of(p_.axes.size(), -1);
    for (size_t l = 0; l < p_.loops.size(); ++l)
      if (p_.loops[l].axis >= 0) level_of[size_t(p_.loops[l].axis)] = static_cast<int>(l);
    ops_at_.assign(p_.loops.size(), {});
    for (const Op& op : p_.ops) {
      std::vector<int> inputs =
          op.kind == Relation::Kind::Split ? std::vector<int>{op.b, op.c} : std::vector<int>{op.c};
      int lvl = -1;
      for (int x : inputs) lvl = std::max(lvl, level_of[size_t(x)]);
      GG_INTERNAL_CHECK(lvl >= 0, "a relation of a well-formed nest reads no loop");
      for (int x : op.kind == Relation::Kind::Split ? std::vector<int>{op.a} : std::vector<int>{op.a, op.b})
        level_of[size_t(x)] = lvl;
      ops_at_[size_t(lvl)].push_back(op);
    }
    size_t n = p_.loops.size() + 1;
    pred_mn_.assign(n, 0);
    pred_k_.assign(n, 0);
    k_first_.assign(n, 1);
    ext_.clear();
    for (const Axis& a : p_.axes) ext_.push_back(a.extent);
  }

  // One iteration at the bottom of the nest (the general path; sweep_innermost is the fast one).
  void visit(size_t level) {
    ++rep_.points;
    bool pred_mn = pred_mn_[level], pred_k = pred_k_[level];
    int64_t m = v_[size_t(p_.root_m)], n = v_[size_t(p_.root_n)], k = v_[size_t(p_.root_k)];
    if (witness_mode_) {
      collect_witness(pred_mn, pred_k, k_first_[level], m, n, k);
      return;
    }
    // The writeback is counted at one representative iteration of the k loops: every k leaf at 0.
    if (!pred_mn && k_first_[level]) {
      if (m < 0 || m >= M_ || n < 0 || n >= N_) {
        out_of_bounds_write(m, n);
      } else {
        ++rep_.writes;
        uint8_t& w = written_[size_t(m * N_ + n)];
        if (w < 255) ++w;
        if (w == 2) note_dup(write_dups_, m * N_ + n);
      }
    }
    if (pred_mn || pred_k) {
      ++rep_.predicated;
      return;
    }
    if (m < 0 || m >= M_ || n < 0 || n >= N_ || k < 0 || k >= K_) {
      out_of_bounds_product(m, n, k);
      return;
    }
    ++rep_.reductions;
    uint8_t& c = reduced_[size_t((m * N_ + n) * K_ + k)];
    if (c < 255) ++c;
    if (c == 2) note_dup(reduce_dups_, (m * N_ + n) * K_ + k);
    if (block_any_) {
      lo_[0] = std::min(lo_[0], m), hi_[0] = std::max(hi_[0], m);
      lo_[1] = std::min(lo_[1], n), hi_[1] = std::max(hi_[1], n);
      lo_[2] = std::min(lo_[2], k), hi_[2] = std::max(hi_[2], k);
    } else {
      block_any_ = true;
      lo_[0] = hi_[0] = m;
      lo_[1] = hi_[1] = n;
      lo_[2] = hi_[2] = k;
    }
  }

  // The leaf values (and what the relations derive from them) of the current iteration.
  std::string where() const {
    std::string s;
    if (p_.persistent_leaf >= 0) s += "cta=" + std::to_string(cta_) + " ";
    if (p_.dealt > 1) s += "consumer=" + std::to_string(consumer_) + " ";
    s += "leaves [";
    for (size_t i = 0; i < p_.leaves.size(); ++i)
      s += (i ? " " : "") + p_.axes[size_t(p_.leaves[i])].name + "=" + std::to_string(v_[size_t(p_.leaves[i])]);
    s += "] derived [";
    bool first = true;
    for (const Op& op : p_.ops)
      for (int x : op.kind == Relation::Kind::Split ? std::vector<int>{op.a} : std::vector<int>{op.a, op.b}) {
        s += (first ? "" : " ") + p_.axes[size_t(x)].name + "=" + std::to_string(v_[size_t(x)]);
        first = false;
      }
    return s + "]";
  }

  void collect_witness(bool pred_mn, bool pred_k, bool k_first, int64_t m, int64_t n, int64_t k) {
    if (!pred_mn && !pred_k && m >= 0 && m < M_ && n >= 0 && n < N_ && k >= 0 && k < K_) {
      int64_t key = (m * N_ + n) * K_ + k;
      for (size_t i = 0; i < reduce_dups_.size(); ++i)
        if (reduce_dups_[i] == key && reduce_where_[i].size() < 3) reduce_where_[i].push_back(where());
    }
    if (!pred_mn && k_first && m >= 0 && m < M_ && n >= 0 && n < N_) {
      for (size_t i = 0; i < write_dups_.size(); ++i)
        if (write_dups_[i] == m * N_ + n && write_where_[i].size() < 3) write_where_[i].push_back(where());
    }
  }

  void begin_block() { block_any_ = false; }

  // One tile (one assignment of the loops outside the tile): its in-range products must fill an
  // aligned window of the domain's claimed tile extent along m, n and k.
  void end_block() {
    if (witness_mode_ || !block_any_) return;
    const int64_t claim[3] = {nest_.tile_m, nest_.tile_n, nest_.tile_k};
    const int64_t extent[3] = {M_, N_, K_};
    const char* names[3] = {"m", "n", "k"};
    for (int r = 0; r < 3; ++r) {
      int64_t te = claim[r];
      if (te <= 0) continue;
      int64_t lo = lo_[r], hi = hi_[r];
      bool full = lo + te <= extent[r];
      if (lo % te != 0 || hi >= lo + te || (full && hi - lo + 1 != te)) {
        // Kept back: when the counts fail too, they are the better explanation and come first.
        ++tile_failures_;
        if (tile_messages_.size() < size_t(opt_.max_failures))
          tile_messages_.push_back(std::string("a tile covers ") + names[r] + " in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "] but the domain's tile extent along " + names[r] + " is " +
                                   std::to_string(te) + "; the tile's last iteration is at " + where());
      }
      if (r < 2) max_tile_[r] = std::max(max_tile_[r], lo / te);
    }
  }

  void finish() {
    // Products and outputs never reached.
    int64_t volume = M_ * N_ * K_;
    for (int64_t i = 0; i < volume; ++i)
      if (reduced_[size_t(i)] == 0) {
        int64_t k = i % K_, n = (i / K_) % N_, m = i / (K_ * N_);
        fail_lazy(IndexFailure::Kind::Reduction, [&] {
          return "the product (m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                 ") is never reduced";
        });
      }
    for (int64_t i = 0; i < M_ * N_; ++i)
      if (written_[size_t(i)] == 0)
        fail_lazy(IndexFailure::Kind::Write, [&] {
          return "the output (m=" + std::to_string(i / N_) + ", n=" + std::to_string(i % N_) + ") is never written";
        });
    // Twice or more: a second pass finds where.
    if (!reduce_dups_.empty() || !write_dups_.empty()) {
      witness_mode_ = true;
      reduce_where_.assign(reduce_dups_.size(), {});
      write_where_.assign(write_dups_.size(), {});
      descend(0);
      witness_mode_ = false;
      for (size_t i = 0; i < reduce_dups_.size(); ++i) {
        int64_t key = reduce_dups_[i];
        int64_t k = key % K_, n = (key / K_) % N_, m = key / (K_ * N_);
        std::string msg = "the product (m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" +
                          std::to_string(k) + ") is reduced " + count_text(reduced_[size_t(key)]);
        for (const auto& w : reduce_where_[i]) msg += "\n    at " + w;
        fail(IndexFailure::Kind::Reduction, msg);
      }
      for (size_t i = 0; i < write_dups_.size(); ++i) {
        int64_t key = write_dups_[i];
        std::string msg = "the output (m=" + std::to_string(key / N_) + ", n=" + std::to_string(key % N_) +
                          ") is written " + count_text(written_[size_t(key)]);
        for (const auto& w : write_where_[i]) msg += "\n    at " + w;
        fail(IndexFailure::Kind::Write, msg);
      }
    }
    // The rest of the duplicates, counted without a description.
    int64_t reduce_dups = 0, write_dups = 0;
    for (int64_t i = 0; i < volume; ++i) reduce_dups += reduced_[size_t(i)] >= 2;
    for (int64_t i = 0; i < M_ * N_; ++i) write_dups += written_[size_t(i)] >= 2;
    count(IndexFailure::Kind::Reduction, reduce_dups - static_cast<int64_t>(reduce_dups_.size()));
    count(IndexFailure::Kind::Write, write_dups - static_cast<int64_t>(write_dups_.size()));
    for (const auto& msg : tile_messages_) fail(IndexFailure::Kind::TileShape, msg);
    count(IndexFailure::Kind::TileShape, tile_failures_ - static_cast<int64_t>(tile_messages_.size()));
    // The tile counts the domain claims.
    const int64_t claim_tile[2] = {nest_.tile_m, nest_.tile_n};
    const int64_t claim_count[2] = {nest_.tiles_m, nest_.tiles_n};
    for (int r = 0; r < 2; ++r)
      if (claim_tile[r] > 0 && claim_count[r] > 0 && max_tile_[r] + 1 != claim_count[r])
        fail(IndexFailure::Kind::TileShape, std::string("the domain counts ") + std::to_string(claim_count[r]) +
                                                " tiles along " + (r == 0 ? "m" : "n") + " but the nest runs " +
                                                std::to_string(max_tile_[r] + 1));
  }

  static std::string count_text(uint8_t c) {
    return c >= 255 ? "255 or more times" : std::to_string(int(c)) + " times";
  }

  const LoopNest& nest_;
  const IndexCheckOptions& opt_;
  IndexCheckReport& rep_;
  Plan p_;
  int64_t M_ = 0, N_ = 0, K_ = 0;
  std::vector<int64_t> v_;  // value of every axis at the current iteration
  std::vector<int64_t> ext_;
  std::vector<std::vector<Op>> ops_at_;                 // per loop: the relations it feeds, in replay order
  std::vector<uint8_t> pred_mn_, pred_k_, k_first_;  // per loop depth: the state outside it
  int64_t cta_ = 0;
  int64_t consumer_ = 0;
  std::vector<uint8_t> reduced_, written_;  // saturating counts
  std::vector<int64_t> reduce_dups_, write_dups_;
  std::vector<std::vector<std::string>> reduce_where_, write_where_;
  int64_t tile_failures_ = 0;
  std::vector<std::string> tile_messages_;
  bool witness_mode_ = false;
  bool block_any_ = false;
  int64_t lo_[3] = {}, hi_[3] = {};
  int64_t max_tile_[2] = {-1, -1};
};

}  // namespace

std::string_view failure_kind_name(IndexFailure::Kind k) {
  switch (k) {
    case IndexFailure::Kind::Structure: return "structure";
    case IndexFailure::Kind::TooLarge: return "too-large";
    case IndexFailure::Kind::Reduction: return "reduction";
    case IndexFailure::Kind::Write: return "write";
    case IndexFailure::Kind::OutOfBounds: return "out-of-bounds";
    case IndexFailure::Kind::PersistentMap: return "persistent-map";
    case IndexFailure::Kind::PersistentVisit: return "persistent-visit";
    case IndexFailure::Kind::TileShape: return "tile-shape";
  }
  GG_INTERNAL_CHECK(false, "unhandled index failure kind");
}

TileCoord persistent_tile(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster raster, int64_t group,
                          int64_t triangle_ratio) {
  GG_INTERNAL_CHECK(tiles_m >= 1 && tiles_n >= 1 && group >= 1 && t >= 0 && t < tiles_m * tiles_n,
                    "persistent_tile(" + std::to_string(t) + ", " + std::to_string(tiles_m) + ", " +
                        std::to_string(tiles_n) + ", group " + std::to_string(group) + ")");
  if (raster == Raster::Hilbert) {  // the kernel's own helper (runtime/device/tile_order.h), run on the host
    GG_INTERNAL_CHECK(tiles_m <= gg::dev::kHilbertMaxTiles && tiles_n <= gg::dev::kHilbertMaxTiles,
                      "Hilbert tile grid too large");
    const auto c = gg::dev::hilbert_tile(static_cast<int>(t), static_cast<int>(tiles_m), static_cast<int>(tiles_n));
    return {c.m, c.n};
  }
  if (raster == Raster::Triangle) {  // the kernel's own helper, on its tiles' diagonal's grid
    if (triangle_ratio < 1 || triangle_ratio >= 16 || (tiles_m + triangle_ratio - 1) / triangle_ratio != tiles_n)
      return {-1, -1};  // outside the grid: the check reports it
    const auto c = gg::dev::triangle_tile(static_cast<int>(t), static_cast<int>(tiles_m), static_cast<int>(triangle_ratio),
                                          static_cast<int>(std::min<int64_t>(group, 4095)));
    return {c.m, c.n};
  }
  bool row = raster == Raster::RowMajor;
  int64_t major = row ? tiles_m : tiles_n;  // advances band by band
  int64_t minor = row ? tiles_n : tiles_m;
  int64_t band = t / (group * minor);
  int64_t first = band * group;
  int64_t width = std::min(group, major - first);  // the last band may be partial
  int64_t r = t - first * minor;
  int64_t a = first + r % width, b = r / width;
  return row ? TileCoord{a, b} : TileCoord{b, a};
}

LoopNest loop_nest_of(const Domain& d) {
  LoopNest nest;
  std::vector<std::string> names = {"m", "n", "k"};
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const auto& r : d.relations()) {
    add(r.parent);
    add(r.outer);
    add(r.inner);
    add(r.fused);
  }
  for (const auto& l : d.leaves()) add(l);
  for (const auto& name : names) {
    const Axis* a = d.find(name);
    GG_INTERNAL_CHECK(a != nullptr, "the domain names axis '" + name + "' but does not hold it");
    nest.axes.push_back(*a);
  }
  nest.m = nest.axes[0].extent;
  nest.n = nest.axes[1].extent;
  nest.k = nest.axes[2].extent;
  nest.leaves = d.leaves();
  nest.relations = d.relations();
  nest.tile_m = d.tile_extent(Root::M);
  nest.tile_n = d.tile_extent(Root::N);
  nest.tile_k = d.tile_extent(Root::K);
  nest.tiles_m = d.tile_count(Root::M);
  nest.tiles_n = d.tile_count(Root::N);
  return nest;
}

IndexCheckReport check_index_math(const LoopNest& nest, const IndexCheckOptions& opt) {
  IndexCheckReport rep;
  Checker(nest, opt, rep).run();
  return rep;
}

LoopNest index_loop_nest(const Schedule& s) {
  LoopNest nest = loop_nest_of(s.domain());
  // The problem comes from the definition, not from the domain the check is verifying.
  nest.m = s.definition().m();
  nest.n = s.definition().n();
  nest.k = s.definition().k();
  if (s.consumer_mode() == ConsumerMode::PingPong) nest.dealt = s.consumer_warpgroups();
  return nest;
}

IndexCheckReport check_index_math(const Schedule& s, const IndexCheckOptions& opt) {
  return check_index_math(analyze_schedule(s).index, opt);
}

std::string format_loop_nest(const LoopNest& nest, const IndexCheckOptions& opt) {
  return format_plan(nest, make_plan(nest, opt));
}

std::string IndexCheckReport::summary() const {
  std::ostringstream os;
  os << "index check: " << points << " iterations, " << predicated << " predicated, " << reductions
     << " products reduced, " << writes << " outputs written, " << ctas << " CTAs; " << failure_count
     << " failure(s)";
  std::string kinds;
  for (size_t k = 0; k < IndexFailure::kKinds; ++k)
    if (failures_by_kind[k] > 0)
      kinds += (kinds.empty() ? "" : ", ") + std::string(failure_kind_name(IndexFailure::Kind(k))) + " " +
               std::to_string(failures_by_kind[k]);
  if (!kinds.empty()) os << " (" << kinds << ")";
  os << "\n";
  for (const auto& f : failures) os << "  [" << failure_kind_name(f.kind) << "] " << f.message << "\n";
  if (failure_count > static_cast<int64_t>(failures.size()))
    os << "  ... and " << failure_count - static_cast<int64_t>(failures.size()) << " more\n";
  if (failure_count > 0) os << loop_nest;
  return os.str();
}

}  // namespace gg
