// Staged operands: rows TMA cannot address (K odd for a K-major bf16 operand, M or N odd for an
// MN-major one) copied by the launch into aligned buffers, which the kernel's TMA loads read.
// Simulated exactly against the fp64 host reference; planted bugs: the launch forgetting the copy,
// the copy's pitch taken from the caller. The definition's and text form's rules.
#include <doctest/doctest.h>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "error_check.h"
#include "schedules/auto_schedule.h"
#include "schedules/gemm.h"
#include "schedules/tutorial.h"
#include "sim_limits.h"
#include "simulator/simulate.h"

using namespace gg;
using gg::testing::check_error;
using gg::testing::few_sms;

namespace {

Kernel lowered(const Schedule& s) {
  LowerOptions lo;
  lo.limits = few_sms(2);
  return lower(s, lo);
}

// The planner's plan (auto, staged where the rows need it) for a problem laid out as `l`.
GemmPlan planned(int64_t m, int64_t n, int64_t k, const ProblemLayout& l) {
  GemmOptions o;
  o.layout = l;
  return plan_gemm(m, n, k, o);
}

}  // namespace

TEST_CASE("simulate: staged operands, K-major with K odd, MN-major with M and N odd, batches, broadcast, swapped") {
  struct Case {
    int64_t m, n, k;
    Layout a, b;
    int64_t batch, stride_b;
  };
  for (const Case& c : {Case{45, 70, 37, Layout::KMajor, Layout::KMajor, 1, -1},
                        Case{333, 100, 55, Layout::KMajor, Layout::KMajor, 1, -1},
                        Case{101, 203, 64, Layout::MNMajor, Layout::MNMajor, 1, -1},
                        Case{5, 300, 37, Layout::KMajor, Layout::KMajor, 3, -1},
                        Case{70, 90, 45, Layout::KMajor, Layout::MNMajor, 2, 0},
                        Case{150, 9, 99, Layout::KMajor, Layout::KMajor, 1, -1}}) {
    CAPTURE(c.m);
    CAPTURE(c.k);
    ProblemLayout l;
    l.a = c.a;
    l.b = c.b;
    l.batch = c.batch;
    l.stride_b = c.stride_b;
    const GemmPlan plan = planned(c.m, c.n, c.k, l);
    CAPTURE(plan.describe());
    REQUIRE(plan.source == PlanSource::Auto);
    const ProblemLayout kernel_side = problem_layout(plan.def);
    CHECK((kernel_side.stage_a || kernel_side.stage_b));
    const Kernel k = lowered(plan.build());
    int staged_maps = 0;
    for (const rt::TensorMapSpec& t : k.launch.tensor_maps) staged_maps += t.staged;
    CHECK(staged_maps == int(kernel_side.stage_a) + int(kernel_side.stage_b));
    const SimulationReport r = simulate_kernel(k, plan.def);
    CAPTURE(r.to_string());
    CHECK(r.passed);
    CHECK(r.mismatches == 0);
    CHECK(r.unwritten == 0);
  }
  // A tutorial step with the operands staged by hand (the text form's stage=ab).
  ProblemLayout l;
  l.stage_a = l.stage_b = true;
  const Definition def = make_definition(200, 136, 75, DType::F16, DType::F32, {}, l, false);
  const Kernel v10 = lowered(tutorial_schedule(10, def));
  CHECK(v10.plan.staged_a);
  CHECK(v10.plan.staged_b);
  const SimulationReport r = simulate_kernel(v10, def);
  CAPTURE(r.to_string());
  CHECK(r.passed);
}

