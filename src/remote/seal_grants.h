// Key generations in the bucket of an encrypted store's remote, so that every
// store sharing the master key through it seals under generations of its own
// (docs/format/encryption.md, "Nonces across stores").
//
//   generations   "strata-generations 1 FIRST END CLAIM\n": the generations
//                 [FIRST, END) the bucket still has to give, granted to it by
//                 the store that added it first; CLAIM is the random id of the
//                 last claim (32 hex digits, or "-"), so that a claim whose
//                 answer was lost can tell whether it landed.
//
// A claim takes the top of what is left, by compare-and-swap (If-Match on the
// object's ETag): of two machines claiming at once one wins and the other
// claims again, so no two claims ever overlap.
//
// Thread-safety: functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "remote/s3_client.h"
#include "store/seal_range.h"
#include "store/store.h"
#include "util/status.h"

namespace strata {

constexpr const char* kGenerationsKey = "generations";

struct BucketGenerations {
  SealRange left;
  std::string claim = "-";
};
std::string EncodeBucketGenerations(const BucketGenerations& g);
// Corruption unless body is what EncodeBucketGenerations writes for a range.
Result<BucketGenerations> DecodeBucketGenerations(std::string_view body);

// Whether the bucket has its generations (nullopt: not given yet).
Result<std::optional<BucketGenerations>> ReadBucketGenerations(S3Client& client);
// Gives the bucket its generations once (If-None-Match: *); another
// machine's that were there first are kept.
Status GiveBucketGenerations(S3Client& client, const SealRange& range);
// Takes up to max_count generations from the top of what the bucket has left.
Result<SealRange> ClaimBucketGenerations(S3Client& client, uint64_t max_count);

// How many generations a store hands a bucket it adds first, and a claim
// takes from a bucket: each generation seals up to 2^31 objects, so either
// is far more than any store uses.
constexpr uint64_t kBucketGrant = uint64_t{1} << 24;
constexpr uint64_t kStoreClaim = uint64_t{1} << 16;

// Whether a store of config `local` (and key `master`, if it is encrypted)
// may use a bucket whose config.json is `remote`: both plain, or both
// encrypted (with key generations) under that master key. Refused otherwise,
// naming url, before anything is written; a wrong key reads nothing but the
// bucket's config.json.
Status CheckRemoteConfig(const StoreConfig& local, const StoreConfig& remote, const crypto::Key256* master,
                         const std::string& url);

// For an encrypted store adding a remote: gives the bucket generations from
// the store's own if it has none yet, and gives the store generations from
// the bucket's if it owns none (a store made with another store's key),
// which then also takes the bucket's seal limit if it is lower
// (store/seal_limit.h); bucket is the bucket's config.json.
Status ShareSealGenerations(Store& local, S3Client& client, const StoreConfig& bucket);

}  // namespace strata
