// Property test over random, mostly illegal, use of the public API: definitions, primitive
// calls with hostile arguments, schedule text (garbage tokens, missing arguments, huge and
// non-numeric numbers), then explain, validate_schedule, lower and emit_cuda on whatever was built.
//
// The property (DESIGN.md rule 4): a user can only ever see a gg::CompileError with a rule id
// and a message. An InternalError, another exception type or a crash is a bug. A primitive
// that refuses a call leaves the schedule as it was. Seeded, so a failure reproduces: the
// failing sequence's seed and trace are printed.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/emit.h"
#include "codegen/explain.h"
#include "codegen/lower.h"
#include "codegen/validate_schedule.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

constexpr uint32_t kSeed = 0x6e6d6d31;
constexpr int kSequences = 20000;

// What a sequence did, for the failure message. With GG_PROPERTY_SEED=<seed> in the
// environment only that sequence runs, and its steps are printed as they happen.
// GG_PROPERTY_SEQUENCES=<n> and GG_PROPERTY_BASE=<seed> run a longer or different stretch.
struct Trace {
  bool verbose = false;
  std::vector<std::string> steps;
  void add(std::string step) {
    if (verbose) std::cout << "  " << step << std::endl;
    steps.push_back(std::move(step));
  }
  std::string text() const {
    std::string t;
    for (const auto& x : steps) t += "  " + x + "\n";
    return t;
  }
};

