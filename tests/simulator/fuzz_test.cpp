// A seeded schedule fuzzer: random schedules over tiles, stages, warp roles, consumer
// warpgroups, persistence, clusters with multicast, output staging and epilogue ops on small
// ragged problems. Each must be refused with a registered CompileError or lower and simulate
// to exactly the host reference with no hazard; an InternalError is a failure. The seed is
// printed; GEMMGEN_FUZZ_CASES and GEMMGEN_FUZZ_SEED set the count and the seed.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "nvcc_compile.h"
#include "schedules/tutorial.h"
#include "simulator/simulate.h"

using namespace gg;

namespace {

int64_t env_or(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

struct Draw {
  std::mt19937_64& rng;
  int64_t pick(std::initializer_list<int64_t> xs) { return *(xs.begin() + rng() % xs.size()); }
  bool coin(int percent) { return int(rng() % 100) < percent; }
};

// A random definition: bf16 or f16 in, an output type and up to three epilogue ops.
Definition random_definition(Draw& d, int64_t m, int64_t n, int64_t k) {
  DType in = d.coin(50) ? DType::BF16 : DType::F16;
  DType out = d.coin(60) ? in : DType::F32;
  Definition def;
  Tensor a = def.input("A", {m, k}, in);
  Tensor b = def.input("B", {n, k}, in);
  Tensor y = def.matmul(a, b);
  if (d.coin(30)) y = def.scale(y, 0.5);
  if (d.coin(25)) y = def.add_scaled(y, def.input("C", {m, n}, out), 0.25);
  if (d.coin(25)) y = def.add_bias(y, def.input("bias", {n}, out), BiasAlong::Cols);
  if (d.coin(30)) y = def.relu(y);
  def.set_output(def.cast(y, out));
  return def;
}

Schedule random_schedule(Draw& d, const Definition& def) {
  Schedule s(def);
  const int64_t tm = d.pick({64, 128, 192, 256}), tn = d.pick({32, 64, 96, 128, 160, 256}), tk = d.pick({32, 64, 128});
  s.tile(tm, tn, tk);
  for (int op : def.epilogue()) s.inline_op(def.node(op).name);
  s.mma(64, static_cast<int>(tn), 16, Target::Sm90a);
  s.bind("k_o", Binding::Serial);
  s.bind("m_o", Binding::BlockY);
  s.bind("n_o", Binding::BlockX);
  const bool tma = d.coin(85);
  if (tma) {  // `auto` falls back where a ragged N or K leaves rows TMA cannot take
    const CopyMethod method = d.coin(50) ? CopyMethod::Tma : CopyMethod::Auto;
    s.cache_read("A", method);
    s.cache_read("B", method);
    if (d.coin(80)) s.cache_write(def.node(def.output()).name, Place::Shared, method);
  }
  const bool ws = tma && d.coin(60);
  const int64_t k_trips = s.domain().axis("k_o").extent;
  int stages = static_cast<int>(d.pick({1, 2, 3, 4, 6}));
  if (ws || stages > 1) stages = static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(stages, k_trips)));
  if (tma && stages > 1) s.circular_buffer("k_o", stages);
  if (d.coin(60)) s.persist("m_o", "n_o", d.coin(70) ? Raster::RowMajor : Raster::ColumnMajor, d.pick({1, 2, 8}));
  if (ws) {
    if (!(tma && stages > 1)) s.circular_buffer("k_o", 2);
    s.warp_specialize(40, 232);
    if (d.coin(40)) {
      s.split("m_i", tm / 2, "m_wg", "m_mma");
      s.bind("m_wg", Binding::Warpgroup);
    }
    if (d.coin(40)) {
      s.cluster(2, 1, 1);
      if (d.coin(70)) s.multicast("B");
    }
  }
  return s;
}

}  // namespace

// `cases` random schedules for `target` (sm_100a: the same draws retargeted, the mma directive's
// target switched) on a device of two SMs: each refused with a rule, or simulated exactly.
static void fuzz_simulate(Target target, int64_t cases, uint64_t env_seed, uint64_t offset) {
  const uint64_t seed = env_seed + offset;
  std::cout << "schedule fuzzer (" << target_name(target) << "): " << cases << " cases, seed " << seed
            << " (rerun: GEMMGEN_FUZZ_SEED=" << env_seed << " GEMMGEN_FUZZ_CASES=" << cases << ")\n";
  std::mt19937_64 rng(seed);
  Draw d{rng};
  std::map<std::string, int> rules;
  int simulated = 0, warp_specialized = 0, clustered = 0, persistent = 0, failures = 0;
  DeviceLimits limits = limits_for(target);
  limits.sms = 2;
  for (int64_t c = 0; c < cases; ++c) {
    const int64_t m = d.pick({1, 64, 100, 129, 256, 300}), n = d.pick({8, 64, 136, 200, 256, 7, 129}),
                  k = d.pick({8, 64, 72, 136, 256, 71});
    std::string what = "case " + std::to_string(c) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    try {
      Definition def = random_definition(d, m, n, k);
      Schedule s = random_schedule(d, def);
      if (target != Target::Sm90a) s.retarget(target);
      SimulateOptions o;
      o.seed = seed + static_cast<uint64_t>(c);
      o.max_steps = 20'000'000;
      SimulationReport r = simulate(s, o, limits);
      ++simulated;
      warp_specialized += s.warp_roles().has_value();
      clustered += s.cluster_dims().has_value();
      persistent += s.persistence().has_value();
      if (!r.passed) {
        ++failures;
        std::cout << what << " FAILED\n" << print_schedule(s) << r.to_string();
      }
    } catch (const CompileError& e) {
      ++rules[e.rule()];
    } catch (const InternalError& e) {
      ++failures;
      std::cout << what << " internal error: " << e.what() << "\n";
    }
  }
  std::cout << "  " << simulated << " simulated (" << warp_specialized << " warp-specialized, " << clustered
            << " clustered, " << persistent << " persistent), refused by rule:";
  for (const auto& [rule, count] : rules) std::cout << " " << rule << ":" << count;
  std::cout << "\n  " << failures << " failures\n";
  CHECK(failures == 0);
  CHECK(simulated > cases / 4);
}

