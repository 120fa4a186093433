// An emitted kernel carries only the runtime/device helpers it calls (codegen/device_helpers.cpp):
// the wgmma wrappers it defines are exactly the shapes its WgmmaIssue nodes use, every helper the
// kernel calls is defined in the text before it, and every embedded header supplies at least one
// of those calls. Checked on the emitted text against the lowered IR, over tiles, dtypes,
// operand majors, epilogues, split-K and the synchronous-copy fallback.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "codegen/device_helpers.h"
#include "codegen/emit.h"
#include "codegen/lower.h"
#include "dsl/schedule_text.h"
#include "hilbert_schedule.h"
#include "schedules/auto_schedule.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

// The wgmma wrappers the lowered kernel issues, named as the PTX instruction reads.
std::set<std::string> issued_wrappers(const Kernel& k) {
  struct Collect : kir::Visitor {
    std::set<std::string> names;
    void visit_WgmmaIssue(const kir::WgmmaIssue& n) override {
      names.insert("wgmma_m" + std::to_string(n.m) + "n" + std::to_string(n.n) + "k" + std::to_string(n.k) + "_f32_" +
                   n.dtype);
    }
  } c;
  c.visit(k.body);
  return c.names;
}

std::set<std::string> matches(const std::string& text, const std::regex& re) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// Functions and constants a helper text defines: "static __device__ __forceinline__ unsigned
// smem_addr(", "GG_HOST_DEVICE constexpr unsigned swizzle_offset(" (tcgen05_desc.h's macro is
// GG_TCGEN05_HD) and "constexpr unsigned kTcgen05TypeBF16 =".
std::set<std::string> defined_functions(const std::string& text) {
  static const std::regex def(
      R"((?:__forceinline__|GG_HOST_DEVICE|GG_TCGEN05_HD)\s+(?:constexpr\s+)?(?:[\w&*:<>]+\s+)+?(\w+)\s*\()");
  static const std::regex constant(R"(\bconstexpr\s+[\w:]+\s+(\w+)\s*=)");
  std::set<std::string> out = matches(text, def);
  out.merge(matches(text, constant));
  return out;
}

struct EmittedParts {
  std::map<std::string, std::string> headers;  // embedded file name -> its text
  std::string helpers, kernel;                  // all helper text; the kernel (device code only)
};

EmittedParts split(const std::string& source) {
  EmittedParts parts;
  const size_t kernel = source.find("// ---- kernel\n"), host = source.find("#if !defined(__CUDACC_RTC__)");
  REQUIRE(kernel != std::string::npos);
  REQUIRE(host != std::string::npos);
  parts.helpers = source.substr(0, kernel);
  parts.kernel = source.substr(kernel, host - kernel);
  static const std::string marker = "// ---- runtime/device/";
  for (size_t at = parts.helpers.find(marker); at != std::string::npos;) {
    const size_t name_end = parts.helpers.find('\n', at);
    const size_t next = parts.helpers.find(marker, name_end);
    parts.headers[parts.helpers.substr(at + marker.size(), name_end - at - marker.size())] =
        parts.helpers.substr(name_end, next == std::string::npos ? std::string::npos : next - name_end);
    at = next;
  }
  return parts;
}

