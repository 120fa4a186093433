#include "tools/gemmgen/parallel_jobs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

namespace gg::cli {

void run_jobs(size_t count, const std::function<void(size_t)>& job, std::ostream& progress, const std::string& what,
              unsigned jobs) {
  if (count == 0) return;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs ? jobs : cores, unsigned(count)));
  std::atomic<size_t> next{0}, done{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w)
    workers.emplace_back([&] {
      for (size_t i; (i = next++) < count;) {
        try {
          job(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
        ++done;
      }
    });
  for (size_t shown = 0; shown < count;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done.load() != shown) {
      shown = done.load();
      progress << "\r  " << what << " " << shown << "/" << count << " (" << threads << " jobs)" << std::flush;
    }
  }
  for (auto& w : workers) w.join();
  progress << "\n";
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gg::cli
