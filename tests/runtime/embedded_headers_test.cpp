#include "runtime/embedded_headers.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(GEMMGEN_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("every device header is embedded with its exact text") {
  const auto names = gg::rt::device_header_names();
  for (const char* expected : {"gemm_args.h", "mbarrier.cuh", "tma.cuh", "wgmma.cuh", "wgmma_mma.cuh",
                               "host_entry.cuh", "cluster.cuh", "stmatrix.cuh", "setmaxnreg.cuh", "smem_desc.h"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (std::string_view name : names) {
    CAPTURE(name);
    CHECK(gg::rt::device_header_source(name) == read_source_file("runtime/device/" + std::string(name)));
  }
}

TEST_CASE("asking for a header that is not embedded throws") {
  CHECK_THROWS_AS(gg::rt::device_header_source("no_such_header.cuh"), std::out_of_range);
}

TEST_CASE("a header's sections: the named ones kept in the header's order, the rest of the text whole") {
  // wgmma_mma.cuh: one section per wrapper, every N of the sm_90a table (8..256 step 8) for bf16
  // and f16 (k16) and e4m3 and e5m2 (k32), and nothing else in the file but the preamble and the
  // closing lines.
  const std::string full(gg::rt::device_header_source("wgmma_mma.cuh"));
  const std::string none = gg::rt::device_header_with_sections("wgmma_mma.cuh", {});
  CHECK(none.find("wgmma.mma_async") == std::string::npos);
  CHECK(none.find("namespace gg::dev {") != std::string::npos);
  CHECK(none.find("#endif  // GG_DEV_WGMMA_MMA_CUH") != std::string::npos);
  std::vector<std::string> all;
  for (int n = 8; n <= 256; n += 8)
    for (const char* type : {"bf16", "f16", "e4m3", "e5m2"})
      all.push_back("wgmma_m64n" + std::to_string(n) + (type[0] == 'e' ? "k32_f32_" : "k16_f32_") + type);
  CHECK(gg::rt::device_header_with_sections("wgmma_mma.cuh", all) == full);

  const std::string two =
      gg::rt::device_header_with_sections("wgmma_mma.cuh", {"wgmma_m64n256k16_f32_f16", "wgmma_m64n16k16_f32_bf16"});
  const size_t n16 = two.find("void wgmma_m64n16k16_f32_bf16("), n256 = two.find("void wgmma_m64n256k16_f32_f16(");
  CHECK(n16 != std::string::npos);
  CHECK(n256 != std::string::npos);
  CHECK(n16 < n256);  // the header's order, not the request's
  size_t wrappers = 0;
  for (size_t at = two.find("wgmma.mma_async"); at != std::string::npos; at = two.find("wgmma.mma_async", at + 1))
    ++wrappers;
  CHECK(wrappers == 2);
  CHECK(two.size() < full.size() / 10);

  // A header without sections is its whole text; an unknown section is refused.
  CHECK(gg::rt::device_header_with_sections("tma.cuh", {}) == gg::rt::device_header_source("tma.cuh"));
  CHECK_THROWS_AS(gg::rt::device_header_with_sections("wgmma_mma.cuh", {"wgmma_m64n12k16_f32_bf16"}),
                  std::out_of_range);
  CHECK_THROWS_AS(gg::rt::device_header_with_sections("tma.cuh", {"tma_load_2d"}), std::out_of_range);
}
