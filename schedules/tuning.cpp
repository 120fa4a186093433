#include "schedules/tuning.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "codegen/lower.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/kernel_cache.h"

namespace gg {

std::string TuneCandidate::describe() const { return (swapped() ? "swap A/B; " : "") + params.to_string(); }

namespace {

// Whether `p`'s schedule lowers for `def` (as choose_auto_params takes only configs that do).
bool lowers(const Definition& def, const AutoParams& p, const DeviceLimits& limits) {
  try {
    LowerOptions lower_options;
    lower_options.limits = limits;
    lower(auto_schedule(def, p, limits.target), lower_options);
    return true;
  } catch (const CompileError&) {
    return false;
  }
}

}  // namespace

std::vector<TuneCandidate> tune_candidates(int64_t m, int64_t n, int64_t k, const GemmOptions& options, int top,
                                           const DeviceLimits& limits) {
  GemmOptions o = options;
  o.layout = planned_layout(m, n, k, options);  // as plan_gemm plans
  std::vector<TuneCandidate> out;
  for (bool swap : {false, true}) {
    const Definition def = gemm_definition(m, n, k, o, swap);
    int taken = 0;
    for (const AutoParams& p : rank_auto_params(def, limits)) {
      if (taken == top) break;
      if (!lowers(def, p, limits)) continue;
      out.push_back({def, p});
      ++taken;
    }
  }
  // None lowers in either orientation: choose_auto_params refuses with the straight problem's last
  // refusal, the reason `emit --schedule auto`'s plan gives.
  if (out.empty()) choose_auto_params(gemm_definition(m, n, k, o), limits);
  GG_INTERNAL_CHECK(!out.empty(), "choose_auto_params found a config that tune_candidates did not");
  // plan_gemm's choice first (prefer_swapped), then by predicted time
  const auto first_of = [&](bool swap) {
    return std::find_if(out.begin(), out.end(), [&](const TuneCandidate& c) { return c.swapped() == swap; });
  };
  const auto params_of = [&](std::vector<TuneCandidate>::iterator it) {
    return it == out.end() ? std::nullopt : std::optional<AutoParams>(it->params);
  };
  auto straight = first_of(false), swap = first_of(true);
  auto chosen = prefer_swapped(params_of(straight), params_of(swap)) ? swap : straight;
  if (chosen != out.end()) std::rotate(out.begin(), chosen, chosen + 1);
  std::stable_sort(out.begin() + 1, out.end(), [](const TuneCandidate& a, const TuneCandidate& b) {
    return a.params.predicted_us < b.params.predicted_us;
  });
  // Stream-K is measured here before the model offers it: each candidate that splits the last wave
  // also dealt stream-K, with the same count as the most CTAs a tile.
  const size_t ranked = out.size();
  for (size_t i = 0; i < ranked; ++i) {
    TuneCandidate c = out[i];
    if (!c.params.split_tail || c.params.split_stream || c.params.cluster > 1) continue;
    c.params.split_stream = true;
    predict_auto_params(c.def, limits, c.params);
    if (lowers(c.def, c.params, limits)) out.push_back(c);
  }
  // The model counts an order's operand bytes but cannot time them: the first candidate in the
  // other tile orders too.
  const TuneCandidate first = out.front();
  for (Raster raster : {Raster::RowMajor, Raster::ColumnMajor, Raster::Hilbert})
    for (int64_t group : {4, 8, 16}) {
      if (raster == Raster::Hilbert && (group != 8 || !hilbert_fits(first.def, first.params))) continue;
      TuneCandidate c = first;
      c.params.raster = raster;
      c.params.group = group;
      if (c.params.hash() != first.params.hash()) out.push_back(c);
    }
  return out;
}

std::string tuning_key(int64_t m, int64_t n, int64_t k, const GemmOptions& options, const std::string& arch,
                       const std::string& device) {
  std::ostringstream os;
  os << m << ' ' << n << ' ' << k << ' ' << dtype_name(options.in) << ' ' << dtype_name(options.out) << ' '
     << options.alpha;
  const std::string layout = problem_layout_text(planned_layout(m, n, k, options));
  if (!layout.empty()) os << " [" << layout << "]";
  os << " | " << arch << " | " << device;
  return os.str();
}

std::optional<std::filesystem::path> tuning_file() {
  const auto dir = rt::kernel_cache_dir();
  if (!dir) return std::nullopt;
  return *dir / "tuned.tsv";
}

std::string params_record(const AutoParams& p) {
  std::ostringstream os;
  os << p.tile_m << ' ' << p.tile_n << ' ' << p.tile_k << ' ' << p.consumers << ' ' << p.stages << ' ' << p.cluster
     << ' ' << p.group << ' ' << p.subtile_cols << ' ' << p.store_buffers << ' ' << p.ping_pong << ' ' << p.multicast_a
     << ' ' << p.split_k << ' ' << raster_name(p.raster) << (p.split_stream ? " stream" : p.split_tail ? " tail" : "");
  return os.str();
}

std::string format_tuned_line(const std::string& key, const TunedChoice& c) {
  std::ostringstream os;
  os << key << '\t' << (c.swapped ? 1 : 0) << '\t' << params_record(c.params) << '\t' << c.ms << '\t' << c.cublas_ms;
  return os.str();
}

std::optional<AutoParams> parse_params_record(const std::string& record) {
  AutoParams p;
  std::istringstream params(record);
  if (!(params >> p.tile_m >> p.tile_n >> p.tile_k >> p.consumers >> p.stages >> p.cluster >> p.group >>
        p.subtile_cols >> p.store_buffers))
    return std::nullopt;
  // Records written before ping-pong, A multicast, split-K and the order were choices end here.
  std::vector<std::string> more;
  for (std::string word; params >> word;) more.push_back(word);
  if (!more.empty()) {
    const auto flag = [](const std::string& w) { return w == "0" || w == "1"; };
    const std::optional<Raster> raster = more.size() == 4 || more.size() == 5 ? raster_of_name(more[3]) : std::nullopt;
    if (!raster || !flag(more[0]) || !flag(more[1])) return std::nullopt;
    if (more.size() == 5 && more[4] != "tail" && more[4] != "stream") return std::nullopt;
    p.split_tail = more.size() == 5;
    p.split_stream = more.size() == 5 && more[4] == "stream";
    p.ping_pong = more[0] == "1";
    p.multicast_a = more[1] == "1";
    try {
      p.split_k = std::stoi(more[2]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (p.split_k < 1 || p.split_k > kMaxSplitK) return std::nullopt;
    p.raster = *raster;
  }
  return p;
}

std::optional<std::pair<std::string, TunedChoice>> parse_tuned_line(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  if (fields.size() != 5 || (fields[1] != "0" && fields[1] != "1")) return std::nullopt;
  TunedChoice c;
  c.swapped = fields[1] == "1";
  const std::optional<AutoParams> params = parse_params_record(fields[2]);
  if (!params) return std::nullopt;
  c.params = *params;
  try {
    c.ms = std::stod(fields[3]);
    c.cublas_ms = std::stod(fields[4]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return std::pair<std::string, TunedChoice>(fields[0], c);
}

std::optional<TunedChoice> lookup_tuned(const std::string& key) {
  const auto file = tuning_file();
  if (!file) return std::nullopt;
  std::ifstream in(*file);
  std::optional<TunedChoice> found;
  for (std::string line; std::getline(in, line);) {
    auto parsed = parse_tuned_line(line);
    if (parsed && parsed->first == key) found = parsed->second;  // the last record wins
  }
  return found;
}

void record_tuned(const std::string& key, const TunedChoice& choice) {
  const auto file = tuning_file();
  if (!file) throw_user_error("cannot-write", "no cache directory for the tuning record (set GEMMGEN_CACHE_DIR)");
  std::error_code ec;
  std::filesystem::create_directories(file->parent_path(), ec);
  std::ofstream out(*file, std::ios::app);
  out << format_tuned_line(key, choice) << '\n';
  if (!out) throw_user_error("cannot-write", "cannot append to the tuning record '" + file->string() + "'");
}

}  // namespace gg
