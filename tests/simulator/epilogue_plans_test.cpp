// The epilogue's commit policies beyond the elementwise chain, simulated against the fp64 host
// reference: the backward of an activation at a saved pre-activation (QuACK's gemm_dact), read
// through C's path (from global memory, or staged by TMA), and the pre-activation saved beside
// the activation (QuACK's gemm_act), a second output stored ahead of D.
#include <doctest/doctest.h>

#include <algorithm>

#include "codegen/index_math.h"
#include "codegen/lower.h"
#include "codegen/validate_schedule.h"
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

// Simulates a kernel and checks it ran to the end with every element of the output right.
SimulationReport simulate_exactly(const Kernel& kernel, const Definition& def) {
  SimulationReport r = simulate_kernel(kernel, def);
  CAPTURE(r.to_string());
  CHECK(r.passed);
  CHECK(r.mismatches == 0);
  CHECK(r.unwritten == 0);
  return r;
}

EpilogueSpec save_here() {
  EpilogueSpec e;
  e.save = true;
  return e;
}

EpilogueSpec grad_of(OpKind activation) {
  EpilogueSpec e;
  e.kind = OpKind::ActGrad;
  e.activation = activation;
  return e;
}

}  // namespace

TEST_CASE("simulate: activation gradients at a saved pre-activation, from global memory and staged by TMA") {
  struct Case {
    int step;  // 0: ping-pong
    int64_t m, n, k;
    DType out;
  };
  // v3 stores from registers (the pre-activation read from global memory); v6, v8, v10 and
  // ping-pong stage it by TMA into the buffer the results go through. Edge shapes: M and N not
  // multiples of the tile, M = 1.
  for (const Case& c : {Case{3, 200, 136, 64, DType::BF16}, Case{6, 256, 256, 136, DType::F32},
                        Case{8, 300, 200, 136, DType::BF16}, Case{10, 1, 8, 64, DType::BF16},
                        Case{10, 384, 264, 192, DType::F16}, Case{0, 384, 256, 136, DType::BF16}})
    for (OpKind act : {OpKind::Relu, OpKind::Gelu, OpKind::Silu}) {
      CAPTURE(c.step);
      CAPTURE(c.m);
      CAPTURE(op_name(act));
      const Definition def =
          make_definition(c.m, c.n, c.k, DType::BF16, c.out, {{OpKind::Scale, 0.5}, grad_of(act)}, {}, false);
      const Schedule s = c.step ? tutorial_schedule(c.step, def) : ping_pong_schedule(def);
      LowerOptions lo;
      lo.limits = few_sms(2);
      const Kernel k = lower(s, lo);
      CHECK(k.plan.epilogue.staged_c == (c.step != 3));
      SimulationReport r = simulate_kernel(k, def);
      CAPTURE(r.to_string());
      CHECK(r.passed);
      CHECK(r.mismatches == 0);
    }
}

TEST_CASE("simulate: an activation gradient taken at the result instead of the pre-activation is caught") {
  // drelu is exact: relu'(C) in {0, 1}; relu applied to the product instead gives other values
  // wherever the product is negative and C positive, or the reverse.
  const Definition def = make_definition(256, 256, 128, DType::BF16, DType::F32, {grad_of(OpKind::Relu)}, {}, false);
  for (int v : {3, 10}) {
    CAPTURE(v);
    LowerOptions lo;
    lo.limits = few_sms(2);
    const Kernel good = lower(tutorial_schedule(v, def), lo);
    REQUIRE(simulate_kernel(good, def).passed);
    Kernel bad = good;
    testing::Plant plant(testing::rewrite<EpilogueStore>([](EpilogueStore& n) {
      for (EpilogueOp& op : n.ops)
        if (op.kind == EpilogueOp::Kind::ActGrad) op.kind = EpilogueOp::Kind::Relu;
    }));
    bad.body = plant.mutate(bad.body);
    REQUIRE(plant.planted > 0);
    SimulationReport r = simulate_kernel(bad, def);
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches > 0);
  }
}

