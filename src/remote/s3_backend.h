// S3Backend: a store's packs and refs in an S3 bucket (tested on Ceph RGW).
//
// Layout under the location's prefix (docs/format/remote.md):
//   config.json     the store's format and chunking settings
//   packs/<name>    sealed packs, byte for byte as in a local store
//   refs/<branch>   "<commit id hex>\n", or "deleted\n" once deleted
//
// Packs are published with one PUT of the sealed local file and read with
// range GETs through an on-disk BlockCache. A ref moves by compare-and-swap:
// it is read with its ETag, compared, and written with If-Match (or
// If-None-Match: * when it never existed). Deleting is a conditional write of
// a tombstone, because S3 ignores conditions on DELETE. A conditional write
// whose answer was lost (a 5xx, a timeout) is settled by reading the ref again.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "remote/block_cache.h"
#include "remote/s3_client.h"
#include "store/backend.h"

namespace strata {

// The body of refs/<branch>: "<commit id hex>\n", or kRemoteRefTombstone for a
// deleted branch (nullopt). Decoding takes the id with or without its newline,
// in either case of hex; anything else is Corruption.
constexpr const char* kRemoteRefTombstone = "deleted\n";
std::string EncodeRemoteRef(const std::optional<Hash>& target);
Result<std::optional<Hash>> DecodeRemoteRef(std::string_view body);

struct S3BackendCounters {
  BlockCacheCounters cache;
  uint64_t packs_published = 0;
  uint64_t bytes_published = 0;
};

class S3Backend : public Backend {
 public:
  S3Backend(Env* env, std::shared_ptr<S3Client> client, std::unique_ptr<BlockCache> cache)
      : env_(env), client_(std::move(client)), cache_(std::move(cache)) {}

  Status PublishPack(const std::string& local_path, const std::string& name) override;
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& name) override;
  Result<std::shared_ptr<RandomAccessFile>> OpenPackUncached(const std::string& name) override;
  Status DeletePack(const std::string& name) override;
  Result<std::vector<std::string>> ListPacks() override;

  Result<std::optional<Hash>> GetRef(const std::string& name) override;
  Result<std::map<std::string, Hash>> ListRefs() override;
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected,
                           const Hash& target) override;
  Status DeleteRef(const std::string& name, const Hash& expected) override;

  std::string PackLocation(const std::string& name) const override;
  bool Shared() const override { return true; }

  S3BackendCounters counters() const;
  std::vector<std::pair<std::string, uint64_t>> Counters() const override;

 private:
  struct RefState {
    std::optional<Hash> value;        // nullopt: absent or deleted
    std::optional<std::string> etag;  // nullopt: the object does not exist
  };
  Result<RefState> ReadRef(const std::string& name);
  Result<uint64_t> PackSize(const std::string& name);
  // Writes `body` to ref `name` if it still holds `expected`.
  Status SwapRef(const std::string& name, const std::optional<Hash>& expected, const std::string& body,
                 const std::optional<Hash>& target);

  Env* const env_;
  const std::shared_ptr<S3Client> client_;
  const std::unique_ptr<BlockCache> cache_;
  std::mutex mu_;
  std::map<std::string, uint64_t> pack_sizes_;  // learnt from listings, GUARDED_BY(mu_)
  std::atomic<uint64_t> packs_published_{0}, bytes_published_{0};
};

}  // namespace strata
