// Sizes read at run time (DeepGEMM's compiled_dims): one lowered kernel serves every M (or N).
// Its launch sizes the grid and the split-K workspace from the same tile counts the kernel
// computes, and those agree with what a kernel compiled for that M would have; its work units
// cover each size's tiles once; the simulator runs it at each size; what cannot be sized is a
// user error with its rule.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "error_check.h"
#include "hilbert_schedule.h"
#include "planted_bugs.h"
#include "codegen/emit.h"
#include "codegen/lower.h"
#include "codegen/work_units.h"
#include "dsl/schedule_text.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;

namespace {

const std::vector<int64_t> kSizes = {1, 7, 64, 200, 1000, 4097};

// The same directives over the same GEMM with every size compiled, at M (kernel orientation).
Schedule compiled_at(const Schedule& s, int64_t m, int64_t n) {
  Definition def = resized_definition(s.definition(), m, n);
  def.set_runtime_sizes(false, false);
  return apply_directives(def, s.directives(), {});
}

Schedule from_text(const std::string& text, const Definition& def) {
  const ScheduleFile file = parse_schedule_file(text);
  return apply_directives(def, file.directives, file.directive_lines);
}

struct Case {
  std::string name;
  Schedule s;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* v : {"v3", "v5", "v7", "v8", "v10"})
    out.push_back({v, builtin_schedule(v, make_definition(1000, 2048, 512, DType::BF16, DType::BF16))});
  GemmOptions o;
  out.push_back({"auto 1000x2048x512", plan_gemm(1000, 2048, 512, o).build()});
  out.push_back({"auto swapped 8x4096x4096 (N read at run time)", plan_gemm(8, 4096, 4096, o).build()});
  out.push_back({"auto split-K 256x256x8192", plan_gemm(256, 256, 8192, o).build()});
  GemmOptions batched;
  batched.layout.batch = 3;
  batched.layout.d = OutputLayout::ColumnMajor;
  out.push_back({"auto batch 3, D column-major", plan_gemm(300, 512, 256, batched).build()});
  return out;
}

}  // namespace

TEST_CASE("a kernel that reads M at run time launches what a kernel compiled for that M would") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const Kernel sized = lower(c.s);
    const bool along_n = c.s.definition().swapped();  // the caller's M is a swapped kernel's N
    REQUIRE((along_n ? sized.plan.runtime_n : sized.plan.runtime_m));
    for (int64_t size : kSizes) {
      CAPTURE(size);
      const int64_t m = along_n ? sized.plan.m : size, n = along_n ? size : sized.plan.n;
      const Kernel compiled = lower(compiled_at(c.s, m, n));
      CHECK(rt::launch_grid(sized.launch, m, n) == compiled.launch.grid);
      CHECK(rt::launch_workspace_bytes(sized.launch, m, n) == compiled.launch.workspace_bytes);
      CHECK(rt::sizes_mismatch(sized.launch, m, n, sized.plan.k) == "");
      // Every output tile of this size is computed once per split, by the units the grid walks.
      const auto grid = rt::launch_grid(sized.launch, m, n);
      const int64_t tiles_m = (m + sized.plan.tile_m - 1) / sized.plan.tile_m;
      const int64_t tiles_n = (n + sized.plan.tile_n - 1) / sized.plan.tile_n;
      std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> k_tiles_run;
      for (int64_t z = 0; z < grid[2]; ++z)
        for (int64_t y = 0; y < grid[1]; ++y)
          for (int64_t x = 0; x < grid[0]; ++x)
            for (const WorkUnit& u : cta_work_units(c.s, sized.plan, {x, y, z}, {grid[0], grid[1], grid[2]},
                                                    sized.plan.k, m, n))
              if (u.in_range && u.m_tile < tiles_m && u.n_tile < tiles_n) k_tiles_run[{u.batch, u.m_tile, u.n_tile}] += u.k_tiles;
      const int64_t k_tiles = (sized.plan.k + sized.plan.tile_k - 1) / sized.plan.tile_k;
      CHECK(static_cast<int64_t>(k_tiles_run.size()) == tiles_m * tiles_n * sized.plan.layouts.batch);
      for (const auto& [tile, ran] : k_tiles_run) CHECK(ran >= k_tiles);
    }
  }
}

