// The index math of epilogue stores and synchronous copies (kir::EpilogueIndex, kir::CopyIndex)
// is what the printer prints and what the simulator runs: a one-line mistake in a fragment row or
// column, a register, a bound, a global index, a staging address, stmatrix's row addresses or a
// copy's chunk coordinates, bounds, source element or shared address, planted into the lowered IR
// as it would be printed, must make the simulated kernel fail, across unstaged, staged, stmatrix
// and TMEM stores, fused epilogues, element and 16-byte copies, layouts and batches.
#include <doctest/doctest.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/index_math.h"
#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "planted_bugs.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;
using namespace gg::kir;
using namespace gg::testing;

namespace {

// `e` with every call of `helper` replaced by its first argument.
ExprPtr drop_call(const ExprPtr& e, const std::string& helper) {
  if (!e || e->kind == ExprKind::Var || e->kind == ExprKind::Int) return e;
  if (e->kind == ExprKind::Call && e->name == helper) return drop_call(e->a, helper);
  Expr copy = *e;
  copy.a = drop_call(e->a, helper);
  copy.b = drop_call(e->b, helper);
  return std::make_shared<Expr>(copy);
}

ExprPtr tid() { return var("threadIdx.x"); }

// A mistake in the lets named `lets`: the value a bug would print instead. `observable`: the
// problems where it changes a result (nullptr: all).
struct IndexBug {
  std::string name;  // "copy: ...": in a SyncCopyTile's index math (else an EpilogueStore's)
  std::vector<std::string> lets;
  std::function<ExprPtr(const ExprPtr&)> wrong;
  std::function<bool(const Definition&)> observable = nullptr;
  bool copy() const { return name.rfind("copy:", 0) == 0; }
};

std::vector<IndexBug> index_bugs() {
  return {
      {"fragment row: (t % 32) / 4 printed (t % 32) / 8", {"lane_row"},
       [](const ExprPtr&) { return tid() % imm(128) / imm(32) * imm(16) + tid() % imm(32) / imm(8); }},
      {"fragment column: 2 (t % 4) printed t % 4", {"lane_col"},
       [](const ExprPtr&) { return tid() % imm(32) % imm(4); }},
      {"the fragment's second row (+8 h) dropped", {"r", "sr"},
       [](const ExprPtr& v) { return substitute(v, "h", imm(0)); }},
      {"register of the pair: 4 j + 2 h printed 4 j + h (TMEM: 2 p printed p)", {"reg"},
       [](const ExprPtr& v) {
         return to_c(v).find('h') != std::string::npos ? imm(4) * var("j") + var("h") : var("p");
       }},
      {"staged column: the subtile's first column not subtracted", {"sc"},
       [](const ExprPtr& v) { return v->kind == ExprKind::Sub ? v->a : v; }},
      {"staging address: the swizzle not applied", {"dst", "row_dst"},
       [](const ExprPtr& v) { return drop_call(v, "gg::dev::swizzle_offset"); }},
      {"stmatrix: the odd matrices' +8 rows dropped", {"st_row"},
       [](const ExprPtr&) { return tid() % imm(128) / imm(32) * imm(16) + tid() % imm(8); }},
      {"stmatrix: the upper matrices' +8 columns dropped", {"st_col"},
       [](const ExprPtr&) { return imm(0); }},
      {"bound of the pair's second value checks the first's column", {"in1"},
       [](const ExprPtr& v) { return substitute(v, "col1", var("col")); },
       // pairs start at even columns: only an odd N has a pair straddling the edge
       [](const Definition& def) { return def.n() % 2 == 1; }},
      {"row bound off by one (row <= M)", {"in0", "in1"},
       [](const ExprPtr& v) { return substitute(v, "args.m", var("args.m") + imm(1)); },
       // a tile hangs over M's edge
       [](const Definition& def) { return def.m() % 64 != 0; }},
      {"D element of the pair's second value is the first's", {"d_at1"},
       [](const ExprPtr& v) { return substitute(v, "col1", var("col")); }},
      {"C element of the pair's second value is the first's", {"c_at1"},
       [](const ExprPtr& v) { return substitute(v, "col1", var("col")); }},
      {"global column of the pair's second value is the first's", {"col1"},
       [](const ExprPtr&) { return var("col"); }},
      {"stmatrix column bias: the group half (8 g) dropped", {"col_g"},
       [](const ExprPtr& v) { return substitute(v, "g", imm(0)); }},
      {"copy: a chunk's tile row counted over twice the chunks of a row", {"r"},
       [](const ExprPtr& v) { return v->a / (v->b * imm(2)); }},
      {"copy: a chunk's first column not scaled by its elements", {"col"},
       [](const ExprPtr& v) { return substitute(v, "c", var("c") / imm(8)); }},
      {"copy: the column bound dropped", {"inside"},
       [](const ExprPtr& v) { return v->a; },
       // a K-major tile hangs over K's edge
       [](const Definition& def) { return def.k() % 64 != 0; }},
      {"copy: the source row stride one row short", {"element"},
       [](const ExprPtr& v) { return var("row") * (v->a->b - imm(8)) + var("col"); }},
      {"copy: the swizzle not applied", {"dst"},
       [](const ExprPtr& v) { return drop_call(v, "gg::dev::swizzle_offset"); }},
      {"copy: the swizzle atom's offset dropped", {"dst"},
       [](const ExprPtr& v) { return substitute(v, "atom", imm(0)); },
       // a K-major row of 64 16-bit elements is one 128-byte atom; an MN-major row is two
       [](const Definition& def) { return problem_layout(def).a == Layout::MNMajor; }},
      {"copy: element loads one element past the row's end", {"valid"},
       [](const ExprPtr& v) { return v + imm(1); },
       // element loads: rows not 16-byte aligned
       [](const Definition& def) { return def.k() % 8 != 0; }},
  };
}

std::vector<IndexLet>* level_lists(EpilogueIndex& ix, int i) {
  std::vector<IndexLet>* lists[] = {&ix.thread, &ix.group, &ix.bias_group, &ix.pair, &ix.matrix_row};
  return lists[i];
}

// The index math's values by name: the lets, and per value e of the pair `in<e>` (inside D),
// `d_at<e>` and `c_at<e>` (its element of D and C).
std::vector<std::pair<std::string, ExprPtr*>> named_values(EpilogueIndex& ix) {
  std::vector<std::pair<std::string, ExprPtr*>> all;
  for (int level = 0; level < 5; ++level)
    for (IndexLet& l : *level_lists(ix, level)) all.push_back({l.name, &l.value});
  for (size_t e = 0; e < 2; ++e) {
    const std::string s = std::to_string(e);
    all.push_back({"in" + s, &ix.inside[e]});
    all.push_back({"d_at" + s, &ix.d_element[e]});
    all.push_back({"c_at" + s, &ix.c_element[e]});
  }
  return all;
}

std::vector<std::pair<std::string, ExprPtr*>> named_values(CopyIndex& ix) {
  std::vector<std::pair<std::string, ExprPtr*>> all;
  for (IndexLet& l : ix.chunk) all.push_back({l.name, &l.value});
  all.push_back({"inside", &ix.inside});
  all.push_back({"element", &ix.element});
  all.push_back({"valid", &ix.valid});
  return all;
}

// Plants `bug` into every EpilogueStore (or SyncCopyTile) of `k`; false when it changes nothing.
bool plant_index_bug(Kernel& k, const IndexBug& bug) {
  bool changed = false;
  auto change = [&](std::vector<std::pair<std::string, ExprPtr*>> values) {
    for (auto& [name, value] : values)
      for (const std::string& target : bug.lets) {
        if (name != target || !*value) continue;
        const ExprPtr wrong = bug.wrong(*value);
        if (to_c(wrong) == to_c(*value)) continue;
        *value = wrong;
        changed = true;
      }
  };
  Plant plant([&](const StmtPtr& s) -> std::optional<StmtPtr> {
    if (!bug.copy() && as<EpilogueStore>(s)) {
      auto n = copy_of<EpilogueStore>(s);
      change(named_values(n->index));
      return StmtPtr(n);
    }
    if (bug.copy() && as<SyncCopyTile>(s)) {
      auto n = copy_of<SyncCopyTile>(s);
      change(named_values(n->index));
      return StmtPtr(n);
    }
    return std::nullopt;
  });
  k.body = plant.mutate(k.body);
  return changed;
}

struct Config {
  std::string name;
  std::function<Schedule()> schedule;
  Target target = Target::Sm90a;
};

Definition with_c_and_bias(int64_t m, int64_t n, int64_t k, DType out, DType c_type, BiasAlong along) {
  Definition def;
  Tensor a = def.input("A", {m, k}, DType::BF16), b = def.input("B", {n, k}, DType::BF16);
  Tensor c = def.input("C", {m, n}, c_type);
  Tensor bias = def.input("bias", {along == BiasAlong::Cols ? n : m}, DType::F32);
  def.set_output(def.cast(def.relu(def.add_bias(def.add_scaled(def.matmul(a, b), c, 0.5), bias, along)), out));
  return def;
}

std::vector<Config> configs() {
  auto step = [](int v, Definition def, Target t = Target::Sm90a) {
    return [=] { return tutorial_schedule(v, def, t); };
  };
  ProblemLayout batched, column_major, mn_major_a;
  batched.batch = 3;
  mn_major_a.a = Layout::MNMajor;
  mn_major_a.lda = 272;
  column_major.d = OutputLayout::ColumnMajor;
  return {
      {"v4 unstaged 130x129x72", step(4, make_gemm(130, 129, 72, DType::BF16, DType::BF16))},
      {"v4 unstaged, C and row bias 130x136x72",
       step(4, with_c_and_bias(130, 136, 72, DType::BF16, DType::BF16, BiasAlong::Rows))},
      {"v4 unstaged, column-major D 130x129x72", step(4, make_definition(130, 129, 72, DType::BF16, DType::BF16, {}, column_major))},
      {"v4 unstaged, batch 3 136x72x64", step(4, make_definition(136, 72, 64, DType::BF16, DType::BF16, {}, batched))},
      {"v6 stmatrix 256x256x128", step(6, make_gemm(256, 256, 128, DType::BF16, DType::BF16))},
      {"v6 stmatrix, C f32 from global, column bias 200x264x128",
       step(6, with_c_and_bias(200, 264, 128, DType::BF16, DType::F32, BiasAlong::Cols))},
      {"v6 f32 staged by st.shared, staged C, column bias 200x264x128",
       step(6, with_c_and_bias(200, 264, 128, DType::F32, DType::F32, BiasAlong::Cols))},
      {"v8 stmatrix, row bias 256x256x128",
       step(8, with_c_and_bias(256, 256, 128, DType::BF16, DType::BF16, BiasAlong::Rows))},
      {"v10 two consumers 256x512x128", step(10, make_gemm(256, 512, 128, DType::BF16, DType::BF16))},
      {"sm_100a v4 TMEM unstaged 130x129x72",
       step(4, make_gemm(130, 129, 72, DType::BF16, DType::BF16), Target::Sm100a), Target::Sm100a},
      {"sm_100a v6 TMEM staged, column bias 200x264x128",
       step(6, with_c_and_bias(200, 264, 128, DType::BF16, DType::F32, BiasAlong::Cols), Target::Sm100a),
       Target::Sm100a},
      {"sm_100a v10 two consumers 256x512x128",
       step(10, make_gemm(256, 512, 128, DType::BF16, DType::BF16), Target::Sm100a), Target::Sm100a},
      // synchronous copies: 16-byte chunks with M and K edges, element loads (K % 8 != 0),
      // MN-major A with a leading dimension, batches
      {"v2 copies 128x128x200", step(2, make_gemm(128, 128, 200, DType::BF16, DType::BF16))},
      {"v3 copies 130x136x200", step(3, make_gemm(130, 136, 200, DType::BF16, DType::BF16))},
      {"v4 element copies 77x129x71", step(4, make_gemm(77, 129, 71, DType::BF16, DType::BF16))},
      {"v3 copies, MN-major A, lda 272, 264x256x136",
       step(3, make_definition(264, 256, 136, DType::BF16, DType::BF16, {}, mn_major_a))},
      {"v3 copies, batch 3 136x72x64", step(3, make_definition(136, 72, 64, DType::BF16, DType::BF16, {}, batched))},
      {"sm_100a v3 copies 130x136x200",
       step(3, make_gemm(130, 136, 200, DType::BF16, DType::BF16), Target::Sm100a), Target::Sm100a},
  };
}

DeviceLimits limits_for(const Config& c) {
  DeviceLimits d = c.target == Target::Sm100a ? blackwell() : hopper();
  d.sms = 2;  // persistent CTAs loop over several tiles
  return d;
}

}  // namespace

