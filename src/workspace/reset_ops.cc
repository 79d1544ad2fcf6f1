// Reset: a new base, and with --hard the content replaced by its tree
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
//
// Except for the directories the kernel holds at a path that is a directory
// in the new tree too: they keep their numbers and become that directory.
// The kernel walks a path through the directories it has cached, and it
// learns of the swap only from the invalidations sent after it; had such a
// directory become an empty unnamed one, a lookup through it in between (or a
// listing going on across the swap) would find nothing, a gap between the
// old content and the new. Kept, a lookup in it resolves in the new tree at
// once, and a name its listing had before and has after keeps its offset, so
// that a listing in progress returns every such name exactly once (names only
// one side has may or may not appear, as with entries created or removed
// during a listing). These directories and those on their way are loaded at
// the swap, which costs the entries the old namespace had loaded there.
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "util/time_ns.h"
#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

namespace {

size_t Depth(const std::string& path) { return static_cast<size_t>(std::count(path.begin(), path.end(), '/')); }

}  // namespace

Status SqliteWorkspace::PlaceKeptDirectories(const std::vector<std::pair<std::string, InodeId>>& kept,
                                             const std::unordered_set<InodeId>& loaded, StaleCaches* stale) {
  // Loads dir now (if it is still unloaded) and reports every name it has:
  // the kernel may have cached any of them as absent in the old namespace.
  auto load = [&](InodeId ino) REQUIRES(mu_) -> Status {
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    STRATA_RETURN_IF_ERROR(EnsureLoaded(row));
    STRATA_ASSIGN_OR_RETURN(auto entries, db_->ListEntries(ino, 0, SIZE_MAX));
    for (DentryRow& d : entries) stale->entries.emplace_back(ino, std::move(d.name));
    return Status::Ok();
  };
  if (loaded.count(kRootInode)) STRATA_RETURN_IF_ERROR(load(kRootInode));
  // Parents before children: a kept directory is placed when its parent loads.
  for (const auto& [path, ino] : kept) {
    InodeId dir = kRootInode;
    size_t start = 0;
    bool reached = true;
    for (size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1) {
      STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(dir));
      STRATA_RETURN_IF_ERROR(EnsureLoaded(row));
      STRATA_ASSIGN_OR_RETURN(auto child, db_->FindEntry(dir, path.substr(start, slash - start)));
      if (!child) {
        reached = false;
        break;
      }
      STRATA_ASSIGN_OR_RETURN(InodeRow child_row, Inode(*child));
      if (!S_ISDIR(child_row.mode)) {
        reached = false;
        break;
      }
      dir = *child;
    }
    if (!reached) continue;  // the path is not a directory in the new tree: it stays unnamed
    STRATA_ASSIGN_OR_RETURN(InodeRow parent, Inode(dir));
    STRATA_RETURN_IF_ERROR(EnsureLoaded(parent));
    STRATA_ASSIGN_OR_RETURN(auto placed, db_->FindEntry(dir, path.substr(start)));
    if (placed == ino && loaded.count(ino)) STRATA_RETURN_IF_ERROR(load(ino));
  }
  return Status::Ok();
}

