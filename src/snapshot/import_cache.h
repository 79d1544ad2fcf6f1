// ImportCache: makes a repeated import cost what changed.
//
// For every file an import reads, it remembers the file's identity and stat
// (device, inode, size, mtime, ctime, all in nanoseconds) and the chunks it was
// cut into. The next import of the same tree reuses the chunk list of every
// file whose stat is unchanged instead of reading it. ctime cannot be set by
// users and changes with every write, so "unchanged stat" means unchanged
// content; a file changed within kRacyWindow of the import's start is not
// remembered, because timestamps are coarser than the writes that set them.
//
// The cache is a SQLite file outside the store (the command puts it under
// ~/.cache/strata, one per store): it is local to this machine, since it is
// keyed by absolute paths, and disposable: deleting it only makes the next
// import read everything. Entries are trusted only if every chunk they name is
// still in the store.
//
// Thread-safety: not thread-safe; the importer uses it from its walk thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/file_tree.h"
#include "store/tree.h"
#include "util/status.h"

struct sqlite3;

namespace strata {

class ImportCache {
 public:
  static constexpr std::chrono::seconds kRacyWindow{2};

  static Result<std::unique_ptr<ImportCache>> Open(const std::string& db_path);
  ~ImportCache();
  ImportCache(const ImportCache&) = delete;
  ImportCache& operator=(const ImportCache&) = delete;

  // Loads what an earlier import remembered about files below root (absolute).
  Status Load(const std::string& root);
  // The chunks of path if its stat equals the remembered one; else nullptr.
  const std::vector<ChunkRef>* Find(const std::string& path, const FileStat& st) const;
  // Remembers path for the next import (unless it changed too recently).
  void Record(const std::string& path, const FileStat& st, const std::vector<ChunkRef>& chunks);
  // Replaces everything remembered below root with what was recorded.
  Status Save();

 private:
  struct Entry {
    FileStat st;
    std::vector<ChunkRef> chunks;
  };
  explicit ImportCache(sqlite3* db);

  sqlite3* db_;
  std::string root_;
  int64_t racy_after_ns_ = 0;  // files with a ctime or mtime at or after this are not recorded
  std::unordered_map<std::string, Entry> loaded_;
  std::vector<std::pair<std::string, Entry>> recorded_;
};

}  // namespace strata
