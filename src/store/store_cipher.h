// StoreCipher: what an encrypted store does with its master key
// (docs/format/encryption.md). It holds the subkeys, one per purpose, and
// turns plain store bytes into sealed ones and back:
//   - object ids: HMAC-SHA256 of the same header and bytes a plain store
//     hashes with SHA-256 (object.h), under the object-id subkey;
//   - objects: the framed bytes (frame_format.h) sealed with AES-256-GCM
//     under a generation of the object-seal subkey (named in a 4-byte header
//     where the store's format has generations), the object's type, length and id as
//     associated data, so that an object moved to another id, type or
//     length, or swapped with another, fails to open as damage;
//   - pack footers: sealed under the pack-index subkey;
//   - branch names: sealed deterministically under the refs subkey (the same
//     name always seals to the same opaque name, so a ref can be found by
//     its name, and the name can be read back for listing);
//   - the chunker's gear table, derived from the key.
// A plain store has no StoreCipher; every caller takes a null one as "plain".
//
// Thread-safety: safe for concurrent use (generation keys are derived once,
// under a mutex).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "crypto/keyed_id.h"
#include "store/chunker.h"
#include "store/object.h"
#include "util/hash.h"
#include "util/mutex.h"
#include "util/status.h"

namespace strata {

struct PackEntry;

class StoreCipher {
 public:
  // generations: sealed objects carry their key generation (format 4); else
  // every object is sealed under generation 0 with no header (format 3).
  static Result<std::unique_ptr<StoreCipher>> FromMasterKey(const crypto::Key256& master, bool generations = true);
  // The generation a sealed object names (0 without generations).
  Result<uint32_t> SealedGeneration(std::string_view sealed) const;
  bool generations() const { return generations_; }
  // The key check of a store (config.json): lowercase hex of HMAC-SHA256,
  // under master's key-check subkey, of the store's random id. It tells
  // whether a master key is this store's without revealing anything of it.
  static Result<std::string> KeyCheck(const crypto::Key256& master, std::string_view store_id);

  // Whether other has the same master key: then objects sealed by one open
  // in the other, and their ids agree, so chunks are copied as they are.
  bool SameMasterKey(const StoreCipher& other) const { return master_ == other.master_; }

  // The keyed id of an object (plain stores: ComputeObjectId).
  Hash ObjectId(ObjectType type, std::string_view data) const;
  const GearTable& gear() const { return gear_; }

  // Seals an object's framed bytes; the result is what its pack holds.
  // REQUIRES: generation == 0 unless generations().
  Result<std::string> SealObject(const Hash& id, ObjectType type, uint64_t raw_len, std::string_view framed,
                                 uint32_t generation = 0) const;
  // The framed bytes of a sealed object, or Corruption if its bytes, its id,
  // type or length differ from what was sealed (or the key is another).
  Result<std::string> OpenObject(const PackEntry& entry, std::string_view sealed) const;

  Result<std::string> SealFooter(std::string_view footer) const;
  Result<std::string> OpenFooter(std::string_view sealed) const;

  // A branch name as the backend keeps it: lowercase hex of its deterministic
  // seal. OpenRefName is Corruption for anything SealRefName did not make.
  Result<std::string> SealRefName(std::string_view name) const;
  Result<std::string> OpenRefName(std::string_view sealed_hex) const;

 private:
  StoreCipher(const crypto::Key256& id_key) : ids_(id_key) {}
  // The object-seal key of a generation: 0 is the object-seal subkey itself
  // (so format 3 objects open), n > 0 the subkey "object-seal/<n>".
  Result<crypto::Key256> SealKey(uint32_t generation) const EXCLUDES(mu_);

  crypto::KeyedHasher ids_;
  crypto::Key256 master_, index_key_, refs_key_;
  bool generations_ = true;
  mutable Mutex mu_;
  mutable std::map<uint32_t, crypto::Key256> seal_keys_ GUARDED_BY(mu_);
  GearTable gear_{};
};

}  // namespace strata