TEST_CASE("simulate: a launch that forgets the staged copy, or pitches it as the caller's rows, is caught") {
  ProblemLayout l;
  l.stage_a = l.stage_b = true;
  const Definition def = make_definition(130, 72, 37, DType::BF16, DType::BF16, {}, l, false);
  const Kernel good = lowered(tutorial_schedule(8, def));
  REQUIRE(simulate_kernel(good, def).passed);
  // The copy forgotten: the maps read the caller's rows, 74 bytes apart.
  Kernel uncopied = good;
  for (rt::TensorMapSpec& t : uncopied.launch.tensor_maps) t.staged = false;
  const SimulationReport forgot = simulate_kernel(uncopied, def);
  CHECK_FALSE(forgot.passed);
  CHECK(forgot.to_string().find("a tensor map's rows must lie a 16-byte multiple apart") != std::string::npos);
  // Only A's copy made: B's map reads the caller's rows.
  Kernel half = good;
  for (rt::TensorMapSpec& t : half.launch.tensor_maps)
    if (t.operand == rt::Operand::B) t.staged = false;
  CHECK_FALSE(simulate_kernel(half, def).passed);
}

TEST_CASE("staged operands: the planner stages only rows TMA cannot address; the rules and the text form") {
  // Aligned rows: nothing staged. K odd: both K-major operands. An MN-major A with M odd: A only.
  CHECK_FALSE(problem_layout(planned(256, 256, 64, {}).def).stage_a);
  const GemmPlan odd_k = planned(333, 4444, 555, {});
  CHECK(odd_k.config.find("A staged; B staged; ") == 0);
  ProblemLayout mn;
  mn.a = Layout::MNMajor;
  const ProblemLayout mn_staged = problem_layout(planned(1001, 256, 64, mn).def);
  CHECK(mn_staged.stage_a);
  CHECK_FALSE(mn_staged.stage_b);
  // A named schedule takes the problem as given: v10 on K odd refuses, naming staging.
  GemmOptions named;
  named.schedule = "v10";
  check_error([&] { lower(plan_gemm(128, 128, 37, named).build()); }, "warp-specialize-needs-tma",
              "pad K to a multiple of 8 for TMA, stage A through an aligned copy each launch makes (problem ... "
              "stage=a, --stage; `auto` stages it itself), or drop warp_specialize");
  // The explanation counts the copy.
  // (Swapped: D's rows of N = 4444 are not whole 16-byte pieces, stored from registers, which the
  // swapped kernel does column-major at three times the rate.)
  REQUIRE(odd_k.swapped());
  CHECK(explain_plan(odd_k).find("staged:      B (a row of K=555 bf16 elements is 1110 bytes, copied with rows 560 "
                                 "elements apart: TMA cannot address them); A (a row of K=555") != std::string::npos);
  CHECK(staging_seconds(odd_k.def) > 4e-6);
  // A swapped plan names the staged operand as the caller does: its kernel's B is the caller's A.
  ProblemLayout a_m_major;
  a_m_major.a = Layout::MNMajor;
  const GemmPlan swapped = planned(4001, 16, 4096, a_m_major);
  REQUIRE(swapped.swapped());
  CHECK(explain_plan(swapped).find("staged:      A (a row of M=4001 bf16 elements is 8002 bytes, copied with rows "
                                   "4016 elements apart: TMA cannot address them)") != std::string::npos);
  CHECK(staging_seconds(planned(256, 256, 64, {}).def) == 0.0);

  // The text form round-trips; a bad word, a second stage, and staging rows TMA addresses are refused.
  const ScheduleFile file = parse_schedule_file("problem m=64 n=64 k=37 dtype=bf16 out=bf16 stage=ab\ntile 64 64 64\n");
  REQUIRE(file.problem.stage);
  CHECK(*file.problem.stage == "ab");
  ProblemLayout both;
  set_staged_operands(both, "ab");
  const Definition def = make_definition(64, 64, 37, DType::BF16, DType::BF16, {}, both, false);
  CHECK(print_schedule(tutorial_schedule(10, def)).find(" stage=ab\n") != std::string::npos);
  CHECK(def.to_string().find("A = input bf16[64,37] k-major staged (an aligned copy, rows 48 apart)") != std::string::npos);
  check_error([] { parse_schedule_file("problem m=64 n=64 k=37 dtype=bf16 out=bf16 stage=c\n"); }, "parse-error",
              "expected stage=a, stage=b or stage=ab");
  check_error([] { ProblemLayout x; set_staged_operands(x, "ba"); }, "stage", "legal are a, b and ab");
  check_error([] { make_definition(64, 64, 64, DType::BF16, DType::BF16, {}, [] {
                     ProblemLayout x;
                     x.stage_a = true;
                     return x;
                   }(), false); },
              "stage", "stage_operand: 'A': TMA addresses its rows as they are (a row of K=64 bf16 elements is 128 bytes); "
              "staging copies only rows it cannot address or loads at half rate (rows not 32-byte multiples apart)");
  // Rows 16 bytes into a 32-byte sector (K = 1032: 2064 bytes) TMA loads at half rate: they may be
  // staged, and the copy's rows are 32-byte multiples apart (1040 elements).
  ProblemLayout a_only;
  a_only.stage_a = true;
  const Definition half_rate = make_definition(64, 64, 1032, DType::BF16, DType::BF16, {}, a_only, false);
  const Node& staged_a = half_rate.node(half_rate.matmul_node().operands[0]);
  CHECK(staged_pitch(half_rate, staged_a) == 1040);
  CHECK(rows_sector_aligned(half_rate, staged_a));
  CHECK_FALSE(rows_sector_aligned(half_rate, half_rate.node(half_rate.matmul_node().operands[1])));
  CHECK(staged_pitch(half_rate, half_rate.node(half_rate.matmul_node().operands[1])) == 1040);
  Definition d;
  Tensor a = d.input("A", {64, 37}, DType::BF16), b = d.input("B", {64, 37}, DType::BF16);
  Tensor x = d.matmul(a, b);
  d.set_output(d.cast(x, DType::BF16));
  check_error([&] { d.stage_operand(x); }, "stage", "stage_operand: 'acc' is not an operand of the matmul");
  Definition e4;
  Tensor a8 = e4.input("A", {64, 40}, DType::E4M3), b8 = e4.input("B", {64, 40}, DType::E4M3);
  e4.set_output(e4.cast(e4.matmul(a8, b8), DType::BF16));
  check_error([&] { e4.stage_operand(a8); }, "stage", "stage_operand: 'A' is e4m3; staging copies 16-bit operands");
  ProblemLayout masked = both;
  masked.source = ProblemSource::Masked;
  masked.batch = 2;
  check_error([&] { make_definition(64, 64, 37, DType::BF16, DType::BF16, {}, masked, false); }, "stage",
              "masked groups read their operands where the groups say");
}

TEST_CASE("staged operands: the emitted .cu copies them with its `_stage` kernel before encoding the maps over the copies") {
  const GemmPlan plan = planned(333, 4444, 555, {});
  const EmittedKernel e = emit_cuda(plan.build());
  const std::string stage = e.kernel_name + "_stage(const __grid_constant__ GgStageArgs args) { gg::dev::stage_rows(args); }";
  CHECK(e.source.find(stage) != std::string::npos);
  CHECK(e.source.find("---- runtime/device/stage_rows.cuh") != std::string::npos);
  CHECK(e.source.find(e.kernel_name + "_stage<<<gg::host::stage_blocks(&stage), GG_STAGE_THREADS, 0, stream>>>(stage);") !=
        std::string::npos);
  CHECK(e.source.find("encode_tensor_map(&args.map_a, a_staged, desc") != std::string::npos);
  CHECK(e.source.find("encode_tensor_map(&args.map_b, b_staged, desc") != std::string::npos);
  // The same kernel unstaged would not lower: it is its own kernel, named apart.
  const GemmPlan aligned = planned(333, 4444, 560, {});
  CHECK(emit_cuda(aligned.build()).source.find("_stage(") == std::string::npos);
}
