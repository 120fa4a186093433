#include "dsl/domain.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "dsl/error.h"

namespace gg {

namespace {
constexpr Binding kAllBindings[] = {Binding::None,      Binding::BlockX,    Binding::BlockY, Binding::BlockZ,
                                    Binding::Cluster,   Binding::Persistent, Binding::Warpgroup, Binding::Warp,
                                    Binding::Thread,    Binding::Serial,    Binding::Unroll};

std::string root_names(RootSet roots) {
  std::string s;
  if (roots & unsigned(Root::M)) s += "m";
  if (roots & unsigned(Root::N)) s += "n";
  if (roots & unsigned(Root::K)) s += "k";
  return s;
}

// a, b >= 1; no a + b - 1, which overflows for a split factor near INT64_MAX.

// The extent of a fused loop; huge split factors can make it overflow 64 bits.
int64_t fused_extent(const Axis& a, const Axis& b, const std::string& what) {
  if (a.extent > INT64_MAX / b.extent)
    throw_user_error("extent-overflow", what + ": the fused loop would run " + std::to_string(a.extent) + " x " +
                     std::to_string(b.extent) + " times, more than a 64-bit loop counter holds; split with "
                     "factors no larger than the extents being split");
  return a.extent * b.extent;
}
}  // namespace

std::string_view binding_name(Binding b) {
  switch (b) {
    case Binding::None: return "none";
    case Binding::BlockX: return "block.x";
    case Binding::BlockY: return "block.y";
    case Binding::BlockZ: return "block.z";
    case Binding::Cluster: return "cluster";
    case Binding::Persistent: return "persistent";
    case Binding::Warpgroup: return "warpgroup";
    case Binding::Warp: return "warp";
    case Binding::Thread: return "thread";
    case Binding::Serial: return "serial";
    case Binding::Unroll: return "unroll";
  }
  GG_INTERNAL_CHECK(false, "unhandled binding");
}

Binding parse_binding(std::string_view name) {
  for (Binding b : kAllBindings)
    if (binding_name(b) == name && b != Binding::Persistent) return b;
  throw_user_error("unknown-binding", "unknown binding '" + std::string(name) +
                   "': legal bindings are block.x, block.y, block.z, cluster, warpgroup, warp, thread, serial, "
                   "unroll (persistent comes from persist)");
}

bool binding_is_grid(Binding b) {
  return b == Binding::BlockX || b == Binding::BlockY || b == Binding::BlockZ || b == Binding::Cluster ||
         b == Binding::Persistent;
}

bool binding_is_exclusive(Binding b) {
  return b != Binding::None && b != Binding::Serial && b != Binding::Unroll;
}

Domain::Domain(int64_t m, int64_t n, int64_t k) {
  axes_ = {Axis{"m", unsigned(Root::M), m, Level::Intra, Binding::None},
           Axis{"n", unsigned(Root::N), n, Level::Intra, Binding::None},
           Axis{"k", unsigned(Root::K), k, Level::Intra, Binding::None}};
  leaves_ = {"m", "n", "k"};
}

const Axis* Domain::find(const std::string& name) const {
  for (const Axis& a : axes_)
    if (a.name == name) return &a;
  return nullptr;
}

bool Domain::is_leaf(const std::string& name) const {
  return std::find(leaves_.begin(), leaves_.end(), name) != leaves_.end();
}

std::string Domain::leaves_list() const {
  std::string s;
  for (const auto& l : leaves_) s += (s.empty() ? "" : ", ") + l;
  return s;
}

// An unknown axis that a split of a loop axis would name (k_o before `tile`): which directive
// makes it, in the schedule file's words and in C++.
std::string Domain::missing_split_hint(const std::string& name) const {
  if (name.size() < 3 || name[name.size() - 2] != '_' || (name.back() != 'o' && name.back() != 'i')) return "";
  const std::string base = name.substr(0, name.size() - 2);
  if (!is_leaf(base)) return "";
  const std::string split = "`split " + base + " FACTOR " + base + "_o " + base + "_i` (C++: split(\"" + base +
                            "\", FACTOR, \"" + base + "_o\", \"" + base + "_i\"))";
  const bool root = base == "m" || base == "n" || base == "k";
  return "; " + name + " is made by splitting " + base + ": add " +
         (root ? "`tile M N K` (C++: tile(M, N, K)), which splits m, n and k, or " : "") + split + " before it";
}

const Axis& Domain::axis(const std::string& name) const {
  const Axis* a = find(name);
  if (!a)
    throw_user_error("unknown-axis",
                     "unknown axis '" + name + "': the loop axes are " + leaves_list() + missing_split_hint(name));
  if (!is_leaf(name))
    throw_user_error("unknown-axis", "axis '" + name + "' was already split or merged away: the loop axes are " +
                     leaves_list());
  return *a;
}

Axis& Domain::mutable_leaf(const std::string& name) { return const_cast<Axis&>(axis(name)); }

void Domain::check_new_name(const std::string& name, const char* primitive) const {
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
            std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (!ok)
    throw_user_error("bad-axis-name", std::string(primitive) + ": '" + name +
                     "' is not a valid axis name (letters, digits and _, not starting with a digit)");
  if (find(name))
    throw_user_error("duplicate-axis", std::string(primitive) + ": an axis named '" + name +
                     "' exists already; pick a new name");
}

void Domain::insert_leaf_at(size_t pos, Axis a) {
  leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(pos), a.name);
  axes_.push_back(std::move(a));
}

