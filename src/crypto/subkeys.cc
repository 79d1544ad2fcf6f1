// HKDF through OpenSSL 3's EVP_KDF "HKDF", so no key schedule of our own.
#include "crypto/subkeys.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>
#include <memory>

namespace strata::crypto {
namespace {

// Fixed salt of the subkey derivation: it only separates strata's use of
// HKDF from any other use of the same master key.
constexpr std::string_view kSubkeySalt = "strata subkey v1";

struct KdfFree {
  void operator()(EVP_KDF* k) const { EVP_KDF_free(k); }
  void operator()(EVP_KDF_CTX* c) const { EVP_KDF_CTX_free(c); }
};

char* Mutable(std::string_view s) { return const_cast<char*>(s.data()); }

}  // namespace

Result<std::string> Hkdf(std::string_view key, std::string_view salt, std::string_view info, size_t length) {
  if (length == 0 || length > 255 * 32) return Status::InvalidArgument("HKDF-SHA256 gives 1 to 8160 bytes");
  std::unique_ptr<EVP_KDF, KdfFree> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  std::unique_ptr<EVP_KDF_CTX, KdfFree> ctx(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr);
  if (!ctx) return Status::Unsupported("this OpenSSL has no HKDF");
  char digest[] = "SHA256";
  OSSL_PARAM params[5];
  OSSL_PARAM* p = params;
  *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, Mutable(key), key.size());
  if (!salt.empty()) *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, Mutable(salt), salt.size());
  if (!info.empty()) *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, Mutable(info), info.size());
  *p = OSSL_PARAM_construct_end();
  std::string out(length, '\0');
  if (EVP_KDF_derive(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), length, params) != 1)
    return Status::IOError("HKDF-SHA256 failed", EIO);
  return out;
}

Result<Key256> DeriveSubkey(const Key256& master, std::string_view purpose) {
  if (purpose.empty()) return Status::InvalidArgument("a subkey needs a purpose");
  std::string info = "strata/";
  info.append(purpose);
  STRATA_ASSIGN_OR_RETURN(std::string bytes, Hkdf(master.view(), kSubkeySalt, info, Key256::kSize));
  Key256 key;
  std::memcpy(key.bytes.data(), bytes.data(), Key256::kSize);
  Wipe(bytes);
  return key;
}

}  // namespace strata::crypto
