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

// The upper triangle first, for D = A * A^T (`persist ... triangle G`): tile `t` (0 <= t < tiles^2)
// of a square grid. Indices below tiles (tiles + 1) / 2 are the tiles on and above the diagonal
// (m <= n), in bands of `group` rows: a band's columns from its first row's on, each column's rows
// of the band down to the diagonal (m fastest), so that consecutive tiles share operand tiles in L2
// as a row-major band does. The indices after them are the tiles below the diagonal, row by row.
// A persistent loop dealing indices round-robin then gives every CTA an even share of the tiles
// that compute (those below the diagonal compute nothing), which a rectangle's order does not.
// O(tiles / group) steps for a tile above the diagonal, O(tiles) below.
GG_HOST_DEVICE constexpr GridTile triangle_tile(int t, int tiles, int group) {
  for (int first = 0; first < tiles; first += group) {
    const int rows = tiles - first < group ? tiles - first : group;
    const int corner = rows * (rows + 1) / 2;  // the band's first `rows` columns: 1, 2, .. rows of its rows
    const int band = corner + rows * (tiles - first - rows);
    if (t >= band) {
      t -= band;
      continue;
    }
    if (t >= corner) return {first + (t - corner) % rows, first + rows + (t - corner) / rows};
    int column = 0;
    while ((column + 1) * (column + 2) / 2 <= t) ++column;
    return {first + t - column * (column + 1) / 2, first + column};
  }
  for (int m = 1; m < tiles; ++m) {  // below the diagonal: row m holds m tiles
    if (t < m) return {m, t};
    t -= m;
  }
  return {0, 0};  // past the grid (not reached from a legal index)
}

// The grid's tile count along each side and the band height packed as one kernel-IR constant.
GG_HOST_DEVICE constexpr int triangle_dims(int tiles, int group) { return tiles * 65536 + group; }
GG_HOST_DEVICE constexpr int triangle_tile_m(int tile, int dims) { return triangle_tile(tile, dims / 65536, dims % 65536).m; }
GG_HOST_DEVICE constexpr int triangle_tile_n(int tile, int dims) { return triangle_tile(tile, dims / 65536, dims % 65536).n; }

}  // namespace gg::dev

#undef GG_HOST_DEVICE
#endif  // GG_DEV_TILE_ORDER_H
