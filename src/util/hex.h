// Hexadecimal text of bytes, one place for every caller: object ids, the
// control protocol's xattr bytes, S3 percent-encoding and probe names, and
// control characters shown in messages.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

// strata writes lower case everywhere (ids, pack names); S3's percent-encoding
// asks for upper case (its signatures compare the encoded text byte for byte).
enum class HexCase { kLower, kUpper };

// Appends the two digits of one byte, high nibble first.
void AppendHexByte(std::string* out, uint8_t byte, HexCase letters = HexCase::kLower);

// Two lower-case digits per byte.
std::string HexEncode(const void* data, size_t n);
inline std::string HexEncode(std::string_view bytes) { return HexEncode(bytes.data(), bytes.size()); }

// The value of one digit (either case), or -1 for a character that is not one.
int HexDigitValue(char c);

// Bytes of an even number of digits of either case; nullopt for any other text.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace strata
