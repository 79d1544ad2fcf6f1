// StoreConfig <-> config.json. The file names its format and version first so
// that a store written by a future strata is refused instead of misread.
#include <nlohmann/json.hpp>

#include "store/store.h"

namespace strata {

namespace {
constexpr const char* kFormatName = "strata-store";
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
  j["compression"] = {{"codec", "zstd"}, {"level", zstd_level}};
  j["pack_size"] = pack_size;
  return j.dump(2) + "\n";
}

Result<StoreConfig> StoreConfig::FromJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("config.json is not valid JSON");
  // A "format" of another type is no strata store either (value() would throw).
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kFormatName)
    return Status::Corruption("config.json does not describe a strata store");
  StoreConfig c;
  try {
    c.version = j.at("version").get<int>();
    if (c.version != kFormatVersion)
      return Status::Unsupported("store format version " + std::to_string(c.version) +
                                 " is not supported by this strata (it reads version " +
                                 std::to_string(kFormatVersion) + ")");
    c.hash = j.at("hash").get<std::string>();
    if (c.hash != "sha256") return Status::Unsupported("store uses hash '" + c.hash + "'; only sha256 is known");
    const auto& ch = j.at("chunker");
    if (ch.at("algorithm").get<std::string>() != "gear-v1")
      return Status::Unsupported("unknown chunking algorithm in config.json");
    c.chunker.min_size = ch.at("min_size").get<size_t>();
    c.chunker.avg_size = ch.at("avg_size").get<size_t>();
    c.chunker.max_size = ch.at("max_size").get<size_t>();
    if (!c.chunker.Valid()) return Status::Corruption("config.json has invalid chunk sizes");
    const auto& comp = j.at("compression");
    if (comp.at("codec").get<std::string>() != "zstd")
      return Status::Unsupported("unknown compression codec in config.json");
    c.zstd_level = comp.at("level").get<int>();
    if (c.zstd_level < 0 || c.zstd_level > 22) return Status::Corruption("config.json has an invalid zstd level");
    c.pack_size = j.at("pack_size").get<uint64_t>();
    if (c.pack_size < (1u << 20) || c.pack_size > (4ull << 30))
      return Status::Corruption("config.json has an invalid pack size");
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("config.json is missing a field or has a wrong type: ") + e.what());
  }
  return c;
}

}  // namespace strata
