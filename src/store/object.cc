#include "store/object.h"

#include <string>

namespace strata {

bool IsValidObjectType(uint8_t t) { return t >= 1 && t <= 3; }

const char* ObjectTypeName(ObjectType t) {
  switch (t) {
    case ObjectType::kChunk: return "chunk";
    case ObjectType::kTree: return "tree";
    case ObjectType::kCommit: return "commit";
  }
  return "unknown";
}

Hash ComputeObjectId(ObjectType type, std::string_view data) {
  std::string header = std::string("strata ") + ObjectTypeName(type) + " " + std::to_string(data.size());
  Sha256 sha;
  sha.Update(header.data(), header.size() + 1);  // includes the terminating NUL
  sha.Update(data);
  return sha.Finish();
}

}  // namespace strata
