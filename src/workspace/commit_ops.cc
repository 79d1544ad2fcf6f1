// Commit: the workspace's changes become a commit (workspace.h, Commit).
//
//  1. cut (under mu_, commit_cut.cc): find the directories to write: every changed inode's
//     ancestors, and every directory holding a name of a hard-linked inode
//     met there. Copy out what their trees need; for each changed regular
//     file, a ReadPlan of its bytes as they are now. Those files are marked
//     capturing: a writer to one of them waits until it is captured; every
//     other operation goes on.
//  2. capture (no lock, commit_capture.cc): each such file is re-chunked
//     around its written ranges (rechunk.h), on a few threads.
//  3. trees (no lock): directories are stored bottom-up; every directory not
//     written is reused by its id (its base tree, or its tree of the last commit).
//  4. publish: the commit object, the "committing" record, then the pack made
//     durable and the branch moved by compare-and-swap (Store::FlushAndSwapRef:
//     one index transaction in a local store).
//  5. rebase (under mu_): what did not change since the cut is marked
//     unchanged, with its new chunk list or tree id, and the base moves to the
//     new commit. What changed since the cut stays changed for the next commit.
//
// A crash between 4 and 5 leaves meta "committing" naming the new commit and
// its branch; Recover() then adopts it as the base if the branch points at it
// (the inodes stay marked changed: the next commit finds them equal and only
// clears the marks).
#include <algorithm>
#include <chrono>

#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

