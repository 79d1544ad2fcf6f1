// PackWriter: appends objects to a new pack and seals it.
//
// The pack is written to STORE/tmp/<pid>-<n>-<r>.tmp as objects arrive.
// Finish() appends the footer and trailer and fsyncs; the Store then publishes
// the file to its Backend under the pack's name. Until then it is a temp file
// that the next Store::Open removes once its writer process is gone.
//
// Small objects are gathered in memory and written a few hundred at a time
// (a commit of many small files stores one chunk of some twenty bytes per
// file: a write(2) each cost as much as storing it). Larger ones go to the
// file as they come. Either way nothing can read an object before Finish.
//
// Thread-safety: none; the Store serialises access.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/env.h"
#include "store/pack_format.h"

namespace strata {

class StoreCipher;

struct SealedPack {
  std::string local_path;  // the synced temp file, to be published
  std::string name;        // "<sha256>.pack"
  uint64_t size = 0;
  std::vector<PackEntry> entries;
};

class PackWriter {
 public:
  // `version` is the header's: only tests write the older version 1, to make
  // stores as an older strata did (its objects then must not be kFramed).
  // cipher: an encrypted store's, which seals the footer (it must outlive the
  // writer); null for a plain store.
  static Result<std::unique_ptr<PackWriter>> Create(Env* env, const std::string& tmp_dir,
                                                    uint32_t version = kPackVersion,
                                                    const StoreCipher* cipher = nullptr);
  ~PackWriter();  // removes the temp file unless Finish() succeeded

  // A failed Add or Finish (a full disk) leaves the pack as it was before
  // the call, so the writer can go on or try Finish again; unless intact()
  // turns false (a failed fsync), after which every call fails.
  Status Add(const Hash& id, ObjectType type, Codec codec, std::string_view stored, uint64_t raw_len);
  Result<SealedPack> Finish();
  bool intact() const { return broken_.ok(); }

  uint64_t size() const { return size_; }
  size_t count() const { return entries_.size(); }

 private:
  PackWriter(Env* env, std::string tmp_path, std::unique_ptr<WritableFile> file, const StoreCipher* cipher);
  Status Write(std::string_view data);
  // Writes out what buffer_ holds; on failure it still holds it.
  Status WriteBuffer();

  // An object smaller than this waits in buffer_, and buffer_ is written
  // out once it would pass kBufferBytes.
  static constexpr size_t kBufferedObject = 4096;
  static constexpr size_t kBufferBytes = 256 * 1024;

  Env* const env_;
  const std::string tmp_path_;
  std::unique_ptr<WritableFile> file_;
  const StoreCipher* const cipher_;
  Sha256 checksum_;
  uint64_t size_ = 0;  // of the pack so far, buffer_ included
  std::string buffer_;  // the last size_ bytes not in file_ yet
  std::vector<PackEntry> entries_;
  bool finished_ = false;
  Status broken_;
};

}  // namespace strata
