// A bounds-checked cursor over one request's bytes. Every read first checks
// that the bytes are there; structs are copied out (memcpy), so the buffer
// needs no alignment. Failures are InvalidArgument naming the request part.
//
// Thread-safety: a value; not shared.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "util/status.h"

namespace strata::fs::kernel {

class WireReader {
 public:
  WireReader(std::span<const uint8_t> bytes, std::string what) : rest_(bytes), what_(std::move(what)) {}

  size_t remaining() const { return rest_.size(); }

  template <typename T>
  Result<T> Struct(const char* field) {
    if (rest_.size() < sizeof(T)) return Short(field, sizeof(T));
    T value;
    std::memcpy(&value, rest_.data(), sizeof(T));
    rest_ = rest_.subspan(sizeof(T));
    return value;
  }

  // The first `size` bytes of a struct whose later fields this protocol minor
  // does not send; the rest stays zero.
  template <typename T>
  Result<T> PrefixOf(size_t size, const char* field) {
    if (rest_.size() < size) return Short(field, size);
    T value{};
    std::memcpy(&value, rest_.data(), size);
    rest_ = rest_.subspan(size);
    return value;
  }

  Result<std::span<const uint8_t>> Bytes(size_t n, const char* field) {
    if (rest_.size() < n) return Short(field, n);
    auto out = rest_.first(n);
    rest_ = rest_.subspan(n);
    return out;
  }

  // A NUL-terminated string of 1..max_bytes bytes (the NUL not counted),
  // without '/' when it is an entry name.
  Result<std::string_view> CString(const char* field, size_t max_bytes, bool entry_name) {
    if (rest_.empty()) return Invalid(std::string(field) + " is missing");
    const void* nul = std::memchr(rest_.data(), 0, rest_.size());
    if (nul == nullptr) return Invalid(std::string(field) + " has no terminating NUL");
    size_t n = static_cast<const uint8_t*>(nul) - rest_.data();
    std::string_view s(reinterpret_cast<const char*>(rest_.data()), n);
    if (n == 0) return Invalid(std::string(field) + " is empty");
    if (n > max_bytes) return Invalid(std::string(field) + " is longer than " + std::to_string(max_bytes) + " bytes");
    if (entry_name && s.find('/') != std::string_view::npos) return Invalid(std::string(field) + " contains '/'");
    rest_ = rest_.subspan(n + 1);
    return s;
  }

  // Nothing may follow the last field.
  Status End() const {
    if (!rest_.empty()) return Invalid(std::to_string(rest_.size()) + " unexpected trailing bytes");
    return Status::Ok();
  }

  Status Invalid(const std::string& why) const { return Status::InvalidArgument(what_ + ": " + why); }

 private:
  Status Short(const char* field, size_t need) const {
    return Invalid(std::string(field) + " needs " + std::to_string(need) + " bytes, " + std::to_string(rest_.size()) +
                   " left");
  }

  std::span<const uint8_t> rest_;
  std::string what_;
};

}  // namespace strata::fs::kernel
