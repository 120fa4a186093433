#pragma once
// Shared by the error tests: run `f`, expect a CompileError with rule `rule` whose message
// contains `fragment`.
#include <doctest/doctest.h>

#include <string>

#include "dsl/error.h"

namespace gg::testing {

template <class F>
void check_error(F&& f, const std::string& rule, const std::string& fragment) {
  try {
    f();
    FAIL("expected CompileError [" << rule << "]");
  } catch (const CompileError& e) {
    CHECK(e.rule() == rule);
    CHECK_MESSAGE(e.message().find(fragment) != std::string::npos, "message: " << e.message());
  }
}

}  // namespace gg::testing
