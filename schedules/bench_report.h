#pragma once
// `gemmgen bench`'s data: the shapes file it reads and the report it writes (a table with the
// geometric mean, JSON for machines, an SVG chart of the ratio to cuBLAS per shape). Timing is
// check_on_gpu's; this file only parses and formats, so the CPU tests cover it.
#include <cstdint>
#include <string>
#include <vector>

namespace gg {

struct BenchShape {
  int64_t m = 0, n = 0, k = 0;
  std::string label;  // the rest of the line, e.g. "llama-70b up-projection"
};

// One shape per line, "M N K [label]"; `#` starts a comment; blank lines are skipped. Throws
// CompileError `shapes-file` naming the file, the line and what was expected.
std::vector<BenchShape> parse_shapes(const std::string& text, const std::string& file);

struct BenchRow {
  BenchShape shape;
  std::string schedule;         // the built-in schedule that ran (or was refused)
  std::string kernel;           // its kernel name
  std::string config;           // for `auto`: the heuristic's choice (AutoParams::to_string)
  bool ran = false;             // false: refused before running (see `refused`)
  std::string refused;          // "rule: message"
  bool passed = false;          // the result checked against cuBLAS and fp64 before timing
  double tflops = 0, cublas_tflops = 0;
  unsigned sm_clock_mhz = 0;    // under a burst of our kernel after timing (0: NVML unavailable)
  double power_w = 0;
  double ratio() const { return cublas_tflops > 0 ? tflops / cublas_tflops : 0; }
};

// Geometric mean of the ratio over the rows that ran and passed; 0 when none did.
double geometric_mean_ratio(const std::vector<BenchRow>& rows);

std::string format_bench_table(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype);
std::string format_bench_json(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype);
// Bars of the ratio per shape, a line at 1.0 (parity), the geometric mean in the title.
std::string format_bench_svg(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype);

}  // namespace gg