Status SqliteWorkspace::ReplaceContent(const Hash& root, const RootMeta& meta, const Hash& base, bool differs,
                                       StaleCaches* stale) {
  // Answers computed before this point and not yet referenced are stale
  // (RefIfCurrent); one bump per attempt, as a rolled-back one costs only a retry.
  content_swaps_.fetch_add(1, std::memory_order_release);
  auto tree = store_.GetTree(root);
  if (!tree.ok()) return AsEio(tree.status(), "reading tree " + root.ToHex());
  // The kernel's cached names: every name of an inode it holds (a positive
  // entry holds a lookup), and the new top-level names, which it may have
  // cached as absent. Names below the old directories need nothing: those
  // directories are gone, and their entries with them, except the kept ones,
  // whose new names PlaceKeptDirectories reports.
  Replacement rep;
  std::vector<std::pair<std::string, InodeId>> kept;
  std::unordered_set<InodeId> loaded;  // kept directories (and the root) whose entries were loaded
  std::map<InodeId, std::string> paths;
  std::vector<std::pair<std::pair<InodeId, std::string>, InodeId>> kept_names;  // ((dir, name), kept inode)
  for (const auto& [ino, count] : refs_) {
    stale->inodes.push_back(ino);
    STRATA_ASSIGN_OR_RETURN(auto names, db_->NamesOf(ino));
    STRATA_ASSIGN_OR_RETURN(auto row, db_->GetInode(ino));
    if (ino == kRootInode || names.empty() || !row || !S_ISDIR(row->mode)) {
      for (auto& name : names) stale->entries.push_back(std::move(name));
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(std::string path, PathOfDirectory(ino, paths));
    kept.emplace_back(path, ino);
    rep.kept.emplace(path, ino);
    // Its name stays valid where it is placed again (below): invalidating it
    // would only make the kernel drop what it cached below and look it up anew.
    for (auto& name : names) kept_names.emplace_back(std::move(name), ino);
  }
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return Depth(a.first) < Depth(b.first); });
  for (const TreeEntry& e : tree->entries) stale->entries.emplace_back(kRootInode, e.name);
  stale->inodes.push_back(kRootInode);
  std::vector<InodeId> remember = {kRootInode};
  for (const auto& [path, ino] : kept) remember.push_back(ino);
  for (InodeId ino : remember) {
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    rep.next_cookie[ino] = row.next_cookie;
    if (row.base_tree) continue;  // never loaded: the kernel knows none of its names
    loaded.insert(ino);
    STRATA_ASSIGN_OR_RETURN(auto entries, db_->ListEntries(ino, 0, SIZE_MAX));
    auto& cookies = rep.cookies[ino];
    for (const DentryRow& d : entries) cookies.emplace(d.name, d.cookie);
  }

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
    // Held: unnamed from now on, unless PlaceKeptDirectories gives it a path.
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
  top.mtime_ns = top.atime_ns = JoinNs(meta.mtime_sec, meta.mtime_nsec);
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

  // The loader places the kept directories and resolves base hard links in
  // the new tree; should anything fail, the database rolls back and so do these.
  struct Installing {
    SqliteWorkspace* ws;
    std::optional<Hash> old_root;
    bool done = false;
    ~Installing() {
      ws->replacing_ = nullptr;
      if (!done) ws->base_root_ = old_root;
    }
  } installing{this, base_root_};
  replacing_ = &rep;
  base_root_ = root;
  STRATA_RETURN_IF_ERROR(PlaceKeptDirectories(kept, loaded, stale));
  std::set<std::pair<InodeId, std::string>> still_valid;
  for (auto& [name, ino] : kept_names) {
    STRATA_ASSIGN_OR_RETURN(auto now, db_->FindEntry(name.first, name.second));
    if (now == ino) still_valid.insert(name);
  }
  std::erase_if(stale->entries, [&](const auto& e) { return still_valid.count(e) != 0; });
  for (auto& [name, ino] : kept_names)
    if (!still_valid.count(name)) stale->entries.push_back(std::move(name));
  std::sort(stale->entries.begin(), stale->entries.end());
  stale->entries.erase(std::unique(stale->entries.begin(), stale->entries.end()), stale->entries.end());

  STRATA_RETURN_IF_ERROR(db_->SetMeta("base", base.ToHex()));
  STRATA_RETURN_IF_ERROR(db_->SetMeta("base_root", root.ToHex()));
  STRATA_RETURN_IF_ERROR(db_->SetMeta("committing", ""));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  installing.done = true;
  info_.base = base;
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
    MutexLock lock(&mu_);
    while (capture_active_) capture_cv_.Wait(&mu_);
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
  MutexLock lock(&mu_);
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
