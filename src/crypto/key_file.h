// A key file: one passphrase's way into a store. It holds the store's master
// key wrapped (sealed with AES-256-GCM) under a key derived from the
// passphrase with scrypt, and everything needed to derive that key again.
// Several key files may wrap the same master key (several passphrases);
// changing a passphrase writes a new key file and rewrites no data.
//
// Layout (little-endian; docs/format/encryption.md):
//   magic "STRATKEY" (8) | version u32 (= 1) | key id (16 random bytes)
//   | KDF name (u8 length + bytes, "scrypt") | log2 N u8 | r u32 | p u32
//   | salt (u8 length, 16..64, + bytes) | created (i64, Unix seconds)
//   | wrapped master key (u32 length, = 60, + nonce || sealed key || tag)
// Everything before the wrapped key is its associated data, so changing a
// parameter, the id or the salt makes the unwrap fail like a wrong passphrase.
// The decoder is strict: any other length, version, name or range is an error.
//
// Thread-safety: values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "crypto/passphrase_kdf.h"
#include "util/status.h"

namespace strata::crypto {

inline constexpr uint32_t kKeyFileVersion = 1;
inline constexpr size_t kKeyIdSize = 16;
inline constexpr size_t kMaxKeyFileSize = 512;  // far above a real one (~150 bytes)

struct KeyFile {
  uint32_t version = kKeyFileVersion;
  std::array<uint8_t, kKeyIdSize> key_id{};
  std::string kdf = "scrypt";
  ScryptParams params;
  std::string salt;
  int64_t created_sec = 0;
  std::string wrapped;  // the sealed master key

  std::string KeyIdHex() const;
};

// The bytes of the header (the associated data of the wrapped key) and of the whole file.
std::string EncodeKeyFileHeader(const KeyFile& file);
std::string EncodeKeyFile(const KeyFile& file);
// Parses a key file; `what` names it in messages (its path). Malformed input
// is Corruption, a version this build does not know is Unsupported.
Result<KeyFile> DecodeKeyFile(std::string_view bytes, const std::string& what);

// A new key file (fresh id and salt) wrapping master under passphrase.
Result<KeyFile> WrapMasterKey(const Key256& master, std::string_view passphrase, const ScryptParams& params,
                              int64_t created_sec);
// The master key, or InvalidArgument "wrong passphrase" when the passphrase
// (or an altered header) does not unwrap it.
Result<Key256> UnwrapMasterKey(const KeyFile& file, std::string_view passphrase);

}  // namespace strata::crypto