// `wrapper`: the one wgmma wrapper the config issues; empty for an sm_100a kernel, which issues none.
void check_helpers(const Schedule& s, const std::string& label, const std::string& wrapper) {
  CAPTURE(label);
  const Kernel k = lower(s);
  const EmittedKernel e = emit_cuda(s);
  const EmittedParts parts = split(e.source);

  static const std::regex wrapper_def(R"(void (wgmma_m64n\d+k16_f32_\w+)\()");
  static const std::regex wrapper_call(R"(gg::dev::(wgmma_m64n\d+k16_f32_\w+)[<(])");
  const std::set<std::string> issued = issued_wrappers(k);
  CHECK(issued == (wrapper.empty() ? std::set<std::string>{} : std::set<std::string>{wrapper}));
  CHECK(matches(parts.helpers, wrapper_def) == issued);
  CHECK(matches(parts.kernel, wrapper_call) == issued);
  const DeviceHelpers used = device_helpers_used(k);
  CHECK(std::set<std::string>(used.wgmma_wrappers.begin(), used.wgmma_wrappers.end()) == issued);

  static const std::regex call(R"(gg::dev::(\w+))");
  const std::set<std::string> called = matches(parts.kernel, call), defined = defined_functions(parts.helpers);
  for (const std::string& f : called) {
    CAPTURE(f);
    CHECK(defined.count(f) == 1);
  }
  CHECK(parts.headers.count("gemm_args.h") == 1);  // the kernel's parameter type, no function
  for (const auto& entry : parts.headers) {  // not a structured binding: clang 14's CAPTURE cannot take one
    const std::string &name = entry.first, &text = entry.second;
    if (name == "gemm_args.h") continue;
    CAPTURE(name);
    bool supplies_a_call = false;
    for (const std::string& f : defined_functions(text)) supplies_a_call = supplies_a_call || called.count(f);
    CHECK(supplies_a_call);
  }
  // The embedded headers, in order, are the selection's.
  std::vector<std::string> embedded;
  static const std::regex header(R"(// ---- runtime/device/(\S+)\n)");
  for (auto it = std::sregex_iterator(parts.helpers.begin(), parts.helpers.end(), header); it != std::sregex_iterator(); ++it)
    embedded.push_back((*it)[1]);
  CHECK(embedded == used.headers);
}

Definition bf16_gemm(int64_t m, int64_t n, int64_t k) { return make_definition(m, n, k, DType::BF16, DType::BF16); }

Schedule with_tile(const Definition& def, int64_t tile_m, int64_t tile_n, int consumers, int64_t subtile_cols) {
  AutoParams p;
  p.tile_m = tile_m;
  p.tile_n = tile_n;
  p.consumers = consumers;
  p.stages = 4;
  p.subtile_cols = subtile_cols;
  p.store_buffers = subtile_cols == 0 || subtile_cols == tile_n ? 1 : 2;
  return auto_schedule(def, p);
}

using test::with_hilbert;

}  // namespace

