// Byte coding: little-endian fixed-width integers and LEB128 varints.
//
// Every on-disk and on-wire format of strata is built from these. Writers append
// to a std::string; readers consume a Decoder that never reads past its end and
// turns any truncation into a failed read (decoders of store bytes must survive
// hostile input).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
void PutVarint(std::string* dst, uint64_t v);
// A varint length followed by the bytes.
void PutLengthPrefixed(std::string* dst, std::string_view s);

uint32_t DecodeFixed32(const char* p);
uint64_t DecodeFixed64(const char* p);
void EncodeFixed32(char* p, uint32_t v);
void EncodeFixed64(char* p, uint64_t v);

// Reads from a byte range. Each Get* returns false, and leaves the decoder in a
// failed state, when the input is too short or malformed.
class Decoder {
 public:
  explicit Decoder(std::string_view input) : in_(input) {}

  bool GetFixed32(uint32_t* v);
  bool GetFixed64(uint64_t* v);
  bool GetVarint(uint64_t* v);
  bool GetBytes(size_t n, std::string_view* out);
  bool GetLengthPrefixed(std::string_view* out);
  bool GetByte(uint8_t* v);

  bool empty() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }
  bool failed() const { return failed_; }

 private:
  bool Fail() {
    failed_ = true;
    return false;
  }
  std::string_view in_;
  bool failed_ = false;
};

}  // namespace strata
