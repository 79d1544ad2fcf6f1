#include "crypto/master_key_file.h"

#include <cstring>

#include "util/hex.h"

namespace strata::crypto {
namespace {
constexpr std::string_view kPrefix = "strata master key v1 ";
static_assert(kPrefix.size() + 2 * Key256::kSize + 1 == kMasterKeyFileSize);

bool IsLowerHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
}  // namespace

std::string EncodeMasterKeyFile(const Key256& master) {
  std::string out(kPrefix);
  out += HexEncode(master.view());
  out += '\n';
  return out;
}

Result<Key256> DecodeMasterKeyFile(std::string_view bytes, const std::string& name) {
  auto refused = [&](const std::string& why) {
    return Status::InvalidArgument(name + " is not a strata master key file (" + why + ")");
  };
  if (!bytes.starts_with(kPrefix)) {
    if (bytes.starts_with("strata master key v"))
      return refused("its version is not 1, the only one this strata knows");
    return refused("it does not begin with '" + std::string(kPrefix) + "'");
  }
  if (bytes.size() != kMasterKeyFileSize)
    return refused("it is " + std::to_string(bytes.size()) + " bytes long, not " +
                   std::to_string(kMasterKeyFileSize));
  const std::string_view hex = bytes.substr(kPrefix.size(), 2 * Key256::kSize);
  for (char c : hex)
    if (!IsLowerHexDigit(c)) return refused("the key is not 64 lowercase hex digits");
  if (bytes.back() != '\n') return refused("it does not end with a newline after the key");
  auto raw = HexDecode(hex);
  if (!raw || raw->size() != Key256::kSize) return refused("the key is not 64 lowercase hex digits");
  Key256 key;
  std::memcpy(key.bytes.data(), raw->data(), Key256::kSize);
  Wipe(*raw);
  return key;
}

}  // namespace strata::crypto
