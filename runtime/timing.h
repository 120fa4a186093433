#pragma once
// GPU timing with CUDA events: medians after warm-up, and an interleaved comparison
// that alternates two callables rep by rep so clock and thermal drift hit both alike.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

namespace gg::rt {

// Median over `reps` timed calls of `launch` (which enqueues work on `stream`), in ms, after a
// warm-up of `warmup` calls and as many more as bring it to 25 ms (an idle GPU's clock ramps up).
double median_time_ms(const std::function<void()>& launch, int warmup = 3, int reps = 20,
                      cudaStream_t stream = nullptr);

struct InterleavedMedians {
  double ours_ms = 0;
  double reference_ms = 0;
};

InterleavedMedians interleaved_median_ms(const std::function<void()>& ours, const std::function<void()>& reference,
                                         int warmup = 3, int reps = 20, cudaStream_t stream = nullptr);

// 2 * M * N * K / t, in TFLOP/s for t in milliseconds.
double tflops(int64_t m, int64_t n, int64_t k, double ms);

}  // namespace gg::rt
