// gemmgen bench's shapes file and report, on the CPU (the timing itself needs a GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "dsl/error.h"
#include "schedules/bench_report.h"

using namespace gg;

namespace {

std::string rule_of(const std::string& text) {
  try {
    parse_shapes(text, "s.txt");
  } catch (const CompileError& e) {
    return e.rule() + ": " + e.message();
  }
  return "";
}

BenchRow row(int64_t m, double ours, double cublas, bool passed = true) {
  BenchRow r;
  r.shape = {m, 256, 256, "label <" + std::to_string(m) + ">"};
  r.schedule = "v10";
  r.kernel = "gg_gemm_x";
  r.ran = true;
  r.passed = passed;
  r.tflops = ours;
  r.cublas_tflops = cublas;
  return r;
}

}  // namespace

TEST_CASE("shapes files: sizes, labels, comments and blank lines") {
  const auto shapes = parse_shapes("# header\n\n4096 4096 4096 square\n  1 8 8   # decode\n77\t129\t72 ragged N\n", "s.txt");
  REQUIRE(shapes.size() == 3);
  CHECK(shapes[0].m == 4096);
  CHECK(shapes[0].label == "square");
  CHECK(shapes[1].n == 8);
  CHECK(shapes[1].label.empty());
  CHECK(shapes[2].k == 72);
  CHECK(shapes[2].label == "ragged N");
}

TEST_CASE("shapes-file: a bad line names the file, the line and the form") {
  CHECK(rule_of("1 2\n") == "shapes-file: s.txt:1: expected 3 sizes, found 2 in '1 2'; each line is 'M N K [label]' "
                             "with positive integers (# starts a comment)");
  CHECK(rule_of("# c\n8 0 8\n").find("s.txt:2: '0' is not a positive integer") != std::string::npos);
  CHECK(rule_of("8 -8 8\n").find("'-8' is not a positive integer") != std::string::npos);
  CHECK(rule_of("8 8 8x\n").find("'8x' is not a positive integer") != std::string::npos);
  CHECK(rule_of("99999999999999999999 8 8\n").find("is not a positive integer") != std::string::npos);
  CHECK(rule_of("# only comments\n") == "shapes-file: s.txt: no shapes (each line is 'M N K [label]')");
}

TEST_CASE("the shipped shapes file parses") {
  std::ifstream in(std::string(GEMMGEN_SOURCE_DIR) + "/benchmarks/shapes.txt");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(parse_shapes(text.str(), "benchmarks/shapes.txt").size() >= 12);
}

TEST_CASE("the report: geometric mean over the shapes that ran and passed; table, JSON and SVG") {
  std::vector<BenchRow> rows = {row(1, 400, 800), row(2, 900, 900), row(3, 100, 800, false)};
  rows[0].config = "tile 64x128x64";
  rows[0].sm_clock_mhz = 1755;
  rows[0].power_w = 612.4;
  BenchRow refused;
  refused.shape = {77, 129, 72, ""};
  refused.schedule = "auto";
  refused.refused = "no-schedule: none lowers";
  rows.push_back(refused);
  CHECK(geometric_mean_ratio(rows) == doctest::Approx(std::sqrt(0.5 * 1.0)));
  CHECK(geometric_mean_ratio({}) == 0);

  const std::string table = format_bench_table(rows, "H100", "bf16 -> bf16");
  CHECK(table.find("| 1x256x256 | label <1> | v10 | tile 64x128x64 | 400.0 | 800.0 | 0.500 | 1755 | 612 | pass |") != std::string::npos);
  CHECK(table.find("| 3x256x256 | label <3> | v10 |  | 100.0 | 800.0 | 0.125 | - | - | FAIL |") != std::string::npos);
  CHECK(table.find("| 77x129x72 |  | auto |  | - | - | - | - | - | refused: no-schedule: none lowers |") != std::string::npos);
  CHECK(table.find("geometric mean of the ratio over 2 of 4 shapes: 0.707") != std::string::npos);

  const std::string json = format_bench_json(rows, "H100 \"SXM\"", "bf16 -> bf16");
  CHECK(json.find("\"device\": \"H100 \\\"SXM\\\"\"") != std::string::npos);
  CHECK(json.find("\"geomean_ratio\": 0.7071") != std::string::npos);
  CHECK(json.find("\"ratio\": 0.5000, \"sm_clock_mhz\": 1755, \"power_w\": 612.4}") != std::string::npos);
  CHECK(json.find("{\"m\": 77, \"n\": 129, \"k\": 72, \"label\": \"\", \"schedule\": \"auto\", \"kernel\": \"\", "
                  "\"config\": \"\", \"ran\": false, \"refused\": \"no-schedule: none lowers\"") != std::string::npos);

  const std::string svg = format_bench_svg(rows, "H100", "bf16 -> bf16");
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  size_t bars = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++bars;
  CHECK(bars == rows.size());
  CHECK(svg.find("label <") == std::string::npos);  // text is escaped (labels are not drawn raw)
  CHECK(svg.find("geometric mean 0.707") != std::string::npos);
}
