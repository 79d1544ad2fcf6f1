#include "remote/block_cache.h"

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <unordered_set>

namespace strata {
namespace {

// Temp names end in ".part": never mistaken for a block, removed at open.
bool IsTempName(const std::string& name) { return name.ends_with(".part"); }

// A removal that succeeded, or found the file gone already: another process
// sharing the directory deleted it, which frees the space as well.
bool RemovedOrGone(const Status& s) { return s.ok() || s.errno_value() == ENOENT; }

std::string TempName(const std::string& key) {
  static std::atomic<uint64_t> n{0};
  return key + "." + std::to_string(n++) + ".part";
}

}  // namespace

Result<std::unique_ptr<BlockCache>> BlockCache::Open(Env* env, const std::string& dir, uint64_t capacity_bytes,
                                                     uint64_t block_size) {
  if (block_size == 0) return Status::InvalidArgument("block cache: block size must not be 0");
  STRATA_RETURN_IF_ERROR(env->CreateDir(dir));
  std::unique_ptr<BlockCache> cache(new BlockCache(env, dir, capacity_bytes, block_size));
  STRATA_ASSIGN_OR_RETURN(auto names, env->ListDir(dir));
  MutexLock lock(&cache->mu_);
  for (const std::string& name : names) {
    if (IsTempName(name)) {
      // A fetch that a crash cut short (or another process's, which then
      // serves its bytes uncached). Best effort: a temp name is never read
      // or counted, and every Open tries again.
      env->RemoveFile(cache->PathOf(name)).IgnoreError();
      continue;
    }
    auto size = env->FileSize(cache->PathOf(name));
    if (!size.ok()) continue;
    // Blocks from an earlier run rank below everything used in this one.
    cache->Insert(name, *size);
  }
  return cache;
}

Status BlockCache::Read(const std::string& pack, uint64_t pack_size, uint64_t offset, size_t n, std::string* out,
                        const Fetch& fetch) {
  out->clear();
  if (offset > pack_size || n > pack_size - offset)
    return Status::Corruption("read of " + std::to_string(n) + " bytes at " + std::to_string(offset) + " is past the end of pack " +
                              pack + " (" + std::to_string(pack_size) + " bytes)");
  out->reserve(n);
  uint64_t end = offset + n;
  for (uint64_t block = offset / block_size_; block * block_size_ < end; block++) {
    uint64_t start = block * block_size_;
    uint64_t from = std::max(offset, start) - start;
    uint64_t to = std::min(end, start + block_size_) - start;
    STRATA_RETURN_IF_ERROR(ReadBlock(pack, pack_size, block, from, to, out, fetch));
  }
  return Status::Ok();
}

Status BlockCache::ReadBlock(const std::string& pack, uint64_t pack_size, uint64_t block, uint64_t from, uint64_t to,
                             std::string* out, const Fetch& fetch) {
  const std::string key = pack + "." + std::to_string(block);
  const uint64_t start = block * block_size_;
  const uint64_t length = std::min(block_size_, pack_size - start);
  std::shared_ptr<InFlight> wait_for;
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.size == length) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      counters_.hits++;
      lock.Unlock();
      auto file = env_->NewRandomAccessFile(PathOf(key));
      std::string part;
      Status s = file.ok() ? (*file)->Read(from, to - from, &part) : file.status();
      if (s.ok()) {
        out->append(part);
        return Status::Ok();
      }
      // Evicted between the lookup and the open, or damaged: fetch it again.
      lock.Lock();
      counters_.hits--;
    }
    auto flight = in_flight_.find(key);
    if (flight != in_flight_.end()) {
      wait_for = flight->second;
      counters_.waits++;
      while (!wait_for->done) fetched_.Wait(&mu_);
      if (!wait_for->status.ok()) return wait_for->status;
      out->append(wait_for->data, from, to - from);
      return Status::Ok();
    }
    in_flight_[key] = std::make_shared<InFlight>();
  }
  std::string data;
  Status s = FetchBlock(key, start, length, fetch, &data);
  {
    MutexLock lock(&mu_);
    auto flight = in_flight_.find(key);
    flight->second->done = true;
    flight->second->status = s;
    // Waiters (holding the entry too) copy their part from it.
    if (s.ok() && flight->second.use_count() > 1) flight->second->data = data;
    in_flight_.erase(flight);
  }
  fetched_.NotifyAll();
  if (!s.ok()) return s;
  out->append(data, from, to - from);
  return Status::Ok();
}