void Domain::split(const std::string& name, int64_t factor, const std::string& outer, const std::string& inner) {
  Axis parent = axis(name);
  if (factor < 1)
    throw_user_error("split-factor", "split " + name + ": factor " + std::to_string(factor) + " must be >= 1");
  check_new_name(outer, "split");
  check_new_name(inner, "split");
  if (outer == inner) throw_user_error("duplicate-axis", "split " + name + ": outer and inner need different names");
  if (parent.binding != Binding::None)
    throw_user_error("split-bound", "split " + name + ": the axis is bound to " +
                     std::string(binding_name(parent.binding)) + "; split before binding");
  bool root = parent.name == "m" || parent.name == "n" || parent.name == "k";
  Level outer_level = root ? Level::Tile : parent.level;
  size_t pos = static_cast<size_t>(std::find(leaves_.begin(), leaves_.end(), name) - leaves_.begin());
  leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(pos));
  insert_leaf_at(pos, Axis{outer, parent.roots, ceil_div(parent.extent, factor), outer_level, Binding::None});
  insert_leaf_at(pos + 1, Axis{inner, parent.roots, factor, parent.level, Binding::None});
  relations_.push_back(Relation{Relation::Kind::Split, name, outer, inner, "", factor});
}

void Domain::merge(const std::string& outer, const std::string& inner, const std::string& fused) {
  Axis a = axis(outer), b = axis(inner);
  if (outer == inner) throw_user_error("merge-self", "merge " + outer + ": an axis cannot be merged with itself");
  check_new_name(fused, "merge");
  auto pa = std::find(leaves_.begin(), leaves_.end(), outer) - leaves_.begin();
  auto pb = std::find(leaves_.begin(), leaves_.end(), inner) - leaves_.begin();
  if (pb != pa + 1)
    throw_user_error("merge-adjacent", "merge " + outer + " " + inner + ": '" + inner +
                     "' must be the loop directly inside '" + outer + "' (loop order: " + leaves_list() +
                     "); reorder first");
  if (a.level != b.level)
    throw_user_error("merge-levels", "merge " + outer + " " + inner + ": '" + outer + "' iterates over " +
                     (a.level == Level::Tile ? "tiles" : "one tile") + " but '" + inner + "' over " +
                     (b.level == Level::Tile ? "tiles" : "one tile") + "; merge axes of the same level");
  if (a.level == Level::Intra && a.roots != b.roots)
    throw_user_error("merge-intra-roots", "merge " + outer + " " + inner + ": axes inside a tile map to the MMA "
                     "and must come from one dimension (" + root_names(a.roots) + " vs " + root_names(b.roots) + ")");
  if ((a.roots | b.roots) & unsigned(Root::K) && a.roots != b.roots)
    throw_user_error("merge-reduction", "merge " + outer + " " + inner + ": the reduction axis k cannot be merged "
                     "with the output axes m, n");
  for (const Axis* x : {&a, &b})
    if (x->binding != Binding::None)
      throw_user_error("merge-bound", "merge " + outer + " " + inner + ": '" + x->name + "' is already bound to " +
                       std::string(binding_name(x->binding)) + "; merge before binding");
  const int64_t extent = fused_extent(a, b, "merge " + outer + " " + inner);
  leaves_.erase(leaves_.begin() + pa, leaves_.begin() + pb + 1);
  insert_leaf_at(static_cast<size_t>(pa), Axis{fused, a.roots | b.roots, extent, a.level, Binding::None});
  relations_.push_back(Relation{Relation::Kind::Merge, "", outer, inner, fused, b.extent});
}

void Domain::reorder(const std::vector<std::string>& order) {
  std::set<std::string> seen;
  std::vector<size_t> slots;
  for (const auto& name : order) {
    axis(name);
    if (!seen.insert(name).second)
      throw_user_error("reorder-duplicate", "reorder: axis '" + name + "' is listed twice");
    slots.push_back(static_cast<size_t>(std::find(leaves_.begin(), leaves_.end(), name) - leaves_.begin()));
  }
  // The named axes take the positions they occupied, in the new order; others stay put.
  std::sort(slots.begin(), slots.end());
  for (size_t i = 0; i < slots.size(); ++i) leaves_[slots[i]] = order[i];
}

