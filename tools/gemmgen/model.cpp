// `gemmgen model`: the cost model's prediction for configs a file lists, with the rates a file
// gives, so a fit (scripts/fit_model.py) can try other rates against `tune`'s measurements
// without a GPU. Each config is planned as `tune` planned it: the problem's operands staged as
// plan_gemm stages them, in the orientation the line names.
#include "tools/gemmgen/model.h"

#include <ostream>
#include <sstream>

#include "dsl/dtype.h"
#include "dsl/error.h"
#include "schedules/auto_schedule.h"
#include "schedules/gemm.h"
#include "schedules/tuning.h"
#include "tools/gemmgen/load.h"

namespace gg::cli {

int cmd_model(const Args& args, Io io) {
  const ModelRates rates =
      args.value("rates") ? parse_model_rates(read_text_file(*args.value("rates"), "rates file")) : ModelRates{};
  if (args.has("print-rates")) {
    io.out << print_model_rates(rates);
    return 0;
  }
  const auto file = args.value("configs");
  if (!file) usage_error("model needs --configs FILE (lines 'M N K DTYPE OUT SWAPPED PARAMS', or --print-rates)");
  std::istringstream lines(read_text_file(*file, "configs file"));
  const DeviceLimits limits = limits_for(Target::Sm90a);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    int64_t m = 0, n = 0, k = 0;
    std::string in, out, swapped;
    if (!(words >> m)) continue;  // blank
    const auto bad = [&](const std::string& why) {
      throw_user_error("configs-file", *file + ":" + std::to_string(number) + ": " + why +
                                           "; each line is 'M N K DTYPE OUT SWAPPED PARAMS' (PARAMS as `tune --json` "
                                           "writes a candidate's \"params\")");
    };
    if (!(words >> n >> k >> in >> out >> swapped) || m < 1 || n < 1 || k < 1 || (swapped != "0" && swapped != "1"))
      bad("not a config line");
    std::string record;
    std::getline(words, record);
    const std::optional<AutoParams> params = parse_params_record(record);
    if (!params) bad("'" + record + "' is not a config's params");
    GemmOptions o;
    o.in = parse_dtype(in);
    o.out = parse_dtype(out);
    o.layout = planned_layout(m, n, k, o);
    AutoParams p = *params;
    predict_auto_params(gemm_definition(m, n, k, o, swapped == "1"), limits, p, rates);
    io.out << p.predicted_us << "\n";
  }
  return 0;
}

}  // namespace gg::cli
