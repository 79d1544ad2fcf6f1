#include "store/store_cipher.h"

#include "crypto/gear_table.h"
#include "crypto/subkeys.h"
#include "store/pack_format.h"
#include "util/coding.h"
#include "util/hex.h"

namespace strata {

namespace {
// Associated data of each kind of sealed value: a value sealed as one kind
// never opens as another, even where two kinds share a key.
constexpr std::string_view kObjectAad = "strata object v1";
constexpr std::string_view kFooterAad = "strata pack footer v1";
constexpr std::string_view kRefNameAad = "strata ref name v1";
constexpr std::string_view kKeyCheckLabel = "strata key check v1";

constexpr size_t kGenerationSize = 4;

std::string ObjectAad(const Hash& id, ObjectType type, uint64_t raw_len, std::string_view header) {
  std::string aad(kObjectAad);
  aad.append(header);  // empty in format 3, so its objects open as they were sealed
  aad.push_back(static_cast<char>(type));
  PutFixed64(&aad, raw_len);
  aad.append(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
  return aad;
}
}  // namespace

Result<std::unique_ptr<StoreCipher>> StoreCipher::FromMasterKey(const crypto::Key256& master, bool generations) {
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 id_key, crypto::DeriveSubkey(master, crypto::kSubkeyObjectId));
  std::unique_ptr<StoreCipher> cipher(new StoreCipher(id_key));
  cipher->master_ = master;
  cipher->generations_ = generations;
  STRATA_ASSIGN_OR_RETURN(cipher->index_key_, crypto::DeriveSubkey(master, crypto::kSubkeyPackIndex));
  STRATA_ASSIGN_OR_RETURN(cipher->refs_key_, crypto::DeriveSubkey(master, crypto::kSubkeyRefs));
  STRATA_ASSIGN_OR_RETURN(cipher->gear_, crypto::DeriveGearTable(master));
  return cipher;
}

Result<std::string> StoreCipher::KeyCheck(const crypto::Key256& master, std::string_view store_id) {
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 check_key, crypto::DeriveSubkey(master, crypto::kSubkeyKeyCheck));
  STRATA_ASSIGN_OR_RETURN(Hash mac, crypto::HmacSha256(check_key.view(), std::string(kKeyCheckLabel) + '\0' +
                                                                               std::string(store_id)));
  return mac.ToHex();
}

Hash StoreCipher::ObjectId(ObjectType type, std::string_view data) const {
  // The header of ComputeObjectId, NUL included, so ids differ only by the key.
  const std::string header = std::string("strata ") + ObjectTypeName(type) + " " + std::to_string(data.size());
  return ids_.Of(std::string_view(header.data(), header.size() + 1), data);
}

Result<crypto::Key256> StoreCipher::SealKey(uint32_t generation) const {
  MutexLock lock(&mu_);
  auto it = seal_keys_.find(generation);
  if (it != seal_keys_.end()) return it->second;
  std::string purpose(crypto::kSubkeyObjectSeal);
  if (generation > 0) purpose += "/" + std::to_string(generation);
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 key, crypto::DeriveSubkey(master_, purpose));
  seal_keys_.emplace(generation, key);
  return key;
}

Result<uint32_t> StoreCipher::SealedGeneration(std::string_view sealed) const {
  if (!generations_) return uint32_t{0};
  if (sealed.size() < kGenerationSize) return Status::Corruption("sealed object is too short for its key generation");
  return DecodeFixed32(sealed.data());
}

Result<std::string> StoreCipher::SealObject(const Hash& id, ObjectType type, uint64_t raw_len,
                                            std::string_view framed, uint32_t generation) const {
  std::string header;
  if (generations_) PutFixed32(&header, generation);
  else if (generation != 0) return Status::InvalidArgument("a format 3 store seals under generation 0 only");
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 key, SealKey(generation));
  STRATA_ASSIGN_OR_RETURN(std::string sealed, crypto::Seal(key, framed, ObjectAad(id, type, raw_len, header)));
  return header + sealed;
}

Result<std::string> StoreCipher::OpenObject(const PackEntry& entry, std::string_view sealed) const {
  const std::string what = "sealed " + std::string(ObjectTypeName(entry.type));
  STRATA_ASSIGN_OR_RETURN(uint32_t generation, SealedGeneration(sealed));
  const size_t header_len = generations_ ? kGenerationSize : 0;
  // The header is associated data too, so a changed generation fails like any other byte.
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 key, SealKey(generation));
  return crypto::Open(key, sealed.substr(header_len),
                      ObjectAad(entry.id, entry.type, entry.raw_len, sealed.substr(0, header_len)), what);
}

Result<std::string> StoreCipher::SealFooter(std::string_view footer) const {
  return crypto::Seal(index_key_, footer, kFooterAad);
}

Result<std::string> StoreCipher::OpenFooter(std::string_view sealed) const {
  return crypto::Open(index_key_, sealed, kFooterAad, "sealed pack footer");
}

Result<std::string> StoreCipher::SealRefName(std::string_view name) const {
  // A synthetic nonce (the SIV construction): derived from the name under the
  // key, so equal names seal alike and different names get different nonces.
  // A nonce repeats only with the same name, which then seals to the very
  // same bytes: nothing is revealed beyond "the same name".
  STRATA_ASSIGN_OR_RETURN(Hash mac, crypto::HmacSha256(refs_key_.view(), std::string(kRefNameAad) + '\0' +
                                                                              std::string(name)));
  std::string_view nonce(reinterpret_cast<const char*>(mac.bytes.data()), crypto::kNonceSize);
  STRATA_ASSIGN_OR_RETURN(std::string sealed, crypto::SealWithNonce(refs_key_, nonce, name, kRefNameAad));
  return HexEncode(sealed);
}

Result<std::string> StoreCipher::OpenRefName(std::string_view sealed_hex) const {
  auto sealed = HexDecode(sealed_hex);
  if (!sealed) return Status::Corruption("ref '" + std::string(sealed_hex) + "' is not a sealed branch name");
  auto name = crypto::Open(refs_key_, *sealed, kRefNameAad, "sealed branch name");
  if (!name.ok()) return name.status();
  // The nonce must be the one the name derives: anything else was not sealed here.
  STRATA_ASSIGN_OR_RETURN(std::string again, SealRefName(*name));
  if (again != sealed_hex) return Status::Corruption("sealed branch name " + std::string(sealed_hex) + " is not canonical");
  return name;
}

}  // namespace strata