void Domain::bind(const std::string& name, Binding b) {
  Axis& a = mutable_leaf(name);
  if (b == Binding::Persistent)
    throw_user_error("unknown-binding", "bind " + name + ": the persistent tile loop comes from persist, not bind");
  if (a.binding != Binding::None)
    throw_user_error("rebind", "bind " + name + ": the axis is already bound to " +
                     std::string(binding_name(a.binding)));
  if (binding_is_exclusive(b))
    if (const Axis* other = bound_to(b))
      throw_user_error("duplicate-binding", "bind " + name + " " + std::string(binding_name(b)) + ": " +
                       std::string(binding_name(b)) + " is already bound to axis '" + other->name +
                       "'; one hardware index takes one axis (merge the two axes first, or pick another index)");
  bool grid = binding_is_grid(b);
  if (grid && a.level == Level::Intra)
    throw_user_error("bind-level", "bind " + name + " " + std::string(binding_name(b)) + ": '" + name +
                     "' lies inside one CTA tile; bind a tile-level axis (the outer result of splitting m, n) "
                     "to a grid index");
  if (!grid && b != Binding::Serial && b != Binding::Unroll && a.level == Level::Tile)
    throw_user_error("bind-level", "bind " + name + " " + std::string(binding_name(b)) + ": '" + name +
                     "' iterates over tiles; only axes inside a tile map to warpgroups, warps and threads");
  if (grid && (a.roots & unsigned(Root::K)))
    throw_user_error("bind-reduction", "bind " + name + " " + std::string(binding_name(b)) +
                     ": '" + name + "' is a reduction (k) axis; split-K over CTAs is not supported, bind it serial");
  if (b == Binding::Warpgroup && (a.roots & unsigned(Root::K)))
    throw_user_error("bind-reduction", "bind " + name + " warpgroup: warpgroups split the tile's m or n, not k");
  a.binding = b;
}

void Domain::persist(const std::string& m_axis, const std::string& n_axis, const std::string& fused, Raster raster,
                     int64_t group) {
  const Axis& a = axis(m_axis);
  const Axis& b = axis(n_axis);
  for (const Axis* x : {&a, &b}) {
    bool grid_or_free = x->binding == Binding::None || x->binding == Binding::BlockX ||
                        x->binding == Binding::BlockY || x->binding == Binding::BlockZ;
    if (x->level != Level::Tile || !grid_or_free)
      throw_user_error("persist-axes", "persist " + m_axis + " " + n_axis + ": '" + x->name +
                       "' must be a tile-level axis (the outer result of splitting m or n), unbound or bound to "
                       "a block index");
  }
  if (a.roots != unsigned(Root::M) || b.roots != unsigned(Root::N))
    throw_user_error("persist-axes", "persist " + m_axis + " " + n_axis + ": name the tile axis of m first, then "
                     "the tile axis of n");
  if (group < 1 || group > INT32_MAX)  // bounded so that group x tiles stays within 64 bits
    throw_user_error("persist-group", "persist: group size " + std::to_string(group) + " is out of range; legal is "
                     "1..2147483647 (8 is the default)");
  if (bound_to(Binding::Persistent)) throw_user_error("persist-twice", "persist: the schedule is already persistent");
  check_new_name(fused, "persist");
  int64_t extent = fused_extent(a, b, "persist " + m_axis + " " + n_axis);
  RootSet roots = a.roots | b.roots;
  auto pa = std::find(leaves_.begin(), leaves_.end(), m_axis) - leaves_.begin();
  auto pb = std::find(leaves_.begin(), leaves_.end(), n_axis) - leaves_.begin();
  size_t pos = static_cast<size_t>(std::min(pa, pb));
  leaves_.erase(leaves_.begin() + std::max(pa, pb));
  leaves_.erase(leaves_.begin() + std::min(pa, pb));
  insert_leaf_at(pos, Axis{fused, roots, extent, Level::Tile, Binding::Persistent});
  Relation r{Relation::Kind::Persist, "", m_axis, n_axis, fused, 1};
  r.raster = raster;
  r.group = group;
  relations_.push_back(r);
}

int64_t Domain::tile_extent(Root r) const {
  // The tile is the intra axis that splitting the root leaves inside the CTA (the whole root when
  // it was never split). Later splits of intra axes subdivide it with predicated tails, so the
  // product of the intra leaves can exceed it (128 split by 48 gives 3 x 48).
  const Axis& root = axes_[r == Root::M ? 0 : r == Root::N ? 1 : 2];
  for (const Relation& rel : relations_)
    if (rel.kind == Relation::Kind::Split && rel.parent == root.name) return find(rel.inner)->extent;
  return root.extent;
}

int64_t Domain::tile_count(Root r) const {
  const Axis& root = axes_[r == Root::M ? 0 : r == Root::N ? 1 : 2];
  return ceil_div(root.extent, tile_extent(r));
}

const Axis* Domain::bound_to(Binding b) const {
  for (const auto& name : leaves_) {
    const Axis* a = find(name);
    if (a->binding == b) return a;
  }
  return nullptr;
}

}  // namespace gg
