// Chunk layout: which way a changed file is cut into chunks at commit.
//
// Content-defined chunks (chunking.md) average 512 KiB. A file written in
// place at scattered offsets (a VM disk image, a database) dirties a whole
// chunk for every small write, so a commit after 100 MiB of random 4 KiB writes
// into a 10 GiB image re-hashes nearly all of it. Such files are cut instead at
// fixed offsets into kFixedChunkSize chunks: a write dirties only the chunks it
// covers, and the commit hashes about twice what was written.
//
// The choice is recorded by the chunk list itself: content-defined cuts never
// fall before min_size, so a list of two or more chunks whose every chunk but
// the last is exactly kFixedChunkSize (smaller than min_size) can only be a
// fixed layout. The next commit of the file sees that shape and keeps it.
// See docs/format/chunking.md, "Fixed-size chunks".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "store/chunker.h"
#include "store/tree.h"
#include "workspace/rechunk.h"

namespace strata::workspace_internal {

inline constexpr size_t kFixedChunkSize = 8 * 1024;
// Smaller files stay content-defined: their whole list is cheap to re-hash.
inline constexpr uint64_t kFixedMinFileSize = 16ull << 20;

enum class ChunkLayout { kContentDefined, kFixed };

// Whether a store with these parameters can tell a fixed layout by its shape.
bool FixedLayoutPossible(const ChunkerParams& params);

// Whether `chunks` (starting at offset 0) has the fixed shape: two or more
// chunks, all but the last kFixedChunkSize, the last no longer.
bool HasFixedShape(const std::vector<ChunkRef>& chunks);

// What a commit of a changed file would hash either way (estimates).
struct LayoutCosts {
  uint64_t written = 0;          // bytes written that are data (not holes)
  uint64_t content_defined = 0;  // the old chunks the writes touch, and avg_size per new block they touch
  uint64_t fixed = 0;            // the bytes not known to be zeros (a file turning fixed reads all of them)
};

// `starts`: the offsets of in.old_chunks and, last, their end; `zeros`: the
// sorted, disjoint ranges of the new content known to be zeros.
LayoutCosts EstimateCosts(const ChunkerParams& params, const RechunkInput& in, const std::vector<uint64_t>& starts,
                          const std::vector<Extent>& zeros);

// The layout a changed file gets: a file whose base has the fixed shape keeps
// it unless it was rewritten whole; otherwise a file of at least
// kFixedMinFileSize turns fixed when content-defined chunks would hash more
// than 4x what was written and turning costs at most 2x that (so it has paid
// for itself by the next commit of the same kind).
ChunkLayout ChooseLayout(const ChunkerParams& params, const RechunkInput& in, const LayoutCosts& costs);

}  // namespace strata::workspace_internal
