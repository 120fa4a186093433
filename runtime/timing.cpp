#include "runtime/timing.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "runtime/cuda_error.h"

namespace gg::rt {
namespace {

class EventPair {
 public:
  EventPair() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  void time(const std::function<void()>& launch, cudaStream_t stream) {
    check_cuda(cudaEventRecord(start_, stream), "cudaEventRecord");
    launch();
    check_cuda(cudaEventRecord(stop_, stream), "cudaEventRecord");
  }
  double elapsed_ms() const {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

void check_reps(int reps) {
  if (reps < 1) throw std::invalid_argument("timing needs at least one rep");
}

// Warm-up: `calls` calls of `step`, then more until the GPU has run for kWarmUpMs since the first.
// An idle H100 sits at 345 MHz and takes milliseconds to reach its clock: a count alone left the
// first of several 10 us kernels timed at 2x (tune at 119 x 167 x 188: 22.9 us for the config the
// same call then timed at 10.8 us with another tile order, and cuBLAS beside it 38.7 against 15.6).
constexpr double kWarmUpMs = 25.0;
void warm_up(const std::function<void()>& step, int calls, cudaStream_t stream) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) step();
  const auto elapsed_ms = [&] {
    check_cuda(cudaStreamSynchronize(stream), "synchronizing the warm-up");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  while (elapsed_ms() < kWarmUpMs)
    for (int i = 0; i < 8; ++i) step();
}

}  // namespace

double median_time_ms(const std::function<void()>& launch, int warmup, int reps, cudaStream_t stream) {
  check_reps(reps);
  warm_up(launch, warmup, stream);
  // One event pair per rep and a single sync at the end keep the GPU busy back to back.
  std::vector<EventPair> events(static_cast<size_t>(reps));
  for (EventPair& pair : events) pair.time(launch, stream);
  check_cuda(cudaStreamSynchronize(stream), "synchronizing after timed reps");
  std::vector<double> times;
  for (const EventPair& pair : events) times.push_back(pair.elapsed_ms());
  return median(times);
}

InterleavedMedians interleaved_median_ms(const std::function<void()>& ours, const std::function<void()>& reference,
                                         int warmup, int reps, cudaStream_t stream) {
  check_reps(reps);
  warm_up(
      [&] {
        ours();
        reference();
      },
      warmup, stream);
  std::vector<EventPair> ours_events(static_cast<size_t>(reps)), reference_events(static_cast<size_t>(reps));
  for (size_t i = 0; i < ours_events.size(); ++i) {
    ours_events[i].time(ours, stream);
    reference_events[i].time(reference, stream);
  }
  check_cuda(cudaStreamSynchronize(stream), "synchronizing after timed reps");
  std::vector<double> ours_times, reference_times;
  for (size_t i = 0; i < ours_events.size(); ++i) {
    ours_times.push_back(ours_events[i].elapsed_ms());
    reference_times.push_back(reference_events[i].elapsed_ms());
  }
  return {median(ours_times), median(reference_times)};
}

double tflops(int64_t m, int64_t n, int64_t k, double ms) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (ms * 1e-3) / 1e12;
}

}  // namespace gg::rt