TEST_CASE("activation_grad: the text form, the definition and their errors") {
  const auto file = parse_schedule_file("problem m=128 n=128 k=64 dtype=bf16 out=bf16\nepilogue dgelu\ntile 128 128 64\n");
  REQUIRE(file.epilogue.size() == 1);
  CHECK(file.epilogue[0].kind == OpKind::ActGrad);
  CHECK(file.epilogue[0].activation == OpKind::Gelu);
  const Definition def = make_definition(128, 128, 64, DType::BF16, DType::BF16, file.epilogue, {}, false);
  CHECK(def.find("PreAct") != nullptr);
  CHECK(def.to_string().find("dgelu = activation_grad(acc, PreAct, gelu)") != std::string::npos);
  const std::string printed = print_schedule(tutorial_schedule(10, def));
  CHECK(printed.find("epilogue dgelu\n") != std::string::npos);

  Definition d;
  Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
  Tensor x = d.matmul(a, b);
  Tensor pre = d.input("PreAct", {64, 32}, DType::BF16);
  check_error([&] { d.activation_grad(x, pre, OpKind::Relu); }, "epilogue-shape",
              "'PreAct' must have the output's shape [M,N]");
  Tensor pre_ok = d.input("P", {64, 64}, DType::BF16);
  check_error([&] { d.activation_grad(x, pre_ok, OpKind::Scale); }, "epilogue-op",
              "'scale' is not an activation; legal are relu, gelu and silu");
}

namespace {

struct SavedCase {
  int step;  // 0: ping-pong
  int64_t m, n, k;
  int split_k;
};

// Each case with the pre-activation saved at three points of the chain, simulated exactly: D and
// the saved output both.
void simulate_saved(const SavedCase& c, Target target, const DeviceLimits& limits) {
  for (const auto& specs : {std::vector<EpilogueSpec>{{OpKind::AddBias}, save_here(), {OpKind::Gelu}},
                            std::vector<EpilogueSpec>{{OpKind::AddScaled, 0.5}, save_here(), {OpKind::Relu}},
                            std::vector<EpilogueSpec>{save_here(), {OpKind::Silu}}}) {
    CAPTURE(c.step);
    CAPTURE(c.m);
    CAPTURE(c.split_k);
    const Definition def = make_definition(c.m, c.n, c.k, DType::BF16, DType::BF16, specs, {}, false);
    REQUIRE(def.saved_output() >= 0);
    Schedule s = c.step ? tutorial_schedule(c.step, def, target) : ping_pong_schedule(def, target);
    if (c.split_k > 1) s.split_k(c.split_k);
    LowerOptions lo;
    lo.limits = limits;
    const Kernel k = lower(s, lo);
    CHECK(k.plan.target == target);
    CHECK(k.plan.epilogue.saves());
    CHECK_FALSE(k.plan.epilogue.staged_c);  // C from global memory beside a saved output
    CHECK(k.launch.writes_aux);
    simulate_exactly(k, def);
  }
}

}  // namespace

TEST_CASE("simulate: the pre-activation saved beside the activation, staged and from registers, split-K too") {
  // v3 stores both outputs from registers; v6, v8, v10 and ping-pong stage each through its own turn
  // of the buffers (v10: subtiles); v8 with split-K commits both after the last split's sum.
  for (const SavedCase& c : {SavedCase{3, 200, 136, 64, 1}, SavedCase{6, 256, 256, 136, 1}, SavedCase{8, 300, 200, 136, 1},
                             SavedCase{10, 1, 8, 64, 1}, SavedCase{10, 384, 264, 192, 1}, SavedCase{0, 384, 256, 136, 1},
                             SavedCase{8, 256, 256, 512, 2}})
    simulate_saved(c, Target::Sm90a, few_sms(2));
}

// sm_100a: the accumulator lies in TMEM; each output's store loads it again, a chunk at a time (no
// Blackwell GPU has run these: simulated only).
TEST_CASE("simulate: the pre-activation saved beside the activation on sm_100a (TMEM), split-K and ping-pong too") {
  DeviceLimits b200 = blackwell();
  b200.sms = 2;
  for (const SavedCase& c : {SavedCase{5, 200, 136, 64, 1}, SavedCase{8, 300, 200, 136, 1}, SavedCase{10, 384, 264, 192, 1},
                             SavedCase{0, 384, 256, 136, 1}, SavedCase{8, 256, 256, 512, 2}, SavedCase{10, 300, 264, 512, 3}})
    simulate_saved(c, Target::Sm100a, b200);
}

