// Reading packs: single objects on demand, whole packs for verification.
//
// PackCache keeps packs open so that reads are a single pread; the handles
// are shared by all threads (pread has no shared offset). It holds at most
// `capacity` of them and closes the least recently used one beyond that:
// a long-running mount touches every pack a store ever had, and one
// descriptor per pack ran it out of descriptors ("Too many open files").
//
// Thread-safety: PackCache is safe for concurrent use.
#pragma once

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "env/env.h"
#include "store/backend.h"
#include "store/pack_format.h"
#include "util/mutex.h"

namespace strata {

class PackCache {
 public:
  // capacity 0: DefaultCapacity().
  explicit PackCache(Backend* backend, size_t capacity = 0);

  // A quarter of this process's descriptor limit (RLIMIT_NOFILE, soft),
  // between 8 and 1024: the rest is for the workspace's files, FUSE and SQLite.
  static size_t DefaultCapacity();
  size_t capacity() const { return capacity_; }
  size_t open_count();

  // Reads the object described by `entry` from pack `pack_name`, decodes it and
  // checks that its bytes hash to entry.id. Any mismatch is Corruption that
  // names the object and the pack.
  Result<std::string> ReadObject(const std::string& pack_name, const PackEntry& entry);
  // The same, in a Buffer: no zero-fill, and raw objects handed over as
  // read. For file data, where these copies show.
  Result<Buffer> ReadObjectBuffer(const std::string& pack_name, const PackEntry& entry);
  // The object's bytes as the pack holds them (compressed or raw), after the
  // same check: for copying them to another pack as they are.
  Result<std::string> ReadStored(const std::string& pack_name, const PackEntry& entry);
  // Closes every handle (reads in flight keep theirs): gc removed packs.
  void Clear();

  // What ReadObject has cost so far.
  struct Counters {
    uint64_t objects = 0, bytes_stored = 0, bytes_verified = 0, pread_us = 0, decode_us = 0;
  };
  Counters counters() const;

 private:
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& pack_name);
  // The open pack that holds entry, after checking the entry fits in it.
  Result<std::shared_ptr<RandomAccessFile>> FileHolding(const std::string& pack_name, const PackEntry& entry);
  // The stored bytes of an entry, counted, unchecked.
  Result<std::string> ReadBytes(const std::string& pack_name, const PackEntry& entry);
  static Status Damaged(const std::string& pack_name, const PackEntry& entry, const Status& why);

  Backend* const backend_;
  const size_t capacity_;
  Mutex mu_;  // a leaf lock: no I/O and no other lock under it
  // Most recently used first; open_ points into it.
  using Lru = std::list<std::pair<std::string, std::shared_ptr<RandomAccessFile>>>;
  Lru lru_ GUARDED_BY(mu_);
  std::map<std::string, Lru::iterator> open_ GUARDED_BY(mu_);
  std::atomic<uint64_t> objects_{0}, bytes_stored_{0}, bytes_verified_{0}, pread_us_{0}, decode_us_{0};
};

// Decodes and checks one object's stored bytes against its entry.
Result<std::string> DecodeObject(const PackEntry& entry, std::string_view stored);

// Reads a pack's trailer and footer (no payload checks).
Result<std::vector<PackEntry>> ReadPackIndex(const RandomAccessFile& file);

}  // namespace strata
