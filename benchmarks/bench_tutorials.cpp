// Tutorial kernels against cuBLAS in one process: random data, warm-up, the median of many
// runs with cuBLAS interleaved rep by rep. Prints a markdown table for docs/performance.md.
//   bench_tutorials [--versions 1-5 | --schedules v6,v10,pingpong] [--sizes 4096,8192] [--dtype bf16] [--reps 50]
//                   [--epilogues none,gelu,dgelu,bias+save+gelu]
// With an epilogue the baseline is cuBLAS followed by the epilogue as a kernel of its own.
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/gemm_check.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/device_info.h"
#include "schedules/tutorial.h"

namespace {

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

// An epilogue by its schedule-file names joined with '+' ("bias+save+gelu"; "none": the plain
// product): relu, gelu, silu, drelu, dgelu, dsilu, bias (along N), save and the reductions rowsum,
// rowsumsq, colsum, colsumsq.
std::vector<gg::EpilogueSpec> epilogue_named(const std::string& names) {
  using gg::OpKind;
  std::vector<gg::EpilogueSpec> specs;
  if (names == "none") return specs;
  std::stringstream in(names);
  for (std::string name; std::getline(in, name, '+');) {
    gg::EpilogueSpec e;
    if (name == "save") {
      e.save = true;
    } else if (name == "rowsum" || name == "rowsumsq" || name == "colsum" || name == "colsumsq") {
      e = gg::EpilogueSpec::reduction(name.substr(0, 3) == "row" ? gg::ReduceAlong::Rows : gg::ReduceAlong::Cols,
                                      name.size() > 6 ? gg::ReduceOp::SumSquares : gg::ReduceOp::Sum);
    } else if (name == "bias") {
      e.kind = OpKind::AddBias;
    } else {
      bool known = false;
      for (OpKind act : {OpKind::Relu, OpKind::Gelu, OpKind::Silu}) {
        if (name == gg::op_name(act)) e.kind = act, known = true;
        if (name == "d" + std::string(gg::op_name(act))) e.kind = OpKind::ActGrad, e.activation = act, known = true;
      }
      if (!known)
        throw std::invalid_argument("unknown epilogue '" + name +
                                    "' (none, or relu, gelu, silu, drelu, dgelu, dsilu, bias, save, rowsum, rowsumsq, colsum, "
                                    "colsumsq joined by +)");
    }
    specs.push_back(e);
  }
  return specs;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 1, last = 5, reps = 50;
  std::vector<std::string> names;  // --schedules: built-in schedule names instead of the --versions range
  std::vector<int64_t> sizes = {4096, 8192};
  gg::DType dtype = gg::DType::BF16;
  std::vector<std::string> epilogues = {"none"};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--versions") {
      auto dash = value.find('-');
      first = std::stoi(value.substr(0, dash));
      last = dash == std::string::npos ? first : std::stoi(value.substr(dash + 1));
    } else if (flag == "--schedules") {
      std::stringstream in(value);
      for (std::string item; std::getline(in, item, ',');) names.push_back(item);
    } else if (flag == "--sizes") {
      sizes = parse_list(value);
    } else if (flag == "--dtype") {
      dtype = gg::parse_dtype(value);
    } else if (flag == "--epilogues") {
      epilogues.clear();
      std::stringstream in(value);
      for (std::string item; std::getline(in, item, ',');) epilogues.push_back(item);
    } else if (flag == "--reps") {
      reps = std::stoi(value);
    } else {
      std::cerr << "bench_tutorials: unknown flag " << flag
                << " (--versions A-B, --schedules NAME,NAME, --sizes S,S, --dtype, --reps, --epilogues E,E)\n";
      return 2;
    }
  }
  if (!gg::rt::gpu_available()) {
    std::cerr << "bench_tutorials: no GPU\n";
    return 77;
  }
  std::cout << "device: " << gg::rt::device_info().name << "\n\n"
            << "| step | M=N=K | dtype | epilogue | TFLOP/s | cuBLAS TFLOP/s | ratio | err vs fp64 | CTAs / resident | check |\n"
            << "|---|---|---|---|---|---|---|---|---|---|\n";
  if (names.empty())
    for (int v = first; v <= last; ++v) names.push_back("v" + std::to_string(v));
  int failures = 0;
  for (int64_t size : sizes)
    for (const std::string& name : names)
      for (const std::string& epilogue : epilogues) {
        std::cout << "| " << name << " | " << size << " | " << gg::dtype_name(dtype) << " | " << epilogue << " | ";
        try {
          gg::Definition def = gg::make_definition(size, size, size, dtype, dtype, epilogue_named(epilogue), {}, false);
          gg::CheckOptions options;
          options.bench = true;
          options.reps = reps;
          gg::CheckReport r = gg::check_on_gpu(gg::builtin_schedule(name, def), options);
          std::cout.precision(4);
          std::cout << r.tflops << " | " << r.cublas_tflops << " | " << r.tflops / r.cublas_tflops << " | "
                    << r.error_vs_host << " | " << r.grid_ctas << " / " << r.resident_ctas << " | "
                    << (r.passed ? "pass" : "FAIL") << " |\n";
          failures += !r.passed;
        } catch (const gg::CompileError& e) {
          std::cout << "- | - | - | - | - | " << e.rule() << " |\n";
        }
      }
  return failures ? 1 : 0;
}
