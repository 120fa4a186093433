// cuBLAS, cuBLASLt and NVRTC are opened at their first use. Opening resolves every function gemmgen calls
// or throws, so a misspelled symbol shows here, without a GPU, not first on a GPU machine.
#include "runtime/cuda_libraries.h"

#include <doctest/doctest.h>

#include <string>

namespace gg::rt {

TEST_CASE("cuBLAS opens at first use with every function gemmgen calls") {
  REQUIRE_NOTHROW(cublas_api());
  CHECK(std::string(cublas_api().status_string(CUBLAS_STATUS_NOT_INITIALIZED)) !=
        cublas_api().status_string(CUBLAS_STATUS_SUCCESS));
}

TEST_CASE("cuBLASLt opens at first use with every function gemmgen calls") {
  REQUIRE_NOTHROW(cublaslt_api());
  CHECK(cublaslt_api().version() / 10000 == CUBLAS_VER_MAJOR);
  CHECK(std::string(cublaslt_api().status_name(CUBLAS_STATUS_NOT_SUPPORTED)) == "CUBLAS_STATUS_NOT_SUPPORTED");
}

TEST_CASE("NVRTC opens at first use with every function gemmgen calls") {
  REQUIRE_NOTHROW(nvrtc_api());
  int major = 0, minor = 0;
  CHECK(nvrtc_api().version(&major, &minor) == NVRTC_SUCCESS);
  CHECK(major == CUDART_VERSION / 1000);
  CHECK(std::string(nvrtc_api().error_string(NVRTC_ERROR_INVALID_INPUT)) == "NVRTC_ERROR_INVALID_INPUT");
}

}  // namespace gg::rt
