// The passphrase KDF: scrypt (RFC 7914) through OpenSSL 3's EVP_KDF "SCRYPT",
// turning a passphrase and a random salt into the key that wraps the master
// key in a key file. Memory-hard, so guessing passphrases costs an attacker
// memory as well as time. Why scrypt and these parameters:
// docs/format/encryption.md.
//
// Thread-safety: pure functions (each call takes 128 * r * N bytes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "util/status.h"

namespace strata::crypto {

struct ScryptParams {
  uint8_t log2_n = 17;  // N = 2^17: 128 MiB with r = 8, about 0.4 s on one core here
  uint32_t r = 8;
  uint32_t p = 1;

  // The bytes one derivation needs (128 * r * N, plus 128 * r * p).
  uint64_t MemoryBytes() const;
  // The range a key file may ask for: enough to be safe, bounded so that a
  // forged key file cannot make opening it take gigabytes or hours.
  Status Check() const;
  bool operator==(const ScryptParams&) const = default;
};

// The raw scrypt output (for the RFC 7914 vectors). Accepts any parameters
// OpenSSL accepts, Check() or not.
Result<std::string> Scrypt(std::string_view passphrase, std::string_view salt, const ScryptParams& params,
                           size_t length);

// The key that wraps a master key. REQUIRES: params.Check() is ok.
Result<Key256> DeriveWrappingKey(std::string_view passphrase, std::string_view salt, const ScryptParams& params);

}  // namespace strata::crypto
