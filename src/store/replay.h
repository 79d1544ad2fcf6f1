// Replay: re-making a line of commits on top of another commit (what `strata
// pull` does when both sides committed since they last agreed).
//
// Each commit of the line is replayed in order as a three-way tree merge:
// its parent's tree is the base, the commit's tree one side, the tree built
// so far the other (tree_merge.h). A replayed commit keeps its author, time
// and message and gets the previous replayed commit (or `onto`) as its only
// parent, so history stays a line.
//
// Thread-safety: writes to the store from the caller's thread; the caller
// holds a write session until a ref names the result, and flushes nothing
// (ReplayLine flushes before returning a tip).
#pragma once

#include <vector>

#include "store/store.h"
#include "store/tree_merge.h"

namespace strata {

struct ReplayResult {
  Hash tip;  // the last replayed commit (`onto` when the line is empty)
  // When a commit of the line could not be replayed: its id and the paths in
  // conflict; tip is then meaningless and nothing refers to what was written.
  std::optional<Hash> failed_commit;
  std::vector<MergeConflict> conflicts;
};

Result<ReplayResult> ReplayLine(Store& store, const std::vector<Hash>& line, const Hash& onto);

}  // namespace strata
