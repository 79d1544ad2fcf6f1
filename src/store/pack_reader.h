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

class StoreCipher;

// How an object read for use is checked (docs/format/frames.md). kFast: a
// framed object by its frames' XXH3 checksums, for packs this store wrote to
// its own disk; kFull: by its SHA-256 id as well, for bytes that crossed a
// trust boundary (a remote's) or a mount that asks for it. Objects of pack
// format 1 have no frame checksums and are always checked by their id.
enum class ReadCheck { kFast, kFull };

// The bytes each kind of check covered, and the frames decoded.
struct CheckCost {
  uint64_t frames = 0, fast_bytes = 0, sha256_bytes = 0;
};

// Part of an object: whole frames that hold the bytes asked for, starting at
// `offset` within the object.
struct ObjectPart {
  uint64_t offset = 0;
  Buffer bytes;
};

class PackCache {
 public:
  // capacity 0: DefaultCapacity(). cipher: the store's, null for a plain
  // store; it must outlive the cache.
  explicit PackCache(Backend* backend, size_t capacity = 0, ReadCheck check = ReadCheck::kFast,
                     const StoreCipher* cipher = nullptr);
  void SetReadCheck(ReadCheck check) { check_ = check; }
  ReadCheck read_check() const { return check_.load(); }

  // A quarter of this process's descriptor limit (RLIMIT_NOFILE, soft),
  // between 8 and 1024: the rest is for the workspace's files, FUSE and SQLite.
  static size_t DefaultCapacity();
  size_t capacity() const { return capacity_; }
  size_t open_count();

  // Reads the object described by `entry` from pack `pack_name`, decodes it and
  // checks it as read_check() says. Any mismatch is Corruption that names the
  // object and the pack.
  Result<std::string> ReadObject(const std::string& pack_name, const PackEntry& entry);
  // The same, in a Buffer: no zero-fill, and raw objects handed over as
  // read. For file data, where these copies show.
  Result<Buffer> ReadObjectBuffer(const std::string& pack_name, const PackEntry& entry);
  // Bytes [offset, offset + length) of the object, and the rest of the frames
  // that hold them: for a framed object checked kFast, only those frames are
  // read and decoded. Otherwise (pack format 1, or kFull, whose SHA-256 needs
  // every byte) the whole object, at offset 0.
  // REQUIRES: length > 0 and offset + length <= entry.raw_len.
  Result<ObjectPart> ReadRange(const std::string& pack_name, const PackEntry& entry, uint64_t offset,
                               uint64_t length);
  // The object's bytes as the pack holds them (compressed or raw), after
  // checking its id whatever read_check() says: for copying them to another
  // store as they are.
  Result<std::string> ReadStored(const std::string& pack_name, const PackEntry& entry);
  // Closes every handle (reads in flight keep theirs): gc removed packs.
  void Clear();

  // What ReadObject has cost so far.
  struct Counters {
    uint64_t objects = 0, bytes_stored = 0, bytes_verified = 0, pread_us = 0, decode_us = 0;
    uint64_t frames_decoded = 0;        // frames of framed objects decoded
    uint64_t range_reads = 0;           // ReadRange calls that read only some frames
    uint64_t fast_checked_bytes = 0;    // stored bytes checked by XXH3
    uint64_t sha256_checked_bytes = 0;  // decoded bytes checked by SHA-256 against their id
  };
  Counters counters() const;

 private:
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& pack_name);
  // The open pack that holds entry, after checking the entry fits in it.
  Result<std::shared_ptr<RandomAccessFile>> FileHolding(const std::string& pack_name, const PackEntry& entry);
  // The stored bytes of an entry, counted, unchecked.
  Result<std::string> ReadBytes(const std::string& pack_name, const PackEntry& entry);
  void Count(const CheckCost& cost, uint64_t decode_us);
  static Status Damaged(const std::string& pack_name, const PackEntry& entry, const Status& why);

  Backend* const backend_;
  const StoreCipher* const cipher_;
  const size_t capacity_;
  Mutex mu_;  // a leaf lock: no I/O and no other lock under it
  // Most recently used first; open_ points into it.
  using Lru = std::list<std::pair<std::string, std::shared_ptr<RandomAccessFile>>>;
  Lru lru_ GUARDED_BY(mu_);
  std::map<std::string, Lru::iterator> open_ GUARDED_BY(mu_);
  std::atomic<ReadCheck> check_;
  std::atomic<uint64_t> objects_{0}, bytes_stored_{0}, bytes_verified_{0}, pread_us_{0}, decode_us_{0};
  std::atomic<uint64_t> frames_decoded_{0}, fast_checked_{0}, sha256_checked_{0}, range_reads_{0};
};

// Decodes one object's stored bytes and checks them against its entry: the
// frame checksums of a framed object, and the id (SHA-256) of every object;
// in an encrypted store (cipher not null), its seal.
Result<std::string> DecodeObject(const PackEntry& entry, std::string_view stored, const StoreCipher* cipher);

// Reads a pack's trailer and footer (no payload checks), opening the footer
// with the cipher of an encrypted store.
Result<std::vector<PackEntry>> ReadPackIndex(const RandomAccessFile& file, const StoreCipher* cipher);

}  // namespace strata