TEST_CASE("simulate: a pre-activation saved after the activation, or not saved, is caught") {
  const Definition def =
      make_definition(256, 256, 128, DType::BF16, DType::F32, {{OpKind::AddBias}, save_here(), {OpKind::Relu}}, {}, false);
  for (int v : {3, 10}) {
    CAPTURE(v);
    LowerOptions lo;
    lo.limits = few_sms(2);
    const Kernel good = lower(tutorial_schedule(v, def), lo);
    REQUIRE(simulate_kernel(good, def).passed);
    const auto planted = [&](testing::Plant::Fn bug) {
      Kernel bad = good;
      testing::Plant plant(std::move(bug));
      bad.body = plant.mutate(bad.body);
      REQUIRE(plant.planted > 0);
      return simulate_kernel(bad, def);
    };
    // the saved store applies the activation too: relu's zeros where the pre-activation is negative
    SimulationReport after = planted(testing::rewrite<EpilogueStore>(
        [](EpilogueStore& n) {
          EpilogueOp relu;
          relu.kind = EpilogueOp::Kind::Relu;
          n.ops.push_back(relu);
        },
        [](const EpilogueStore& n) { return n.output == rt::Operand::Aux; }));
    CHECK_FALSE(after.passed);
    CHECK(after.to_string().find("PreAct[") != std::string::npos);
    // the saved store dropped: its elements stay poison (v3), or the TMA store writes what the
    // staging buffer held before (v10)
    SimulationReport dropped = planted(testing::drop<EpilogueStore>(
        [](const EpilogueStore& n) { return n.output == rt::Operand::Aux; }));
    CHECK_FALSE(dropped.passed);
    CHECK(dropped.unwritten + dropped.mismatches > 0);
  }
}

TEST_CASE("saved output: the text form, explain and the definition's errors") {
  const auto file = parse_schedule_file(
      "problem m=128 n=128 k=64 dtype=bf16 out=bf16\nepilogue bias cols\nepilogue save\nepilogue gelu\ntile 128 128 64\n");
  REQUIRE(file.epilogue.size() == 3);
  CHECK(file.epilogue[1].save);
  const Definition def = make_definition(128, 128, 64, DType::BF16, DType::BF16, file.epilogue, {}, false);
  CHECK(def.saved_name() == "PreAct");
  CHECK(def.node(def.saved_output()).kind == OpKind::AddBias);
  CHECK(def.to_string().find("[saved as PreAct]") != std::string::npos);
  const std::string printed = print_schedule(tutorial_schedule(10, def));
  CHECK(printed.find("epilogue bias cols\nepilogue save\nepilogue gelu\n") != std::string::npos);

  Definition d;
  Tensor a = d.input("A", {64, 64}, DType::BF16), b = d.input("B", {64, 64}, DType::BF16);
  Tensor x = d.matmul(a, b);
  d.set_output(d.cast(d.gelu(x), DType::BF16));
  // (bad-saved-output's messages: tests/dsl/primitive_errors_test.cpp)
  check_error([&] { d.set_saved_output(x, "B"); }, "duplicate-name", "'B': tensor names must be unique and non-empty");
}

