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
// Packs that vanish: the local index is only a cache of what the bucket held
// when it was last listed. If packs disappear from the bucket (deleted by
// hand, a cluster that lost its data and was set up again), the index would
// keep saying their objects are there, and a push would skip them and move a
// ref to a commit the bucket cannot serve. So every listing of packs/ is
// compared with the index as it was just before the listing, and packs that
// the index names but the bucket no longer lists are forgotten
// (ForgetVanishedPacks): their objects count as absent and are sent again.
// A ref update (CompareAndSwapRef) first lists packs/ once more and refuses
// to move the ref if any pack the index relies on has gone since: one LIST
// request per 1000 packs per ref update.
//
// gc while others write (gc_protocol.h): a store's first write session
// writes a lease (AnnounceWriter) and reads every gc's list of condemned
// objects, which count as absent to it from then on (Condemned), so it stores
// them again rather than build on them. A ref update refuses once the lease
// has run out, and accepts that packs holding only condemned objects vanish.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "remote/block_cache.h"
#include "remote/s3_client.h"
#include "store/backend.h"
#include "util/mutex.h"

namespace strata {

class StoreCipher;

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
  uint64_t packs_vanished = 0;  // forgotten because the bucket no longer lists them
};

class S3Backend : public Backend {
 public:
  // `index` is the store's (it must outlive the backend); nullptr for a
  // backend that never reconciles (tests of the requests alone).
  S3Backend(Env* env, std::shared_ptr<S3Client> client, std::unique_ptr<BlockCache> cache, Index* index = nullptr)
      : env_(env), client_(std::move(client)), cache_(std::move(cache)), index_(index) {}

  // Forgets, in the index, the packs that the last listing of packs/ did not
  // show although the index held them when it began. Returns their names.
  Result<std::vector<std::string>> ForgetVanishedPacks();

  Status PublishPack(const std::string& local_path, const std::string& name) override;
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& name) override;
  Result<std::shared_ptr<RandomAccessFile>> OpenPackUncached(const std::string& name) override;
  Status DeletePack(const std::string& name) override;
  // Deletes packs with multi-object deletes; those the bucket may still hold
  // (the server did not say they are gone) get one more try and are then
  // returned with why: for a later run, never taken as gone.
  Result<std::vector<std::pair<std::string, std::string>>> DeletePacks(const std::vector<std::string>& names);
  Result<std::vector<std::string>> ListPacks() override;

  Result<std::optional<Hash>> GetRef(const std::string& name) override;
  Result<std::map<std::string, Hash>> ListRefs() override;
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected,
                           const Hash& target) override;
  Status DeleteRef(const std::string& name, const Hash& expected) override;

  std::string PackLocation(const std::string& name) const override;
  bool Shared() const override { return true; }

  Status AnnounceWriter() override;
  void RetireWriter() override;
  bool Condemned(const Hash& id) const override;
  Status ForgetPacksGoneSinceListing() override;

  // The cipher of an encrypted store (its pack footers are sealed); before
  // the backend is used. None for a plain one.
  void SetFooterCipher(std::shared_ptr<const StoreCipher> cipher) { footer_cipher_ = std::move(cipher); }

  S3Client& client() const { return *client_; }
  // Forgets packs in the index that a gc here is deleting (objects they held
  // that other packs hold too stay found there).
  Status ForgetPacks(const std::vector<std::string>& names);

  // Deletes the cache blocks this backend fetched: after a copy into local
  // packs, which hold the same bytes now. An error names a block that could
  // not be deleted (it stays cached and counted).
  Status DropFetchedCache() { return cache_->DropFetched(); }

  S3BackendCounters counters() const;
  std::vector<std::pair<std::string, uint64_t>> Counters() const override;

 private:
  struct RefState {
    std::optional<Hash> value;        // nullopt: absent or deleted
    std::optional<std::string> etag;  // nullopt: the object does not exist
  };
  Result<RefState> ReadRef(const std::string& name);
  // Puts a pack just published into the block cache, read from its local
  // file, when it holds trees and commits only: this machine walks them
  // again soon (forget and gc walk history, a mount reads trees), and each
  // block read back from the bucket would be a GET. Packs of file data are
  // not kept twice. Best effort.
  void KeepIfHistory(const std::string& local_path, const std::string& name, uint64_t size);
  Result<uint64_t> PackSize(const std::string& name);
  // Lists packs/ and forgets vanished packs; the names of those that held
  // an object not condemned (a loss this store did not expect).
  Result<std::vector<std::string>> RelistAndForget();
  // The vanished packs, forgotten in the index; those holding objects that
  // no gc list named are returned (the lists read when the lease was
  // written, and `also_condemned` if given).
  Result<std::vector<std::string>> ForgetVanished(std::vector<std::string> vanished,
                                                  const std::unordered_set<Hash>* also_condemned = nullptr);
  // Indexes, from their footers, the packs of a listing that the index does
  // not know: where a repack put the objects of packs that vanished.
  Status IndexListed(const std::vector<std::string>& listed);
  // After packs were forgotten: objects they held that another pack holds
  // too are placed there (read from those packs' footers).
  Status IndexObjectsHeldElsewhere();
  // Writes `body` to ref `name` if it still holds `expected`.
  Status SwapRef(const std::string& name, const std::optional<Hash>& expected, const std::string& body,
                 const std::optional<Hash>& target);

  Env* const env_;
  const std::shared_ptr<S3Client> client_;
  const std::unique_ptr<BlockCache> cache_;
  Index* const index_;
  std::shared_ptr<const StoreCipher> footer_cipher_;  // null: a plain store
  mutable Mutex mu_;  // a leaf lock: no request to the bucket is made under it
  // Packs the index held before the last listing that it did not show.
  std::vector<std::string> vanished_ GUARDED_BY(mu_);
  std::atomic<bool> lost_since_open_{false};  // a ref update found packs gone
  struct Lease {
    std::string key;
    std::chrono::steady_clock::time_point start;  // before it was written
  };
  std::optional<Lease> lease_ GUARDED_BY(mu_);
  std::unordered_set<Hash> condemned_ GUARDED_BY(mu_);  // read when the lease was written
  std::map<std::string, uint64_t> pack_sizes_ GUARDED_BY(mu_);  // learnt from listings
  std::atomic<uint64_t> packs_published_{0}, bytes_published_{0}, packs_vanished_{0};
};

}  // namespace strata
