#include "runtime/embedded_headers.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

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
