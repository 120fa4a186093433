#pragma once
// A tutorial step's schedule with its persist line turned to the Hilbert order, for the tests of
// that order (tile_order_test, device_helpers_test).
#include <doctest/doctest.h>

#include <string>

#include "dsl/schedule_text.h"
#include "schedules/tutorial.h"

namespace gg::test {

inline Schedule with_hilbert(int v, const Definition& def, Target target = Target::Sm90a) {
  std::string text = print_schedule(tutorial_schedule(v, def, target));
  const std::string row = "persist m_o n_o tile row 8";
  const size_t at = text.find(row);
  REQUIRE(at != std::string::npos);
  text.replace(at, row.size(), "persist m_o n_o tile hilbert");
  ScheduleFile file = parse_schedule_file(text);
  return apply_directives(def, file.directives, file.directive_lines);
}

}  // namespace gg::test