struct Stats {
  std::map<std::string, int> rules;  // rule id -> how often it fired
  int errors = 0, bugs = 0, calls = 0, accepted = 0, explained = 0, validated = 0, lowered = 0, emitted = 0;
};

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  std::mt19937& rng() { return rng_; }

  int range(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t range64(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int pct) { return range(0, 99) < pct; }
  template <class T>
  T pick(const std::vector<T>& xs) {
    return xs[static_cast<size_t>(range(0, static_cast<int>(xs.size()) - 1))];
  }

  // Problem extents 1..9000: random, or multiples of the usual tile sizes.
  int64_t extent() {
    switch (range(0, 3)) {
      case 0: return range64(1, 9000);
      case 1: return 64 * range64(1, 140);
      case 2: return 128 * range64(1, 70);
      default: return pick<int64_t>({1, 8, 16, 64, 128, 192, 256, 1000, 1024, 4096, 8192, 9000});
    }
  }
  // K: usually a multiple of 8 (16-byte rows), sometimes not.
  int64_t k_extent() { return chance(25) ? range64(1, 9000) : 8 * range64(1, 1125); }

  DType in_dtype() {
    if (chance(8)) return pick<DType>({DType::F32, DType::E4M3, DType::E5M2});
    return pick<DType>({DType::BF16, DType::BF16, DType::F16});
  }
  DType out_dtype() {
    if (chance(3)) return DType::E4M3;
    return pick<DType>({DType::BF16, DType::BF16, DType::F16, DType::F32});
  }
  Target target() { return chance(75) ? Target::Sm90a : Target::Sm100a; }

  int64_t factor() {
    if (chance(50)) return pick<int64_t>({1, 2, 3, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256});
    return pick<int64_t>({-7, -1, 0, 5, 100, 512, 4096, 9001, int64_t(1) << 20, int64_t(1) << 31, int64_t(1) << 40,
                          int64_t(1) << 62, INT64_MAX, INT64_MIN, INT64_MAX - 1, range64(1, 600)});
  }
  int small() {
    return pick<int>({-8, -1, 0, 1, 2, 3, 4, 5, 7, 8, 16, 17, 64, 65536, INT_MAX, INT_MIN, range(-100, 100)});
  }
  int regs() {
    if (chance(50)) return pick<int>({24, 40, 56, 168, 216, 232, 240, 256});
    return pick<int>({-8, 0, 8, 16, 23, 230, 257, 264, 1024, INT_MAX, INT_MIN, range(0, 300)});
  }
  Binding binding() {
    return pick<Binding>({Binding::None, Binding::BlockX, Binding::BlockY, Binding::BlockZ, Binding::Cluster,
                          Binding::Persistent, Binding::Warpgroup, Binding::Warp, Binding::Thread, Binding::Serial,
                          Binding::Serial, Binding::Unroll});
  }

  // An axis to use: usually one that exists, sometimes one that does not (or no longer) exists.
  std::string axis(const Schedule& s) {
    const auto& leaves = s.domain().leaves();
    if (chance(75)) return pick(leaves);
    return pick<std::string>({"m", "n", "k", "m_o", "n_o", "k_o", "m_i", "n_i", "k_i", "tile", "q", "", "1x",
                              "m o", "m_wg", "k_oo", std::string(300, 'z')});
  }
  // A name for a new axis: usually fresh, sometimes taken or malformed.
  std::string new_name() {
    if (chance(80)) return "x" + std::to_string(fresh_++);
    return pick<std::string>({"m", "k_o", "m_i", "tile", "", "1x", "a-b", "a b", "_ok", "\xff", "ok9"});
  }
  std::string tensor() {
    return pick<std::string>({"A", "B", "A", "B", "C", "Bias", "acc", "cast", "relu", "scale", "gelu1", "x", ""});
  }
  CopyMethod method() { return chance(60) ? CopyMethod::Tma : CopyMethod::Sync; }
  Place place() { return pick<Place>({Place::Registers, Place::Tmem, Place::Shared}); }

  std::vector<EpilogueSpec> epilogue() {
    std::vector<EpilogueSpec> specs;
    int n = pick<int>({0, 0, 0, 1, 1, 2, 3});
    for (int i = 0; i < n; ++i) {
      EpilogueSpec e;
      e.kind = chance(92) ? pick<OpKind>({OpKind::Scale, OpKind::AddScaled, OpKind::AddBias, OpKind::Relu,
                                           OpKind::Gelu, OpKind::Silu})
                          : pick<OpKind>({OpKind::Cast, OpKind::Input, OpKind::Matmul});
      e.scalar = pick<double>({0.0, 0.5, 2.0, -1.0, 1e300});
      e.along = chance(50) ? BiasAlong::Rows : BiasAlong::Cols;
      specs.push_back(e);
    }
    return specs;
  }

  // One token of schedule text: keywords, names, numbers good and bad.
  std::string token() {
    return pick<std::string>({"m", "n", "k", "m_o", "n_o", "k_o", "m_i", "k_i", "A", "B", "acc", "cast", "relu",
                              "tile", "x1", "64", "128", "16", "2", "4", "40", "232", "0", "-1", "-64", "+5",
                              "99999999999999999999", "9223372036854775807", "-9223372036854775808",
                              "9223372036854775808", "2147483648", "-2147483649", "1e3", "0x10", "3.5", "nan", "inf",
                              "abc", "1,2", "--", "=", "sm_90a", "sm_100a", "sm_80", "serial", "block.x", "block.y",
                              "warpgroup", "persistent", "none", "tma", "sync", "shared", "registers", "tmem", "row",
                              "column", "diagonal", "rows", "cols", "\t", "#", "\xc3\xa9"});
  }
  std::string directive_word() {
    if (chance(10)) return pick<std::string>({"frobnicate", "Split", "", "epilogue", "problem", "tile128"});
    return pick<std::string>({"split", "merge", "reorder", "bind", "tile", "cache_read", "cache_write", "inline",
                              "compute_at", "circular_buffer", "warp_specialize", "persist", "cluster", "multicast",
                              "mma", "ping_pong", "store_subtile"});
  }
  // A directive line: a plausible one, often with one argument replaced, dropped or added;
  // or a directive name followed by random tokens.
  std::string directive_line() {
    if (chance(40)) {
      std::string line = directive_word();
      int args = range(0, 6);
      for (int i = 0; i < args; ++i) line += (chance(90) ? " " : "\t") + token();
      return line;
    }
    std::vector<std::string> w = pick<std::vector<std::string>>({
        {"split", "m_i", "64", "m_wg", "m_mma"}, {"merge", "m_o", "n_o", "mn"}, {"reorder", "n_o", "m_o"},
        {"bind", "k_o", "serial"}, {"tile", "128", "128", "64"}, {"cache_read", "A", "tma"},
        {"cache_write", "cast", "shared", "tma"}, {"inline", "cast"}, {"compute_at", "relu", "n_i"},
        {"circular_buffer", "k_o", "4", "3"}, {"warp_specialize", "40", "232"},
        {"persist", "m_o", "n_o", "tile", "row", "8"}, {"cluster", "2", "1", "1"}, {"multicast", "B"},
        {"mma", "64", "128", "16", "sm_90a"}, {"store_subtile", "64", "2"}});
    switch (range(0, 3)) {
      case 0: w[static_cast<size_t>(range(1, static_cast<int>(w.size()) - 1))] = token(); break;
      case 1: w.pop_back(); break;
      case 2: w.push_back(token()); break;
      default: break;
    }
    std::string line;
    for (const auto& x : w) line += (line.empty() ? "" : " ") + x;
    return line;
  }
  std::string problem_line() {
    std::string line = "problem";
    int n = range(0, 5);
    for (int i = 0; i < n; ++i) {
      std::string key = pick<std::string>({"m", "n", "k", "dtype", "out", "q", "", "m"});
      std::string value = key == "dtype" || key == "out"
                              ? pick<std::string>({"bf16", "f16", "f32", "e4m3", "f8", ""})
                              : chance(70) ? std::to_string(extent()) : token();
      line += " " + key + (chance(95) ? "=" : "") + value;
    }
    return line;
  }
  std::string epilogue_line() {
    std::string line = "epilogue";
    int n = range(0, 3);
    for (int i = 0; i < n; ++i)
      line += " " + (i == 0 ? pick<std::string>({"scale", "add_c", "bias", "relu", "gelu", "silu", "tanh", "cast"})
                            : pick<std::string>({"2.0", "0.5", "-1", "two", "rows", "cols", "1e999", "nan", "--"}));
    return line;
  }
  std::string schedule_text() {
    std::string text;
    int n = range(0, 10);
    for (int i = 0; i < n; ++i) {
      int kind = range(0, 9);
      std::string line = kind == 0 ? problem_line() : kind == 1 ? epilogue_line() : kind == 2 ? "# comment" :
                         kind == 3 ? "" : directive_line();
      if (chance(10)) line += "  # trailing";
      text += line + (chance(10) ? "\r\n" : "\n");
    }
    return text;
  }

 private:
  std::mt19937 rng_;
  int fresh_ = 0;
};

