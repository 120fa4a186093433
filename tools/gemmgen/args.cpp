#include "tools/gemmgen/args.h"

#include <algorithm>
#include <charconv>

#include "dsl/error.h"

namespace gg::cli {

int FlagSpec::values() const {
  if (metavar.empty()) return 0;
  return 1 + static_cast<int>(std::count(metavar.begin(), metavar.end(), ' '));
}

void usage_error(const std::string& message) { throw_user_error("usage", message); }

std::string flag_names(const std::vector<FlagSpec>& specs) {
  std::string s;
  for (const auto& f : specs) s += (s.empty() ? "" : ", ") + ("--" + f.name);
  return s + (s.empty() ? "" : ", ") + "--help";
}

std::string flags_help(const std::vector<FlagSpec>& specs) {
  size_t width = 0;
  auto left_of = [](const FlagSpec& f) {
    return (f.alias.empty() ? "" : f.alias + ", ") + "--" + f.name + (f.metavar.empty() ? "" : " " + f.metavar);
  };
  for (const auto& f : specs) width = std::max(width, left_of(f).size());
  std::string out;
  for (const auto& f : specs) {
    std::string left = left_of(f);
    out += "  " + left + std::string(width + 2 - left.size(), ' ') + f.help + "\n";
  }
  return out;
}

std::optional<std::string> Args::value(const std::string& flag) const {
  auto it = flags.find(flag);
  if (it == flags.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

const std::vector<std::string>& Args::values(const std::string& flag) const {
  static const std::vector<std::string> none;
  auto it = flags.find(flag);
  return it == flags.end() ? none : it->second;
}

std::optional<int64_t> Args::at_least(const std::string& flag, int64_t least) const {
  auto v = value(flag);
  if (!v) return std::nullopt;
  int64_t x = 0;
  auto res = std::from_chars(v->data(), v->data() + v->size(), x);
  if (res.ec == std::errc::result_out_of_range)
    usage_error("--" + flag + " " + *v + " is out of range (larger than a 64-bit integer)");
  if (res.ec != std::errc() || res.ptr != v->data() + v->size() || x < least)
    usage_error("--" + flag + " expects a " + (least == 0 ? "non-negative" : "positive") + " integer, got '" + *v + "'");
  return x;
}

std::optional<int64_t> Args::positive(const std::string& flag) const { return at_least(flag, 1); }

std::vector<std::string> split_list(const std::string& text, const std::string& separators, bool skip_empty) {
  std::vector<std::string> words;
  size_t at = 0;
  while (true) {
    const size_t end = text.find_first_of(separators, at);
    std::string word = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!skip_empty || !word.empty()) words.push_back(std::move(word));
    if (end == std::string::npos) return words;
    at = end + 1;
  }
}

std::vector<int64_t> Args::positive_list(const std::string& flag, size_t most) const {
  std::vector<int64_t> out;
  const auto v = value(flag);
  if (!v) return out;
  for (const std::string& word : split_list(*v, ",", false)) {
    int64_t x = 0;
    auto res = std::from_chars(word.data(), word.data() + word.size(), x);
    if (res.ec != std::errc() || res.ptr != word.data() + word.size() || x < 1)
      usage_error("--" + flag + " expects positive integers separated by commas, got '" + word + "' in '" + *v + "'");
    out.push_back(x);
    if (out.size() > most) usage_error("--" + flag + " lists more than " + std::to_string(most) + " values");
  }
  return out;
}

std::optional<int64_t> Args::at_most(const std::string& flag, int64_t most) const {
  auto x = positive(flag);
  if (x && *x > most)
    usage_error("--" + flag + " " + std::to_string(*x) + " is out of range; legal is 1.." + std::to_string(most));
  return x;
}

Args parse_args(const std::string& command, const std::vector<std::string>& words, const std::vector<FlagSpec>& specs) {
  // A value that is itself a flag (`-o -o`, `--output --help`) is a forgotten value, not a file
  // named "-o"; `-` (standard input or output) and negative numbers stay values.
  const auto alias_of = [&](const std::string& w) {
    return std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& f) { return !f.alias.empty() && f.alias == w; });
  };
  const auto is_flag = [&](const std::string& w) { return w.rfind("--", 0) == 0 || w == "-h" || alias_of(w) != specs.end(); };
  Args args;
  args.command = command;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (w == "--help" || w == "-h") {
      args.help = true;
      continue;
    }
    if (auto alias = alias_of(w); alias != specs.end()) w = "--" + alias->name;
    if (w.rfind("--", 0) != 0)
      usage_error("'" + w + "' is not a flag of 'gemmgen " + command + "'; legal flags: " + flag_names(specs));
    std::string name = w.substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& f) { return f.name == name; });
    if (spec == specs.end())
      usage_error("unknown flag '--" + name + "' for 'gemmgen " + command + "'; legal flags: " + flag_names(specs));
    if (args.has(name)) usage_error("--" + name + " is given twice");
    std::vector<std::string> values;
    int want = spec->values();
    if (inline_value) {
      if (want != 1) usage_error("--" + name + " takes " + (want == 0 ? "no value" : spec->metavar) + ", not '=" + *inline_value + "'");
      values.push_back(*inline_value);
    } else {
      for (int v = 0; v < want; ++v) {
        if (i + 1 >= words.size()) usage_error("--" + name + " expects " + spec->metavar);
        if (is_flag(words[i + 1]))
          usage_error("--" + name + " expects " + spec->metavar + ", not the flag '" + words[i + 1] + "'");
        values.push_back(words[++i]);
      }
    }
    args.flags[name] = std::move(values);
  }
  return args;
}

}  // namespace gg::cli
