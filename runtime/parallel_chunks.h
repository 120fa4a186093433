#pragma once
// Host-side loops over large operands (random inputs, dtype conversion, the fp64 reference) split
// over the CPU's cores. Every index is computed on its own, so the result does not depend on the
// split: the same bits on 2 cores as on 128.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace gg::rt {

// Calls body(first, last) on contiguous ranges covering [0, count), one per thread; a range is
// at least `min_chunk` indices, so small loops stay on the calling thread.
template <class Body>
void for_each_chunk(size_t count, size_t min_chunk, const Body& body) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::clamp<size_t>(count / std::max<size_t>(min_chunk, 1), 1, cores);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(body, count * t / threads, count * (t + 1) / threads);
  body(size_t{0}, count / threads);
  for (std::thread& worker : pool) worker.join();
}

}  // namespace gg::rt
