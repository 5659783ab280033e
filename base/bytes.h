// Byte buffers that are about to be overwritten (a file read into memory)
// and so need not be zeroed first. Zeroing fresh memory faults its pages in
// on one thread, and on a VM that costs more than the read itself: 9 MB
// took 4.5-4.9 ms to zero and 0.6-1.0 ms to read on the H200 host, against
// 1.9 ms to read into untouched memory on 16 threads (docs/perf.md).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace mgd {

// std::allocator whose value-initialization (vector(n), resize(n)) leaves
// elements default-initialized: uninitialized for bytes.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using Bytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

}  // namespace mgd
