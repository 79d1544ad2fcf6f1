#include "util/coding.h"

#include <cstring>

namespace strata {

void EncodeFixed32(char* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<char>(v >> (8 * i));
}

void EncodeFixed64(char* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = static_cast<char>(v >> (8 * i));
}

uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}

void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

void PutVarint(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

void PutLengthPrefixed(std::string* dst, std::string_view s) {
  PutVarint(dst, s.size());
  dst->append(s);
}

bool Decoder::GetFixed32(uint32_t* v) {
  if (failed_ || in_.size() < 4) return Fail();
  *v = DecodeFixed32(in_.data());
  in_.remove_prefix(4);
  return true;
}

bool Decoder::GetFixed64(uint64_t* v) {
  if (failed_ || in_.size() < 8) return Fail();
  *v = DecodeFixed64(in_.data());
  in_.remove_prefix(8);
  return true;
}

bool Decoder::GetVarint(uint64_t* v) {
  if (failed_) return false;
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in_.empty(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && byte > 1) return Fail();
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    // One encoding per value: a last byte of 0 after others is an overlong
    // form, which would give one object several byte strings (and ids).
    if (byte == 0 && shift > 0) return Fail();
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return Fail();
}

bool Decoder::GetBytes(size_t n, std::string_view* out) {
  if (failed_ || in_.size() < n) return Fail();
  *out = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}

bool Decoder::GetLengthPrefixed(std::string_view* out) {
  uint64_t n;
  if (!GetVarint(&n)) return false;
  if (n > in_.size()) return Fail();
  return GetBytes(static_cast<size_t>(n), out);
}

bool Decoder::GetByte(uint8_t* v) {
  if (failed_ || in_.empty()) return Fail();
  *v = static_cast<uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

}  // namespace strata
