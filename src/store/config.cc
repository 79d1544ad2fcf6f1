// StoreConfig <-> config.json. The file names its format and version first so
// that a store written by a future strata is refused instead of misread.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "store/store.h"

namespace strata {

namespace {
constexpr const char* kFormatName = "strata-store";
constexpr const char* kKeysDir = "keys";  // where Store::Unlock finds the key files
}

std::string StoreConfig::ToJson() const {
  nlohmann::ordered_json j;
  j["format"] = kFormatName;
  j["version"] = version;
  j["hash"] = hash;
  j["chunker"] = {{"algorithm", "gear-v1"},
                  {"min_size", chunker.min_size},
                  {"avg_size", chunker.avg_size},
                  {"max_size", chunker.max_size}};
  j["compression"] = {{"codec", "zstd"}, {"level", zstd_level}, {"frame_size", uint64_t{1} << frame_shift}};
  j["pack_size"] = pack_size;
  if (encrypted())
    j["encryption"] = {{"cipher", encryption}, {"ids", "hmac-sha256"}, {"keys", kKeysDir},
                       {"store_id", store_id}, {"key_check", key_check}};
  if (encrypted() && seal_generations()) j["encryption"]["seal_limit"] = seal_limit;
  return j.dump(2) + "\n";
}

StoreConfig StoreConfig::Encrypted() const {
  StoreConfig c = *this;
  c.version = kEncryptedFormatVersion;
  c.encryption = kCipher;
  return c;
}

namespace {
// A non-negative integer field. Checked before conversion: get<uint64_t>() of
// a float out of range is undefined behaviour (found by fuzzing).
Result<uint64_t> Unsigned(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    return Status::Corruption(std::string("config.json: '") + key + "' is not a non-negative integer");
  return v.get<uint64_t>();
}
bool IsLowerHex(const std::string& s, size_t digits) {
  return s.size() == digits && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}
}  // namespace

Result<StoreConfig> StoreConfig::FromJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("config.json is not valid JSON");
  // A "format" of another type is no strata store either (value() would throw).
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kFormatName)
    return Status::Corruption("config.json does not describe a strata store");
  StoreConfig c;
  try {
    STRATA_ASSIGN_OR_RETURN(uint64_t version, Unsigned(j, "version"));
    c.version = static_cast<int>(std::min<uint64_t>(version, 1u << 30));
    if (c.version < kOldestFormatVersion || c.version > kEncryptedFormatVersion)
      return Status::Unsupported("store format version " + std::to_string(c.version) +
                                 " is not supported by this strata (it reads versions " +
                                 std::to_string(kOldestFormatVersion) + " to " +
                                 std::to_string(kEncryptedFormatVersion) + ")");
    // Versions 3 and 4 are exactly the encrypted stores: neither without the other.
    if (c.version >= kFirstEncryptedFormatVersion) {
      if (!j.contains("encryption"))
        return Status::Corruption("config.json: a version " + std::to_string(c.version) + " store names its encryption");
      const auto& enc = j.at("encryption");
      c.encryption = enc.at("cipher").get<std::string>();
      if (c.encryption != kCipher || enc.at("ids").get<std::string>() != "hmac-sha256" ||
          enc.at("keys").get<std::string>() != kKeysDir)
        return Status::Unsupported("config.json names an encryption this strata does not know (it knows " +
                                   std::string(kCipher) + " with hmac-sha256 ids and keys in keys/)");
      c.store_id = enc.at("store_id").get<std::string>();
      c.key_check = enc.at("key_check").get<std::string>();
      if (!IsLowerHex(c.store_id, 32) || !IsLowerHex(c.key_check, 64))
        return Status::Corruption("config.json: an encrypted store's store_id is 32 hex digits and its key_check 64");
      if (c.seal_generations()) {
        STRATA_ASSIGN_OR_RETURN(c.seal_limit, Unsigned(enc, "seal_limit"));
        if (c.seal_limit < kMinSealLimit || c.seal_limit > kMaxSealLimit)
          return Status::Corruption("config.json: seal_limit is from " + std::to_string(kMinSealLimit) + " to 2^31");
      }
    } else if (j.contains("encryption")) {
      return Status::Corruption("config.json names an encryption, but version " + std::to_string(c.version) +
                                " stores are not encrypted");
    }
    c.hash = j.at("hash").get<std::string>();
    if (c.hash != "sha256") return Status::Unsupported("store uses hash '" + c.hash + "'; only sha256 is known");
    const auto& ch = j.at("chunker");
    if (ch.at("algorithm").get<std::string>() != "gear-v1")
      return Status::Unsupported("unknown chunking algorithm in config.json");
    STRATA_ASSIGN_OR_RETURN(c.chunker.min_size, Unsigned(ch, "min_size"));
    STRATA_ASSIGN_OR_RETURN(c.chunker.avg_size, Unsigned(ch, "avg_size"));
    STRATA_ASSIGN_OR_RETURN(c.chunker.max_size, Unsigned(ch, "max_size"));
    if (!c.chunker.Valid()) return Status::Corruption("config.json has invalid chunk sizes");
    const auto& comp = j.at("compression");
    if (comp.at("codec").get<std::string>() != "zstd")
      return Status::Unsupported("unknown compression codec in config.json");
    STRATA_ASSIGN_OR_RETURN(uint64_t level, Unsigned(comp, "level"));
    if (level > 22) return Status::Corruption("config.json has an invalid zstd level");
    c.zstd_level = static_cast<int>(level);
    // Absent in version 1 stores, which had no frames: the default applies to what is written now.
    if (comp.contains("frame_size")) {
      STRATA_ASSIGN_OR_RETURN(uint64_t frame_size, Unsigned(comp, "frame_size"));
      unsigned shift = kMinFrameShift;
      while (shift < kMaxFrameShift && (uint64_t{1} << shift) < frame_size) shift++;
      if ((uint64_t{1} << shift) != frame_size)
        return Status::Corruption("config.json has an invalid frame size (a power of two from 4 KiB to 16 MiB)");
      c.frame_shift = shift;
    }
    STRATA_ASSIGN_OR_RETURN(c.pack_size, Unsigned(j, "pack_size"));
    if (c.pack_size < (1u << 20) || c.pack_size > (4ull << 30))
      return Status::Corruption("config.json has an invalid pack size");
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("config.json is missing a field or has a wrong type: ") + e.what());
  }
  return c;
}

}  // namespace strata