TEST_CASE("fuzz: random schedules are refused with a rule, or lower and simulate exactly") {
  fuzz_simulate(Target::Sm90a, env_or("GEMMGEN_FUZZ_CASES", 1000),
                static_cast<uint64_t>(env_or("GEMMGEN_FUZZ_SEED", 20261123)), 0);
}

// The same generator retargeted to sm_100a (tcgen05.mma into TMEM), from another seed: what
// lowers simulates exactly, what does not is refused with a rule (sm_100a's `not-lowered`
// parts: ping-pong, split-K).
TEST_CASE("fuzz: random schedules retargeted to sm_100a are refused with a rule, or simulate exactly") {
  fuzz_simulate(Target::Sm100a, env_or("GEMMGEN_FUZZ_CASES", 1000),
                static_cast<uint64_t>(env_or("GEMMGEN_FUZZ_SEED", 20261123)), 100);
}

// What the fuzzer accepts must also compile: a seeded sample of the schedules that lower is
// emitted and compiled with nvcc for sm_90a, and ptxas must report no stack frame and no
// spill (an accepted schedule that spills is a bug: the register check or the lowering must
// change). GEMMGEN_FUZZ_NVCC sets the sample size (0 skips; the long mode compiles more).
// A sample of `wanted` schedules the generator draws for `target` that lower, compiled with nvcc
// for it: no stack frame, no spill.
static void fuzz_compile(Target target, int64_t wanted, uint64_t seed) {
  const std::string nvcc = GEMMGEN_NVCC;
  if (wanted == 0 || nvcc.empty() || !std::filesystem::exists(nvcc)) {
    MESSAGE("nvcc sample skipped: GEMMGEN_FUZZ_NVCC=0 or no nvcc at '" << nvcc << "'");
    return;
  }
  std::cout << "schedule fuzzer, nvcc sample (" << target_name(target) << "): " << wanted
            << " accepted schedules, seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  Draw d{rng};
  std::vector<std::string> sources, shown;
  int failures = 0;
  for (int64_t c = 0; int64_t(sources.size()) < wanted && c < wanted * 50; ++c) {
    const int64_t m = d.pick({100, 256, 300, 1000}), n = d.pick({64, 136, 256, 1000, 1001}), k = d.pick({64, 136, 1024, 130});
    Schedule s(make_gemm(8, 8, 8, DType::BF16, DType::BF16));
    try {
      Definition def = random_definition(d, m, n, k);
      s = random_schedule(d, def);
      if (target != Target::Sm90a) s.retarget(target);
      LowerOptions lo;
      lo.limits = limits_for(target);
      sources.push_back(emit_cuda(s, lo).source);
      shown.push_back("case " + std::to_string(c) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                      std::to_string(k) + "\n" + print_schedule(s));
    } catch (const CompileError&) {
      continue;
    } catch (const InternalError& err) {
      ++failures;
      std::cout << "case " << c << " internal error: " << err.what() << "\n";
    }
  }
  const int64_t compiled = int64_t(sources.size());
  const std::string arch = std::string(target_name(target)).substr(3);  // "90a", "100a"
  const std::vector<test::NvccResult> results = test::compile_for(arch, nvcc, sources, "fuzz" + arch + std::to_string(seed));
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].clean) {
      ++failures;
      std::cout << shown[i] << "nvcc failed or spilled:\n" << results[i].log << "\n";
    }
  std::cout << "  " << compiled << " compiled, " << failures << " with a spill, a stack frame or an nvcc error\n";
  CHECK(compiled == wanted);
  CHECK(failures == 0);
}

TEST_CASE("fuzz: a sample of the accepted schedules compiles with nvcc, without spills") {
  fuzz_compile(Target::Sm90a, env_or("GEMMGEN_FUZZ_NVCC", 48),
               static_cast<uint64_t>(env_or("GEMMGEN_FUZZ_SEED", 20261123)) + 1);
}

// Half as many for sm_100a: no Blackwell GPU has run these, so compiling is their check.
TEST_CASE("fuzz: a sample of the schedules accepted for sm_100a compiles with nvcc for it, without spills") {
  fuzz_compile(Target::Sm100a, env_or("GEMMGEN_FUZZ_NVCC", 48) / 2,
               static_cast<uint64_t>(env_or("GEMMGEN_FUZZ_SEED", 20261123)) + 101);
}
