#pragma once
// `gemmgen model` (its flags are in commands.cpp's table).
#include "tools/gemmgen/commands.h"

namespace gg::cli {

int cmd_model(const Args& args, Io io);

}  // namespace gg::cli