TEST_CASE("simulate: a column-major output staged transposed by stmatrix.trans and stored by TMA") {
  // v4, v6, v8, v10 and ping-pong with D column-major and an explicit TMA store: each warp writes
  // its 16x16 blocks transposed, the buffer's rows the tile's columns; edge shapes along both.
  for (const char* step : {"v4", "v6", "v8", "v10", "pingpong"})
    for (const auto& [m_, n, k] : {std::tuple<int64_t, int64_t, int64_t>{304, 264, 256}, {8, 8, 128}, {136, 520, 192}}) {
      const int64_t m = m_;  // (CAPTURE's lambda cannot read a structured binding under clang 14)
      CAPTURE(step);
      CAPTURE(m);
      ProblemLayout l;
      l.d = OutputLayout::ColumnMajor;
      const Definition def = make_definition(m, n, k, DType::BF16, DType::BF16, {{OpKind::AddBias}}, l, false);
      std::string text = print_schedule(builtin_schedule(step, def));
      const size_t at = text.find("cache_write cast shared auto");
      if (at != std::string::npos) text.replace(at, 28, "cache_write cast shared tma");
      const Schedule s = apply_directives(def, parse_schedule_file(text).directives);
      LowerOptions lo;
      lo.limits = few_sms(2);
      const Kernel good = lower(s, lo);
      REQUIRE(good.plan.tma_store);
      REQUIRE(good.plan.staging.transposed);
      SimulationReport r = simulate_kernel(good, def);
      CAPTURE(r.to_string());
      CHECK(r.passed);
      CHECK(r.tma_stores > 0);
      // stmatrix without .trans writes each 8x8 block untransposed: wrong elements of D
      Kernel bad = good;
      testing::Plant plant(testing::rewrite<EpilogueStore>([](EpilogueStore& e) { e.transposed_staging = false; }));
      bad.body = plant.mutate(bad.body);
      REQUIRE(plant.planted > 0);
      bad.body = index_epilogue_stores(bad.body);  // the index math follows the flag
      CHECK_FALSE(simulate_kernel(bad, def).passed);
    }
}

namespace {

Definition symmetric_definition(int64_t m, int64_t k, std::vector<EpilogueSpec> epilogue = {}) {
  ProblemLayout l;
  l.symmetric = true;
  return make_definition(m, m, k, DType::BF16, DType::BF16, epilogue, l, false);
}

}  // namespace

TEST_CASE("simulate: symmetric A * A^T computes the tiles on and above the diagonal, each stored with its mirror") {
  // sm_100a too: its mirrors are staged transposed out of TMEM, each thread writing its row's values
  // down the buffer's columns, where sm_90a's stmatrix.trans writes 8x8 blocks.
  for (const Target target : {Target::Sm90a, Target::Sm100a})
  for (const bool wide : {true, false})
    for (const auto& [m_, k] : {std::pair<int64_t, int64_t>{512, 256}, {640, 192}, {136, 128}, {8, 64}, {1000, 64}, {264, 64}})
      for (int sms : {2, 5}) {
        const int64_t m = m_;  // (CAPTURE's lambda cannot read a structured binding under clang 14)
        CAPTURE(target_name(target));
        CAPTURE(wide);
        CAPTURE(m);
        CAPTURE(sms);
        const Definition def = symmetric_definition(m, k, {{OpKind::Gelu}});
        LowerOptions lo;
        lo.limits = target == Target::Sm100a ? blackwell() : few_sms(sms);
        lo.limits.sms = sms;
        const Kernel kernel = lower(symmetric_schedule(def, target, wide ? SymmetricTile::Wide : SymmetricTile::Square), lo);
        REQUIRE(kernel.plan.epilogue.commit == EpiloguePlan::Commit::Symmetric);
        REQUIRE(kernel.plan.tile_n == (wide ? 256 : 128));
        CHECK(kernel.launch.symmetric);
        const SimulationReport r = simulate_exactly(kernel, def);
        // the tiles with a row on or above the diagonal load A twice per k tile (the n tile's
        // rows, 256 of them, in one box), the others nothing
        const int64_t ratio = wide ? 2 : 1, tiles_m = (m + 127) / 128, tiles_n = (tiles_m + ratio - 1) / ratio;
        int64_t computing = 0;
        for (int64_t n = 0; n < tiles_n; ++n) computing += std::min(tiles_m, ratio * (n + 1));
        CHECK(r.tma_loads == computing * ((k + 63) / 64) * 2);
      }
}

