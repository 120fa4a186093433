#ifndef GG_DEV_TILE_ORDER_H
#define GG_DEV_TILE_ORDER_H
// The Hilbert order (`persist ... hilbert`) and the upper-triangle-first order (`persist ...
// triangle`) of a persistent kernel's output tiles as plain integer code that compiles for the
// host too: emitted kernels map their linear tile index to (m tile, n tile) with hilbert_tile_m /
// hilbert_tile_n (triangle_tile_m / _n), and the index-math check, the kernel-IR evaluator and
// the CPU simulator call the very same functions (codegen/expr.cpp's host twins).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GG_HOST_DEVICE inline
#endif

namespace gg::dev {

// The largest tile count along m or along n the Hilbert helpers take: the two counts travel packed
// in one int, tiles_m * 65536 + tiles_n (hilbert_dims), which must stay positive.
constexpr int kHilbertMaxTiles = 32767;

struct GridTile {
  int m, n;
};

// Tile `d` (0 <= d < tiles_m * tiles_n) of a generalized Hilbert curve over the tiles_m x tiles_n
// rectangle: Jakub Cerveny's "gilbert" construction, for any sizes. The curve starts at tile
// (0, 0), runs first along the longer side, and every step moves to an edge-adjacent tile except
// where the sizes force a single diagonal step (an odd side that must be halved).
//
// gilbert is a recursion over oriented rectangles: an origin, a major side of `la` tiles along
// the unit step (ax, ay) and a minor side of `lb` tiles along (bx, by). A rectangle one tile
// thick is a straight run. A long one (2 la > 3 lb) splits across its major side into two halves
// walked the same way. Otherwise it splits in three: the near half of the minor side walked with
// the roles swapped ("up"), the far part the full length ("across"), and the rest of the near half
// walked back towards the start ("down"). Halves are rounded to even where that keeps the steps
// edge-adjacent. Since exactly one sub-rectangle holds `d`, the recursion is a loop: skip the
// areas of the sub-rectangles before it and descend, O(log(tiles)) iterations, no stack.
GG_HOST_DEVICE constexpr GridTile hilbert_tile(int d, int tiles_m, int tiles_n) {
  int x = 0, y = 0;  // origin of the current rectangle: (m tile, n tile)
  int la = tiles_m, lb = tiles_n, ax = 1, ay = 0, bx = 0, by = 1;
  if (tiles_m < tiles_n) {  // the major side is the longer one
    la = tiles_n;
    lb = tiles_m;
    ax = 0;
    ay = 1;
    bx = 1;
    by = 0;
  }
  for (;;) {
    if (lb == 1) return {x + ax * d, y + ay * d};
    if (la == 1) return {x + bx * d, y + by * d};
    int ha = la / 2, hb = lb / 2;
    if (2 * la > 3 * lb) {  // long: two halves along the major side
      if (ha % 2 == 1 && la > 2) ++ha;
      if (d < ha * lb) {
        la = ha;
      } else {
        d -= ha * lb;
        x += ax * ha;
        y += ay * ha;
        la -= ha;
      }
      continue;
    }
    if (hb % 2 == 1 && lb > 2) ++hb;
    if (d < hb * ha) {  // up: hb tiles along b, ha across a
      const int sx = ax, sy = ay;
      la = hb;
      lb = ha;
      ax = bx;
      ay = by;
      bx = sx;
      by = sy;
      continue;
    }
    d -= hb * ha;
    if (d < la * (lb - hb)) {  // across: the full major side, the far lb - hb of the minor side
      x += bx * hb;
      y += by * hb;
      lb -= hb;
      continue;
    }
    d -= la * (lb - hb);
    // down: from the far end of the major side back along -b for hb tiles, la - ha across -a
    x += ax * (la - 1) + bx * (hb - 1);
    y += ay * (la - 1) + by * (hb - 1);
    const int sx = ax, sy = ay;
    ax = -bx;
    ay = -by;
    bx = -sx;
    by = -sy;
    const int rest = la - ha;
    la = hb;
    lb = rest;
  }
}

// The rectangle's two tile counts packed as one kernel-IR constant (1 <= each <= kHilbertMaxTiles).
GG_HOST_DEVICE constexpr int hilbert_dims(int tiles_m, int tiles_n) { return tiles_m * 65536 + tiles_n; }

// The m tile and the n tile of Hilbert tile `tile` in the rectangle `dims` (hilbert_dims).
GG_HOST_DEVICE constexpr int hilbert_tile_m(int tile, int dims) { return hilbert_tile(tile, dims / 65536, dims % 65536).m; }
GG_HOST_DEVICE constexpr int hilbert_tile_n(int tile, int dims) { return hilbert_tile(tile, dims / 65536, dims % 65536).n; }

// The tiles on and above the diagonal first, for D = A * A^T (`persist ... triangle G`): tile `t`
// (0 <= t < tiles_m * tiles_n) of a grid of tiles `ratio` times as wide as they are tall, so
// tiles_n = ceil(tiles_m / ratio) (a square grid where ratio is 1). Column n's tiles on or above
// the diagonal are its first min(tiles_m, ratio * (n + 1)) rows: a tile with a row above some
// column of it. Indices below that count are those tiles, in bands of `group` rows: a band's
// columns from the first that reaches its first row on, each column's rows of the band down to
// the diagonal (m fastest), so that consecutive tiles share operand tiles in L2 as a row-major
// band does. The indices after them are the tiles below the diagonal, row by row. A persistent
// loop dealing indices round-robin then gives every CTA an even share of the tiles that compute
// (those below the diagonal compute nothing), which a rectangle's order does not.
// O(tiles_m / group + group / ratio) steps for a tile above the diagonal, O(tiles_m) below.
GG_HOST_DEVICE constexpr GridTile triangle_tile(int t, int tiles_m, int ratio, int group) {
  // No division in the loops (the ratio is a run-time value): every unit of a persistent loop asks.
  const int tiles_n = (tiles_m + ratio - 1) / ratio;
  // Per band: its first column holding any of its rows (first / ratio) and the first holding all
  // of them (ceil((first + rows) / ratio) - 1), each advanced from the band before.
  int first_column = 0, full_column = 0;
  for (int first = 0; first < tiles_m; first += group) {
    const int rows = tiles_m - first < group ? tiles_m - first : group;
    while (ratio * (first_column + 1) <= first) ++first_column;
    while (ratio * (full_column + 1) < first + rows) ++full_column;
    // Columns first_column .. full_column - 1 hold ratio * (n + 1) - first of the band's rows.
    const int corner = ratio * (full_column * (full_column + 1) - first_column * (first_column + 1)) / 2 -
                       first * (full_column - first_column);
    const int band = corner + rows * (tiles_n - full_column);
    if (t >= band) {
      t -= band;
      continue;
    }
    if (t >= corner) return {first + (t - corner) % rows, full_column + (t - corner) / rows};
    for (int column = first_column;; ++column) {
      const int here = ratio * (column + 1) - first;
      if (t < here) return {first + t, column};
      t -= here;
    }
  }
  // Below the diagonal: row m holds m / ratio tiles (`held`, advanced every `ratio` rows).
  for (int m = ratio, held = 1, step = 0; m < tiles_m; ++m) {
    if (t < held) return {m, t};
    t -= held;
    if (++step == ratio) {
      step = 0;
      ++held;
    }
  }
  return {0, 0};  // past the grid (not reached from a legal index)
}

// How many tiles come first in the triangle order (those with a row on or above the diagonal):
// column n holds min(tiles_m, ratio * (n + 1)) of them.
GG_HOST_DEVICE constexpr int triangle_computing(int tiles_m, int ratio) {
  const int tiles_n = (tiles_m + ratio - 1) / ratio, rising = tiles_m / ratio;  // columns not yet full
  return ratio * rising * (rising + 1) / 2 + (tiles_n - rising) * tiles_m;
}

// The band height (at most 4095 rows; a taller band orders the same grids as one of 4095 rows
// but for grids taller still) and the ratio (below 16) packed as one value, and with the grid's
// m tile count as one kernel-IR constant (1 <= tiles_m <= kHilbertMaxTiles).
GG_HOST_DEVICE constexpr int triangle_shape(int group, int ratio) { return (group < 4095 ? group : 4095) * 16 + ratio; }
GG_HOST_DEVICE constexpr int triangle_dims(int tiles_m, int shape) { return tiles_m * 65536 + shape; }
GG_HOST_DEVICE constexpr int triangle_tile_m(int tile, int dims) {
  return triangle_tile(tile, dims / 65536, dims % 16, dims % 65536 / 16).m;
}
GG_HOST_DEVICE constexpr int triangle_tile_n(int tile, int dims) {
  return triangle_tile(tile, dims / 65536, dims % 16, dims % 65536 / 16).n;
}
// Whether tile `tile` of the triangle order has a row on or above the diagonal (1) or not (0).
GG_HOST_DEVICE constexpr int triangle_computes(int tile, int dims) {
  return tile < triangle_computing(dims / 65536, dims % 16) ? 1 : 0;
}

}  // namespace gg::dev

#undef GG_HOST_DEVICE
#endif  // GG_DEV_TILE_ORDER_H
