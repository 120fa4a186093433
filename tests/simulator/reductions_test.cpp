// Row and column reductions into side vectors (QuACK's gemm_sq_reduce), simulated against the fp64
// host sums: each tile's share by shuffles to the workspace, a ticket per band, the band's last tile
// adding the shares in order. Planted bugs: a shuffle lane dropped, a share at another tile's slot,
// a ticket counting one tile short, a tile past D's edge taking a share.
#include <doctest/doctest.h>

#include "codegen/explain.h"
#include "codegen/index_math.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "error_check.h"
#include "planted_bugs.h"
#include "sim_limits.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using gg::testing::few_sms;
using namespace gg::kir;
using gg::testing::check_error;

namespace {

EpilogueSpec reduction(ReduceAlong along, ReduceOp op) { return EpilogueSpec::reduction(along, op); }
const EpilogueSpec kRowSumSq = reduction(ReduceAlong::Rows, ReduceOp::SumSquares);
const EpilogueSpec kRowSum = reduction(ReduceAlong::Rows, ReduceOp::Sum);
const EpilogueSpec kColSum = reduction(ReduceAlong::Cols, ReduceOp::Sum);
const EpilogueSpec kColSumSq = reduction(ReduceAlong::Cols, ReduceOp::SumSquares);

Kernel lowered(const Schedule& s, int sms = 2) {
  LowerOptions lo;
  lo.limits = few_sms(sms);
  return lower(s, lo);
}

}  // namespace

TEST_CASE("simulate: row and column reductions, unstaged and staged, persistent, a cluster's tile past the edge") {
  struct Case {
    int step;
    int64_t m, n, k, batch;
  };
  // v3 one CTA a tile; v8 and v10 persistent over 2 SMs (several tiles a CTA, several tickets a
  // band) with a 2-CTA cluster (at 1 x 8 its second CTA holds a tile past D's edge); a batch of 2.
  for (const Case& c : {Case{3, 200, 136, 64, 1}, Case{8, 300, 200, 136, 1}, Case{10, 1, 8, 64, 1},
                        Case{10, 384, 264, 128, 1}, Case{10, 200, 300, 64, 2}})
    for (const auto& specs : {std::vector<EpilogueSpec>{{OpKind::Gelu}, kRowSumSq},
                              std::vector<EpilogueSpec>{{OpKind::AddBias}, kColSum, {OpKind::Relu}},
                              std::vector<EpilogueSpec>{kRowSum, kColSumSq}}) {
      CAPTURE(c.step);
      CAPTURE(c.m);
      CAPTURE(specs.size());
      ProblemLayout l;
      l.batch = c.batch;
      const Definition def = make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16, specs, l, false);
      const Kernel k = lowered(tutorial_schedule(c.step, def));
      CHECK(k.plan.epilogue.reductions.size() == def.reductions().size());
      CHECK(k.launch.workspace_bytes == uint64_t(k.plan.epilogue.reduction_workspace.bytes()));
      const SimulationReport r = simulate_kernel(k, def);
      CAPTURE(r.to_string());
      CHECK(r.passed);
      CHECK(r.mismatches == 0);
      CHECK(r.unwritten == 0);
    }
}

// sm_100a: each TMEM lane holds a row, so a column's share is summed over a warp's 32 lanes (v8's
// one CTA, v10's pair with two accumulator buffers), and a row's by its thread alone, a partial per
// tcgen05.ld chunk of columns that the band's last tile adds in chunk order.
TEST_CASE("simulate: row and column reductions out of TMEM on sm_100a, and a dropped shuffle lane caught") {
  for (int step : {8, 10})
    for (const auto& specs : {std::vector<EpilogueSpec>{{OpKind::AddBias}, kColSum, {OpKind::Relu}},
                              std::vector<EpilogueSpec>{{OpKind::Gelu}, kColSumSq},
                              std::vector<EpilogueSpec>{kRowSum, kColSumSq},
                              std::vector<EpilogueSpec>{{OpKind::AddBias}, kRowSumSq}})
      for (const int64_t m : {int64_t(520), int64_t(1)}) {
        // (gelu's tanh form and the fp64 reference part at M = 1's tiny squares, on sm_90a too)
        if (m == 1 && specs.front().kind == OpKind::Gelu) continue;
        CAPTURE(step);
        CAPTURE(m);
        const Definition def = make_definition(m, 264, 136, DType::BF16, DType::BF16, specs, {}, false);
        LowerOptions lo;
        lo.limits = blackwell();
        lo.limits.sms = 2;
        const Kernel k = lower(tutorial_schedule(step, def, Target::Sm100a), lo);
        REQUIRE(k.plan.epilogue.reductions.size() == def.reductions().size());
        CHECK(testing::sync_error(k).empty());
        const SimulationReport r = simulate_kernel(k, def);
        CAPTURE(r.to_string());
        CHECK(r.passed);
        if (step != 10 || m != 520 || specs.size() != 3) continue;
        Kernel bad = k;
        testing::Plant plant(testing::rewrite<EpilogueStore>([](EpilogueStore& n) { n.reduce->lane_masks.pop_back(); },
                                                             [](const EpilogueStore& n) { return n.reduce.has_value(); }));
        bad.body = plant.mutate(bad.body);
        REQUIRE(plant.planted > 0);
        CHECK_FALSE(simulate_kernel(bad, def).passed);
      }
}

