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
#pragma once

#include <cstdint>
#include <functional>
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
};

// Reads n bytes of the new content at offset into out.
using ReadContent = std::function<Status(uint64_t offset, size_t n, char* out)>;
// Stores one new chunk; returns its id.
using PutChunk = std::function<Result<Hash>(std::string_view data)>;

// The new content's chunk list. *bytes_hashed gets the bytes chunked anew.
Result<std::vector<ChunkRef>> Rechunk(const Chunker& chunker, const RechunkInput& in, const ReadContent& read,
                                      const PutChunk& put, uint64_t* bytes_hashed);

}  // namespace strata::workspace_internal
