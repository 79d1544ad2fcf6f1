// ChunkCache: decoded base chunks, shared by every workspace of the process.
//
// Reads of unchanged file data come from the base commit's chunks; a chunk is
// up to 2 MiB and a FUSE read is at most 1 MiB, so without a cache a
// sequential read would fetch and decode each chunk several times. The cache
// is bounded by bytes and evicts the least recently used chunk.
//
// Single-flight: when several threads want the same missing chunk, one fetches
// it and the others wait for that fetch instead of fetching it again. A
// read-ahead fetch in flight is joined the same way.
//
// Read-ahead: Prefetch() registers a fetch and hands it to the caller's
// executor, so the request that asked for it does not wait. Read-ahead has its
// own bounds, so that it can neither push the cache's working set out nor
// flood the store: the bytes of prefetched chunks not yet read (in flight or
// cached) and the number of prefetches in flight. A prefetch over either bound
// is skipped, never queued.
//
// Chunk ids are content hashes, and the store checks what it loads (its
// frames' XXH3 checksums, or SHA-256 against the id: docs/format/frames.md),
// so one cache can serve several stores: equal ids mean equal bytes, and a
// chunk or frame is verified once, when it is loaded from the store.
//
// Thread-safety: all methods may be called concurrently. Fetches run without
// the cache's lock held, so different chunks are fetched in parallel.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "store/store.h"
#include "util/mutex.h"

namespace strata::workspace_internal {

struct ReadAheadLimits {
  uint64_t max_bytes = 32ull << 20;  // prefetched, not yet read: in flight plus cached (at most half the cache)
  unsigned max_fetches = 8;          // prefetches in flight (8 kept a cold read's disk busier than 4)
};

class ChunkCache {
 public:
  // Read-ahead may hold at most half the capacity, whatever `limits` says.
  explicit ChunkCache(uint64_t capacity_bytes, ReadAheadLimits limits = {}) { Configure(capacity_bytes, limits); }
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  // The process-wide cache (kDefaultCapacity unless Configure changes it).
  static ChunkCache& Shared();
  // Small on purpose: the kernel's page cache keeps what was read, so this
  // cache only bridges chunks that span requests and holds read-ahead; a
  // larger one made cold reads slower (more memory touched for the first time).
  static constexpr uint64_t kDefaultCapacity = 32ull << 20;

  // A read's demand for a chunk: its bytes; store errors come back with errno EIO.
  Result<std::shared_ptr<const Buffer>> Get(Store& store, const Hash& id) EXCLUDES(mu_);

  // Bytes [offset, offset + length) of a chunk, for a read that is not part
  // of a sequential stream: from the whole chunk when it is cached or being
  // fetched, else from the decoded frames that hold them (Store::GetRange),
  // which are kept in a part of the cache of their own (a quarter of its
  // capacity) so that reads near each other find them. `data` holds the
  // bytes of the chunk from `offset` on, covering at least the range asked.
  // REQUIRES: length > 0 and offset + length <= the chunk's length.
  struct Part {
    std::shared_ptr<const Buffer> data;
    uint64_t offset = 0;
  };
  Result<Part> GetPart(Store& store, const Hash& id, uint64_t offset, uint64_t length) EXCLUDES(mu_);

  // Runs a task on another thread (the caller's read-ahead workers).
  using Executor = std::function<void(std::function<void()>)>;
  // Starts loading a chunk of `length` bytes in the background unless it is
  // cached, already being fetched, or a read-ahead bound would be exceeded.
  // Returns whether a fetch was started. REQUIRES: `store` outlives the task
  // handed to `run`.
  bool Prefetch(Store& store, const Hash& id, uint64_t length, const Executor& run) EXCLUDES(mu_);

  // Changes the capacity (evicting down to it) and the read-ahead limits.
  void Configure(uint64_t capacity_bytes, ReadAheadLimits limits) EXCLUDES(mu_);
  uint64_t capacity() EXCLUDES(mu_);
  ReadAheadLimits limits() EXCLUDES(mu_);

  struct Counters {
    uint64_t demands = 0;  // Get() calls: hits + misses + waits
    uint64_t hits = 0;     // demands the cache answered
    uint64_t misses = 0;   // demands that fetched the chunk themselves
    uint64_t waits = 0;    // demands that joined a fetch in flight (a demand's or a prefetch's)
    uint64_t fetches = 0;  // loads from the store: misses + prefetches issued
    uint64_t fetch_errors = 0;
    uint64_t readahead_issued = 0;   // prefetches started
    uint64_t readahead_used = 0;     // prefetched chunks a demand later wanted
    uint64_t readahead_wasted = 0;   // prefetched chunks evicted (or failed) before any demand
    uint64_t readahead_skipped = 0;  // prefetches refused by a read-ahead bound
    uint64_t fetches_in_flight_max = 0;  // most fetches running at once (parallel store reads)
    uint64_t part_hits = 0;              // GetPart calls answered by cached frames
    uint64_t part_fetches = 0;           // GetPart calls that read frames from the store
    uint64_t part_bytes = 0;             // decoded frames cached now
    uint64_t bytes = 0;                  // cached now
    uint64_t readahead_bytes = 0;        // prefetched and not yet read, now
  };
  Counters counters() EXCLUDES(mu_);

 private:
  struct Fetch {
    bool done = false;
    bool prefetch = false;  // started by Prefetch
    bool demanded = false;  // a demand joined it (so its bytes are used)
    uint64_t reserved = 0;  // read-ahead bytes held while in flight
    Status status;
    std::shared_ptr<const Buffer> data;
  };
  struct Entry {
    std::shared_ptr<const Buffer> data;
    std::list<Hash>::iterator lru;  // position in lru_
    bool unread_prefetch = false;   // loaded by a prefetch and not demanded yet
  };

  // Loads id from the store and publishes the result (cache entry, waiters).
  void RunFetch(Store& store, const Hash& id, const std::shared_ptr<Fetch>& fetch) EXCLUDES(mu_);
  void Insert(const Hash& id, std::shared_ptr<const Buffer> data, bool unread_prefetch) REQUIRES(mu_);
  void EvictToCapacity() REQUIRES(mu_);
  void InsertPart(const Hash& id, uint64_t offset, std::shared_ptr<const Buffer> data) REQUIRES(mu_);
  // Converts a store error into what a reader sees (EIO; damage stays Corruption).
  static Status ReadError(const Hash& id, const Status& s);

  // A leaf lock (lock order: workspace/sqlite_workspace.h): store reads run without it.
  Mutex mu_;
  CondVar fetched_;  // a fetch in flight is done
  uint64_t capacity_ GUARDED_BY(mu_) = 0;
  ReadAheadLimits limits_ GUARDED_BY(mu_);
  std::unordered_map<Hash, Entry> entries_ GUARDED_BY(mu_);
  std::list<Hash> lru_ GUARDED_BY(mu_);  // most recent first
  std::unordered_map<Hash, std::shared_ptr<Fetch>> inflight_ GUARDED_BY(mu_);
  uint64_t prefetches_in_flight_ GUARDED_BY(mu_) = 0;
  // Decoded frames by (chunk, offset of the first); least recently used first out.
  using PartKey = std::pair<Hash, uint64_t>;
  struct PartEntry {
    std::shared_ptr<const Buffer> data;
    std::list<PartKey>::iterator lru;
  };
  std::map<PartKey, PartEntry> parts_ GUARDED_BY(mu_);
  std::list<PartKey> parts_lru_ GUARDED_BY(mu_);  // most recent first
  Counters counters_ GUARDED_BY(mu_);
};

}  // namespace strata::workspace_internal
