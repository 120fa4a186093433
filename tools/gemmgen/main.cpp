// gemmgen: the command-line driver. The commands live in commands.cpp (one function and one
// table row each); argument parsing in args.cpp; schedule loading in load.cpp.
#include <iostream>
#include <string>
#include <vector>

#include "tools/gemmgen/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return gg::cli::run_cli(args, {std::cout, std::cerr});
}
