// Runs independent work on every core: drivers compile programs on the
// calling thread, and hashing large buffers is bound by one core's speed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace mgd {

// How many threads start-up work may use: MGD_THREADS when set (a phone
// may want its big cores only), else one per core.
inline size_t MaxThreads() {
  if (const char* env = std::getenv("MGD_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n >= 1) return static_cast<size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// body(0..n-1), each index once, on up to MaxThreads() threads (fewer when
// `max_threads` says so).
inline void ParallelFor(size_t n, const std::function<void(size_t)>& body, size_t max_threads = SIZE_MAX) {
  const size_t workers = std::min({n, MaxThreads(), std::max<size_t>(max_threads, 1)});
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
