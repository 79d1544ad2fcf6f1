#include "store/replay.h"

#include "store/tree_diff.h"

namespace strata {

Result<ReplayResult> ReplayLine(Store& store, const std::vector<Hash>& line, const Hash& onto) {
  ReplayResult result;
  result.tip = onto;
  STRATA_ASSIGN_OR_RETURN(Commit tip, store.GetCommit(onto));
  for (const Hash& id : line) {
    STRATA_ASSIGN_OR_RETURN(Commit commit, store.GetCommit(id));
    std::optional<TreeEntry> base;
    if (!commit.parents.empty()) {
      STRATA_ASSIGN_OR_RETURN(Commit parent, store.GetCommit(commit.parents[0]));
      base = RootEntry(parent);
    }
    STRATA_ASSIGN_OR_RETURN(TreeMergeResult merge,
                            MergeTopDirectories(store, base ? &*base : nullptr, RootEntry(tip), RootEntry(commit)));
    if (!merge.conflicts.empty()) {
      result.failed_commit = id;
      result.conflicts = std::move(merge.conflicts);
      return result;
    }
    Commit replayed = commit;
    replayed.root = merge.merged.subtree;
    replayed.root_meta = RootMetaOf(merge.merged);
    replayed.parents = {result.tip};
    STRATA_ASSIGN_OR_RETURN(PutResult put, store.Put(ObjectType::kCommit, EncodeCommit(replayed)));
    result.tip = put.id;
    tip = std::move(replayed);
  }
  STRATA_RETURN_IF_ERROR(store.Flush());
  return result;
}

}  // namespace strata
