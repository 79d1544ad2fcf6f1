// Lazy loading of base directories.
//
// A directory taken from the base commit starts as one inode row whose
// base_tree names its tree; nothing below it exists in the database. The first
// operation that looks inside it (lookup, readdir, create, unlink, ...) reads
// the tree from the store and inserts one inode and one entry per tree entry,
// in the same transaction as the operation, so a crash never leaves a half
// loaded directory. Subdirectories are inserted unloaded in turn.
//
// Every inode made from the base records its path in the base commit
// ("origin"). That is how hard links are resolved: a kHardlink entry names the
// path of the inode's first name in the base, which may have been renamed or
// lie in a directory not loaded yet; the origin index finds it whatever the
// user did since, loading the directories on the way when needed.
//
// Link counts: a base file gets nlink 1 when its first name is loaded and one
// more per hard link loaded, so until every directory holding a link has been
// loaded st_nlink can be lower than in the base. A base directory has nlink 1
// (the "unknown" value find(1) understands) until it is loaded, then 2 + its
// subdirectories.
#include <sys/stat.h>

#include <cerrno>

#include "store/revision.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {
namespace {

// Recursion guard against a hostile base whose links send the loader in circles.
constexpr int kMaxDepth = 4096;

}  // namespace

Status SqliteWorkspace::EnsureLoaded(InodeRow& dir) {
  if (!dir.base_tree) return Status::Ok();
  // The caller's copy may be stale: loading another directory may have loaded
  // this one on the way (hard links). The database is the truth.
  STRATA_ASSIGN_OR_RETURN(dir, Inode(dir.ino));
  if (!dir.base_tree) return Status::Ok();

  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  auto tree = store_.GetTree(*dir.base_tree);
  if (!tree.ok()) return AsEio(tree.status(), "loading base directory " + dir.base_tree->ToHex());
  STRATA_ASSIGN_OR_RETURN(auto origin, BasePathOf(dir.ino));
  if (!origin) return Status::IOError("workspace: base directory without a base path", EIO);

  uint32_t subdirs = 0;
  uint64_t inodes = 0;
  for (const TreeEntry& e : tree->entries) {
    if (e.kind == EntryKind::kDirectory) subdirs++;
    if (e.kind != EntryKind::kHardlink) inodes++;
  }
  // Marked loaded before the entries go in: a hard link to an earlier entry of
  // this same directory then finds that entry instead of loading it again.
  // The tree it was loaded from stays its id until something under it changes.
  STRATA_RETURN_IF_ERROR(db_->SetTreeId(dir.ino, dir.base_tree));
  dir.base_tree.reset();
  counters_.directories_loaded++;
  dir.nlink = 2 + subdirs;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));

  InodeId next_ino = 0;
  if (inodes > 0) {
    STRATA_ASSIGN_OR_RETURN(next_ino, db_->AllocateIno(inodes));
  }
  for (const TreeEntry& e : tree->entries) {
    std::string path = origin->empty() ? e.name : *origin + "/" + e.name;
    InodeId ino;
    if (e.kind == EntryKind::kHardlink) {
      STRATA_ASSIGN_OR_RETURN(ino, ResolveBaseLink(e.target));
    } else if (auto kept = TakeKeptDirectory(e, path)) {
      // A directory the kernel holds, kept through a reset: the same number
      // stands for this path again, with the new tree's metadata.
      ino = *kept;
      STRATA_RETURN_IF_ERROR(db_->DeleteInode(ino));
      STRATA_RETURN_IF_ERROR(InsertBaseEntry(e, path, dir.ino, ino));
      if (auto it = replacing_->next_cookie.find(ino); it != replacing_->next_cookie.end()) {
        STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
        row.next_cookie = it->second;
        STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
      }
    } else {
      ino = next_ino++;
      STRATA_RETURN_IF_ERROR(InsertBaseEntry(e, path, dir.ino, ino));
    }
    STRATA_RETURN_IF_ERROR(db_->InsertEntry(dir.ino, e.name, ino, CookieFor(dir, e.name)));
  }
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));
  return txn.Commit();
}

std::optional<InodeId> SqliteWorkspace::TakeKeptDirectory(const TreeEntry& e, const std::string& path) {
  if (replacing_ == nullptr || e.kind != EntryKind::kDirectory) return std::nullopt;
  auto it = replacing_->kept.find(path);
  if (it == replacing_->kept.end()) return std::nullopt;
  InodeId ino = it->second;
  replacing_->kept.erase(it);
  return ino;
}