// A TMEM row's partials are one per chunk of columns: every chunk's stored at the first chunk's
// column leaves only the last chunk's sum in the band's.
TEST_CASE("simulate: a TMEM row partial of every chunk at the first chunk's column is caught") {
  const Definition def = make_definition(520, 264, 136, DType::BF16, DType::BF16, {kRowSum}, {}, false);
  LowerOptions lo;
  lo.limits = blackwell();
  lo.limits.sms = 2;
  const Kernel k = lower(tutorial_schedule(8, def, Target::Sm100a), lo);
  REQUIRE(simulate_kernel(k, def).passed);
  CHECK(k.plan.epilogue.reduction_workspace.row_floats == 128 * 4);  // a 128-column tile in 4 chunks of 32
  Kernel bad = k;
  testing::Plant plant(testing::rewrite<EpilogueStore>(
      [](EpilogueStore& n) { n.index.partial_row = substitute(n.index.partial_row, "tchunk", imm(0)); },
      [](const EpilogueStore& n) { return n.reduce.has_value(); }));
  bad.body = plant.mutate(bad.body);
  REQUIRE(plant.planted > 0);
  const SimulationReport r = simulate_kernel(bad, def);
  CAPTURE(r.to_string());
  CHECK_FALSE(r.passed);
}

TEST_CASE("simulate: a dropped shuffle lane, a share at another slot, a short ticket and a share past the edge are caught") {
  const Definition def = make_definition(384, 520, 128, DType::BF16, DType::F32, {kRowSum, kColSum}, {}, false);
  const Kernel good = lowered(tutorial_schedule(10, def));
  REQUIRE(simulate_kernel(good, def).passed);
  const auto planted = [&](testing::Plant::Fn bug, const Kernel& from) {
    Kernel bad = from;
    testing::Plant plant(std::move(bug));
    bad.body = plant.mutate(bad.body);
    REQUIRE(plant.planted > 0);
    return simulate_kernel(bad, def);
  };
  for (const auto along : {EpilogueReduction::Along::Rows, EpilogueReduction::Along::Cols}) {
    CAPTURE(int(along));
    const auto of = [along](const EpilogueStore& n) { return n.reduce && n.reduce->along == along; };
    // a reduction lane dropped: the last shuffle goes, half the lanes' sums are lost
    CHECK_FALSE(planted(testing::rewrite<EpilogueStore>([](EpilogueStore& n) { n.reduce->lane_masks.pop_back(); }, of),
                        good)
                    .passed);
    // each tile's share parked in the first tile's record (its index math rebuilt from the field)
    CHECK_FALSE(planted(testing::rewrite<EpilogueStore>(
                            [](EpilogueStore& n) {
                              n.reduce->tile_floats = imm(n.reduce->along == EpilogueReduction::Along::Rows ? 2 : 2 + 384);
                              index_epilogue_store(n);
                            },
                            of),
                        good)
                    .passed);
  }
  // a ticket counting one tile short: a band's sum is taken before its last share
  const SimulationReport short_ticket =
      planted(testing::rewrite<TileTicket>([](TileTicket& t) { t.arrivals = t.arrivals - imm(1); }), good);
  CHECK_FALSE(short_ticket.passed);
  // the guard for a tile past D's edge dropped (1 x 8: the cluster's second CTA): its share lands
  // past the workspace's slots and its ticket counts a tile the band does not have
  const Definition one_row = make_definition(1, 8, 64, DType::BF16, DType::BF16, {kRowSum}, {}, false);
  const Kernel small = lowered(tutorial_schedule(10, one_row));
  REQUIRE(simulate_kernel(small, one_row).passed);
  Kernel unguarded = small;
  testing::Plant plant(testing::rewrite<If>([](If& i) { i.cond = imm(1); },
                                            [](const If& i) { return to_c(i.cond).find("n_tile <") != std::string::npos; }));
  unguarded.body = plant.mutate(unguarded.body);
  REQUIRE(plant.planted > 0);
  CHECK_FALSE(simulate_kernel(unguarded, one_row).passed);
}

