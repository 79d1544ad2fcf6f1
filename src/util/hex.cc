#include "util/hex.h"

namespace strata {

namespace {
constexpr char kLowerDigits[] = "0123456789abcdef";
constexpr char kUpperDigits[] = "0123456789ABCDEF";
}  // namespace

void AppendHexByte(std::string* out, uint8_t byte, HexCase letters) {
  const char* digits = letters == HexCase::kUpper ? kUpperDigits : kLowerDigits;
  out->push_back(digits[byte >> 4]);
  out->push_back(digits[byte & 0xf]);
}

std::string HexEncode(const void* data, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; i++) AppendHexByte(&out, bytes[i]);
  return out;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigitValue(hex[i]), lo = HexDigitValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

}  // namespace strata