// Runs f; a CompileError is counted, anything else fails the test with the trace.
template <class F>
bool attempt(Stats& st, const Trace& trace, uint32_t seed, F&& f) {
  try {
    f();
    return true;
  } catch (const CompileError& e) {
    ++st.errors;
    ++st.rules[e.rule()];
    if (e.rule().empty() || e.message().empty()) {
      ++st.bugs;
      FAIL_CHECK("CompileError without a rule or message: [" << e.rule() << "] " << e.message());
    }
    return false;
  } catch (const InternalError& e) {
    ++st.bugs;
    FAIL_CHECK("InternalError reached by a user sequence (seed " << seed << "): " << std::string(e.what()) << "\n" << trace.text());
    return false;
  } catch (const std::exception& e) {
    ++st.bugs;
    FAIL_CHECK("non-CompileError exception (seed " << seed << "): " << std::string(e.what()) << "\n" << trace.text());
    return false;
  }
}

// A definition built by random use of the Definition API (often wrong).
std::optional<Definition> random_definition_api(Gen& g, Stats& st, Trace& trace, uint32_t seed) {
  static Definition other = make_gemm(64, 64, 64, DType::BF16, DType::BF16);
  Definition def;
  std::vector<Tensor> pool;
  auto tensor = [&]() -> Tensor {
    if (pool.empty() || g.chance(8)) return g.chance(50) ? Tensor() : Tensor(&other, 0);
    return g.pick(pool);
  };
  int64_t m = g.extent(), n = g.extent(), k = g.k_extent();
  auto shape = [&]() -> std::vector<int64_t> {
    switch (g.range(0, 6)) {
      case 0: return {m, k};
      case 1: return {n, k};
      case 2: return {m, n};
      case 3: return {g.chance(50) ? m : n};
      case 4: return {};
      case 5: return {m, n, k};
      default: return {g.pick<int64_t>({-1, 0, 1, 64}), g.pick<int64_t>({-5, 0, 64, 128})};
    }
  };
  const bool gemm = g.chance(60);  // start from A*B with operand names of the user's choosing
  if (gemm) {
    m = 64 * g.range64(1, 64);
    n = 64 * g.range64(1, 64);
    k = 64 * g.range64(1, 64);
    // Named copies, not a structured binding: clang 14 cannot capture those in the lambda below.
    const auto names = g.pick<std::pair<std::string, std::string>>({{"A", "B"}, {"B", "A"}, {"X", "W"}, {"A", "A2"}});
    const std::string a = names.first, b = names.second;
    DType in = g.chance(90) ? DType::BF16 : DType::F16;
    trace.add("inputs " + a + ", " + b + "; matmul");
    attempt(st, trace, seed, [&] {
      Tensor ta = def.input(a, {m, k}, in), tb = def.input(b, {n, k}, in);
      pool = {ta, tb, def.matmul(g.chance(90) ? ta : tb, g.chance(90) ? tb : ta)};
      if (g.chance(30)) pool.push_back(def.input("C", {m, n}, DType::BF16));
      if (g.chance(30)) pool.push_back(def.input("Bias", {g.chance(50) ? m : n}, DType::BF16));
    });
  }
  int ops = gemm ? g.range(0, 4) : g.range(1, 10);
  for (int i = 0; i < ops; ++i) {
    int op = gemm ? g.range(4, 8) : g.range(0, 10);
    trace.add("definition op " + std::to_string(op));
    ++st.calls;
    attempt(st, trace, seed, [&] {
      switch (op) {
        case 0:
        case 1: pool.push_back(def.input(g.pick<std::string>({"A", "B", "C", "Bias", "x", ""}), shape(), g.in_dtype()));
                break;
        case 2:
        case 3: pool.push_back(def.matmul(tensor(), tensor())); break;
        case 4: pool.push_back(def.scale(tensor(), 2.0)); break;
        case 5: pool.push_back(def.add_scaled(tensor(), tensor(), 0.5)); break;
        case 6: pool.push_back(def.add_bias(tensor(), tensor(), g.chance(50) ? BiasAlong::Rows : BiasAlong::Cols)); break;
        case 7: pool.push_back(g.chance(50) ? def.relu(tensor()) : g.chance(50) ? def.gelu(tensor()) : def.silu(tensor()));
                break;
        case 8: pool.push_back(def.cast(tensor(), g.out_dtype())); break;
        default: def.set_output(tensor()); break;
      }
    });
  }
  if (gemm && !pool.empty() && g.chance(80)) {
    trace.add("set_output");
    attempt(st, trace, seed, [&] {
      def.set_output(g.chance(70) ? def.cast(pool.back(), g.out_dtype()) : pool.back());
    });
  }
  return def;
}

