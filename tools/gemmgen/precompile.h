#pragma once
// `gemmgen precompile` (its flags are in commands.cpp's table).
#include "tools/gemmgen/commands.h"

namespace gg::cli {

int cmd_precompile(const Args& args, Io io);

}  // namespace gg::cli