TEST_CASE("the simulator runs one lowered kernel at every M") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    // Small problems of the same kernel configuration: the simulator runs every thread.
    const Definition& def = c.s.definition();
    const bool along_n = def.swapped();
    const int64_t fixed = along_n ? 128 : 256;
    Schedule small = apply_directives(resized_definition(def, along_n ? fixed : 128, along_n ? 128 : fixed),
                                      c.s.directives(), {});
    DeviceLimits limits = hopper();
    limits.sms = 4;  // persistent CTAs walk several units
    LowerOptions lo;
    lo.limits = limits;
    const Kernel k = lower(small, lo);
    for (int64_t size : {1, 7, 64, 200}) {
      CAPTURE(size);
      SimulateOptions o;
      (along_n ? o.n : o.m) = size;
      const SimulationReport r = simulate_kernel(k, small.definition(), o);
      CHECK_MESSAGE(r.passed, r.to_string());
    }
  }
}

TEST_CASE("one kernel name for every M a plan gives the same kernel; compiled sizes name their own") {
  const Definition at_1000 = make_definition(1000, 2048, 512, DType::BF16, DType::BF16);
  const Definition at_3000 = make_definition(3000, 2048, 512, DType::BF16, DType::BF16);
  const EmittedKernel a = emit_cuda(builtin_schedule("v10", at_1000));
  const EmittedKernel b = emit_cuda(builtin_schedule("v10", at_3000));
  CHECK(a.kernel_name == b.kernel_name);
  Definition compiled_1000 = at_1000, compiled_3000 = at_3000;
  compiled_1000.set_runtime_sizes(false, false);
  compiled_3000.set_runtime_sizes(false, false);
  CHECK(emit_cuda(builtin_schedule("v10", compiled_1000)).kernel_name !=
        emit_cuda(builtin_schedule("v10", compiled_3000)).kernel_name);
  // The kernel body reads args.m where a compiled one has its tile count.
  CHECK(a.source.find("args.m") != std::string::npos);
}

TEST_CASE("compiled dimensions in the text form and the definition") {
  ProblemLayout l;
  CHECK(compiled_dims_text(l) == "nk");  // M read at run time by default
  set_compiled_dims(l, "mnk");
  CHECK((!l.runtime_m && !l.runtime_n));
  set_compiled_dims(l, "k");
  CHECK((l.runtime_m && l.runtime_n));
  testing::check_error([&] { set_compiled_dims(l, "mn"); }, "bad-compiled-dims",
                       "compiled dimensions 'mn': legal are mnk (every size a constant), nk (M read at run time), mk "
                       "(N at run time) and k (M and N at run time); K is always compiled");
  for (const char* dims : {"mnk", "nk", "mk", "k"}) {
    CAPTURE(dims);
    const ScheduleFile file =
        parse_schedule_file(std::string("problem m=300 n=256 k=128 dtype=bf16 out=bf16 compiled=") + dims + "\ntile 128 128 64\n");
    REQUIRE(file.problem.compiled);
    ProblemLayout layout;
    set_compiled_dims(layout, *file.problem.compiled);
    const Definition def = make_definition(300, 256, 128, DType::BF16, DType::BF16, {}, layout);
    const std::string text = print_schedule(Schedule(def));
    CHECK((text.find(std::string("compiled=") + dims) != std::string::npos) == (std::string(dims) != "nk"));
    // A swapped definition reads the caller's M as its N.
    const Definition swapped = make_definition(300, 256, 128, DType::BF16, DType::BF16, {}, layout, true);
    CHECK(swapped.runtime_n() == layout.runtime_m);
    // and prints the caller's compiled sizes, as the straight one does
    CHECK((print_schedule(Schedule(swapped)).find(std::string("compiled=") + dims) != std::string::npos) ==
          (std::string(dims) != "nk"));
  }
  testing::check_error([] { parse_schedule_file("problem m=8 n=8 k=8 compiled=mkn\ntile 128 128 64\n"); }, "bad-compiled-dims",
                       "line 1: compiled dimensions 'mkn': legal are mnk (every size a constant), nk (M read at run "
                       "time), mk (N at run time) and k (M and N at run time); K is always compiled");
}