// One random primitive call with random (often illegal) arguments.
void random_call(Gen& g, Schedule& s, Stats& st, Trace& trace, uint32_t seed) {
  const size_t before = s.directives().size();
  const std::vector<std::string> leaves = s.domain().leaves();
  bool ok = false;
  int kind = g.range(0, 20);
  ++st.calls;
  if (kind == 15) {  // a random text line, parsed and, when it parses, applied
    std::string line = g.directive_line();
    trace.add("parse_directive '" + line + "'");
    std::optional<Directive> d;
    if (attempt(st, trace, seed, [&] { d = parse_directive(line); }) && g.chance(80))
      ok = attempt(st, trace, seed, [&] { s.apply(*d); });
  } else if (kind == 16) {  // calls with the primitives' default arguments
    std::string a = g.axis(s), b = g.axis(s);
    int which = g.range(0, 3);
    trace.add("defaults " + std::to_string(which) + " " + a + " " + b);
    ok = attempt(st, trace, seed, [&] {
      if (which == 0) s.persist(a, b);
      else if (which == 1) s.cluster(g.small());
      else if (which == 2) s.circular_buffer(a, g.small());
      else s.cache_write(g.tensor(), g.place());
    });
  } else {
    Directive d;
    switch (kind) {
      case 0: d = SplitD{g.axis(s), g.factor(), g.new_name(), g.new_name()}; break;
      case 1: d = MergeD{g.axis(s), g.axis(s), g.new_name()}; break;
      case 2: {
        std::vector<std::string> order;
        int n = g.range(0, 5);
        for (int i = 0; i < n; ++i) order.push_back(g.axis(s));
        d = ReorderD{order};
        break;
      }
      case 3:
      case 17: d = BindD{g.axis(s), g.binding()}; break;
      case 4:
      case 18:
        d = TileD{g.chance(60) ? g.pick<int64_t>({64, 128, 256}) : g.factor(),
                  g.chance(60) ? g.pick<int64_t>({64, 128, 256}) : g.factor(),
                  g.chance(60) ? g.pick<int64_t>({32, 64}) : g.factor()};
        break;
      case 5: d = CacheReadD{g.tensor(), g.method()}; break;
      case 6: d = CacheWriteD{g.tensor(), g.place(), g.method()}; break;
      case 7: d = InlineD{g.tensor()}; break;
      case 8: d = ComputeAtD{g.tensor(), g.axis(s)}; break;
      case 9:
      case 19: d = CircularBufferD{g.axis(s), g.small(), g.chance(50) ? -1 : g.small()}; break;
      case 10: d = WarpSpecializeD{g.regs(), g.regs()}; break;
      case 11:
        d = PersistD{g.axis(s), g.axis(s), g.new_name(), g.chance(50) ? Raster::RowMajor : Raster::ColumnMajor,
                     g.chance(70) ? 8 : g.factor()};
        break;
      case 12: d = ClusterD{g.small(), g.chance(50) ? 1 : g.small(), g.chance(80) ? 1 : g.small()}; break;
      case 13: d = MulticastD{g.tensor()}; break;
      case 14: d = StoreSubtileD{g.pick<int64_t>({64, 32, 16, 128, 48, 0, -8, 256}), g.pick<int>({2, 1, 4, 3, 0, 5})}; break;
      default:
        d = MmaD{g.pick<int>({64, 64, 128, 256, 0, 32, -64, 65}), g.pick<int>({8, 16, 64, 128, 128, 256, 0, 100, 264}),
                 g.pick<int>({16, 16, 16, 8, 32, 0}), g.target()};
        break;
    }
    trace.add(print_directive(d));
    ok = attempt(st, trace, seed, [&] { s.apply(d); });
  }
  if (ok) {
    ++st.accepted;
  } else {
    // A refused call leaves the schedule as it was.
    CHECK_MESSAGE(s.directives().size() == before, "seed " << seed << ": a refused call recorded a directive");
    CHECK_MESSAGE(s.domain().leaves() == leaves, "seed " << seed << ": a refused call changed the loop axes");
  }
}

