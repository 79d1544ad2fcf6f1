// scrypt through EVP_KDF: OpenSSL refuses by default to use more than 32 MiB,
// so the memory bound is passed with each call, computed from the parameters.
#include "crypto/passphrase_kdf.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>
#include <memory>

namespace strata::crypto {
namespace {

constexpr uint64_t kMaxKeyFileMemory = uint64_t{1} << 30;  // 1 GiB

struct KdfFree {
  void operator()(EVP_KDF* k) const { EVP_KDF_free(k); }
  void operator()(EVP_KDF_CTX* c) const { EVP_KDF_CTX_free(c); }
};

}  // namespace

uint64_t ScryptParams::MemoryBytes() const {
  if (log2_n >= 40 || r > (1u << 20) || p > (1u << 20)) return UINT64_MAX;
  return 128 * uint64_t{r} * ((uint64_t{1} << log2_n) + p);
}

Status ScryptParams::Check() const {
  if (log2_n < 10 || log2_n > 24 || r < 1 || r > 32 || p < 1 || p > 16)
    return Status::InvalidArgument("scrypt parameters out of range (log2 N " + std::to_string(log2_n) + ", r " +
                                   std::to_string(r) + ", p " + std::to_string(p) + ")");
  if (MemoryBytes() > kMaxKeyFileMemory) return Status::InvalidArgument("scrypt parameters need more than 1 GiB");
  return Status::Ok();
}

Result<std::string> Scrypt(std::string_view passphrase, std::string_view salt, const ScryptParams& params,
                           size_t length) {
  if (params.log2_n == 0 || params.log2_n >= 40) return Status::InvalidArgument("scrypt N out of range");
  std::unique_ptr<EVP_KDF, KdfFree> kdf(EVP_KDF_fetch(nullptr, "SCRYPT", nullptr));
  std::unique_ptr<EVP_KDF_CTX, KdfFree> ctx(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr);
  if (!ctx) return Status::Unsupported("this OpenSSL has no scrypt");
  uint64_t n = uint64_t{1} << params.log2_n;
  uint32_t r = params.r, p = params.p;
  uint64_t maxmem = params.MemoryBytes() + (uint64_t{1} << 20);
  OSSL_PARAM list[] = {
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, const_cast<char*>(passphrase.data()),
                                        passphrase.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size()),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
      OSSL_PARAM_construct_end()};
  std::string out(length, '\0');
  if (EVP_KDF_derive(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), length, list) != 1)
    return Status::IOError("scrypt failed (out of memory, or parameters OpenSSL refuses)", ENOMEM);
  return out;
}

Result<Key256> DeriveWrappingKey(std::string_view passphrase, std::string_view salt, const ScryptParams& params) {
  STRATA_RETURN_IF_ERROR(params.Check());
  STRATA_ASSIGN_OR_RETURN(std::string bytes, Scrypt(passphrase, salt, params, Key256::kSize));
  Key256 key;
  std::memcpy(key.bytes.data(), bytes.data(), Key256::kSize);
  Wipe(bytes);
  return key;
}

}  // namespace strata::crypto
