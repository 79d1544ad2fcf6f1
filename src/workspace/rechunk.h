// Rechunk: the chunk list of a changed file, hashing only around the changes.
//
// A file of the workspace is its old chunks (the base, up to base_len) with
// written ranges laid over them. Content-defined cuts depend only on the bytes
// from the previous cut, so chunking the new content from the start would give
// the old cuts up to the first old chunk that changed, and the old cuts again
// from the first new cut that lands on an old boundary after the change. This
// walks the file that way: old chunks that are untouched are taken as they are
// (not read, not hashed); from the start of the first touched one, new content
// is chunked until a cut falls on an old boundary again. The result equals
// chunking the whole new file, so dedup against imports of the same content
// holds, at the cost of a few chunks per changed range.
//
// Long runs of zeros (a sparse file's holes) never re-synchronise that way:
// zeros hold no cut, so every chunk in them is max_size or so long, counted
// from wherever the run was entered. They need no reading either: a chunk
// that starts where max_size bytes of known zeros follow is always the same
// (ZeroChunk), so such stretches are chunked by arithmetic, without reading
// or hashing, and a 1 MiB change inside a 4 GiB sparse file hashes a few MiB.
//
// A large file written at scattered offsets is cut at fixed offsets instead
// (chunk_layout.h): untouched fixed chunks are taken as they are, the touched
// ones are read and hashed, and whole fixed chunks of known zeros get the
// fixed zero chunk without reading.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "store/chunker.h"
#include "store/tree.h"
#include "util/status.h"
#include "workspace/namespace_db.h"

namespace strata::workspace_internal {

struct RechunkInput {
  std::vector<ChunkRef> old_chunks;  // the chunks the unwritten bytes below base_len come from
  uint64_t base_len = 0;             // bytes below it not in `written` equal the old chunks'
  uint64_t size = 0;                 // of the new content
  std::vector<Extent> written;       // ranges that differ from the old chunks, sorted, disjoint
  std::vector<Extent> holes;         // parts of `written` known to read as zeros, sorted, disjoint
};

// The parts of `ranges` that `cover` does not cover (both sorted, disjoint):
// for the holes of written ranges, the written ranges less the data ranges.
std::vector<Extent> Uncovered(const std::vector<Extent>& ranges, const std::vector<Extent>& cover);

// The id a chunk of these bytes has in the store.
using ChunkId = std::function<Hash(std::string_view data)>;

// The chunk the chunker cuts where at least max_size zero bytes follow: its
// length and id, computed on first use and kept for the files that follow
// (one per commit, so each file does not hash it again).
class ZeroChunk {
 public:
  ZeroChunk(const Chunker& chunker, ChunkId id_of) : chunker_(chunker), id_of_(std::move(id_of)) {}
  size_t length() { return Get().length; }
  const Hash& id() { return Get().id; }
  bool stored = false;  // put into the store by an earlier file of this commit

  // The chunk of kFixedChunkSize zeros, for files cut at fixed offsets (chunk_layout.h).
  const ChunkRef& fixed();
  bool fixed_stored = false;

 private:
  const ChunkRef& Get();
  const Chunker& chunker_;
  ChunkId id_of_;
  std::optional<ChunkRef> chunk_, fixed_;
};

// Reads n bytes of the new content at offset into out.
using ReadContent = std::function<Status(uint64_t offset, size_t n, char* out)>;
// Stores one new chunk; returns its id.
using PutChunk = std::function<Result<Hash>(std::string_view data)>;

// The new content's chunk list, content-defined or at fixed offsets as
// ChooseLayout (chunk_layout.h) picks. *bytes_hashed gets the bytes chunked anew.
Result<std::vector<ChunkRef>> Rechunk(const Chunker& chunker, ZeroChunk& zero, const RechunkInput& in,
                                      const ReadContent& read, const PutChunk& put, uint64_t* bytes_hashed);

}  // namespace strata::workspace_internal