// A schedule close to the tutorial's: a random tile, mma, bindings, copies, pipeline depth,
// warpgroups, roles and cluster, each call usually legal, so that many reach lowering.
void near_legal(Gen& g, Schedule& s, Stats& st, Trace& trace, uint32_t seed) {
  const Definition& def = s.definition();
  const Target t = g.target();
  const int64_t tm = g.pick<int64_t>({64, 128, 128, 192, 256, 512});
  const int64_t tn = g.pick<int64_t>({64, 128, 128, 192, 256, 512});
  const int64_t tk = g.pick<int64_t>({32, 64, 64, 64, 128});
  std::vector<Directive> ds;
  ds.push_back(TileD{tm, tn, tk});
  for (int id : def.epilogue())
    if (g.chance(95)) ds.push_back(InlineD{def.node(id).name});
  int mma_m = t == Target::Sm90a ? 64 : g.pick<int>({64, 128, 128, 256});
  int mma_n = static_cast<int>(g.chance(70) ? std::min<int64_t>(tn, 256) : g.pick<int64_t>({64, 128, 256, tn / 2}));
  ds.push_back(MmaD{mma_m, mma_n, 16, t});
  if (g.chance(92)) ds.push_back(BindD{"k_o", Binding::Serial});
  bool persist = g.chance(15);
  if (persist) {
    ds.push_back(PersistD{"m_o", "n_o", "tile", g.chance(50) ? Raster::RowMajor : Raster::ColumnMajor,
                          g.pick<int64_t>({8, 8, 1, 4, 0, -1})});
  } else if (g.chance(92)) {
    bool swap = g.chance(20);
    ds.push_back(BindD{"m_o", swap ? Binding::BlockX : Binding::BlockY});
    ds.push_back(BindD{"n_o", swap ? Binding::BlockY : g.chance(95) ? Binding::BlockX : Binding::BlockZ});
  }
  const Node& mm = def.matmul_node();
  const std::string a = def.node(mm.operands[0]).name, b = def.node(mm.operands[1]).name;
  if (g.chance(75)) {
    ds.push_back(CacheReadD{a, g.chance(92) ? CopyMethod::Tma : CopyMethod::Sync});
    ds.push_back(CacheReadD{b, g.chance(92) ? CopyMethod::Tma : CopyMethod::Sync});
  }
  const std::string out = def.node(def.output()).name;
  if (g.chance(60)) ds.push_back(CacheWriteD{out, Place::Shared, g.chance(85) ? CopyMethod::Tma : CopyMethod::Sync});
  if (g.chance(15)) ds.push_back(CacheWriteD{"acc", g.chance(50) ? Place::Registers : Place::Tmem, CopyMethod::Sync});
  if (g.chance(60)) ds.push_back(CircularBufferD{"k_o", g.range(1, 8), g.chance(80) ? -1 : g.range(0, 4)});
  if (g.chance(25)) {
    ds.push_back(SplitD{"m_i", g.pick<int64_t>({64, 64, 128, 32}), "m_wg", "m_mma"});
    ds.push_back(BindD{"m_wg", Binding::Warpgroup});
  } else if (g.chance(8)) {
    ds.push_back(SplitD{"n_i", g.pick<int64_t>({64, 128}), "n_wg", "n_mma"});
    ds.push_back(BindD{"n_wg", Binding::Warpgroup});
  }
  if (g.chance(20)) ds.push_back(WarpSpecializeD{g.pick<int>({24, 40, 40, 56}), g.pick<int>({168, 232, 232, 240})});
  if (g.chance(20)) ds.push_back(ClusterD{g.pick<int>({1, 2, 2, 4}), g.pick<int>({1, 1, 2}), 1});
  if (g.chance(15)) ds.push_back(MulticastD{g.chance(70) ? b : a});
  if (persist && g.chance(10)) ds.push_back(PersistD{"m_o", "n_o", "tile2", Raster::RowMajor, 8});
  if (g.chance(5)) ds.push_back(SplitD{"k_o", 2, "k_oo", "k_oi"});
  if (g.chance(25)) ds.push_back(StoreSubtileD{g.pick<int64_t>({64, 64, 32, 128, 16, 96}), g.pick<int>({2, 2, 1, 4, 3})});
  for (const auto& d : ds) {
    trace.add(print_directive(d));
    ++st.calls;
    if (attempt(st, trace, seed, [&] { s.apply(d); })) ++st.accepted;
  }
}

