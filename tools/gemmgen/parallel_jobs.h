#pragma once
// Independent jobs (NVRTC compiles: separate programs) on every core, with a progress line.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace gg::cli {

// Runs job(0) .. job(count - 1) on up to `jobs` threads (0: one per core), printing
// "\r  <what> done/count (N jobs)" to `progress` as they finish. The first exception a job throws
// is rethrown after every job has run.
void run_jobs(size_t count, const std::function<void(size_t)>& job, std::ostream& progress, const std::string& what,
              unsigned jobs = 0);

}  // namespace gg::cli
