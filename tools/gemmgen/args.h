#pragma once
// Command-line parsing for gemmgen: each command declares its flags; anything else is a
// usage error (CompileError `usage`) naming the bad flag and listing the legal ones.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gg::cli {

struct FlagSpec {
  std::string name;        // "schedule" for --schedule
  std::string metavar;     // "NAME"; empty for a switch; "A B" for a flag taking two values
  std::string help;
  std::string alias = {};  // a short spelling, "-o"; empty for none
  int values() const;      // words after the flag: 0 for a switch, else the metavar's word count
};

struct Args {
  std::string command;
  std::map<std::string, std::vector<std::string>> flags;  // given flags and their values
  bool help = false;

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::optional<std::string> value(const std::string& flag) const;  // the first value
  const std::vector<std::string>& values(const std::string& flag) const;
  // The flag's value as a positive integer; usage error otherwise. nullopt when absent.
  std::optional<int64_t> positive(const std::string& flag) const;
  // The same with a lower bound of `least` (0: a non-negative integer).
  std::optional<int64_t> at_least(const std::string& flag, int64_t least) const;
  // A positive integer of at most `most`: a count of runs past that is refused, not clamped or
  // run for ever.
  std::optional<int64_t> at_most(const std::string& flag, int64_t most) const;
  // "1,7,64": positive integers separated by commas, at most `most` of them; empty when absent.
  std::vector<int64_t> positive_list(const std::string& flag, size_t most) const;
};

// Parses the words after the command name. `--flag value` and `--flag=value` both work;
// `--help`/`-h` sets help; a flag's alias ("-o FILE") is the same as its long form. A flag
// given twice is a usage error.
Args parse_args(const std::string& command, const std::vector<std::string>& words, const std::vector<FlagSpec>& specs);

// "  --schedule NAME      a built-in schedule (gemmgen list)\n..."
std::string flags_help(const std::vector<FlagSpec>& specs);
// "--schedule, --schedule-file, ..." for error messages.
std::string flag_names(const std::vector<FlagSpec>& specs);

[[noreturn]] void usage_error(const std::string& message);

// The words of `text` between any of `separators` ("1,,2" on "," gives "1", "", "2"); with
// `skip_empty` the empty ones are dropped (a file's counts between spaces and newlines).
std::vector<std::string> split_list(const std::string& text, const std::string& separators, bool skip_empty);

}  // namespace gg::cli
