// Transfer: copying history from one store to another (push and pull).
//
// CopyHistory makes everything a commit reaches present in the destination:
// the commits along every parent line, their trees and their files' chunks,
// skipping what the destination already holds. It relies on one invariant of
// both stores: an object that is stored has everything it refers to stored
// too. Copies keep it by writing in three rounds, each flushed before the next
// starts: chunks, then trees from the leaves up, then commits from the oldest.
// So a copy interrupted at any point (a killed process, a lost network) leaves
// a destination that still holds the invariant, and the next copy skips what
// arrived and sends the rest: transfers resume by construction.
//
// A commit the source counts as forgotten (strata forget) is copied without
// its tree, which a gc may have deleted, and recorded as forgotten at the
// destination before it is stored there. A remote source that forgets more
// while the copy runs (another machine's forget, then gc) is read again: a
// tree that vanished so starts the copy again, knowing the new set.
//
// Chunks are copied by several threads at once (parallel GETs and PUTs when
// one side is remote); trees are read a level at a time, in parallel.
//
// Thread-safety: one call at a time per pair of stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/progress.h"

namespace strata {

struct TransferStats {
  uint64_t commits = 0, trees = 0, chunks = 0;  // objects copied
  uint64_t chunk_bytes = 0;                     // their size (uncompressed)
  uint64_t chunks_present = 0;                  // chunks the destination already had
  double seconds = 0;
};

struct TransferOptions {
  int threads = 8;              // chunks copied at once
  Progress* progress = nullptr;  // bytes of chunks, when given
};

// Copies what `head` reaches from `from` to `to`. The caller holds a write
// session on `to` until a ref names `head` there.
Result<TransferStats> CopyHistory(Store& from, Store& to, const Hash& head, const TransferOptions& options = {});

// Whether `ancestor` is `descendant` or one of its ancestors (walks `store`'s
// history from `descendant`; a commit missing from the store ends that line).
Result<bool> IsAncestor(Store& store, const Hash& ancestor, const Hash& descendant);

// Commits from `descendant` back to (excluding) `base`, following first
// parents, oldest first. InvalidArgument when `base` is not on that line.
Result<std::vector<Hash>> FirstParentLine(Store& store, const Hash& base, const Hash& descendant);

// The newest commit both histories share (nullopt when none): the common
// ancestor a replay starts from.
Result<std::optional<Hash>> MergeBase(Store& store, const Hash& a, const Hash& b);

}  // namespace strata
