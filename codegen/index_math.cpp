#include "codegen/index_math.h"

#include "dsl/dtype.h"
#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

const char* const kInt = "int";
const char* const kWide = "long long";  // global rows, columns and element indices

class IndexBuilder {
 public:
  explicit IndexBuilder(EpilogueStore& n) : n_(n), in_(epilogue_inputs(n)), ix_(n.index) {}

  void build() {
    ix_ = EpilogueIndex{};
    if (n_.fragment == Fragment::TmemLanes) return tmem_lanes();
    if (n_.stmatrix) return stmatrix();
    wgmma();
  }

 private:
  static ExprPtr tid() { return var("threadIdx.x"); }
  // wgmma's accumulator fragment: thread t holds rows 16 (t / 32 % 4) + t % 32 / 4 (+8) of each
  // 64-row block, columns 8 j + 2 (t % 4) (+1), registers 4 j + 2 h (+1) of its block.
  static ExprPtr lane_row() { return tid() % imm(128) / imm(32) * imm(16) + tid() % imm(32) / imm(4); }
  static ExprPtr lane_col() { return imm(2) * (tid() % imm(32) % imm(4)); }

  void wgmma() {
    ix_.thread = {{kInt, "lane_row", lane_row()}, {kInt, "lane_col", lane_col()}};
    const ExprPtr first = n_.col_begin / imm(8);
    ix_.group_begin = first;
    ix_.group_end = first + imm(n_.cols / 8);
    ix_.group = {{kInt, "c", imm(8) * var("j") + var("lane_col")}};
    columns(ix_.group);
    fragment_pair(ix_.pair, n_.staged);
    bounds_and_indices();
    if (n_.reduce) partials(*n_.reduce);
  }

  // A reducing store's workspace partials: a row's at the tile slot's float of the tile row, a
  // column's in the warp's partial row of the tile's columns.
  void partials(const ReduceInto& r) const {
    GG_INTERNAL_CHECK(!n_.staged, "a reducing epilogue store is not staged");
    if (r.along == EpilogueReduction::Along::Rows && n_.fragment == Fragment::TmemLanes) {
      // the thread's row's partial of this chunk of columns: the chunk's own column of partials
      ix_.partial_row = r.tile_floats + n_.col_begin / imm(n_.cols) * imm(r.tile_m) + var("r");
      return;
    }
    if (r.along == EpilogueReduction::Along::Rows) {
      ix_.partial_row = r.tile_floats + n_.warpgroup * imm(n_.warpgroup_rows) + var("b") * imm(n_.mma_m) +
                        var("lane_row") + imm(8) * var("h");
      return;
    }
    const ExprPtr warp = (tid() - imm(r.first_thread)) / imm(32);
    for (int e = 0; e < 2; ++e)
      ix_.partial_col[size_t(e)] = r.tile_floats + warp * imm(r.tile_n) + var("c") + imm(e);
  }

  // A warp's 16x16 block of columns 16 jj.. is four 8x8 matrices: (group 2 jj, rows +0), (2 jj,
  // +8), (2 jj + 1, +0), (2 jj + 1, +8); matrix q holds fragment pair (j = 2 jj + q / 2,
  // h = q % 2), and lane l gives the address of row l % 8 of matrix l / 8.
  // Transposed (stmatrix.trans), lane l addresses row l % 8 of the transpose of matrix l / 8: the
  // matrix's column l % 8, whose 8 rows lie together in the buffer row of that column.
  void stmatrix() {
    GG_INTERNAL_CHECK(n_.staged && n_.cols % 16 == 0, "stmatrix stores staged 16x16 blocks");
    GG_INTERNAL_CHECK(!n_.transposed_staging || !n_.c_staged, "C staged in a transposed buffer");
    const bool fragment_row = in_.needs_row || n_.c_staged, fragment_col = in_.needs_col || n_.c_staged;
    const ExprPtr matrix_row0 = tid() % imm(128) / imm(32) * imm(16) + imm(8) * (tid() % imm(32) / imm(8) % imm(2));
    if (n_.transposed_staging)
      ix_.thread = {{kInt, "st_row", matrix_row0},
                    {kInt, "st_col", imm(8) * (tid() % imm(32) / imm(16)) + tid() % imm(8)}};
    else
      ix_.thread = {{kInt, "st_row", matrix_row0 + tid() % imm(8)},
                    {kInt, "st_col", imm(8) * (tid() % imm(32) / imm(16))}};
    if (fragment_row) ix_.thread.push_back({kInt, "lane_row", lane_row()});
    if (fragment_col || in_.col_bias) ix_.thread.push_back({kInt, "lane_col", lane_col()});
    const ExprPtr first = n_.col_begin / imm(8);
    ix_.group_begin = first / imm(2);
    ix_.group_end = (first + imm(n_.cols / 8)) / imm(2);
    if (in_.col_bias)
      ix_.bias_group = {{kWide, "col_g", wide(n_.col0) + imm(16) * var("jj") + imm(8) * var("g") + var("lane_col")},
                        {kWide, "col_g1", var("col_g") + imm(1)}};
    ix_.pair = {{kInt, "j", imm(2) * var("jj") + var("q") / imm(2)}, {kInt, "h", var("q") % imm(2)}};
    if (fragment_col) ix_.pair.push_back({kInt, "c", imm(8) * var("j") + var("lane_col")});
    columns(ix_.pair);
    fragment_pair(ix_.pair, n_.c_staged);
    bounds_and_indices();
    // (sr, sc): the tile row and subtile column of the first element lane l's address holds
    ix_.matrix_row = {{kInt, "sr", var("b") * imm(n_.mma_m) + var("st_row")},
                      {kInt, "sc", subtile_col(imm(16) * var("jj") + var("st_col"))},
                      {"unsigned", "row_dst", staging_address()}};
  }

