#include "workspace/chunk_cache.h"

#include "workspace/workspace.h"

#include <algorithm>
#include <cerrno>

namespace strata {

void SetChunkCacheCapacity(uint64_t bytes) {
  auto& cache = workspace_internal::ChunkCache::Shared();
  cache.Configure(bytes, workspace_internal::ReadAheadLimits{});
}

namespace workspace_internal {

ChunkCache& ChunkCache::Shared() {
  static ChunkCache* cache = new ChunkCache(kDefaultCapacity);  // never destroyed: used until exit
  return *cache;
}

ChunkCache::Counters ChunkCache::counters() {
  MutexLock lock(&mu_);
  return counters_;
}

uint64_t ChunkCache::capacity() {
  MutexLock lock(&mu_);
  return capacity_;
}

ReadAheadLimits ChunkCache::limits() {
  MutexLock lock(&mu_);
  return limits_;
}

void ChunkCache::Configure(uint64_t capacity_bytes, ReadAheadLimits limits) {
  MutexLock lock(&mu_);
  capacity_ = capacity_bytes;
  // Prefetched chunks must leave room for what readers are using now, or
  // read-ahead would evict the chunks it was meant to save a fetch of.
  limits.max_bytes = std::min(limits.max_bytes, capacity_bytes / 2);
  limits_ = limits;
  EvictToCapacity();
}

Result<std::shared_ptr<const Buffer>> ChunkCache::Get(Store& store, const Hash& id) {
  MutexLock lock(&mu_);
  counters_.demands++;
  auto it = entries_.find(id);
  if (it != entries_.end()) {
    counters_.hits++;
    Entry& e = it->second;
    if (e.unread_prefetch) {
      e.unread_prefetch = false;
      counters_.readahead_used++;
      counters_.readahead_bytes -= e.data->size();
    }
    lru_.splice(lru_.begin(), lru_, e.lru);
    return e.data;
  }
  auto in = inflight_.find(id);
  if (in != inflight_.end()) {
    counters_.waits++;
    std::shared_ptr<Fetch> f = in->second;
    if (f->prefetch && !f->demanded) counters_.readahead_used++;
    f->demanded = true;
    while (!f->done) fetched_.Wait(&mu_);
    if (!f->status.ok()) return f->status;
    return f->data;
  }
  counters_.misses++;
  counters_.fetches++;
  auto fetch = std::make_shared<Fetch>();
  fetch->demanded = true;
  inflight_[id] = fetch;
  counters_.fetches_in_flight_max = std::max<uint64_t>(counters_.fetches_in_flight_max, inflight_.size());
  lock.Unlock();

  RunFetch(store, id, fetch);
  // fetch->done is set and never changes again: reading without the lock is safe.
  if (!fetch->status.ok()) return fetch->status;
  return fetch->data;
}

bool ChunkCache::Prefetch(Store& store, const Hash& id, uint64_t length, const Executor& run) {
  std::shared_ptr<Fetch> fetch;
  {
    MutexLock lock(&mu_);
    if (entries_.count(id) || inflight_.count(id)) return false;
    if (prefetches_in_flight_ >= limits_.max_fetches || counters_.readahead_bytes + length > limits_.max_bytes) {
      counters_.readahead_skipped++;
      return false;
    }
    fetch = std::make_shared<Fetch>();
    fetch->prefetch = true;
    fetch->reserved = length;
    counters_.readahead_bytes += length;
    prefetches_in_flight_++;
    inflight_[id] = fetch;
    counters_.fetches++;
    counters_.readahead_issued++;
    counters_.fetches_in_flight_max = std::max<uint64_t>(counters_.fetches_in_flight_max, inflight_.size());
  }
  run([this, &store, id, fetch] { RunFetch(store, id, fetch); });
  return true;
}

void ChunkCache::RunFetch(Store& store, const Hash& id, const std::shared_ptr<Fetch>& fetch) {
  auto got = store.GetBuffer(id, ObjectType::kChunk);
  Status status;
  std::shared_ptr<const Buffer> data;
  if (got.ok()) {
    data = std::make_shared<const Buffer>(std::move(got).value());
  } else {
    // Whatever went wrong in the store, a reader of the file sees EIO (the
    // file system answers damage with EIO too); damage stays damage, so that
    // a commit that must read the chunk says so (exit 3), with the cause
    // alone after it rather than strerror(EIO) as well.
    const std::string what = "reading chunk " + id.ToHex() + ": " + got.status().message();
    status = got.status().IsCorruption() ? Status::Corruption(what) : Status::IOErrorWithMessage(what, EIO);
  }

  MutexLock lock(&mu_);
  inflight_.erase(id);
  if (fetch->prefetch) {
    prefetches_in_flight_--;
    counters_.readahead_bytes -= fetch->reserved;
  }
  const bool unread = fetch->prefetch && !fetch->demanded;
  if (status.ok()) {
    Insert(id, data, unread);
  } else {
    counters_.fetch_errors++;
    if (unread) counters_.readahead_wasted++;
  }
  fetch->status = status;
  fetch->data = data;
  fetch->done = true;
  fetched_.NotifyAll();
}

void ChunkCache::Insert(const Hash& id, std::shared_ptr<const Buffer> data, bool unread_prefetch) {
  if (data->size() > capacity_) {
    if (unread_prefetch) counters_.readahead_wasted++;
    return;
  }
  lru_.push_front(id);
  counters_.bytes += data->size();
  if (unread_prefetch) counters_.readahead_bytes += data->size();
  entries_[id] = Entry{std::move(data), lru_.begin(), unread_prefetch};
  EvictToCapacity();
}

void ChunkCache::EvictToCapacity() {
  while (counters_.bytes > capacity_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    const uint64_t size = victim->second.data->size();
    counters_.bytes -= size;
    if (victim->second.unread_prefetch) {
      counters_.readahead_wasted++;
      counters_.readahead_bytes -= size;
    }
    entries_.erase(victim);
    lru_.pop_back();
  }
}

}  // namespace workspace_internal
}  // namespace strata
