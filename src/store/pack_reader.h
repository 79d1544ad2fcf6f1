// Reading packs: single objects on demand, whole packs for verification.
//
// PackCache keeps one open pack per name so that reads are a single pread;
// the handles are shared by all threads (pread has no shared offset).
//
// Thread-safety: PackCache is safe for concurrent use.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "env/env.h"
#include "store/backend.h"
#include "store/pack_format.h"

namespace strata {

class PackCache {
 public:
  explicit PackCache(Backend* backend) : backend_(backend) {}

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
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<RandomAccessFile>> open_;  // GUARDED_BY(mu_)
  std::atomic<uint64_t> objects_{0}, bytes_stored_{0}, bytes_verified_{0}, pread_us_{0}, decode_us_{0};
};

// Decodes and checks one object's stored bytes against its entry.
Result<std::string> DecodeObject(const PackEntry& entry, std::string_view stored);

// Reads a pack's trailer and footer (no payload checks).
Result<std::vector<PackEntry>> ReadPackIndex(const RandomAccessFile& file);

}  // namespace strata
