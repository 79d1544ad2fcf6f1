// The input layout of the fuzz targets that decode several kinds of values
// (rows of columns rather than one byte string): a selector byte, then fields
// in order — integers as 8 little-endian bytes, strings as a length byte and
// that many bytes, and a last string taking whatever is left. A short input
// reads as zeros and empty strings. FuzzInputWriter builds the same layout,
// so make_seeds can write seeds from the project's encoders.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace strata::fuzz {

class FuzzInputReader {
 public:
  FuzzInputReader(const uint8_t* data, size_t size) : in_(reinterpret_cast<const char*>(data), size) {}

  uint8_t Byte() {
    if (in_.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return b;
  }
  int64_t Int() {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return static_cast<int64_t>(v);
  }
  std::string String() {
    size_t n = Byte();
    n = n < in_.size() ? n : in_.size();
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  std::string Rest() {
    std::string s(in_);
    in_ = {};
    return s;
  }

 private:
  std::string_view in_;
};

class FuzzInputWriter {
 public:
  explicit FuzzInputWriter(uint8_t selector) { out_.push_back(static_cast<char>(selector)); }
  FuzzInputWriter& Byte(uint8_t v) {
    out_.push_back(static_cast<char>(v));
    return *this;
  }
  FuzzInputWriter& Int(int64_t v) {
    for (int i = 0; i < 8; i++) out_.push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * i)));
    return *this;
  }
  FuzzInputWriter& String(std::string_view s) {  // REQUIRES: s.size() < 256
    out_.push_back(static_cast<char>(s.size()));
    out_.append(s);
    return *this;
  }
  FuzzInputWriter& Rest(std::string_view s) {
    out_.append(s);
    return *this;
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

}  // namespace strata::fuzz