uint64_t SqliteWorkspace::CookieFor(InodeRow& dir, const std::string& name) {
  // A name the directory listed before a reset keeps its offset, so that a
  // listing in progress neither repeats nor skips it; a new name gets one
  // above every offset handed out so far.
  if (replacing_ != nullptr) {
    if (auto d = replacing_->cookies.find(dir.ino); d != replacing_->cookies.end()) {
      if (auto c = d->second.find(name); c != d->second.end()) return c->second;
    }
  }
  return dir.next_cookie++;
}

Status SqliteWorkspace::InsertBaseEntry(const TreeEntry& e, const std::string& path, InodeId parent, InodeId ino) {
  uint32_t type = ModeTypeOf(e.kind);
  if (type == 0) return Status::IOError("workspace: base entry '" + path + "' has no file type", EIO);
  InodeRow row;
  row.ino = ino;
  row.mode = type | (e.mode & 07777);
  row.uid = e.uid;
  row.gid = e.gid;
  row.mtime_ns = JoinNs(e.mtime_sec, e.mtime_nsec);
  row.atime_ns = row.ctime_ns = row.mtime_ns;  // the base records only mtime
  row.rdev = e.rdev;
  std::string chunks;
  switch (e.kind) {
    case EntryKind::kFile:
      row.size = row.base_len = e.size;
      row.nlink = 1;
      chunks = EncodeChunkList(e.chunks);
      break;
    case EntryKind::kDirectory:
      row.nlink = 1;  // unknown until loaded
      row.base_tree = e.subtree;
      row.parent = parent;
      break;
    case EntryKind::kSymlink:
      row.target = e.target;
      row.size = e.target.size();
      row.nlink = 1;
      break;
    default:
      row.nlink = 1;
      break;
  }
  STRATA_RETURN_IF_ERROR(db_->InsertInode(row, chunks, path));
  for (const auto& [name, value] : e.xattrs) STRATA_RETURN_IF_ERROR(db_->PutXattr(ino, name, value));
  return Status::Ok();
}

Result<InodeId> SqliteWorkspace::ResolveBaseLink(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(auto found, FindBaseInode(path, 0));
  if (found) {
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(*found));
    if (S_ISDIR(row.mode)) return Status::IOError("workspace: base hard link to directory '" + path + "'", EIO);
    row.nlink++;
    STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
    return row.ino;
  }
  // The first name was deleted in the workspace before this link was loaded.
  // The link still names the base file, so it gets an inode of its own, made
  // from the base entry. (Changes made through the deleted name before its
  // deletion are not visible here: a known limit of loading lazily.)
  if (!base_root_) return Status::IOError("workspace: hard link without a base", EIO);
  auto entry = LookupPath(store_, *base_root_, path);
  if (!entry.ok()) return AsEio(entry.status(), "resolving base hard link '" + path + "'");
  if (entry->kind == EntryKind::kDirectory || entry->kind == EntryKind::kHardlink)
    return Status::IOError("workspace: base hard link '" + path + "' names a " + EntryKindName(entry->kind), EIO);
  STRATA_ASSIGN_OR_RETURN(InodeId ino, db_->AllocateIno());
  // nlink 1: the caller inserts the link's name, the only one this inode has.
  STRATA_RETURN_IF_ERROR(InsertBaseEntry(*entry, path, 0, ino));
  return ino;
}

Result<std::optional<std::string>> SqliteWorkspace::BasePathOf(InodeId ino) {
  // The root stands for the top of whatever tree base paths are paths in, by
  // definition. Its row may lack the origin: a workspace started empty has
  // none, and a reset or rebase that gave it a tree used to leave it so (every
  // lookup then failed, for good).
  if (ino == kRootInode) return std::optional<std::string>(std::string());
  return db_->GetOrigin(ino);
}

Result<std::optional<InodeId>> SqliteWorkspace::FindBaseInode(const std::string& path, int depth) {
  if (depth > kMaxDepth) return Status::IOError("workspace: base path too deep: " + path, EIO);
  if (path.empty()) return std::optional<InodeId>(kRootInode);
  STRATA_ASSIGN_OR_RETURN(auto found, db_->FindByOrigin(path));
  if (found) return found;
  // Not made yet: its base directory has not been loaded. Find that directory
  // (recursively) and load it.
  size_t slash = path.rfind('/');
  std::string parent_path = slash == std::string::npos ? std::string() : path.substr(0, slash);
  STRATA_ASSIGN_OR_RETURN(auto parent, FindBaseInode(parent_path, depth + 1));
  if (!parent) return std::optional<InodeId>();
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Inode(*parent));
  if (!S_ISDIR(dir.mode) || !dir.base_tree) return std::optional<InodeId>();
  STRATA_RETURN_IF_ERROR(EnsureLoaded(dir));
  return db_->FindByOrigin(path);
}

}  // namespace strata::workspace_internal
