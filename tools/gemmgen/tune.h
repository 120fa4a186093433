#pragma once
// `gemmgen tune` (its flags are in commands.cpp's table).
#include "tools/gemmgen/commands.h"

namespace gg::cli {

int cmd_tune(const Args& args, Io io);

}  // namespace gg::cli
