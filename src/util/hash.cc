#include "util/hash.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>

#include "util/hex.h"

namespace strata {

std::string Hash::ToHex() const { return HexEncode(bytes.data(), kSize); }

std::optional<Hash> Hash::FromHex(std::string_view hex) {
  if (hex.size() != kSize * 2) return std::nullopt;
  Hash h;
  for (size_t i = 0; i < kSize; i++) {
    int hi = HexDigitValue(hex[2 * i]), lo = HexDigitValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return h;
}

Hash Hash::FromBytes(const void* data) {
  Hash h;
  std::memcpy(h.bytes.data(), data, kSize);
  return h;
}

bool Hash::IsZero() const {
  for (uint8_t b : bytes)
    if (b != 0) return false;
  return true;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // Failure here means OpenSSL cannot allocate or lacks SHA-256: nothing can work.
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    std::abort();
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(const void* data, size_t n) {
  if (n > 0) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n);
}

Hash Sha256::Finish() {
  Hash h;
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), h.bytes.data(), &len);
  return h;
}

Sha256 Sha256::Clone() const {
  Sha256 copy;
  if (EVP_MD_CTX_copy_ex(static_cast<EVP_MD_CTX*>(copy.ctx_), static_cast<const EVP_MD_CTX*>(ctx_)) != 1)
    std::abort();  // only an allocation can fail here, as in the constructor
  return copy;
}

Hash Sha256::Of(const void* data, size_t n) {
  Sha256 s;
  s.Update(data, n);
  return s.Finish();
}

}  // namespace strata