  // tcgen05.ld.32x32b: thread t holds TMEM lane t % 128 of the column set, one row of the tile
  // (where the MMA's data path put it), and the store's columns in registers 0.. in pairs.
  void tmem_lanes() {
    GG_INTERNAL_CHECK(n_.cols % 2 == 0, "TMEM rows in column pairs");
    ix_.thread = {{kInt, "r", imm(n_.lane_row0) + call("gg::dev::tmem_lane_row", imm(n_.mma_m), tid() % imm(128))}};
    // A warpgroup keeps the rows of its band of the tile; lanes past the tile's rows hold no
    // accumulator (an m64 block alone, a last set of one block).
    const ExprPtr band = n_.warpgroup * imm(n_.warpgroup_rows);
    int64_t band_row0 = -1;
    const bool whole_tile = is_const(band, &band_row0) && band_row0 == 0;
    if (!whole_tile) ix_.lane_guard = var("r") >= band && var("r") < band + imm(n_.warpgroup_rows);
    else if (n_.lane_row0 + 128 > n_.warpgroup_rows) ix_.lane_guard = var("r") < imm(n_.warpgroup_rows);
    if (in_.needs_row) ix_.thread.push_back({kWide, "row", wide(n_.row0) + var("r")});
    ix_.group_begin = imm(0);
    ix_.group_end = imm(n_.cols / 2);
    ix_.group = {{kInt, "reg", imm(2) * var("p")}, {kInt, "c", n_.col_begin + var("reg")}};
    columns(ix_.group);
    if (n_.reduce) partials(*n_.reduce);
    if (n_.staged) {
      ix_.group.push_back({kInt, "sr", var("r") - band});
      ix_.group.push_back({kInt, "sc", subtile_col(var("c"))});
      ix_.group.push_back({"unsigned", "dst", staging_address()});
      // Transposed (a column-major D): the pair's two columns lie in two buffer rows.
      if (n_.transposed_staging) ix_.group.push_back({"unsigned", "dst1", staging_address(var("sc") + imm(1))});
    }
    bounds_and_indices();
  }