TEST_CASE("what a launch cannot size is a user error with its rule; what a kernel cannot serve, a bound") {
  // The tile axis of M bound to nothing: the kernel computes its first tile only, so it serves an
  // M of at most one tile, which each launch checks.
  const Definition def = make_definition(128, 128, 64, DType::BF16, DType::BF16);
  const std::string text = "tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\n";
  const Kernel one_tile = lower(from_text(text, def));
  CHECK(rt::sizes_mismatch(one_tile.launch, 100, 128, 64) == "");
  CHECK(rt::sizes_mismatch(one_tile.launch, 129, 128, 64) ==
        "M=129 N=128 takes 2 tiles of axis 'm_o' (bound to nothing: the kernel computes its first tile only), "
        "more than the 1 it may have");
  // A split of a merged run-time tile count: no grid formula the launch could evaluate.
  testing::check_error(
      [&] {
        lower(from_text("tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\nmerge m_o n_o mn\n"
                        "split mn 4 mn_o mn_i\nbind mn_o block.x\nbind mn_i block.y\n",
                        make_definition(1024, 1024, 64, DType::BF16, DType::BF16)));
      },
      "runtime-size",
      "tile axis 'mn_o' splits or fuses a tile count the kernel learns at run time in a way its launch cannot size");
  // A kernel with M compiled refuses another M at its launch and in the simulator.
  Definition fixed = make_definition(256, 256, 128, DType::BF16, DType::BF16);
  fixed.set_runtime_sizes(false, false);
  const Kernel k = lower(builtin_schedule("v5", fixed));
  CHECK(rt::sizes_mismatch(k.launch, 100, 256, 128) == "the kernel was compiled for M=256, the problem has M=100");
  CHECK(rt::sizes_mismatch(k.launch, 256, 256, 64) == "the kernel was compiled for K=128, the problem has K=64");
  SimulateOptions other;
  other.m = 100;
  testing::check_error([&] { simulate_kernel(k, fixed, other); }, "runtime-size",
                       "simulate M=100 N=256: the kernel was compiled for M=256, the problem has M=100");
}

TEST_CASE("the Hilbert order's rectangle is the kernel's own expression: a planted swap is simulated wrong") {
  // With M read at run time the rectangle is gg::dev::hilbert_dims(tiles along m, tiles along n),
  // evaluated by the simulator through the same function the kernel calls; exchanging its two
  // counts walks another rectangle, which misses tiles of this one.
  const Schedule s = gg::test::with_hilbert(7, make_definition(384, 128, 128, DType::BF16, DType::BF16));
  LowerOptions lo;
  lo.limits = hopper();
  lo.limits.sms = 2;
  const Kernel good = lower(s, lo);
  REQUIRE(simulate_kernel(good, s.definition()).passed);
  std::function<kir::ExprPtr(const kir::ExprPtr&)> swap_dims = [&](const kir::ExprPtr& e) -> kir::ExprPtr {
    if (!e || e->kind == kir::ExprKind::Int || e->kind == kir::ExprKind::Var) return e;
    if (e->kind == kir::ExprKind::Call && e->name == "gg::dev::hilbert_dims") return kir::call(e->name, e->b, e->a);
    auto copy = std::make_shared<kir::Expr>(*e);
    copy->a = swap_dims(e->a);
    copy->b = swap_dims(e->b);
    return copy;
  };
  Kernel bad = good;
  testing::Plant plant(testing::rewrite<kir::Let>([&](kir::Let& l) { l.value = swap_dims(l.value); },
                                                  [](const kir::Let& l) { return l.name == "m_tile" || l.name == "n_tile"; }));
  bad.body = plant.mutate(bad.body);
  REQUIRE(plant.planted > 0);
  const SimulationReport r = simulate_kernel(bad, s.definition());
  CHECK_FALSE(r.passed);
}

TEST_CASE("rows whose length is read at run time: auto stores them from registers; a TMA store's launch checks them") {
  // N read at run time, D row-major: D's rows are N long. `auto` stores from registers (a launch at
  // a ragged N would have a TMA store write past the rows), so one kernel serves every N.
  ProblemLayout runtime_n;
  set_compiled_dims(runtime_n, "mk");
  const Definition def = make_definition(256, 256, 128, DType::BF16, DType::BF16, {}, runtime_n, false);
  CHECK(rows_follow_runtime_size(def, def.node(def.output())));
  CHECK_FALSE(tma_storable_output(def));
  const Kernel v10 = lower(builtin_schedule("v10", def));
  CHECK_FALSE(v10.plan.tma_store);
  CHECK(rt::sizes_mismatch(v10.launch, 256, 100, 128) == "");
  // Asked for explicitly on dense rows: allowed, and a launch at an N that breaks the rows' 16-byte
  // pieces is refused (by the launch and the simulator alike) instead of writing past them.
  std::vector<Directive> directives = builtin_schedule("v10", def).directives();
  for (Directive& d : directives)
    if (auto* w = std::get_if<CacheWriteD>(&d)) w->method = CopyMethod::Tma;
  const Kernel tma = lower(apply_directives(def, directives));
  CHECK(tma.plan.tma_store);
  CHECK(rt::sizes_mismatch(tma.launch, 256, 264, 128) == "");
  CHECK(rt::sizes_mismatch(tma.launch, 256, 100, 128) ==
        "at M=256 N=100 D's stored rows are 100 elements (200 bytes), 200 bytes apart: its TMA store writes whole "
        "16-byte pieces of rows 16-byte multiples apart; this kernel serves sizes that keep them so (plan for this "
        "size, as gg::gemm does)");
  SimulateOptions ragged;
  ragged.n = 100;
  testing::check_error([&] { simulate_kernel(tma, def, ragged); }, "runtime-size", "D's stored rows are 100 elements");
  // With a leading dimension of their own the rows' padding would be overwritten: refused.
  Definition strided = make_definition(256, 256, 128, DType::BF16, DType::BF16, {}, [&] {
    ProblemLayout l = runtime_n;
    l.ldd = 264;
    return l;
  }(), false);
  std::vector<Directive> strided_directives = builtin_schedule("v10", strided).directives();
  for (Directive& d : strided_directives)
    if (auto* w = std::get_if<CacheWriteD>(&d)) w->method = CopyMethod::Tma;
  testing::check_error([&] { lower(apply_directives(strided, strided_directives)); }, "n-alignment",
                       "the rows' length N is read at run time while their leading dimension is fixed");
}