// Validates, lowers and emits whatever was built.
void finish(Gen& g, const Schedule& s, Stats& st, Trace& trace, uint32_t seed) {
  DeviceLimits limits = g.chance(70) ? hopper() : g.chance(70) ? blackwell() : hopper();
  if (g.chance(5)) limits.smem_bytes = 48 * 1024;
  if (g.chance(5)) limits.max_cluster = 2;
  if (g.chance(30)) {  // explain prints loop nests and resources of schedules that need not be legal
    ExplainOptions eo;
    eo.steps = g.chance(30);
    if (g.chance(50)) eo.limits = limits;
    trace.add(std::string("explain") + (eo.steps ? " (steps)" : ""));
    std::string text;
    if (attempt(st, trace, seed, [&] { text = explain(s, eo); })) {
      ++st.explained;
      CHECK(!text.empty());
    }
  }
  trace.add("validate on " + limits.name);
  if (attempt(st, trace, seed, [&] { validate_schedule(s, limits); })) ++st.validated;
  LowerOptions opts;
  opts.limits = limits;
  std::ostringstream dump;
  if (g.chance(10)) {
    opts.dump_after = g.pick<std::string>({"all", "select_mma", "check_sync", "build_loop_nests", "bogus", ""});
    opts.dump = &dump;
  }
  trace.add("lower (dump-after '" + opts.dump_after + "')");
  if (attempt(st, trace, seed, [&] { lower(s, opts); })) ++st.lowered;
  trace.add("emit_cuda");
  std::string source;
  if (attempt(st, trace, seed, [&] { source = emit_cuda(s, opts).source; })) {
    ++st.emitted;
    CHECK(!source.empty());
  }
}

