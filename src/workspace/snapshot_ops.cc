// Snapshot: the tree the next commit would hold, without a commit
// (workspace.h, Snapshot). `strata diff` compares it; RebaseOnto merges it.
//
// It is the commit builder (commit_ops.cc) stopped before publishing: the
// same cut, capture and trees, so it costs what changed and writers wait
// only for the file being captured. What it leaves out is what a commit
// does to the workspace afterwards: no "committing" record, no branch move,
// and no rebase phase, so no inode loses its changed mark and no data file
// is released. Captured chunks and written trees land in the store and stay
// there (the next commit finds them again: a dedup hit).
#include <chrono>

#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<WorkspaceSnapshot> SqliteWorkspace::BuildSnapshot(CommitPlan& plan, bool exact) {
  WorkspaceSnapshot snap;
  HeldDirectWrites held;  // before the lock: released without it (direct_access.h)
  auto start = std::chrono::steady_clock::now();
  {
    MutexLock lock(&mu_);
    // One cut at a time: capturing_ and the change tracking belong to it.
    while (capture_active_) capture_cv_.Wait(&mu_);
    // Ours from here until the caller's EndCapture(), also when the cut
    // fails. Active even with nothing to capture: the caller may want to
    // know what changes from here on (RebaseOnto).
    capture_active_ = true;
    if (exact) STRATA_RETURN_IF_ERROR(HoldDirectWriters(&held));  // as Commit does
    plan.parent = info_.base;
    STRATA_RETURN_IF_ERROR(TakeCut(plan));
    for (const auto& [ino, c] : plan.captures) capturing_.insert(ino);
    modified_since_cut_.clear();
    db_->TrackChanges(&modified_since_cut_);
  }
  snap.base = plan.parent;
  plan.stats.cut_ms = MsSince(start);
  start = std::chrono::steady_clock::now();
  STRATA_RETURN_IF_ERROR(CaptureFiles(plan));
  held.Release();
  plan.stats.capture_ms = MsSince(start);
  start = std::chrono::steady_clock::now();
  STRATA_RETURN_IF_ERROR(WriteTrees(plan));
  plan.stats.trees_ms = MsSince(start);

  std::optional<strata::Commit> base;  // (Commit alone names the member function)
  if (plan.parent) {
    auto c = store_.GetCommit(*plan.parent);
    if (!c.ok()) return AsEio(c.status(), "reading the base commit");
    base = std::move(c).value();
  }
  if (auto root = plan.dirs.find(kRootInode); root != plan.dirs.end()) {
    snap.root = root->second.id;
    snap.root_meta = plan.root_meta;
  } else if (base) {
    // Nothing in any tree changed (or only files already unlinked): the base's tree.
    snap.root = base->root;
    snap.root_meta = base->root_meta;
  } else {
    // Defensive: a workspace without a base starts with its root changed.
    STRATA_ASSIGN_OR_RETURN(PutResult empty, store_.Put(ObjectType::kTree, EncodeTree(Tree{})));
    snap.root = empty.id;
  }
  snap.differs = !base || base->root != snap.root || !(base->root_meta == snap.root_meta);
  start = std::chrono::steady_clock::now();
  // Another process (the CLI asking a daemon) reads these trees next.
  STRATA_RETURN_IF_ERROR(store_.Flush());
  plan.stats.publish_ms = MsSince(start);
  snap.stats = plan.stats;
  return snap;
}

Result<WorkspaceSnapshot> SqliteWorkspace::Snapshot() {
  CommitPlan plan;
  auto snap = BuildSnapshot(plan);
  EndCapture();
  return snap;
}

}  // namespace strata::workspace_internal