// A persistent grid launched with fewer clusters than planned (the GPU holds fewer at once: its
// GPCs fit 30 clusters of 4, not 33) still computes every tile: each CTA strides by the clusters
// actually launched. A grid of tiles is launched as planned.
TEST_CASE("a persistent grid capped at the clusters the device holds still covers every tile") {
  const Definition big = make_definition(2184, 2296, 7152, DType::BF16, DType::BF16);
  std::vector<Case> persistent = {
      {"v10", builtin_schedule("v10", make_definition(4096, 4096, 1024, DType::BF16, DType::BF16))},
      {"auto split-K tail 2184x2296x7152", plan_gemm(2184, 2296, 7152, GemmOptions{}).build()},
      {"cluster 2 2 1 sharing A and B",
       from_text("tile 128 192 64\ninline cast\nmma 64 192 16 sm_90a\nbind k_o serial\nbind m_o block.y\n"
                 "bind n_o block.x\ncache_read A tma\ncache_read B tma\ncache_write cast shared tma\n"
                 "persist m_o n_o tile row 8\nwarp_specialize 40 232\nsplit m_i 64 m_wg m_mma\n"
                 "bind m_wg warpgroup\nstore_subtile 64 1\ncircular_buffer k_o 4 3\ncluster 2 2 1\n"
                 "multicast A\nmulticast B\n",
                 big)}};
  Schedule stream = tutorial_schedule(8, make_definition(8192, 1024, 1024, DType::BF16, DType::BF16));
  stream.split_k(3, false, true);  // stream-K: its whole waves and its deal follow the grid launched
  persistent.push_back({"v8 split_k 3 stream", stream});
  for (const Case& c : persistent) {
    CAPTURE(c.name);
    const Kernel k = lower(c.s);
    REQUIRE(k.launch.persistent);
    const int64_t m = k.plan.m, n = k.plan.n;
    const auto planned = rt::launch_grid(k.launch, m, n);
    CHECK(rt::launch_grid(k.launch, m, n, 1000) == planned);  // room for more: as planned
    const unsigned cluster = k.launch.cluster[0], clusters = planned[0] / cluster;
    REQUIRE(clusters > 2);
    for (unsigned resident : {clusters - 1, clusters / 2, 1u}) {
      CAPTURE(resident);
      const auto grid = rt::launch_grid(k.launch, m, n, resident);
      CHECK(grid[0] == resident * cluster);
      CHECK(grid[1] == planned[1]);
      const int64_t tiles_m = (m + k.plan.tile_m - 1) / k.plan.tile_m, tiles_n = (n + k.plan.tile_n - 1) / k.plan.tile_n;
      std::map<std::pair<int64_t, int64_t>, int64_t> k_tiles_run;
      for (int64_t y = 0; y < grid[1]; ++y)
        for (int64_t x = 0; x < grid[0]; ++x)
          for (const WorkUnit& u : cta_work_units(c.s, k.plan, {x, y, 0}, {grid[0], grid[1], grid[2]}, k.plan.k))
            if (u.in_range && u.m_tile < tiles_m && u.n_tile < tiles_n) k_tiles_run[{u.m_tile, u.n_tile}] += u.k_tiles;
      CHECK(static_cast<int64_t>(k_tiles_run.size()) == tiles_m * tiles_n);
      const int64_t k_tiles = (k.plan.k + k.plan.tile_k - 1) / k.plan.tile_k;
      for (const auto& [tile, ran] : k_tiles_run) CHECK(ran == k_tiles);
    }
  }
  const Kernel tiles = lower(builtin_schedule("v5", big));
  REQUIRE_FALSE(tiles.launch.persistent);
  CHECK(rt::launch_grid(tiles.launch, 2184, 2296, 1) == tiles.launch.grid);
}
