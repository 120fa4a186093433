#pragma once
// The iteration domain of the matmul: the axes that the loop primitives (split, merge,
// reorder, bind, persist) derive from m, n and k, and the relations between them. The
// schedule updates it as it records each directive, so every call is checked against the
// axes that exist at that point; codegen reads it to build the loop nests.
#include <cstdint>
#include <string>
#include <vector>

namespace gg {

// ceil(a / b) for a >= 0, b >= 1, without the a + b - 1 that overflows for huge extents.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

enum class Root : unsigned { M = 1, N = 2, K = 4 };
using RootSet = unsigned;  // bit set of Root

// Tile-level axes iterate over CTA tiles (grid, persistent or serial loops); intra axes lie
// inside one tile and map to warpgroups, warps, threads and the MMA instruction.
enum class Level { Tile, Intra };

enum class Binding { None, BlockX, BlockY, BlockZ, Cluster, Persistent, Warpgroup, Warp, Thread, Serial, Unroll };

std::string_view binding_name(Binding b);  // "block.x", "serial", ...
Binding parse_binding(std::string_view name);  // CompileError `unknown-binding`
bool binding_is_grid(Binding b);           // block.x/y/z, cluster, persistent
bool binding_is_exclusive(Binding b);      // at most one axis may hold it

// The persistent tile order: row- or column-major in bands of a group of tiles, or along a
// generalized Hilbert curve over the whole tile grid (the group is ignored).
// Triangle: the tiles on and above the diagonal first, in row bands (D = A * A^T's persistent
// walk; runtime/device/tile_order.h's triangle_tile).
enum class Raster { RowMajor, ColumnMajor, Hilbert, Triangle };

struct Axis {
  std::string name;
  RootSet roots = 0;
  int64_t extent = 1;
  Level level = Level::Intra;
  Binding binding = Binding::None;
};

// How axes derive from one another; replayed in reverse to recover m, n, k from leaf values.
struct Relation {
  enum class Kind { Split, Merge, Persist } kind = Kind::Split;
  std::string parent;               // Split: the split axis
  std::string outer, inner;         // Split: results; Merge/Persist: the two inputs (outer = m side)
  std::string fused;                // Merge/Persist: result
  int64_t factor = 1;               // Split: inner extent
  Raster raster = Raster::RowMajor; // Persist: tile order
  int64_t group = 1;                // Persist: bands of `group` tiles along the raster's slow dimension (Triton GROUP_M); Hilbert ignores it
};

class Domain {
 public:
  Domain() = default;
  Domain(int64_t m, int64_t n, int64_t k);

  const std::vector<std::string>& leaves() const { return leaves_; }  // loop order, outermost first
  const std::vector<Relation>& relations() const { return relations_; }
  const Axis& axis(const std::string& name) const;  // CompileError `unknown-axis` when not a leaf
  const Axis* find(const std::string& name) const;  // any axis ever created, or nullptr
  bool is_leaf(const std::string& name) const;
  std::string leaves_list() const;  // "m_o, n_o, k_o" for messages
  // "; k_o is made by splitting k: add `tile M N K` ..." for an unknown name a split would make.
  std::string missing_split_hint(const std::string& name) const;

  void split(const std::string& axis, int64_t factor, const std::string& outer, const std::string& inner);
  void merge(const std::string& outer, const std::string& inner, const std::string& fused);
  void reorder(const std::vector<std::string>& order);
  void bind(const std::string& axis, Binding b);
  // Replaces the m and n tile axes (unbound or bound to block indices) by one persistent tile loop.
  void persist(const std::string& m_axis, const std::string& n_axis, const std::string& fused, Raster raster,
               int64_t group);

  // The CTA tile: product of the intra leaves' extents per root.
  int64_t tile_extent(Root r) const;
  // Product of tile-level leaf extents rooted at r (the number of tiles along r).
  int64_t tile_count(Root r) const;
  // The leaf bound to b, or nullptr.
  const Axis* bound_to(Binding b) const;

 private:
  Axis& mutable_leaf(const std::string& name);
  void check_new_name(const std::string& name, const char* primitive) const;
  void insert_leaf_at(size_t pos, Axis a);

  std::vector<Axis> axes_;             // every axis ever created
  std::vector<std::string> leaves_;
  std::vector<Relation> relations_;
};

}  // namespace gg
