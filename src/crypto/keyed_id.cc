// HMAC through OpenSSL 3's EVP_MAC "HMAC" (SHA-NI where the CPU has it).
#include "crypto/keyed_id.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <array>
#include <memory>

namespace strata::crypto {
namespace {

struct MacFree {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

}  // namespace

Result<Hash> HmacSha256(std::string_view key, std::string_view data) {
  std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  std::unique_ptr<EVP_MAC_CTX, MacFree> ctx(mac ? EVP_MAC_CTX_new(mac.get()) : nullptr);
  if (!ctx) return Status::Unsupported("this OpenSSL has no HMAC");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  Hash out;
  size_t len = 0;
  bool ok = EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1 &&
            EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1 &&
            EVP_MAC_final(ctx.get(), out.bytes.data(), &len, out.bytes.size()) == 1 && len == Hash::kSize;
  if (!ok) return Status::IOError("HMAC-SHA256 failed", EIO);
  return out;
}

Result<Hash> KeyedId(const Key256& id_key, std::string_view content) { return HmacSha256(id_key.view(), content); }

KeyedHasher::KeyedHasher(const Key256& key) {
  // A 32-byte key is shorter than SHA-256's 64-byte block: it is padded with zeros.
  constexpr size_t kBlock = 64;
  std::array<uint8_t, kBlock> ipad{}, opad{};
  for (size_t i = 0; i < kBlock; i++) {
    const uint8_t k = i < key.bytes.size() ? key.bytes[i] : 0;
    ipad[i] = k ^ 0x36;
    opad[i] = k ^ 0x5c;
  }
  inner_.Update(ipad.data(), ipad.size());
  outer_.Update(opad.data(), opad.size());
  ipad.fill(0);
  opad.fill(0);
}

Hash KeyedHasher::Of(std::string_view prefix, std::string_view data) const {
  Sha256 inner = inner_.Clone();
  inner.Update(prefix);
  inner.Update(data);
  const Hash digest = inner.Finish();
  Sha256 outer = outer_.Clone();
  outer.Update(digest.bytes.data(), digest.bytes.size());
  return outer.Finish();
}

}  // namespace strata::crypto