Status BlockCache::FetchBlock(const std::string& key, uint64_t offset, uint64_t length, const Fetch& fetch,
                              std::string* data) {
  STRATA_ASSIGN_OR_RETURN(*data, fetch(offset, length));
  if (data->size() != length)
    return Status::Corruption("fetching " + key + ": got " + std::to_string(data->size()) + " bytes, expected " +
                              std::to_string(length));
  {
    MutexLock lock(&mu_);
    counters_.misses++;
    counters_.fetched_bytes += length;
    // A block file that could not be deleted holds the cache at its size:
    // try again, and serve this block uncached while it still fails.
    if (evict_blocked_ && !Evict()) return Status::Ok();
  }
  // Written to a temp name and renamed, so a block file is always whole; not
  // synced: a cache lost in a power cut is fetched again.
  const std::string temp = PathOf(TempName(key));
  auto file = env_->NewWritableFile(temp);
  Status s = file.ok() ? (*file)->Append(*data) : file.status();
  if (s.ok()) s = (*file)->Close();
  if (s.ok()) s = env_->Rename(temp, PathOf(key));
  if (!s.ok()) {
    // A full cache disk costs speed, not correctness: serve the bytes anyway.
    // Best effort: a temp name is never read or counted; Open removes it.
    env_->RemoveFile(temp).IgnoreError();
    return Status::Ok();
  }
  MutexLock lock(&mu_);
  added_since_scan_ += length;
  Insert(key, length);
  if (auto e = entries_.find(key); e != entries_.end()) e->second.fetched_here = true;
  return Status::Ok();
}

void BlockCache::Insert(const std::string& key, uint64_t size) {
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    counters_.cached_bytes -= it->second.size;
    lru_.erase(it->second.lru);
    entries_.erase(it);
  }
  lru_.push_front(key);
  entries_[key] = Entry{size, lru_.begin()};
  counters_.cached_bytes += size;
  Evict();
}

bool BlockCache::Evict() {
  // Other processes add to the directory too: look at what it holds once we
  // have added a sixteenth of the capacity (at least a block) since we last did.
  if (added_since_scan_ >= std::max(capacity_ / 16, block_size_)) Rescan();
  evict_blocked_ = false;
  while (counters_.cached_bytes > capacity_ && !lru_.empty()) {
    const std::string& victim = lru_.back();
    // Readers that already opened the file keep reading it (unlink semantics).
    if (!RemovedOrGone(env_->RemoveFile(PathOf(victim)))) {
      evict_blocked_ = true;  // still on disk: it stays counted, at the back
      return false;
    }
    auto v = entries_.find(victim);
    counters_.cached_bytes -= v->second.size;
    entries_.erase(v);
    lru_.pop_back();
    counters_.evictions++;
  }
  return true;
}

void BlockCache::Rescan() {
  added_since_scan_ = 0;
  auto names = env_->ListDir(dir_);
  if (!names.ok()) return;  // the next scan tries again; our own blocks stay bounded
  std::unordered_set<std::string> present;
  uint64_t foreign_bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> foreign;
  for (const std::string& name : *names) {
    if (IsTempName(name)) continue;
    present.insert(name);
    if (entries_.count(name)) continue;
    auto size = env_->FileSize(PathOf(name));
    if (!size.ok()) continue;  // deleted meanwhile
    foreign.emplace_back(name, *size);
    foreign_bytes += *size;
  }
  // Our blocks that another process deleted no longer count.
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (present.count(*it)) {
      ++it;
      continue;
    }
    auto e = entries_.find(*it);
    counters_.cached_bytes -= e->second.size;
    entries_.erase(e);
    it = lru_.erase(it);
  }
  for (const auto& [name, size] : foreign) {
    if (counters_.cached_bytes + foreign_bytes <= capacity_) break;
    if (env_->RemoveFile(PathOf(name)).ok()) counters_.evictions++;
    foreign_bytes -= size;
  }
  // Over the capacity still: only our own blocks are left to evict (the caller does).
}

Status BlockCache::DropFetched() {
  MutexLock lock(&mu_);
  Status first_error;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto e = entries_.find(*it);
    if (!e->second.fetched_here) {
      ++it;
      continue;
    }
    if (Status s = env_->RemoveFile(PathOf(*it)); !RemovedOrGone(s)) {
      if (first_error.ok()) first_error = s.WithContext("block cache: dropping fetched blocks");
      ++it;  // still on disk: stays cached and counted
      continue;
    }
    counters_.cached_bytes -= e->second.size;
    entries_.erase(e);
    it = lru_.erase(it);
  }
  return first_error;
}

BlockCacheCounters BlockCache::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

}  // namespace strata
