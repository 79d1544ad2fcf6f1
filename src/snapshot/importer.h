// Importer: commits a plain directory tree into the store.
//
// Two phases. A walk (one thread) lstat()s everything in sorted order, reads
// symlinks and xattrs, and finds hard links. Then the file contents are read,
// chunked, hashed and compressed by a thread pool (all cores, and more workers
// than cores so that disk waits overlap); each file becomes
// a list of chunk ids. Trees are built bottom-up, then a commit, then the branch
// moves by compare-and-swap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/store.h"

namespace strata {

struct ImportOptions {
  std::string branch;   // created if missing
  std::string message;
  std::string author;   // defaults to user@host
  size_t threads = 0;   // 0: four per core (workers also wait for the disk)
  // Where the import cache lives (import_cache.h); empty: no cache, every file
  // is read. The cache reuses the chunk lists of files unchanged since the
  // last import of the same directory into the same store.
  std::string cache_path;
  // The commit's time (ns since the epoch); none: now. For importing a tree
  // as it was at an earlier date (an old backup).
  std::optional<int64_t> time_ns;
};

struct ImportStats {
  Hash commit;
  Hash root;
  uint64_t excluded = 0;       // directories left out (the store itself)
  uint64_t cached_files = 0;   // files not read because the import cache knew them
  uint64_t files = 0, directories = 0, symlinks = 0, hardlinks = 0, specials = 0;
  uint64_t bytes = 0;          // file bytes in the tree
  uint64_t bytes_read = 0;     // of which read (the rest came from the import cache)
  uint64_t chunks = 0;         // chunks produced
  uint64_t new_chunks = 0;     // chunks the store did not have
  uint64_t new_bytes = 0;      // stored (compressed) bytes added
  double seconds = 0;
  // Where the time went: the walk (stat, xattrs), file data (read, chunk,
  // hash, compress, store), trees, and the final flush and branch update.
  double walk_seconds = 0, data_seconds = 0, tree_seconds = 0, publish_seconds = 0;
};

Result<ImportStats> ImportTree(Store& store, const std::string& source, const ImportOptions& options);

}  // namespace strata
