// Keyed object ids: HMAC-SHA256 of an object's content under the object-id
// subkey. Equal content under one master key gets one id, so dedup works
// inside an encrypted store, while someone without the key cannot compute
// the id of a file they know and look for it (a plain SHA-256 would let them).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "crypto/aead.h"
#include "util/hash.h"
#include "util/status.h"

namespace strata::crypto {

// HMAC-SHA256 (RFC 2104) of data under key, any key length.
Result<Hash> HmacSha256(std::string_view key, std::string_view data);

// The keyed id of content. REQUIRES: id_key is DeriveSubkey(master, kSubkeyObjectId).
Result<Hash> KeyedId(const Key256& id_key, std::string_view content);

// HMAC-SHA256 under one fixed key, for hashing many objects: the key's inner
// and outer pads are hashed once, and each id is two SHA-256 passes from
// copies of those states (RFC 2104's construction, equal to HmacSha256). It
// cannot fail, so a store computes keyed ids where it computed SHA-256 ones.
class KeyedHasher {
 public:
  explicit KeyedHasher(const Key256& key);
  // HMAC(key, prefix || data): the object header and bytes, without joining them.
  Hash Of(std::string_view prefix, std::string_view data) const;

 private:
  Sha256 inner_, outer_;  // after the padded key
};

}  // namespace strata::crypto