void run_sequence(uint32_t seed, Stats& st, bool verbose = false) {
  Gen g(seed);
  Trace trace;
  trace.verbose = verbose;
  INFO("sequence seed " << seed << " (rerun it alone with GG_PROPERTY_SEED=" << seed << ")");  // shown on a crash
  const int start = g.range(0, 11);

  if (start <= 1) {  // a whole schedule file of random text
    std::string text = g.schedule_text();
    trace.add("parse_schedule_file:\n" + text);
    ScheduleFile file;
    if (!attempt(st, trace, seed, [&] { file = parse_schedule_file(text); })) return;
    std::optional<Definition> def;
    trace.add("make_definition");
    if (!attempt(st, trace, seed, [&] {
          def = make_definition(file.problem.m.value_or(g.extent()), file.problem.n.value_or(g.extent()),
                                file.problem.k.value_or(g.k_extent()), file.problem.dtype.value_or(g.in_dtype()),
                                file.problem.out.value_or(g.out_dtype()), file.epilogue);
        }))
      return;
    std::optional<Schedule> s;
    trace.add("apply_directives");
    if (!attempt(st, trace, seed, [&] {
          s.emplace(apply_directives(*def, file.directives, g.chance(50) ? file.directive_lines : std::vector<int>{}));
        }))
      return;
    finish(g, *s, st, trace, seed);
    return;
  }

  std::optional<Definition> def;
  if (start == 2) {
    def = random_definition_api(g, st, trace, seed);
    if (g.chance(50)) {  // a hand-built definition under a near-legal schedule
      std::optional<Schedule> s;
      trace.add("Schedule(def), near-legal");
      if (!attempt(st, trace, seed, [&] {
            s.emplace(*def);
            near_legal(g, *s, st, trace, seed);
          }))
        return;
      finish(g, *s, st, trace, seed);
      return;
    }
  } else {
    bool tidy = start >= 8;  // near-legal schedules: extents that tiles divide, legal dtypes
    int64_t m = tidy ? g.pick<int64_t>({128, 256, 512, 1024, 2048, 4096, 8192, 64 * g.range64(1, 140)}) : g.extent();
    int64_t n = tidy ? g.pick<int64_t>({128, 256, 512, 1024, 2048, 4096, 8192, 64 * g.range64(1, 140)}) : g.extent();
    int64_t k = tidy ? g.pick<int64_t>({64, 128, 256, 512, 1024, 4096, 8192, 64 * g.range64(1, 140)}) : g.k_extent();
    DType in = tidy ? g.pick<DType>({DType::BF16, DType::F16}) : g.in_dtype();
    DType out = tidy ? g.pick<DType>({DType::BF16, DType::F16, DType::F32}) : g.out_dtype();
    auto epi = g.epilogue();
    if (tidy)
      for (auto& e : epi)
        if (e.kind == OpKind::Cast || e.kind == OpKind::Input || e.kind == OpKind::Matmul) e.kind = OpKind::Relu;
    trace.add("make_definition " + std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k) + " " +
              std::string(dtype_name(in)) + " -> " + std::string(dtype_name(out)) + ", " +
              std::to_string(epi.size()) + " epilogue op(s)");
    if (!attempt(st, trace, seed, [&] { def = make_definition(m, n, k, in, out, epi); })) return;
  }

  std::optional<Schedule> s;
  int calls = g.range(0, 12);
  if (start <= 4 || start >= 8) {
    trace.add("Schedule(def)");
    if (!attempt(st, trace, seed, [&] { s.emplace(*def); })) return;
    if (start >= 8) {
      near_legal(g, *s, st, trace, seed);
      calls = g.chance(60) ? 0 : g.range(1, 3);
    }
  } else {
    int v = g.range(0, kTutorialSteps + 1);
    Target t = g.target();
    trace.add("tutorial v" + std::to_string(v) + " " + std::string(target_name(t)));
    bool by_name = g.chance(30);
    std::string name = by_name ? g.pick<std::string>({"v" + std::to_string(v), "V3", "v", "tutorial"}) : "";
    if (!attempt(st, trace, seed, [&] {
          s.emplace(by_name ? builtin_schedule(name, *def, t) : tutorial_schedule(v, *def, t));
        }))
      return;
    calls = g.range(0, 5);
  }

  for (int i = 0; i < calls; ++i) random_call(g, *s, st, trace, seed);
  if (g.chance(10)) {
    Target t = g.target();
    trace.add("retarget " + std::string(target_name(t)));
    attempt(st, trace, seed, [&] { s->retarget(t); });
  }
  finish(g, *s, st, trace, seed);
}

}  // namespace

