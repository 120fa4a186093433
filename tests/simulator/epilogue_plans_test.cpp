// The epilogue's commit policies beyond the elementwise chain, simulated against the fp64 host
// reference: the backward of an activation at a saved pre-activation (QuACK's gemm_dact), read
// through C's path (from global memory, or staged by TMA).
#include <doctest/doctest.h>

#include "codegen/lower.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;

namespace {

DeviceLimits few_sms(int sms) {
  DeviceLimits d = hopper();
  d.sms = sms;
  return d;
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
      CHECK(k.plan.staged_c == (c.step != 3));
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
  try {
    d.activation_grad(x, pre, OpKind::Relu);
    FAIL("a pre-activation of another shape was taken");
  } catch (const CompileError& e) {
    CHECK(e.rule() == "epilogue-shape");
    CHECK(std::string(e.what()).find("'PreAct' must have the output's shape [M,N]") != std::string::npos);
  }
  Tensor pre_ok = d.input("P", {64, 64}, DType::BF16);
  try {
    d.activation_grad(x, pre_ok, OpKind::Scale);
    FAIL("a scale was taken as an activation");
  } catch (const CompileError& e) {
    CHECK(e.rule() == "epilogue-op");
    CHECK(std::string(e.what()).find("'scale' is not an activation; legal are relu, gelu and silu") !=
          std::string::npos);
  }
}
