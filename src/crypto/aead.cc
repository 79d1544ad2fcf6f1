// AES-256-GCM through OpenSSL's EVP interface, which uses AES-NI and PCLMUL
// where the CPU has them (the speed the store's sealing depends on).
#include "crypto/aead.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

namespace strata::crypto {
namespace {

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

const unsigned char* U(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

// An input length OpenSSL's int-sized calls can take in one piece.
bool FitsInt(size_t n) { return n <= static_cast<size_t>(INT32_MAX); }

}  // namespace

Key256::~Key256() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

void Wipe(std::string& secret) { OPENSSL_cleanse(secret.data(), secret.size()); }

Status RandomBytes(void* out, size_t n) {
  if (!FitsInt(n) || RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(n)) != 1)
    return Status::IOError("the random number generator failed", EIO);
  return Status::Ok();
}

Result<Key256> RandomKey() {
  Key256 key;
  STRATA_RETURN_IF_ERROR(RandomBytes(key.bytes.data(), key.bytes.size()));
  return key;
}

Result<std::string> Seal(const Key256& key, std::string_view plaintext, std::string_view aad) {
  char nonce[kNonceSize];
  STRATA_RETURN_IF_ERROR(RandomBytes(nonce, sizeof(nonce)));
  return SealWithNonce(key, std::string_view(nonce, sizeof(nonce)), plaintext, aad);
}

Result<std::string> SealWithNonce(const Key256& key, std::string_view nonce, std::string_view plaintext,
                                  std::string_view aad) {
  if (nonce.size() != kNonceSize) return Status::InvalidArgument("a nonce must be 12 bytes");
  if (!FitsInt(plaintext.size()) || !FitsInt(aad.size()))
    return Status::InvalidArgument("a value to seal must be smaller than 2 GiB");
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  std::string out(nonce);
  out.resize(kNonceSize + plaintext.size() + kTagSize);
  auto* body = reinterpret_cast<unsigned char*>(out.data() + kNonceSize);
  int len = 0, tail = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.bytes.data(), U(nonce)) == 1 &&
            (aad.empty() || EVP_EncryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) == 1) &&
            EVP_EncryptUpdate(ctx.get(), body, &len, U(plaintext), static_cast<int>(plaintext.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx.get(), body + len, &tail) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagSize, body + plaintext.size()) == 1;
  if (!ok) return Status::IOError("sealing with AES-256-GCM failed", EIO);
  return out;
}

Result<std::string> Open(const Key256& key, std::string_view sealed, std::string_view aad, const std::string& what) {
  if (sealed.size() < kSealOverhead)
    return Status::Corruption(what + " is too short to be sealed (" + std::to_string(sealed.size()) + " bytes)");
  if (!FitsInt(sealed.size()) || !FitsInt(aad.size())) return Status::Corruption(what + " is too large to open");
  std::string_view nonce = sealed.substr(0, kNonceSize);
  std::string_view body = sealed.substr(kNonceSize, sealed.size() - kSealOverhead);
  std::string tag(sealed.substr(sealed.size() - kTagSize));
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  std::string out(body.size(), '\0');
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  int len = 0, tail = 0;
  bool ready = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.bytes.data(), U(nonce)) == 1 &&
               (aad.empty() || EVP_DecryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) == 1) &&
               EVP_DecryptUpdate(ctx.get(), dst, &len, U(body), static_cast<int>(body.size())) == 1 &&
               EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagSize, tag.data()) == 1;
  if (!ready) return Status::IOError("opening " + what + " with AES-256-GCM failed", EIO);
  if (EVP_DecryptFinal_ex(ctx.get(), dst + len, &tail) != 1) {
    // Never hand back bytes that failed authentication, not even in part.
    Wipe(out);
    return Status::Corruption(what + " failed authentication: it was changed, or sealed under another key");
  }
  return out;
}

}  // namespace strata::crypto