TEST_CASE("index math: every config simulates bit-exactly as lowered") {
  for (const Config& c : configs()) {
    const Schedule s = c.schedule();
    const SimulationReport r = simulate(s, {}, limits_for(c));
    CAPTURE(c.name);
    CAPTURE(r.to_string());
    CHECK(r.passed);
  }
}

TEST_CASE("index math: each planted mistake fails the simulation wherever it changes the kernel") {
  std::cout << "index math bug -> configs where it changed the printed index math, caught by the simulator\n";
  int planted_total = 0, caught_total = 0;
  const std::vector<Config> cs = configs();
  for (const IndexBug& bug : index_bugs()) {
    int planted = 0, caught = 0;
    std::string missed;
    for (const Config& c : cs) {
      const Schedule s = c.schedule();
      LowerOptions lo;
      lo.limits = limits_for(c);
      Kernel k = lower(s, lo);
      if ((bug.observable && !bug.observable(s.definition())) || !plant_index_bug(k, bug)) continue;
      ++planted;
      const SimulationReport r = simulate_kernel(k, s.definition());
      if (!r.passed) ++caught;
      else missed += "; " + c.name;
    }
    std::cout << "  " << bug.name << ": " << caught << " of " << planted << (missed.empty() ? "" : " (missed" + missed + ")")
              << "\n";
    CAPTURE(bug.name);
    CHECK(planted > 0);
    CHECK(caught == planted);
    planted_total += planted;
    caught_total += caught;
  }
  std::cout << "caught " << caught_total << " of " << planted_total << "\n";
}
