#pragma once
// The gemmgen subcommands. Adding one is a function with this signature plus one row in
// commands() (commands.cpp): its name, summary and flags.
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/gemmgen/args.h"

namespace gg::cli {

// The most runs a counting flag takes. Timed runs (run, bench and tune --reps): a median settles
// long before 10,000. Repeated launches (run --repeat) each download and compare the whole
// output. Each jit rep is a whole NVRTC compile, seconds apiece.
constexpr int64_t kMaxTimedReps = 10000;
constexpr int64_t kMaxRepeats = 1000;
constexpr size_t kMaxSizesPerRun = 64;  // --at-m: sizes one kernel is launched at
constexpr int64_t kMaxJitReps = 100;

struct Io {
  std::ostream& out;
  std::ostream& err;
};

struct Command {
  std::string name;
  std::string summary;
  std::vector<FlagSpec> flags;
  int (*run)(const Args& args, Io io);  // the exit code; CompileError propagates to main
};

const std::vector<Command>& commands();

// "usage: gemmgen COMMAND [flags]" with the command list, or one command's flags.
std::string usage();
std::string command_usage(const Command& c);

// Runs `gemmgen argv...`: dispatch, --help, and the error channels (exit 0 ok, 1 check
// failed (gemmgen run), 2 usage or compile error, 3 internal error).
int run_cli(const std::vector<std::string>& argv, Io io);

}  // namespace gg::cli
