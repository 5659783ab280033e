// Little-endian byte writing and bounds-checked reading, shared by the
// compiled-model format and the compiled-file container.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mgd {

class ByteWriter {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  void Bytes(const void* data, size_t size) {
    Put<uint64_t>(size);
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void String(const std::string& s) { Bytes(s.data(), s.size()); }
  template <typename T, size_t N>
  void Array(const std::array<T, N>& a) {
    for (const T& v : a) Put<T>(v);
  }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads little-endian values; the first failure sticks and names the field.
// Every length and count is checked against the bytes left.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T Get(const char* field) {
    T value{};
    if (!error_.empty()) return value;
    if (size_ - at_ < sizeof(T)) {
      Fail(field, "truncated");
      return value;
    }
    std::memcpy(&value, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  // A count of items that take at least `min_bytes` each: never more than
  // the bytes left can hold.
  size_t Count(const char* field, size_t min_bytes) {
    const uint64_t n = Get<uint32_t>(field);
    if (error_.empty() && n > (size_ - at_) / std::max<size_t>(min_bytes, 1)) Fail(field, fmt::format("count {} exceeds the data", n));
    return error_.empty() ? static_cast<size_t>(n) : 0;
  }
  std::vector<uint8_t> Bytes(const char* field) {
    const uint64_t n = Get<uint64_t>(field);
    if (!error_.empty()) return {};
    if (n > size_ - at_) {
      Fail(field, fmt::format("{} bytes exceed the data", n));
      return {};
    }
    std::vector<uint8_t> out(data_ + at_, data_ + at_ + n);
    at_ += static_cast<size_t>(n);
    return out;
  }
  // Like Bytes, without copying: where the bytes are in the data (nullptr
  // after a failure) and how many.
  std::pair<const uint8_t*, size_t> View(const char* field) {
    const uint64_t n = Get<uint64_t>(field);
    if (!error_.empty()) return {nullptr, 0};
    if (n > size_ - at_) {
      Fail(field, fmt::format("{} bytes exceed the data", n));
      return {nullptr, 0};
    }
    const uint8_t* at = data_ + at_;
    at_ += static_cast<size_t>(n);
    return {at, static_cast<size_t>(n)};
  }
  std::string String(const char* field) {
    const std::vector<uint8_t> b = Bytes(field);
    return std::string(b.begin(), b.end());
  }
  template <typename T, size_t N>
  std::array<T, N> Array(const char* field) {
    std::array<T, N> a{};
    for (T& v : a) v = Get<T>(field);
    return a;
  }
  void Fail(const std::string& field, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{} at byte {}: {}", field, at_, what);
  }
  // Steps over `n` bytes (checked like Bytes, without copying them).
  void Skip(const char* field, uint64_t n) {
    if (!error_.empty()) return;
    if (n > size_ - at_) {
      Fail(field, fmt::format("{} bytes exceed the data", n));
      return;
    }
    at_ += static_cast<size_t>(n);
  }
  size_t position() const { return at_; }
  bool ok() const { return error_.empty(); }
  bool at_end() const { return at_ == size_; }
  const std::string& error() const { return error_; }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
  std::string error_;
};

}  // namespace mgd
