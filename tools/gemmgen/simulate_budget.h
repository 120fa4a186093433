#pragma once
// What `gemmgen simulate` may take on before it starts: it runs every thread's work on the CPU
// and holds every tensor as it lies in memory, so both are budgeted, and a problem over either
// budget is refused (`simulate-budget`) before anything is allocated.
#include "dsl/definition.h"
#include "tools/gemmgen/args.h"

namespace gg::cli {

constexpr int64_t kSimulateWork = int64_t(1) << 27;   // M*N*K x batch: 512 x 512 x 512
constexpr int64_t kSimulateBytes = int64_t(1) << 28;  // A, B, C, bias and D as stored: 256 MiB

void check_simulate_budget(const Definition& def, const Args& args);

}  // namespace gg::cli