TEST_CASE("random bad calls only ever raise CompileError") {
  Stats st;
  if (const char* only = std::getenv("GG_PROPERTY_SEED")) {
    run_sequence(static_cast<uint32_t>(std::stoul(only)), st, true);
    return;
  }
  // GG_PROPERTY_SEQUENCES / GG_PROPERTY_BASE: a longer soak, or another stretch of seeds.
  const char* n = std::getenv("GG_PROPERTY_SEQUENCES");
  const char* b = std::getenv("GG_PROPERTY_BASE");
  const int sequences = n ? std::stoi(n) : kSequences;
  const uint32_t base = b ? static_cast<uint32_t>(std::stoul(b)) : kSeed;
  for (int i = 0; i < sequences; ++i) run_sequence(base + static_cast<uint32_t>(i), st);

  std::ostringstream report;
  report << sequences << " sequences, " << st.calls << " primitive/text calls (" << st.accepted << " accepted), "
         << st.errors << " CompileErrors, " << st.explained << " explained, " << st.validated << " validated, "
         << st.lowered << " lowered, " << st.emitted << " emitted; " << st.rules.size() << " distinct rule ids:\n";
  for (const auto& [rule, count] : st.rules) report << "  " << rule << ": " << count << "\n";
  MESSAGE(report.str());

  CHECK(st.bugs == 0);
  CHECK(st.rules.size() >= 25);  // the generator really explores
  CHECK(st.emitted > 0);         // and some sequences are legal all the way through
}
