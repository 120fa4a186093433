#pragma once
// The CPU check of index math. For one schedule at its concrete sizes it enumerates the loop
// nest the way the hardware runs it -- CTAs of the grid, the persistent tile loop
// `for (t = cta; t < tiles; t += grid)`, then every serial/unrolled/warpgroup/warp/thread loop --
// recovers m, n, k from the leaf values by replaying the domain's relations in reverse, and
// counts: every in-range (m, n, k) product must be reduced exactly once and every output (m, n)
// written exactly once; no unpredicated iteration may fall outside the problem. Nothing is
// sampled: every iteration is visited. The counting is the proof; the check derives the nest
// only from the domain's leaves (order), extents, bindings and relations.
//
// Semantics it pins down (codegen must emit the same):
//  - Split(parent -> outer, inner, factor): parent = outer * factor + inner; an iteration with
//    parent >= extent(parent) is predicated off (tails, at every split level).
//  - Merge(outer, inner -> fused): outer = fused / extent(inner), inner = fused % extent(inner).
//  - Persist(m tiles, n tiles -> t): see persistent_tile().
//  - The writeback of an output element happens once per distinct assignment of all non-k
//    leaves that maps in range (after the k loops finish).
// Inside a CTA the check runs the tile-level loops outside the intra-tile ones, whatever the
// domain's order: the counts do not depend on it, and each tile's products then come together,
// so that the domain's tile_extent / tile_count can be checked against the tiles enumerated.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsl/domain.h"
#include "dsl/schedule.h"

namespace gg {

// The loop nest as plain data: what the check reads. loop_nest_of copies it from a Domain;
// tests corrupt a copy (a wrong split factor, a stale extent) to prove the check fails.
struct LoopNest {
  int64_t m = 0, n = 0, k = 0;      // problem extents
  std::vector<Axis> axes;           // every axis named by the leaves or relations (m, n, k included)
  std::vector<std::string> leaves;  // loop order, outermost first
  std::vector<Relation> relations;  // in the order they were applied
  // What the domain claims a CTA tile is (Domain::tile_extent, tile_count); 0 = no claim. The
  // check verifies each claim against the tiles it enumerates.
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  int64_t tiles_m = 0, tiles_n = 0;
  // > 1: each CTA's persistent tiles are dealt in turn to this many consumer warpgroups
  // (ping-pong): consumer w runs tiles cta + w * grid, cta + (w + dealt) * grid, ...
  int64_t dealt = 1;
};
LoopNest loop_nest_of(const Domain& d);
// The nest of a schedule: its domain's, at the definition's problem sizes, with ping-pong's
// dealing (ScheduleAnalysis::index).
LoopNest index_loop_nest(const Schedule& s);

struct TileCoord {
  int64_t m = 0, n = 0;
  bool operator==(const TileCoord&) const = default;
};

// The persistent tile order: linear tile index t in [0, tiles_m * tiles_n) -> (m tile, n tile).
// Row-major runs n fastest, column-major m fastest. With group g the tiles come in bands of g
// rows of m (row-major; g columns of n for column-major), and inside a band the band's own
// dimension runs fastest -- Triton's GROUP_M / CUTLASS's swizzle, which keeps the operand tiles
// of consecutive CTAs in L2. The last band is partial when g does not divide the tile count
// along it: it holds min(g, remaining) rows. Hilbert ignores g and follows the generalized
// Hilbert curve of runtime/device/tile_order.h (the emitted kernel's own helper, run on the host).
// Triangle: the tiles on and above the diagonal first, of tiles `triangle_ratio` times as wide as
// they are tall (tiles_n = ceil(tiles_m / triangle_ratio)).
TileCoord persistent_tile(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster raster, int64_t group,
                          int64_t triangle_ratio = 1);

using PersistentTileMap = std::function<TileCoord(int64_t t, int64_t tiles_m, int64_t tiles_n, Raster, int64_t group)>;

struct IndexCheckOptions {
  int64_t persistent_grid = 7;           // CTAs launched for a persistent schedule (7: partial waves)
  int64_t max_points = int64_t(1) << 27; // iterations enumerated; a larger nest is refused, never sampled
  int max_failures = 8;                  // failures described in full; all are counted
  // Replaces persistent_tile (default when empty): a hook to check another implementation of
  // the tile scheduler, and for tests that inject a wrong one.
  PersistentTileMap persistent_map;
};

struct IndexFailure {
  enum class Kind {
    Structure,        // the nest cannot be enumerated (unknown axis, relation mixing k with m/n, ...)
    TooLarge,         // over max_points
    Reduction,        // an (m, n, k) reduced 0 or >= 2 times
    Write,            // an output (m, n) written 0 or >= 2 times
    OutOfBounds,      // an unpredicated iteration reaches memory outside the problem
    PersistentMap,    // the persistent tile order is not a bijection onto the tile grid
    PersistentVisit,  // a persistent tile index visited 0 or >= 2 times by the CTAs
    TileShape,        // the domain's tile_extent / tile_count disagree with the enumerated tiles
  };
  static constexpr size_t kKinds = 8;
  Kind kind = Kind::Structure;
  std::string message;
};
std::string_view failure_kind_name(IndexFailure::Kind k);

struct IndexCheckReport {
  int64_t points = 0;       // iterations enumerated
  int64_t predicated = 0;   // of those, predicated off (tails)
  int64_t reductions = 0;   // in-range products reduced (== M*N*K when ok)
  int64_t writes = 0;       // output elements written (== M*N when ok)
  int64_t ctas = 0;         // CTAs enumerated
  int64_t failure_count = 0;
  int64_t failures_by_kind[IndexFailure::kKinds] = {};    // indexed by IndexFailure::Kind
  std::vector<IndexFailure> failures;  // the first max_failures
  std::string loop_nest;               // format_loop_nest of what was checked

  bool ok() const { return failure_count == 0; }
  int64_t failures_of(IndexFailure::Kind k) const { return failures_by_kind[static_cast<size_t>(k)]; }
  std::string summary() const;  // one line of numbers, then the failures and the loop nest
};

// Checks the nest of the schedule's analysis (analyze_schedule(s).index).
IndexCheckReport check_index_math(const Schedule& s, const IndexCheckOptions& opt = {});
IndexCheckReport check_index_math(const LoopNest& nest, const IndexCheckOptions& opt = {});

// The nest as the check enumerates it, outermost first, then the index math that recovers
// m, n, k from the leaves; failure messages carry it.
std::string format_loop_nest(const LoopNest& nest, const IndexCheckOptions& opt = {});

}  // namespace gg