TEST_CASE("an emitted kernel carries the wgmma wrappers it issues and the helpers it calls, nothing more") {
  check_helpers(tutorial_schedule(10, bf16_gemm(8192, 8192, 8192)), "v10 (tile 128x256)", "wgmma_m64n256k16_f32_bf16");
  check_helpers(tutorial_schedule(6, bf16_gemm(8192, 8192, 8192)), "v6 (tile 128x128, one role)", "wgmma_m64n128k16_f32_bf16");
  check_helpers(ping_pong_schedule(bf16_gemm(4096, 4096, 4096)), "pingpong", "wgmma_m64n128k16_f32_bf16");
  check_helpers(with_tile(bf16_gemm(4096, 4096, 4096), 128, 128, 2, 64), "auto tile 128x128", "wgmma_m64n128k16_f32_bf16");
  check_helpers(with_tile(bf16_gemm(4096, 16, 4096), 64, 16, 1, 0), "auto tile 64x16", "wgmma_m64n16k16_f32_bf16");
  check_helpers(with_tile(bf16_gemm(4096, 4096, 4096), 128, 112, 2, 0), "auto tile 128x112", "wgmma_m64n112k16_f32_bf16");
  check_helpers(tutorial_schedule(10, make_definition(4096, 4096, 4096, DType::F16, DType::F16)), "v10 f16", "wgmma_m64n256k16_f32_f16");
  {
    ProblemLayout mn;
    mn.a = Layout::MNMajor;
    mn.b = Layout::MNMajor;
    check_helpers(tutorial_schedule(10, make_definition(4096, 4096, 4096, DType::BF16, DType::BF16, {}, mn)),
                  "v10 with MN-major A and B (the transposed wrapper form)",
                  "wgmma_m64n256k16_f32_bf16");
  }
  {
    Schedule s = tutorial_schedule(8, bf16_gemm(256, 256, 512));
    s.split_k(3);
    check_helpers(s, "v8 split_k 3", "wgmma_m64n128k16_f32_bf16");
  }
  // K = 300: rows of 600 bytes, not 16-byte aligned, so `auto` falls back to element-wise
  // synchronous copies (global_copy.cuh) and N = 129 to stores from registers.
  check_helpers(tutorial_schedule(4, bf16_gemm(77, 129, 300)), "v4 fallback", "wgmma_m64n128k16_f32_bf16");
  check_helpers(tutorial_schedule(1, bf16_gemm(128, 128, 64)), "v1 (synchronous 16-byte copies)", "wgmma_m64n128k16_f32_bf16");
  // Epilogues: loads of C and bias, activations, f32 outputs staged with a scale only (no
  // epilogue.cuh helper) and C staged by TMA.
  check_helpers(tutorial_schedule(10, make_definition(4096, 4096, 4096, DType::BF16, DType::F32,
                                                      {{OpKind::Scale, 0.5}})),
                "v10 f32 out, scale only", "wgmma_m64n256k16_f32_bf16");
  check_helpers(tutorial_schedule(10, make_definition(4096, 4096, 4096, DType::BF16, DType::F32,
                                                      {{OpKind::AddScaled, 0.5}})),
                "v10 f32 out, + beta C staged", "wgmma_m64n256k16_f32_bf16");
  check_helpers(tutorial_schedule(8, make_definition(4096, 4096, 4096, DType::BF16, DType::BF16,
                                                     {{OpKind::Scale, 2.0}, {OpKind::AddBias, 0, BiasAlong::Rows},
                                                      {OpKind::Gelu}})),
                "v8 scale, row bias, gelu", "wgmma_m64n128k16_f32_bf16");
  // sm_100a: tcgen05 and TMEM helpers instead of wgmma's, one role and warp-specialized, a cluster
  check_helpers(tutorial_schedule(3, bf16_gemm(512, 512, 256), Target::Sm100a), "v3 sm_100a", "");
  check_helpers(tutorial_schedule(6, bf16_gemm(512, 512, 256), Target::Sm100a), "v6 sm_100a", "");
  check_helpers(tutorial_schedule(8, bf16_gemm(512, 512, 256), Target::Sm100a), "v8 sm_100a", "");
  check_helpers(tutorial_schedule(9, bf16_gemm(512, 512, 256), Target::Sm100a), "v9 sm_100a (cluster)", "");
  // The Hilbert tile order: hilbert_tile_m / hilbert_tile_n from tile_order.h.
  check_helpers(with_hilbert(10, bf16_gemm(4096, 4096, 4096)), "v10 hilbert", "wgmma_m64n256k16_f32_bf16");
  check_helpers(with_hilbert(6, bf16_gemm(1000, 700, 72)), "v6 hilbert", "wgmma_m64n128k16_f32_bf16");
  check_helpers(with_hilbert(9, bf16_gemm(512, 512, 256), Target::Sm100a), "v9 sm_100a hilbert", "");
}

TEST_CASE("the helper selection keeps the embedding order and always the prologue's headers") {
  const DeviceHelpers v1 = device_helpers_used(lower(tutorial_schedule(1, bf16_gemm(128, 128, 64))));
  const DeviceHelpers v10 = device_helpers_used(lower(tutorial_schedule(10, bf16_gemm(8192, 8192, 8192))));
  CHECK(v1.headers.front() == "gemm_args.h");
  CHECK(v10.headers.front() == "gemm_args.h");
  // v1 has no barriers, TMA, cluster or roles; v10 has them all.
  for (const char* h : {"mbarrier.cuh", "tma.cuh", "cluster.cuh", "setmaxnreg.cuh", "named_barrier.cuh"}) {
    CAPTURE(h);
    CHECK(std::find(v1.headers.begin(), v1.headers.end(), h) == v1.headers.end());
    CHECK(std::find(v10.headers.begin(), v10.headers.end(), h) != v10.headers.end());
  }
  CHECK(v10.wgmma_wrappers == std::vector<std::string>{"wgmma_m64n256k16_f32_bf16"});
  // tile_order.h only with the Hilbert order.
  const auto has = [](const DeviceHelpers& h, const char* name) {
    return std::find(h.headers.begin(), h.headers.end(), name) != h.headers.end();
  };
  CHECK_FALSE(has(v10, "tile_order.h"));
  CHECK(has(device_helpers_used(lower(with_hilbert(10, bf16_gemm(8192, 8192, 8192)))), "tile_order.h"));
}