  // The global columns of the pair at tile column c.
  void columns(std::vector<IndexLet>& lets) const {
    if (!in_.needs_col) return;
    lets.push_back({kWide, "col", wide(n_.col0) + var("c")});
    lets.push_back({kWide, "col1", var("col") + imm(1)});
  }
  // Fragment pair (j, h) of block b: its global row, its registers and (`staged_address`) where
  // it is staged.
  void fragment_pair(std::vector<IndexLet>& lets, bool staged_address) const {
    const ExprPtr band_row = var("b") * imm(n_.mma_m) + var("lane_row") + imm(8) * var("h");
    if (in_.needs_row) {
      lets.push_back({kInt, "r", n_.warpgroup * imm(n_.warpgroup_rows) + band_row});
      lets.push_back({kWide, "row", wide(n_.row0) + var("r")});
    }
    lets.push_back({kInt, "reg", imm(4) * var("j") + imm(2) * var("h")});
    if (!staged_address) return;
    lets.push_back({kInt, "sr", band_row});
    lets.push_back({kInt, "sc", subtile_col(var("c"))});
    lets.push_back({"unsigned", "dst", staging_address()});
  }
  // Whether each value of the pair lies in D, and its element of D (unstaged) and of C (read
  // from global memory).
  void bounds_and_indices() const {
    if (!in_.needs_row || !in_.needs_col) return;
    for (int e = 0; e < 2; ++e) {
      const ExprPtr col = var(e ? "col1" : "col");
      const auto i = static_cast<size_t>(e);
      const ExprPtr row_end = n_.row_end ? wide(n_.row_end) : var("args.m");  // a contiguous group's end
      if (!n_.staged || in_.c_global) ix_.inside[i] = var("row") < row_end && col < var("args.n");
      if (!n_.staged) ix_.d_element[i] = element(n_.ld, n_.d_offset, col);
      if (in_.c_global) ix_.c_element[i] = element(n_.c_ld, n_.c_offset, col);
    }
  }
  // Element (row, col) of D or C: rows `ld` apart (columns, column-major), from the batch
  // matrix's first element.
  ExprPtr element(const ExprPtr& ld, const ExprPtr& offset, const ExprPtr& col) const {
    const ExprPtr at = n_.column_major ? col * ld + var("row") : var("row") * ld + col;
    return offset ? offset + at : at;
  }
  // Staged element (sr, sc), row and column within this warpgroup's rows of the subtile, in the
  // swizzled column chunks [warpgroup_rows][swizzle bytes] of the staging buffer.
  // Transposed: the buffer's row is the subtile column sc and its column the band row sr, in chunks
  // [cols][swizzle bytes].
  ExprPtr staging_address(const ExprPtr& sc = var("sc")) const {
    const int bytes = dtype_bytes(parse_dtype(n_.out_type));
    const int sb = n_.staging_swizzle_bytes, chunk_cols = sb / bytes;
    const bool t = n_.transposed_staging;
    const ExprPtr row = t ? sc : var("sr"), col = t ? var("sr") : sc;
    const int64_t buffer_rows = t ? (n_.staging_cols ? n_.staging_cols : n_.cols) : n_.warpgroup_rows;
    return var("staging") + col / imm(chunk_cols) * imm(buffer_rows * sb) +
           call("gg::dev::swizzle_offset", row * imm(sb) + col % imm(chunk_cols) * imm(bytes), imm(sb));
  }
  // Tile column `c` relative to the staged subtile's first column.
  ExprPtr subtile_col(const ExprPtr& c) const { return c - (n_.staging_col0 ? n_.staging_col0 : n_.col_begin); }

  EpilogueStore& n_;
  const EpilogueInputs in_;
  EpilogueIndex& ix_;
};

class IndexStores : public Mutator {
 public:
  StmtPtr mutate_EpilogueStore(const std::shared_ptr<const EpilogueStore>& n) override {
    auto copy = std::make_shared<EpilogueStore>(*n);
    index_epilogue_store(*copy);
    return copy;
  }
};

}  // namespace

EpilogueInputs epilogue_inputs(const EpilogueStore& n) {
  using K = EpilogueOp::Kind;
  EpilogueInputs in;
  for (const auto& op : n.ops) {
    if (op.kind == K::AddBiasCols) in.col_bias = &op;
    if (op.kind == K::AddBiasRows) in.row_bias = &op;
    in.c_global = in.c_global || (op.reads_c() && !n.c_staged);
  }
  in.needs_row = !n.staged || in.c_global || in.row_bias;
  in.needs_col = !n.staged || in.c_global || in.col_bias;
  return in;
}

void index_epilogue_store(EpilogueStore& n) { IndexBuilder(n).build(); }

CopyIndex copy_index(const SyncCopyTile& n) {
  const int chunk_elems = 16 / n.elem_bytes, chunks_per_row = n.cols / chunk_elems;
  const int chunks_per_atom = n.swizzle_bytes / 16;
  GG_INTERNAL_CHECK(chunks_per_row % chunks_per_atom == 0, "row not a whole number of swizzle atoms");
  CopyIndex ix;
  ix.chunks = int64_t(n.rows) * chunks_per_row;
  const ExprPtr chunk = var("chunk"), r = var("r"), c = var("c"), row = var("row"), col = var("col");
  ix.chunk = {{kInt, "r", chunk / imm(chunks_per_row)},
              {kInt, "c", chunk % imm(chunks_per_row)},
              {kWide, "row", wide(n.row0) + r},
              {kWide, "col", wide(n.col0) + c * imm(chunk_elems)},
              {kInt, "atom", c / imm(chunks_per_atom)},
              {kInt, "chunk16", c % imm(chunks_per_atom)},
              {"unsigned", "dst", var("tile_smem") + var("atom") * imm(int64_t(n.rows) * n.swizzle_bytes) +
                                      call("gg::dev::swizzle_offset", r * imm(n.swizzle_bytes) + var("chunk16") * imm(16),
                                           imm(n.swizzle_bytes))}};
  ix.inside = row < n.row_limit && col < n.col_limit;
  ix.element = row * n.ld + col;
  ix.valid = n.col_limit - col;
  return ix;
}

StmtPtr index_epilogue_stores(const StmtPtr& body) { return IndexStores().mutate(body); }

}  // namespace gg
