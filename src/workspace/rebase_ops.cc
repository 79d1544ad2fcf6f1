// RebaseOnto: the workspace's changes replayed on another commit
// (workspace.h, RebaseOnto), for a commit refused with "head moved".
//
//  1. The snapshot (snapshot_ops.cc): the tree the next commit would hold,
//     with the change tracking left on, so that step 3 knows whether
//     anything changed after its cut.
//  2. The merge (store/tree_merge.h) of three top directories: the base
//     commit's, the snapshot's ("ours") and the new commit's ("theirs"),
//     with the caller's choices for conflicting paths. No lock is held; the
//     merged trees are written to the store and flushed.
//  3. Under the workspace lock: if nothing changed since the cut (the direct
//     writers' files refreshed first, direct_ops.cc), the merged
//     tree becomes the content (ReplaceContent, as a hard reset installs a
//     tree) and the new commit the base. Otherwise the merged tree misses
//     those changes: start over.
//
// The next commit then holds the merged tree exactly: the root is marked
// changed when the merged tree differs from the new base's, the commit
// rebuilds the root from the merged tree's entries and reuses every
// directory below by id.
//
// Why ReplaceContent rather than patching the namespace: it is correct for
// any merge and costs the rows the workspace holds. The price is the one a
// hard reset pays: every path gets a new inode, but for the directories the
// kernel holds at a path that stays a directory (they are kept, so that
// programs walking or listing them see no gap); what else the kernel holds
// (open files, current directories whose path went) lives on unnamed.
#include "store/tree_diff.h"
#include "store/tree_merge.h"
#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

namespace {

// Attempts before giving up on a workspace that keeps changing under a rebase.
constexpr int kRebaseAttempts = 3;

}  // namespace

Result<bool> SqliteWorkspace::TryRebase(const Hash& head_id, const strata::Commit& head,
                                        const ConflictChoices& choices, RebaseOutcome* out) {
  CommitPlan plan;
  STRATA_ASSIGN_OR_RETURN(WorkspaceSnapshot snap, BuildSnapshot(plan, /*exact=*/true));
  if (snap.base == head_id) {  // a commit moved the base there meanwhile
    out->up_to_date = true;
    return true;
  }
  std::optional<TreeEntry> base;
  if (snap.base) {
    auto c = store_.GetCommit(*snap.base);
    if (!c.ok()) return AsEio(c.status(), "reading the base commit");
    base = RootEntry(*c);
  }
  strata::Commit ours;
  ours.root = snap.root;
  ours.root_meta = snap.root_meta;
  auto merge = MergeTopDirectories(store_, base ? &*base : nullptr, RootEntry(ours), RootEntry(head), choices);
  if (!merge.ok()) return AsEio(merge.status(), "merging onto " + head_id.ToHex());
  if (!merge->unused_choices.empty())  // a typo must not pass for a settled conflict
    return Status::InvalidArgument("'" + (merge->unused_choices[0].empty() ? "." : merge->unused_choices[0]) +
                                   "' is not in conflict" +
                                   (merge->unused_choices.size() > 1
                                        ? " (nor are " + std::to_string(merge->unused_choices.size() - 1) + " more)"
                                        : "") +
                                   "; nothing was changed (a rebase without choices lists the conflicts)");
  if (!merge->conflicts.empty()) {
    out->conflicts = std::move(merge->conflicts);
    return true;
  }
  // The workspace's base_root will name the merged tree: it must be durable
  // first.
  STRATA_RETURN_IF_ERROR(store_.Flush());
  const RootMeta meta = RootMetaOf(merge->merged);
  out->root = merge->merged.subtree;
  out->differs = out->root != head.root || !(meta == head.root_meta);

  MutexLock lock(&mu_);
  // The kernel's writes through passthrough went on once their files were
  // captured, and never reached Write(): they are changes since the cut too.
  STRATA_RETURN_IF_ERROR(RefreshDirectWriters());
  if (!modified_since_cut_.empty()) return false;
  STRATA_RETURN_IF_ERROR(ReplaceContent(out->root, meta, head_id, out->differs, &out->stale));
  return true;
}

Result<RebaseOutcome> SqliteWorkspace::RebaseOnto(const Hash& commit, const ConflictChoices& choices) {
  // The merged trees are reachable from no ref until `base_root` names them,
  // and the commit may be reachable only by its id: gc must keep both.
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store_.BeginWrite());
  auto head = store_.GetCommit(commit);
  if (!head.ok()) return AsEio(head.status(), "reading commit " + commit.ToHex());
  {
    MutexLock lock(&mu_);
    if (info_.base == commit) return RebaseOutcome{.up_to_date = true};
  }
  for (int attempt = 0; attempt < kRebaseAttempts; attempt++) {
    RebaseOutcome out;
    Result<bool> done = TryRebase(commit, *head, choices, &out);
    EndCapture();  // the snapshot's capture and tracking end here, in every case
    if (!done.ok()) return done.status();
    if (*done) return out;
  }
  MutexLock lock(&mu_);
  return Errno(EBUSY, "workspace '" + info_.name +
                          "' kept changing while it was being rebased; nothing was "
                          "changed, try again");
}

}  // namespace strata::workspace_internal
