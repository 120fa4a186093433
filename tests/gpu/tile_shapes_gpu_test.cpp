// Schedules nobody wrote before lower through the same passes: other tile shapes, the
// 32B/64B swizzles (k tiles of 16 and 32), k tiles of several 128B atoms, 3-stage rings.
#include <doctest/doctest.h>

#include <iostream>

#include "codegen/gemm_check.h"

using namespace gg;

namespace {

Schedule custom(const Definition& def, int64_t tm, int64_t tn, int64_t tk, bool tma, int stages) {
  Schedule s(def);
  s.tile(tm, tn, tk);
  for (int op : def.epilogue()) s.inline_op(def.node(op).name);
  s.mma(64, static_cast<int>(tn), 16, Target::Sm90a);
  s.bind("k_o", Binding::Serial).bind("m_o", Binding::BlockY).bind("n_o", Binding::BlockX);
  if (tma) {
    s.cache_read("A", CopyMethod::Tma).cache_read("B", CopyMethod::Tma);
    s.cache_write(def.node(def.output()).name, Place::Shared, CopyMethod::Tma);
    if (stages > 1) s.circular_buffer("k_o", stages);
  }
  return s;
}

}  // namespace

TEST_CASE("tile shapes, swizzle widths and pipeline depths beyond the tutorial") {
  struct Tile {
    int64_t m, n, k;
  };
  for (Tile t : {Tile{64, 64, 16}, Tile{128, 64, 32}, Tile{64, 256, 64}, Tile{128, 128, 128}, Tile{64, 96, 64}})
    for (bool tma : {false, true})
      for (DType dtype : {DType::BF16, DType::F16})
        for (bool exact : {false, true}) {
          Definition def = make_gemm(300, 264, 520, dtype, dtype);
          int stages = tma ? 3 : 1;
          CheckOptions options;
          options.exact = exact;
          CheckReport r = check_on_gpu(custom(def, t.m, t.n, t.k, tma, stages), options);
          std::cout << "tile " << t.m << "x" << t.n << "x" << t.k << (tma ? " tma 3-stage " : " sync ")
                    << dtype_name(dtype) << (exact ? " exact" : " random") << ": err_vs_host=" << r.error_vs_host
                    << " cublas_err=" << r.cublas_error_vs_host << " unwritten=" << r.unwritten << " -> "
                    << (r.passed ? "ok" : r.verdict) << "\n";
          CAPTURE(r.verdict);
          CHECK(r.passed);
        }
}
