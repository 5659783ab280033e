// Runs independent work on every core: drivers compile programs on the
// calling thread, and hashing large buffers is bound by one core's speed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace mgd {

// body(0..n-1), each index once, on up to one thread per core.
inline void ParallelFor(size_t n, const std::function<void(size_t)>& body) {
  const size_t workers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) body(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace mgd
