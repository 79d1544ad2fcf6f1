// A master key file (`strata key export`, `--key-file`): a store's master key
// itself, unwrapped, for opening the store unattended without a passphrase.
// Whoever reads the file can read the store: it is a secret as strong as
// the store and is to be kept like one (docs/format/encryption.md).
//
// The format is one text line with a single spelling:
//   "strata master key v1 " 64 lowercase hex digits "\n"
// Anything else (another version, upper case, a missing or extra byte) is
// refused, naming the file.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "util/status.h"

namespace strata::crypto {

inline constexpr size_t kMasterKeyFileSize = 21 + 64 + 1;

// The file's bytes for master.
std::string EncodeMasterKeyFile(const Key256& master);
// The key in a master key file's bytes; InvalidArgument naming `name` for
// anything EncodeMasterKeyFile does not write.
Result<Key256> DecodeMasterKeyFile(std::string_view bytes, const std::string& name);

}  // namespace strata::crypto