TEST_CASE("reductions: the text form, explain, the definition's and lowering's errors") {
  const auto file = parse_schedule_file(
      "problem m=256 n=256 k=64 dtype=bf16 out=bf16\nepilogue gelu\nepilogue rowsumsq\nepilogue colsum\ntile 128 128 64\n");
  REQUIRE(file.epilogue.size() == 3);
  CHECK(file.epilogue[1].reduce);
  const Definition def = make_definition(256, 256, 64, DType::BF16, DType::BF16, file.epilogue, {}, false);
  REQUIRE(def.reductions().size() == 2);
  CHECK(def.reductions()[0].name == "RowSumSq");
  CHECK(def.reductions()[1].name == "ColSum");
  CHECK(def.to_string().find("[sum of squares along rows as RowSumSq]") != std::string::npos);
  const Schedule s = tutorial_schedule(10, def);
  CHECK(print_schedule(s).find("epilogue gelu\nepilogue rowsumsq\nepilogue colsum\n") != std::string::npos);
  const std::string text = explain(s);
  CHECK(text.find("row reduction: the sum of squares of the values after 1 op(s)") != std::string::npos);
  CHECK(text.find("column reduction: the sum of the values after 1 op(s)") != std::string::npos);
  CHECK(text.find("reduction workspace: 2176 floats a tile (128 row + 2048 column partials)") != std::string::npos);
  // The swapped orientation: the caller's rows are the kernel's columns, printed back as rows.
  const Definition swapped = make_definition(16, 256, 64, DType::BF16, DType::BF16, {kRowSumSq}, {}, true);
  REQUIRE(swapped.reductions().size() == 1);
  CHECK(swapped.reductions()[0].along == ReduceAlong::Cols);
  CHECK(print_schedule(tutorial_schedule(10, swapped)).find("epilogue rowsumsq\n") != std::string::npos);

  Definition d;
  Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
  Tensor x = d.matmul(a, b);
  d.set_output(d.cast(x, DType::BF16));
  check_error([&] { d.add_reduction(a, ReduceAlong::Rows, ReduceOp::Sum); }, "bad-reduction",
              "add_reduction: 'A' is an input, not a result");
  d.add_reduction(x, ReduceAlong::Rows, ReduceOp::SumSquares);
  check_error([&] { d.add_reduction(x, ReduceAlong::Rows, ReduceOp::Sum, "Other"); }, "bad-reduction",
              "'RowSumSq' reduces along rows already; a definition has one reduction along each");
  check_error([&] { d.add_reduction(x, ReduceAlong::Cols, ReduceOp::Sum, "B"); }, "duplicate-name",
              "'B': tensor names must be unique and non-empty");

  // What lowering does not do with a reduction says so.
  const Definition rows = make_definition(256, 256, 512, DType::BF16, DType::BF16, {kRowSum}, {}, false);
  check_error([&] { lowered(tutorial_schedule(8, rows).split_k(2)); }, "not-lowered",
              "a reduction ('");
  check_error([&] { lowered(tutorial_schedule(8, rows).split_k(2)); }, "not-lowered",
              "with split_k (the tile's splits hold partial sums, not its values)");
  check_error([&] { lowered(ping_pong_schedule(rows)); }, "not-lowered",
              "with ping-pong consumers (each consumer's tile would take its own ticket)");
  ProblemLayout sym;
  sym.symmetric = true;
  const Definition symmetric = make_definition(256, 256, 64, DType::BF16, DType::BF16, {kRowSum}, sym, false);
  check_error([&] { lowered(symmetric_schedule(symmetric)); }, "not-lowered",
              "with symmetric (a mirrored tile's rows are another band's columns)");
}
