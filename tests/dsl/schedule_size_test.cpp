// Schedules at the size limit: parsing, building the definition and applying the directives
// take linear time (a scan per name lookup and per earlier directive made 2,000 epilogue ops
// take 30 s and 100,000 directives 65 s), and past the limit the file is refused.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "dsl/schedule_text.h"
#include "error_check.h"
#include "schedules/tutorial.h"

using namespace gg;

namespace {

// v5's directives, after `epilogue relu` x ops with each op inlined, then `extra` repeats of
// its circular_buffer line (each replaces the last).
std::string big_schedule(size_t ops, size_t extra) {
  std::string text;
  for (size_t i = 0; i < ops; ++i) text += "epilogue relu\n";
  text += print_directives(tutorial_schedule(5, make_gemm(1024, 1024, 1024, DType::BF16, DType::BF16)).directives());
  for (size_t i = 0; i < ops; ++i) text += "inline relu" + (i ? std::to_string(i) : std::string()) + "\n";
  for (size_t i = 0; i < extra; ++i) text += "circular_buffer k_o 2 1\n";
  return text;
}

double seconds_to_apply(const std::string& text) {
  const auto start = std::chrono::steady_clock::now();
  ScheduleFile file = parse_schedule_file(text);
  Definition def = make_definition(1024, 1024, 1024, DType::BF16, DType::BF16, file.epilogue);
  Schedule s = apply_directives(def, file.directives, file.directive_lines);
  CHECK(s.definition().epilogue().size() == file.epilogue.size() + 1);  // and the cast
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a schedule file at the limits builds in linear time") {
  const size_t directives_left = kMaxDirectives - kMaxEpilogueOps - 20;
  // Tens of milliseconds here; quadratic code took minutes. The bound leaves room for a loaded machine.
  CHECK(seconds_to_apply(big_schedule(kMaxEpilogueOps, directives_left)) < 10.0);
}

TEST_CASE("a definition of many ops names them in linear time") {
  const auto start = std::chrono::steady_clock::now();
  Definition def;
  Tensor a = def.input("A", {64, 64}, DType::BF16), b = def.input("B", {64, 64}, DType::BF16);
  Tensor x = def.matmul(a, b);
  for (int i = 0; i < 20000; ++i) x = def.relu(x);
  def.set_output(def.cast(x, DType::BF16));
  CHECK(def.node(x.id()).name == "relu19999");
  CHECK(def.epilogue().size() == 20001);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 10.0);
}

TEST_CASE("too-many-directives") {
  testing::check_error([] { parse_schedule_file(big_schedule(kMaxEpilogueOps + 1, 0)); }, "too-many-directives",
                       "line 1001: more than 1000 epilogue ops in one schedule file; legal is at most 1000");
  testing::check_error([] { parse_schedule_file(big_schedule(0, kMaxDirectives)); }, "too-many-directives",
                       "more than 10000 directives in one schedule file; legal is at most 10000");
}
