// BlockCache: a bounded on-disk cache of remote pack bytes.
//
// Packs are cut into fixed-size blocks (1 MiB by default); a read fetches the
// blocks it covers that are not cached, each with one range GET, keeps them
// as files in the cache directory ("<pack>.<block>") and serves the bytes
// from them afterwards. Blocks rather than objects, because small objects
// (trees, small files' chunks) sit next to each other in a pack: one GET
// brings a directory's neighbours along.
//
// Bounded per directory, not per process: when the cached bytes pass the
// capacity, the least recently used blocks are deleted. Blocks cached by an
// earlier run count as older than any used in this one (ranked among
// themselves in directory order). Several processes (two mounts of one
// remote) share the directory: each rescans it once it has added a
// sixteenth of the capacity since its last scan, and then deletes the blocks
// other processes cached (which it cannot rank) before its own least recently
// used ones. So the directory holds at most the capacity plus a sixteenth of
// it per process writing there. A block file that cannot be deleted stays
// counted, and until it can be, fetched blocks are served without being
// cached: the bound holds even then.
//
// Single-flight: concurrent reads of one missing block share one fetch.
//
// Trust: cached bytes are not verified here. The store checks every object's
// hash when it decodes it, so a block damaged on disk shows as a Corruption
// naming the object, never as wrong data.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/env.h"
#include "util/mutex.h"
#include "util/status.h"

namespace strata {

struct BlockCacheCounters {
  uint64_t hits = 0;           // blocks served from the cache
  uint64_t misses = 0;         // blocks fetched
  uint64_t waits = 0;          // reads that waited on another thread's fetch of their block
  uint64_t fetched_bytes = 0;  // bytes fetched
  uint64_t evictions = 0;      // blocks deleted to stay under the capacity
  uint64_t cached_bytes = 0;   // now in the cache
};

class BlockCache {
 public:
  // Fetches `length` bytes of the pack at `offset` (a range GET).
  using Fetch = std::function<Result<std::string>(uint64_t offset, uint64_t length)>;

  // Opens (creating it when missing) the cache in `dir`, counting what it holds.
  static Result<std::unique_ptr<BlockCache>> Open(Env* env, const std::string& dir, uint64_t capacity_bytes,
                                                  uint64_t block_size = 1 << 20);

  // Reads bytes [offset, offset+n) of pack `pack` (`pack_size` bytes long)
  // into *out, fetching missing blocks with `fetch`.
  Status Read(const std::string& pack, uint64_t pack_size, uint64_t offset, size_t n, std::string* out,
              const Fetch& fetch);

  BlockCacheCounters counters() const EXCLUDES(mu_);

  // Deletes every block this instance fetched: for a copy (pull) whose bytes
  // now live in local packs, so that they are not kept twice. A block that
  // cannot be deleted stays cached (and counted); the first such error is
  // returned after the others were tried.
  Status DropFetched() EXCLUDES(mu_);

 private:
  struct InFlight {
    bool done = false;
    Status status;
    std::string data;
  };
  struct Entry {
    uint64_t size = 0;
    std::list<std::string>::iterator lru;  // position in lru_
    bool fetched_here = false;             // fetched by this instance (not found at Open)
  };

  BlockCache(Env* env, std::string dir, uint64_t capacity, uint64_t block_size)
      : env_(env), dir_(std::move(dir)), capacity_(capacity), block_size_(block_size) {}

  // Appends bytes [from, to) of block `block` of the pack to *out.
  Status ReadBlock(const std::string& pack, uint64_t pack_size, uint64_t block, uint64_t from, uint64_t to,
                   std::string* out, const Fetch& fetch) EXCLUDES(mu_);
  Status FetchBlock(const std::string& key, uint64_t offset, uint64_t length, const Fetch& fetch,
                    std::string* data) EXCLUDES(mu_);
  void Insert(const std::string& key, uint64_t size) REQUIRES(mu_);  // and evict
  // Evicts down to the capacity: LRU victims of our own, or, after a rescan
  // of the directory, other processes' blocks first.
  // Returns false when a victim could not be deleted: it stays counted (and
  // is tried first again next time), and nothing more may be cached until
  // an eviction succeeds (evict_blocked_).
  bool Evict() REQUIRES(mu_);
  void Rescan() REQUIRES(mu_);
  std::string PathOf(const std::string& key) const { return dir_ + "/" + key; }

  Env* const env_;
  const std::string dir_;
  const uint64_t capacity_;
  const uint64_t block_size_;

  // A leaf lock: nothing else is locked while it is held (fetches and block
  // file I/O happen outside it, eviction's deletions inside).
  mutable Mutex mu_;
  CondVar fetched_;  // an in-flight fetch is done
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::list<std::string> lru_ GUARDED_BY(mu_);  // front: most recent
  // Shared with the waiters; an InFlight's fields are guarded by mu_ too.
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_ GUARDED_BY(mu_);
  BlockCacheCounters counters_ GUARDED_BY(mu_);
  uint64_t added_since_scan_ GUARDED_BY(mu_) = 0;
  bool evict_blocked_ GUARDED_BY(mu_) = false;  // the last Evict could not delete a victim
};

}  // namespace strata
