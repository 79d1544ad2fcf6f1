// Sealing: AES-256-GCM with associated data, the one authenticated cipher of
// strata's encryption at rest (docs/format/encryption.md).
//
// A sealed value is nonce (12 bytes) || ciphertext || tag (16 bytes). The
// nonce is random for every Seal: with 96 random bits, 2^32 seals under one
// key keep the chance of a repeat below 2^-32 (NIST SP 800-38D's bound),
// which is why each purpose seals under its own subkey (subkeys.h). Open
// checks the tag before it hands back a byte: a changed nonce, ciphertext,
// tag or associated data, or a wrong key, is Corruption naming `what`.
//
// Thread-safety: pure functions; keys are values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace strata::crypto {

// A 256-bit secret key, wiped when it goes out of scope.
struct Key256 {
  static constexpr size_t kSize = 32;
  std::array<uint8_t, kSize> bytes{};

  ~Key256();
  std::string_view view() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
  bool operator==(const Key256&) const = default;
};

inline constexpr size_t kNonceSize = 12;
inline constexpr size_t kTagSize = 16;
inline constexpr size_t kSealOverhead = kNonceSize + kTagSize;

// Overwrites a string that held a secret (a key, a plaintext key) before it is freed.
void Wipe(std::string& secret);

// n bytes from OpenSSL's CSPRNG (RAND_bytes); fails only if it cannot be seeded.
Status RandomBytes(void* out, size_t n);
Result<Key256> RandomKey();

// Seals plaintext under key with a fresh random nonce, binding aad.
Result<std::string> Seal(const Key256& key, std::string_view plaintext, std::string_view aad);
// The same with a given nonce, for the published test vectors only: a nonce
// must never be reused under one key. REQUIRES: nonce.size() == kNonceSize.
Result<std::string> SealWithNonce(const Key256& key, std::string_view nonce, std::string_view plaintext,
                                  std::string_view aad);
// The plaintext of a sealed value, or Corruption ("<what> failed
// authentication") if anything in it or in aad differs from what was sealed.
Result<std::string> Open(const Key256& key, std::string_view sealed, std::string_view aad, const std::string& what);

}  // namespace strata::crypto