TEST_CASE("simulate: a symmetric mirror stored untransposed, or at the tile's own box, is caught") {
  const Definition def = symmetric_definition(512, 128);
  for (const Target target : {Target::Sm90a, Target::Sm100a})
  for (const SymmetricTile tile : {SymmetricTile::Wide, SymmetricTile::Square}) {
    CAPTURE(target_name(target));
    CAPTURE(tile == SymmetricTile::Wide);
    LowerOptions lo;
    lo.limits = target == Target::Sm100a ? blackwell() : few_sms(3);
    lo.limits.sms = 3;
    const Kernel good = lower(symmetric_schedule(def, target, tile), lo);
    REQUIRE(simulate_kernel(good, def).passed);
    const auto planted = [&](testing::Plant::Fn bug) {
      Kernel bad = good;
      testing::Plant plant(std::move(bug));
      bad.body = index_epilogue_stores(plant.mutate(bad.body));
      REQUIRE(plant.planted > 0);
      return simulate_kernel(bad, def);
    };
    SimulationReport untransposed = planted(testing::rewrite<EpilogueStore>(
        [](EpilogueStore& n) { n.transposed_staging = false; }, [](const EpilogueStore& n) { return n.mirror; }));
    CHECK_FALSE(untransposed.passed);
    CHECK(untransposed.mismatches > 0);
    // the mirror's box at (m, n), where the tile itself goes: the mirror block of D is never written
    SimulationReport unmirrored = planted(testing::rewrite<TmaStore>(
        [](TmaStore& t) { std::swap(t.row, t.col); },
        [](const TmaStore& t) { return to_c(t.row).find("n_tile") != std::string::npos; }));
    CHECK_FALSE(unmirrored.passed);
    CHECK(unmirrored.unwritten + unmirrored.mismatches > 0);
    // a subtile on the diagonal taken for one below it (row0 < col0 + cols as row0 < col0): its
    // store is skipped, and it has no mirror to stand in
    SimulationReport diagonal_skipped = planted(testing::rewrite<If>(
        [](If& i) { i.cond = i.cond->a < i.cond->b->a; },
        [](const If& i) {
          return i.cond->kind == ExprKind::Lt && i.cond->b->kind == ExprKind::Add && is_const(i.cond->b->b) &&
                 to_c(i.cond).find("n_tile") != std::string::npos;
        }));
    CHECK_FALSE(diagonal_skipped.passed);
    CHECK(diagonal_skipped.unwritten > 0);
  }
}

TEST_CASE("symmetric: the directive, the problem line and their errors") {
  const Definition def = symmetric_definition(256, 64);
  CHECK(def.matmul_node().operands[0] == def.matmul_node().operands[1]);
  CHECK(problem_layout(def).symmetric);
  const std::string printed = print_schedule(symmetric_schedule(def));
  CHECK(printed.find("symmetric=1") != std::string::npos);
  CHECK(printed.find("\nsymmetric\n") != std::string::npos);
  // (the directive's and the problem's own errors: tests/dsl/primitive_errors_test.cpp)
  // A tutorial step's schedule stored by TMA, with its text edited.
  const auto edited = [&](int version, std::vector<std::pair<std::string, std::string>> edits) {
    std::string text = print_schedule(tutorial_schedule(version, def));
    edits.push_back({"cache_write cast shared auto", "cache_write cast shared tma"});
    for (const auto& [from, to] : edits)
      if (text.find(from) != std::string::npos) text.replace(text.find(from), from.size(), to);
    Schedule s = apply_directives(def, parse_schedule_file(text).directives);
    s.symmetric();
    return s;
  };
  // a tile 1.5 times as wide as it is tall: the diagonal would cross a 64x64 subtile's middle
  check_error([&] { validate_schedule(edited(8, {{"tile 128 128 64", "tile 128 192 64"}, {"mma 64 128 16", "mma 64 192 16"}})); },
              "symmetric",
              "symmetric: the diagonal crosses a tile's square subtiles, so a tile is as wide as it is tall or a whole "
              "number of times wider (below 16), but the tile is 128x192");
  // v10's cluster: a pair's CTAs would not agree on which tiles they skip
  check_error([&] { validate_schedule(edited(10, {})); }, "symmetric", "symmetric: in a cluster");
  check_error([&] { Schedule(def).cache_read("B", CopyMethod::Tma); }, "not-an-operand",
              "cache_read B: 'B' is not an operand of the matmul; its one operand is A, read as both (A * A^T)");
}
