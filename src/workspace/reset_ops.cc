// Reset: a new base commit, and with --hard the content replaced by its tree
// (workspace.h, Reset). ReplaceContent is also how RebaseOnto installs the
// merged tree.
//
// Replacing the content is "every name goes, then the tree is checked out":
// the root keeps its number and takes the tree lazily (as a new workspace on
// that commit would: constant time), every other inode loses its names. An
// inode the kernel still holds (a lookup not forgotten, an open file, a
// shell's current directory) stays as a file deleted while open would: an
// open file reads and writes its old bytes, a directory is empty and refuses
// new entries, and Unref() deletes it when the kernel lets go. Every other
// inode is deleted with its data file. Numbers are never reused (next_ino
// only grows), so a number the kernel holds never names another file. Cost:
// one pass over the rows the workspace holds.
#include <sys/stat.h>

#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

Status SqliteWorkspace::ReplaceContent(const Hash& root, const RootMeta& meta, const Hash& base, bool differs,
                                       StaleCaches* stale) {
  auto tree = store_.GetTree(root);
  if (!tree.ok()) return AsEio(tree.status(), "reading tree " + root.ToHex());
  // The kernel's cached names: every name of an inode it holds (a positive
  // entry holds a lookup), and the new top-level names, which it may have
  // cached as absent. Names below the old directories need nothing: those
  // directories are gone, and their entries with them.
  for (const auto& [ino, count] : refs_) {
    stale->inodes.push_back(ino);
    STRATA_ASSIGN_OR_RETURN(auto names, db_->NamesOf(ino));
    for (auto& name : names) stale->entries.push_back(std::move(name));
  }
  for (const TreeEntry& e : tree->entries) stale->entries.emplace_back(kRootInode, e.name);
  stale->inodes.push_back(kRootInode);

  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(auto all, db_->AllInodes());
  std::vector<InodeId> deleted;
  for (InodeId ino : all) {
    if (ino == kRootInode) continue;
    if (refs_.count(ino) == 0) {
      STRATA_RETURN_IF_ERROR(db_->DeleteInode(ino));
      deleted.push_back(ino);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    row.nlink = 0;
    row.changed = false;     // in no tree any more
    row.base_tree.reset();   // a held directory is empty, not a view of the old tree
    STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
    STRATA_RETURN_IF_ERROR(db_->SetTreeId(ino, std::nullopt));
    STRATA_RETURN_IF_ERROR(db_->ClearOrigin(ino));  // base paths now name the new tree
  }
  STRATA_RETURN_IF_ERROR(db_->DeleteAllEntries());

  STRATA_ASSIGN_OR_RETURN(InodeRow top, Inode(kRootInode));
  top.mode = S_IFDIR | (meta.mode & 07777);
  top.uid = meta.uid;
  top.gid = meta.gid;
  top.mtime_ns = top.atime_ns = meta.mtime_sec * 1000000000 + meta.mtime_nsec;
  top.ctime_ns = NowNs();
  top.nlink = 1;  // not known until loaded (base_loader.cc)
  top.base_tree = root;
  top.changed = differs;
  // next_cookie goes on: offsets of a listing in progress never name new entries twice.
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(top));
  STRATA_RETURN_IF_ERROR(db_->SetTreeId(kRootInode, std::nullopt));
  STRATA_ASSIGN_OR_RETURN(auto old_xattrs, db_->ListXattrs(kRootInode));
  for (const std::string& name : old_xattrs) STRATA_RETURN_IF_ERROR(db_->DeleteXattr(kRootInode, name).status());
  for (const auto& [name, value] : meta.xattrs) STRATA_RETURN_IF_ERROR(db_->PutXattr(kRootInode, name, value));

  STRATA_RETURN_IF_ERROR(db_->SetMeta("base", base.ToHex()));
  STRATA_RETURN_IF_ERROR(db_->SetMeta("base_root", root.ToHex()));
  STRATA_RETURN_IF_ERROR(db_->SetMeta("committing", ""));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  info_.base = base;
  base_root_ = root;
  // Data files go once the batch that forgets them is committed (now).
  doomed_files_.insert(doomed_files_.end(), deleted.begin(), deleted.end());
  return CommitPending();
}

Result<ResetOutcome> SqliteWorkspace::Reset(const ResetRequest& request) {
  ResetOutcome out;
  // The new base may be reachable from no ref (a commit named by its id): gc
  // must keep it until `base` names it.
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store_.BeginWrite());
  auto target = store_.GetCommit(request.commit);
  if (!target.ok()) return AsEio(target.status(), "reading commit " + request.commit.ToHex());
  if (request.hard) {
    std::unique_lock lock(mu_);
    capture_cv_.wait(lock, [this] { return !capture_active_; });
    STRATA_RETURN_IF_ERROR(ReplaceContent(target->root, target->root_meta, request.commit, false, &out.stale));
    out.content_replaced = true;
    return out;
  }
  // Mixed: the content stays; whether it differs from the new base decides
  // whether the next commit has something to hold. The root is marked
  // changed so that the commit rebuilds it (every unchanged directory below
  // is still reused by id) and compares it with the new base's tree.
  STRATA_ASSIGN_OR_RETURN(WorkspaceSnapshot snap, Snapshot());
  out.differs = snap.root != target->root || !(snap.root_meta == target->root_meta);
  std::lock_guard lock(mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  if (out.differs) {
    STRATA_ASSIGN_OR_RETURN(InodeRow top, Inode(kRootInode));
    top.changed = true;
    STRATA_RETURN_IF_ERROR(db_->UpdateInode(top));
  }
  STRATA_RETURN_IF_ERROR(db_->SetMeta("base", request.commit.ToHex()));
  STRATA_RETURN_IF_ERROR(db_->SetMeta("committing", ""));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  info_.base = request.commit;
  STRATA_RETURN_IF_ERROR(CommitPending());
  return out;
}

}  // namespace strata::workspace_internal
