// ChunkCache: decoded base chunks, shared by every workspace of the process.
//
// Reads of unchanged file data come from the base commit's chunks; a chunk is
// up to 2 MiB and a FUSE read is at most 128 KiB, so without a cache a
// sequential read would fetch and decode each chunk many times. The cache is
// bounded by bytes and evicts the least recently used chunk.
//
// Single-flight: when several threads want the same missing chunk, one fetches
// it and the others wait for that fetch instead of fetching it again.
//
// Chunk ids are content hashes checked by Store::Get, so one cache can serve
// several stores: equal ids mean equal bytes.
//
// Thread-safety: all methods may be called concurrently. Fetches run without
// the cache's lock held, so different chunks are fetched in parallel.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "store/store.h"

namespace strata::workspace_internal {

class ChunkCache {
 public:
  explicit ChunkCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  // The process-wide cache (64 MiB).
  static ChunkCache& Shared();

  // The chunk's bytes; store errors come back with errno EIO.
  Result<std::shared_ptr<const std::string>> Get(Store& store, const Hash& id);

  struct Counters {
    uint64_t hits = 0, misses = 0, waits = 0;  // waits: joined a fetch in flight
  };
  Counters counters();

 private:
  struct Fetch {
    bool done = false;
    Status status;
    std::shared_ptr<const std::string> data;
  };
  struct Entry {
    std::shared_ptr<const std::string> data;
    std::list<Hash>::iterator lru;  // position in lru_
  };

  const uint64_t capacity_;
  std::mutex mu_;
  std::condition_variable fetched_;
  std::unordered_map<Hash, Entry> entries_;                   // GUARDED_BY(mu_)
  std::list<Hash> lru_;                                       // most recent first, GUARDED_BY(mu_)
  std::unordered_map<Hash, std::shared_ptr<Fetch>> inflight_;  // GUARDED_BY(mu_)
  uint64_t bytes_ = 0;                                        // GUARDED_BY(mu_)
  Counters counters_;                                         // GUARDED_BY(mu_)
};

}  // namespace strata::workspace_internal
