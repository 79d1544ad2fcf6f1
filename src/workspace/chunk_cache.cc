#include "workspace/chunk_cache.h"

#include <cerrno>

namespace strata::workspace_internal {

ChunkCache& ChunkCache::Shared() {
  static ChunkCache* cache = new ChunkCache(64ull << 20);  // never destroyed: used until exit
  return *cache;
}

ChunkCache::Counters ChunkCache::counters() {
  std::lock_guard lock(mu_);
  return counters_;
}

Result<std::shared_ptr<const std::string>> ChunkCache::Get(Store& store, const Hash& id) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) {
    counters_.hits++;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.data;
  }
  auto in = inflight_.find(id);
  if (in != inflight_.end()) {
    counters_.waits++;
    std::shared_ptr<Fetch> f = in->second;
    fetched_.wait(lock, [&] { return f->done; });
    if (!f->status.ok()) return f->status;
    return f->data;
  }
  counters_.misses++;
  auto fetch = std::make_shared<Fetch>();
  inflight_[id] = fetch;
  lock.unlock();

  auto got = store.Get(id, ObjectType::kChunk);
  Status status;
  std::shared_ptr<const std::string> data;
  if (got.ok()) {
    data = std::make_shared<const std::string>(std::move(got).value());
  } else {
    // Whatever went wrong in the store, a reader of the file sees EIO.
    status = Status::IOError("reading chunk " + id.ToHex() + ": " + got.status().message(), EIO);
  }

  lock.lock();
  inflight_.erase(id);
  fetch->done = true;
  fetch->status = status;
  fetch->data = data;
  if (status.ok() && data->size() <= capacity_) {
    lru_.push_front(id);
    entries_[id] = Entry{data, lru_.begin()};
    bytes_ += data->size();
    while (bytes_ > capacity_ && !lru_.empty()) {
      auto victim = entries_.find(lru_.back());
      bytes_ -= victim->second.data->size();
      entries_.erase(victim);
      lru_.pop_back();
    }
  }
  fetched_.notify_all();
  if (!status.ok()) return status;
  return data;
}

}  // namespace strata::workspace_internal
