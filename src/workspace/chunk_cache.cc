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
  parts_.clear();  // decoded frames are cheap to decode again
  parts_lru_.clear();
  counters_.part_bytes = 0;
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

Result<ChunkCache::Part> ChunkCache::GetPart(Store& store, const Hash& id, uint64_t offset, uint64_t length) {
  {
    MutexLock lock(&mu_);
    if (entries_.count(id) || inflight_.count(id)) {
      lock.Unlock();
      STRATA_ASSIGN_OR_RETURN(auto whole, Get(store, id));
      return Part{std::move(whole), 0};
    }
    // The cached part that starts at or before offset, if it covers the range.
    auto it = parts_.upper_bound(PartKey{id, offset});
    if (it != parts_.begin()) {
      --it;
      if (it->first.first == id && it->first.second + it->second.data->size() >= offset + length) {
        counters_.part_hits++;
        parts_lru_.splice(parts_lru_.begin(), parts_lru_, it->second.lru);
        return Part{it->second.data, it->first.second};
      }
    }
    counters_.part_fetches++;
  }
  // No single-flight here: two random readers of one frame decode it twice,
  // which costs less than making every part read wait on a map of fetches.
  auto got = store.GetRange(id, ObjectType::kChunk, offset, length);
  if (!got.ok()) {
    MutexLock lock(&mu_);
    counters_.fetch_errors++;
    return ReadError(id, got.status());
  }
  Part part{std::make_shared<const Buffer>(std::move(got->bytes)), got->offset};
  MutexLock lock(&mu_);
  InsertPart(id, part.offset, part.data);
  return part;
}

void ChunkCache::InsertPart(const Hash& id, uint64_t offset, std::shared_ptr<const Buffer> data) {
  const uint64_t bound = capacity_ / 4;
  if (data->size() > bound) return;
  const PartKey key{id, offset};
  if (auto it = parts_.find(key); it != parts_.end()) {  // another reader decoded it meanwhile
    counters_.part_bytes -= it->second.data->size();
    parts_lru_.erase(it->second.lru);
    parts_.erase(it);
  }
  parts_lru_.push_front(key);
  counters_.part_bytes += data->size();
  parts_[key] = PartEntry{std::move(data), parts_lru_.begin()};
  while (counters_.part_bytes > bound && !parts_lru_.empty()) {
    auto victim = parts_.find(parts_lru_.back());
    counters_.part_bytes -= victim->second.data->size();
    parts_.erase(victim);
    parts_lru_.pop_back();
  }
}

Status ChunkCache::ReadError(const Hash& id, const Status& s) {
  // Whatever went wrong in the store, a reader of the file sees EIO (the
  // file system answers damage with EIO too); damage stays damage, so that
  // a commit that must read the chunk says so (exit 3), with the cause
  // alone after it rather than strerror(EIO) as well.
  const std::string what = "reading chunk " + id.ToHex() + ": " + s.message();
  return s.IsCorruption() ? Status::Corruption(what) : Status::IOErrorWithMessage(what, EIO);
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
    status = ReadError(id, got.status());
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