namespace {

// Captured files of at least this many chunks keep their new list in the
// commit's tree only, not in the database as well (NamespaceDb::SetBaseChunksRef):
// 45 MB for a 10 GiB image in fixed 8 KiB chunks, written again by every
// commit. Smaller lists stay in their rows, so reading them needs no tree.
constexpr size_t kListByReference = 16384;

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Status SqliteWorkspace::WriteTrees(CommitPlan& plan) {
  // Deepest first, so every written subdirectory has its id before its parent.
  std::vector<std::pair<size_t, InodeId>> order;
  for (const auto& [ino, d] : plan.dirs)
    order.emplace_back(d.path.empty() ? 0 : std::count(d.path.begin(), d.path.end(), '/') + 1, ino);
  std::sort(order.rbegin(), order.rend());
  for (const auto& [depth, ino] : order) {
    CommitPlan::Dir& d = plan.dirs.at(ino);
    Tree tree;
    for (CommitPlan::Entry& e : d.entries) {
      if (e.subdir && plan.dirs.count(e.ino)) e.entry.subtree = plan.dirs.at(e.ino).id;
      if (e.captured) e.entry.chunks = plan.captures.at(e.ino).chunks;
      tree.entries.push_back(e.entry);
    }
    std::sort(tree.entries.begin(), tree.entries.end(),
              [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
    STRATA_ASSIGN_OR_RETURN(PutResult r, store_.Put(ObjectType::kTree, EncodeTree(tree)));
    if (r.stored) plan.stats.objects_written++;
    plan.stats.directories_written++;
    d.id = r.id;
    for (const CommitPlan::Entry& e : d.entries) {
      if (!e.captured) continue;
      CommitPlan::Capture& c = plan.captures.at(e.ino);
      c.tree = d.id;
      c.name = e.entry.name;
    }
  }
  return Status::Ok();
}

void SqliteWorkspace::EndCapture() {
  {
    MutexLock lock(&mu_);
    capturing_.clear();
    wanted_.clear();
    capture_claimed_.clear();
    capture_active_ = false;
    db_->TrackChanges(nullptr);
  }
  capture_cv_.NotifyAll();
}

Result<CommitOutcome> SqliteWorkspace::Commit(const CommitRequest& request, CommitProgress* watched) {
  CommitProgress unwatched;  // counted all the same when nobody reads it: it costs a few atomics
  CommitProgress& progress = watched != nullptr ? *watched : unwatched;
  progress.Begin();
  // Whatever the outcome, the commit is over when this returns.
  struct Over {
    CommitProgress& p;
    ~Over() { p.Enter(CommitPhase::kDone); }
  } over{progress};
  // Keeps gc from deleting objects this commit reuses until the branch and
  // the workspace's base point at the new commit.
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store_.BeginWrite());
  CommitPlan plan;
  CommitOutcome outcome;
  // Before the lock below: released without it (direct_access.h).
  HeldDirectWrites held;
  auto start = std::chrono::steady_clock::now();
  {
    MutexLock lock(&mu_);
    if (capture_active_) return Errno(EBUSY, "another commit of this workspace is running");
    if (!request.branch.empty() && !info_.branch.empty() && request.branch != info_.branch)
      return Status::InvalidArgument("workspace '" + info_.name + "' tracks branch '" + info_.branch + "', not '" +
                                     request.branch + "'");
    plan.branch = info_.branch.empty() ? request.branch : info_.branch;
    if (plan.branch.empty())
      return Status::InvalidArgument("workspace '" + info_.name + "' tracks no branch; name one to commit to");
    if (!IsValidRefName(plan.branch)) return Status::InvalidArgument("invalid branch name '" + plan.branch + "'");
    // The store is on the workspace's disk: a commit that filled it would
    // take the room the database keeps for deletions (and a failed pack
    // write may leave its bytes behind until the store is opened again).
    // So none starts once that room is in use (space_reserve.h).
    reserve_.Replenish();
    if (!reserve_.held())
      return Errno(ENOSPC, "no space left for a commit: the disk is nearly full (the last " +
                               std::to_string(SpaceReserve::kBytes >> 20) +
                               " MiB are kept for the workspace's database); delete files first");
    // The kernel's writes straight to a data file are held off from the cut
    // until the capture ends (direct_ops.cc). mu_ is let go meanwhile.
    STRATA_RETURN_IF_ERROR(HoldDirectWriters(&held));
    if (capture_active_) return Errno(EBUSY, "another commit of this workspace is running");
    plan.parent = info_.base;
    outcome.branch = plan.branch;
    STRATA_RETURN_IF_ERROR(TakeCut(plan));
    if (plan.changed.empty()) return outcome;  // nothing to commit
    uint64_t capture_bytes = 0;
    for (const auto& [ino, c] : plan.captures) {
      capturing_.insert(ino);
      capture_bytes += c.input.size;
    }
    progress.SetTotals(plan.captures.size(), capture_bytes);
    capture_active_ = true;
    modified_since_cut_.clear();
    db_->TrackChanges(&modified_since_cut_);
  }
  plan.stats.cut_ms = MsSince(start);
  start = std::chrono::steady_clock::now();
  progress.Enter(CommitPhase::kCapture);
  Status s = CaptureFiles(plan, &progress);
  held.Release();  // every file is captured: the kernel's held writes go on
  plan.stats.capture_ms = MsSince(start);
  start = std::chrono::steady_clock::now();
  progress.Enter(CommitPhase::kTrees);
  if (s.ok()) s = WriteTrees(plan);
  plan.stats.trees_ms = MsSince(start);
  if (!s.ok()) {
    EndCapture();
    return s;
  }

  start = std::chrono::steady_clock::now();
  progress.Enter(CommitPhase::kPublish);
  const Hash root = plan.dirs.at(kRootInode).id;
  std::optional<Hash> new_commit;
  bool same_tree = false;
  if (plan.parent) {
    auto parent = store_.GetCommit(*plan.parent);
    if (!parent.ok()) s = AsEio(parent.status(), "reading the base commit");
    // The same tree as the parent (changes undone): no commit, only the flags go.
    if (s.ok() && parent->root == root && parent->root_meta == plan.root_meta) {
      new_commit = *plan.parent;
      same_tree = true;
    }
  }
  if (s.ok() && !new_commit) {
    strata::Commit c;
    c.root = root;
    c.root_meta = plan.root_meta;
    if (plan.parent) c.parents.push_back(*plan.parent);
    c.author = request.author;
    c.time_ns = NowNs();
    c.message = request.message;
    auto put = store_.Put(ObjectType::kCommit, EncodeCommit(c));
    if (!put.ok()) s = put.status();
    if (s.ok() && put->stored) plan.stats.objects_written++;
    // File data given to the store, as an import counts it (the dedup ratio
    // of `strata stats`): the whole size of every file this commit wrote,
    // though only the chunks around its changes were hashed again.
    if (s.ok()) {
      uint64_t logical = 0;
      for (const auto& [ino, capture] : plan.captures)
        for (const ChunkRef& chunk : capture.chunks) logical += chunk.length;
      store_.AddLogicalBytes(logical);
    }
    if (s.ok()) {
      // Recorded before the branch moves: a crash right after the move is
      // recognised by Recover() instead of looking like "head moved". (A
      // record of a commit that never landed is cleared there as well.)
      MutexLock lock(&mu_);
      Transaction txn(*db_);
      s = txn.status();
      if (s.ok()) s = db_->SetMeta("committing", EncodeCommittingRecord(CommittingRecord{put->id, plan.branch}));
      if (s.ok()) s = txn.Commit();
      if (s.ok()) s = CommitPending();
    }
    // ...and durable before it moves: after a power cut that kept the move
    // but lost the record, the workspace would keep its old base and its next
    // commit would be refused as "head moved".
    if (s.ok()) s = SyncWal();
    // The objects become durable and the branch moves to them in one step.
    if (s.ok()) s = store_.FlushAndSwapRef(plan.branch, plan.parent, put->id);
    if (s.ok()) new_commit = put->id;
  }
  plan.stats.publish_ms = MsSince(start);
  if (!s.ok()) {
    EndCapture();
    MutexLock lock(&mu_);
    (void)db_->SetMeta("committing", EncodeCommittingRecord(std::nullopt));
    if (s.IsConflict())
      return Status::Conflict("head moved: branch '" + plan.branch + "' no longer points at this workspace's base " +
                              (plan.parent ? plan.parent->ToHex().substr(0, 12) : std::string("(none)")) +
                              "; rebase the workspace onto it, then commit again");
    return s;
  }
  start = std::chrono::steady_clock::now();
  progress.Enter(CommitPhase::kRebase);
  STRATA_RETURN_IF_ERROR(Rebase(plan, *new_commit));
  plan.stats.rebase_ms = MsSince(start);
  if (!same_tree) outcome.commit = *new_commit;
  outcome.stats = plan.stats;
  return outcome;
}

Status SqliteWorkspace::Rebase(CommitPlan& plan, const Hash& commit) {
  MutexLock lock(&mu_);
  std::vector<InodeId> by_reference;  // captured files whose list stays in the new tree only
  Status s = [&]() REQUIRES(mu_) -> Status {
    Transaction txn(*db_);
    STRATA_RETURN_IF_ERROR(txn.status());
    auto unchanged_since_cut = [&](InodeId ino) REQUIRES(mu_) { return modified_since_cut_.count(ino) == 0; };
    for (auto& [ino, c] : plan.captures) {
      if (!unchanged_since_cut(ino)) continue;
      // One the kernel reads (or may write) straight from its data file
      // keeps it: it stays changed, to be captured again by the next commit.
      if (direct_.count(ino)) continue;
      if (c.chunks.size() >= kListByReference) {
        STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
        row.base_len = row.size;
        row.changed = false;
        STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
        STRATA_RETURN_IF_ERROR(db_->SetBaseChunksRef(ino, c.tree, c.name));
        STRATA_RETURN_IF_ERROR(db_->ClipExtents(ino, 0));
        by_reference.push_back(ino);
      } else {
        // Unchanged since the cut, so its size is still the one captured.
        STRATA_RETURN_IF_ERROR(db_->MarkCaptured(ino, EncodeChunkList(c.chunks)));
      }
      doomed_files_.push_back(ino);  // its bytes are in the store now
    }
    for (auto& [ino, d] : plan.dirs) {
      if (!unchanged_since_cut(ino)) continue;
      STRATA_RETURN_IF_ERROR(db_->SetTreeId(ino, d.id));
      STRATA_RETURN_IF_ERROR(db_->ClearChanged(ino));
    }
    for (InodeId ino : plan.changed)
      if (unchanged_since_cut(ino) && !plan.captures.count(ino) && !plan.dirs.count(ino))
        STRATA_RETURN_IF_ERROR(db_->ClearChanged(ino));
    STRATA_RETURN_IF_ERROR(db_->SetMeta("base", commit.ToHex()));
    STRATA_RETURN_IF_ERROR(db_->SetMeta("branch", plan.branch));
    STRATA_RETURN_IF_ERROR(db_->SetMeta("committing", EncodeCommittingRecord(std::nullopt)));
    return txn.Commit();
  }();
  db_->TrackChanges(nullptr);
  capture_active_ = false;
  if (s.ok()) {
    info_.base = commit;
    info_.branch = plan.branch;
    // The lists kept by reference are known already: the next read or cut
    // takes them from here instead of reading the tree back.
    for (InodeId ino : by_reference) KeepBaseChunks(ino, std::move(plan.captures.at(ino).chunks));
    s = CommitPending();
  }
  lock.Unlock();
  capture_cv_.NotifyAll();
  return s;
}

Status SqliteWorkspace::RecoverCommit() {
  STRATA_ASSIGN_OR_RETURN(auto value, db_->GetMeta("committing"));
  if (!value) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(auto committing, DecodeCommittingRecord(*value));
  if (!committing) return Status::Ok();
  const Hash* id = &committing->commit;
  const std::string& branch = committing->branch;
  auto head = store_.GetRef(branch);
  if (!head.ok()) return AsEio(head.status(), "reading branch " + branch);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  if (*head == *id) {  // the branch moved: the commit happened
    STRATA_RETURN_IF_ERROR(db_->SetMeta("base", id->ToHex()));
    STRATA_RETURN_IF_ERROR(db_->SetMeta("branch", branch));
    info_.base = *id;
    info_.branch = branch;
  }
  STRATA_RETURN_IF_ERROR(db_->SetMeta("committing", EncodeCommittingRecord(std::nullopt)));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return CommitPending();
}

}  // namespace strata::workspace_internal
