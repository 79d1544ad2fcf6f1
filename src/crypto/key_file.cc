// Encoding and strict decoding of key files, and the wrap/unwrap of the
// master key. The decoder runs on bytes anyone with write access to the
// store could have forged, so it checks every length before using it and
// refuses parameters that would make the KDF run for hours (fuzz_key_file).
#include "crypto/key_file.h"

#include <cstring>

#include "util/coding.h"
#include "util/hex.h"

namespace strata::crypto {
namespace {

constexpr std::string_view kMagic = "STRATKEY";
constexpr size_t kMinSalt = 16, kMaxSalt = 64;
constexpr size_t kWrappedSize = kSealOverhead + Key256::kSize;

}  // namespace

std::string KeyFile::KeyIdHex() const { return HexEncode(key_id.data(), key_id.size()); }

std::string EncodeKeyFileHeader(const KeyFile& file) {
  std::string out(kMagic);
  PutFixed32(&out, file.version);
  out.append(reinterpret_cast<const char*>(file.key_id.data()), file.key_id.size());
  out.push_back(static_cast<char>(file.kdf.size()));
  out.append(file.kdf);
  out.push_back(static_cast<char>(file.params.log2_n));
  PutFixed32(&out, file.params.r);
  PutFixed32(&out, file.params.p);
  out.push_back(static_cast<char>(file.salt.size()));
  out.append(file.salt);
  PutFixed64(&out, static_cast<uint64_t>(file.created_sec));
  return out;
}

std::string EncodeKeyFile(const KeyFile& file) {
  std::string out = EncodeKeyFileHeader(file);
  PutFixed32(&out, static_cast<uint32_t>(file.wrapped.size()));
  out.append(file.wrapped);
  return out;
}

Result<KeyFile> DecodeKeyFile(std::string_view bytes, const std::string& what) {
  auto bad = [&](const std::string& why) { return Status::Corruption(what + " is not a valid key file: " + why); };
  if (bytes.size() > kMaxKeyFileSize) return bad("it is " + std::to_string(bytes.size()) + " bytes long");
  Decoder in(bytes);
  std::string_view magic, id, kdf, salt, wrapped;
  uint8_t kdf_len = 0, log2_n = 0, salt_len = 0;
  uint32_t wrapped_len = 0;
  uint64_t created = 0;
  KeyFile file;
  if (!in.GetBytes(kMagic.size(), &magic) || magic != kMagic) return bad("it does not start with " + std::string(kMagic));
  if (!in.GetFixed32(&file.version)) return bad("it is truncated");
  if (file.version != kKeyFileVersion)
    return Status::Unsupported(what + " is a key file of version " + std::to_string(file.version) +
                               ", which this strata does not know (it knows version 1)");
  if (!in.GetBytes(kKeyIdSize, &id) || !in.GetByte(&kdf_len) || !in.GetBytes(kdf_len, &kdf) ||
      !in.GetByte(&log2_n) || !in.GetFixed32(&file.params.r) || !in.GetFixed32(&file.params.p) ||
      !in.GetByte(&salt_len) || !in.GetBytes(salt_len, &salt) || !in.GetFixed64(&created) ||
      !in.GetFixed32(&wrapped_len))
    return bad("it is truncated");
  if (kdf != "scrypt") return Status::Unsupported(what + " uses a passphrase KDF this strata does not know");
  file.params.log2_n = log2_n;
  if (Status s = file.params.Check(); !s.ok()) return bad(s.message());
  if (salt.size() < kMinSalt || salt.size() > kMaxSalt) return bad("its salt is " + std::to_string(salt.size()) + " bytes");
  if (wrapped_len != kWrappedSize) return bad("its wrapped key is " + std::to_string(wrapped_len) + " bytes");
  if (!in.GetBytes(wrapped_len, &wrapped)) return bad("it is truncated");
  if (!in.empty()) return bad(std::to_string(in.remaining()) + " bytes follow its end");
  std::memcpy(file.key_id.data(), id.data(), kKeyIdSize);
  file.kdf = kdf;
  file.salt = salt;
  file.created_sec = static_cast<int64_t>(created);
  file.wrapped = wrapped;
  return file;
}

Result<KeyFile> WrapMasterKey(const Key256& master, std::string_view passphrase, const ScryptParams& params,
                              int64_t created_sec) {
  KeyFile file;
  file.params = params;
  file.created_sec = created_sec;
  file.salt.resize(32);
  STRATA_RETURN_IF_ERROR(RandomBytes(file.key_id.data(), file.key_id.size()));
  STRATA_RETURN_IF_ERROR(RandomBytes(file.salt.data(), file.salt.size()));
  STRATA_ASSIGN_OR_RETURN(Key256 wrapping, DeriveWrappingKey(passphrase, file.salt, params));
  STRATA_ASSIGN_OR_RETURN(file.wrapped, Seal(wrapping, master.view(), EncodeKeyFileHeader(file)));
  return file;
}

Result<Key256> UnwrapMasterKey(const KeyFile& file, std::string_view passphrase) {
  STRATA_ASSIGN_OR_RETURN(Key256 wrapping, DeriveWrappingKey(passphrase, file.salt, file.params));
  auto opened = Open(wrapping, file.wrapped, EncodeKeyFileHeader(file), "key " + file.KeyIdHex());
  if (!opened.ok()) {
    if (!opened.status().IsCorruption()) return opened.status();
    return Status::InvalidArgument("wrong passphrase for key " + file.KeyIdHex() +
                                   " (or its key file was altered)");
  }
  if (opened->size() != Key256::kSize) return Status::Corruption("key " + file.KeyIdHex() + " wraps no 256-bit key");
  Key256 master;
  std::memcpy(master.bytes.data(), opened->data(), Key256::kSize);
  Wipe(*opened);
  return master;
}

}  // namespace strata::crypto
