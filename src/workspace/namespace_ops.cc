// Namespace operations: the POSIX rules for names, links and attributes.
//
// Each mutating operation is one transaction under mu_. Directories are
// fetched (and lazily loaded) before the inodes inside them are read, because
// loading a directory can raise the link count of a file elsewhere (a base hard
// link); reading the file's row after the load keeps that increment.
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>

#include "workspace/file_space.h"
#include "workspace/posix_acl.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

Result<InodeRow> SqliteWorkspace::Inode(InodeId ino) {
  if (!direct_.empty()) STRATA_RETURN_IF_ERROR(RefreshDirect(ino));  // the kernel may have written it
  STRATA_ASSIGN_OR_RETURN(auto row, db_->GetInode(ino));
  if (!row) {
    // The kernel's references keep every inode (Unref deletes), so one it
    // holds can only be gone with a batch SQLite rolled back: say why.
    if (db_->lost_batches() > 0 && refs_.count(ino) != 0)
      return Errno(db_->lost_errno(), "inode " + std::to_string(ino) +
                                          " was lost with a batch the database could not commit");
    return Errno(ENOENT, "no inode " + std::to_string(ino));
  }
  return std::move(*row);
}

Result<InodeRow> SqliteWorkspace::Directory(InodeId ino) {
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (!S_ISDIR(row.mode)) return Errno(ENOTDIR, "inode " + std::to_string(ino) + " is not a directory");
  STRATA_RETURN_IF_ERROR(EnsureLoaded(row));
  return row;
}

Attr SqliteWorkspace::ToAttr(const InodeRow& row) const {
  Attr a;
  a.ino = row.ino;
  a.mode = row.mode;
  a.nlink = row.nlink;
  a.uid = row.uid;
  a.gid = row.gid;
  a.size = row.size;
  a.rdev = row.rdev;
  a.atime_ns = row.atime_ns;
  a.mtime_ns = row.mtime_ns;
  a.ctime_ns = row.ctime_ns;
  auto base = [this](InodeId ino) REQUIRES(mu_) { return BaseChunksOf(ino); };
  a.blocks = ((S_ISREG(row.mode) ? HeldBytes(*db_, files_, store_, row, base, held_base_) : row.size) + 511) / 512;
  return a;
}

void SqliteWorkspace::Touch(InodeRow& dir, int64_t now) {
  dir.mtime_ns = dir.ctime_ns = now;
  dir.changed = true;
}

Result<bool> SqliteWorkspace::IsAncestor(InodeId ancestor, InodeId ino) {
  InodeId cur = ino;
  for (int i = 0; i < 1000000; i++) {
    if (cur == ancestor) return true;
    if (cur == kRootInode) return false;
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(cur));
    if (row.parent == 0) return Status::IOError("workspace: directory without a parent", EIO);
    cur = row.parent;
  }
  return Status::IOError("workspace: directory parents form a cycle", EIO);
}

Status SqliteWorkspace::DropLink(InodeRow& row, int64_t now, bool* deleted) {
  row.nlink = S_ISDIR(row.mode) ? 0 : row.nlink - 1;  // a removed directory loses "." too
  row.ctime_ns = now;
  row.changed = true;
  if (row.nlink == 0 && refs_.find(row.ino) == refs_.end()) {
    *deleted = true;
    return db_->DeleteInode(row.ino);
  }
  return db_->UpdateInode(row);
}

// ---- lookups

Result<Attr> SqliteWorkspace::Lookup(InodeId parent, std::string_view name) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Directory(parent));
  STRATA_ASSIGN_OR_RETURN(auto ino, db_->FindEntry(dir.ino, name));
  if (!ino) return Errno(ENOENT, "no entry '" + std::string(name) + "'");
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(*ino));
  return ToAttr(row);
}

Result<Attr> SqliteWorkspace::GetAttr(InodeId ino) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  return ToAttr(row);
}

Result<std::string> SqliteWorkspace::ReadLink(InodeId ino) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (!S_ISLNK(row.mode)) return Errno(EINVAL, "not a symlink");
  return row.target;
}

Result<std::vector<DirEntry>> SqliteWorkspace::ReadDirectory(InodeId dir, uint64_t offset, size_t max) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Directory(dir));
  STRATA_ASSIGN_OR_RETURN(auto rows, db_->ListEntries(row.ino, offset, max));
  std::vector<DirEntry> out;
  out.reserve(rows.size());
  for (DentryRow& r : rows) out.push_back(DirEntry{std::move(r.name), r.ino, r.mode & S_IFMT, r.cookie});
  return out;
}

Result<DirectoryState> SqliteWorkspace::GetDirectoryState(InodeId dir) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Directory(dir));
  return DirectoryState{row.ino == kRootInode || row.parent == 0 ? row.ino : row.parent, row.next_cookie - 1};
}

// ---- attributes

Result<Attr> SqliteWorkspace::SetAttr(InodeId ino, const SetAttrRequest& req) {
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  const int64_t now = NowNs();
  bool shrunk = false;
  if (req.size) {
    if (S_ISDIR(row.mode)) return Errno(EISDIR, "truncating a directory");
    if (!S_ISREG(row.mode)) return Errno(EINVAL, "truncating a special file");
    if (*req.size > kMaxFileSize) return Errno(EFBIG, "size past the largest file size");
    if (*req.size < row.size) {
      STRATA_RETURN_IF_ERROR(db_->ClipExtents(ino, *req.size));
      shrunk = true;
    }
    // Bytes past the new end no longer come from the base, even if the file grows again.
    row.base_len = std::min(row.base_len, *req.size);
    row.size = *req.size;
    row.mtime_ns = now;
  }
  if (req.mode) {
    row.mode = (row.mode & S_IFMT) | (*req.mode & 07777);
    STRATA_RETURN_IF_ERROR(ChmodAcl(row));
  }
  if (req.uid) row.uid = *req.uid;
  if (req.gid) row.gid = *req.gid;
  if (req.atime_ns) row.atime_ns = *req.atime_ns;
  if (req.mtime_ns) row.mtime_ns = *req.mtime_ns;
  row.ctime_ns = now;
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  // The extents already ignore the bytes; the space is freed once that is durable.
  if (shrunk) shrunk_files_.insert(ino);
  if (req.size) STRATA_RETURN_IF_ERROR(MatchDirectLength(ino, row.size));
  return ToAttr(row);
}

// ---- creating names

Result<Attr> SqliteWorkspace::CreateEntry(InodeId parent, std::string_view name, InodeRow proto,
                                          const Credentials& who) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Directory(parent));
  if (dir.nlink == 0) return Errno(ENOENT, "creating in a removed directory");
  STRATA_ASSIGN_OR_RETURN(auto existing, db_->FindEntry(dir.ino, name));
  if (existing) return Errno(EEXIST, "'" + std::string(name) + "' exists");
  const int64_t now = NowNs();
  const bool is_dir = S_ISDIR(proto.mode);
  STRATA_ASSIGN_OR_RETURN(auto acls, InheritAcls(dir, proto, who.umask));
  STRATA_ASSIGN_OR_RETURN(proto.ino, db_->AllocateIno());
  proto.uid = who.uid;
  proto.gid = who.gid;
  // BSD group semantics of a setgid directory; the kernel leaves this to us.
  if (dir.mode & S_ISGID) {
    proto.gid = dir.gid;
    if (is_dir) proto.mode |= S_ISGID;
  }
  proto.atime_ns = proto.mtime_ns = proto.ctime_ns = now;
  proto.changed = true;
  proto.nlink = is_dir ? 2 : 1;
  if (is_dir) proto.parent = dir.ino;
  STRATA_RETURN_IF_ERROR(db_->InsertInode(proto, "", std::nullopt));
  for (const auto& [acl_name, acl] : acls) STRATA_RETURN_IF_ERROR(db_->PutXattr(proto.ino, acl_name, acl));
  STRATA_RETURN_IF_ERROR(db_->InsertEntry(dir.ino, name, proto.ino, dir.next_cookie++));
  Touch(dir, now);
  if (is_dir) dir.nlink++;  // the new directory's ".."
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return ToAttr(proto);
}

Result<Attr> SqliteWorkspace::MakeNode(InodeId parent, std::string_view name, uint32_t mode, uint64_t rdev,
                                       const Credentials& who) {
  uint32_t type = mode & S_IFMT;
  if (type == 0) type = S_IFREG;  // as mknod(2)
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR && type != S_IFBLK)
    return Errno(EINVAL, "mknod: bad file type");
  InodeRow proto;
  proto.mode = type | (mode & 07777);
  if (type == S_IFCHR || type == S_IFBLK) proto.rdev = rdev;
  MutexLock lock(&mu_);
  return CreateEntry(parent, name, std::move(proto), who);
}

Result<Attr> SqliteWorkspace::MakeDirectory(InodeId parent, std::string_view name, uint32_t mode,
                                            const Credentials& who) {
  InodeRow proto;
  proto.mode = S_IFDIR | (mode & 07777);
  MutexLock lock(&mu_);
  return CreateEntry(parent, name, std::move(proto), who);
}

Result<Attr> SqliteWorkspace::MakeSymlink(InodeId parent, std::string_view name, std::string_view target,
                                          const Credentials& who) {
  if (target.empty()) return Errno(ENOENT, "symlink: empty target");
  if (target.size() >= 4096) return Errno(ENAMETOOLONG, "symlink: target too long");
  InodeRow proto;
  proto.mode = S_IFLNK | 0777;
  proto.target = std::string(target);
  proto.size = target.size();
  MutexLock lock(&mu_);
  return CreateEntry(parent, name, std::move(proto), who);
}

Result<Attr> SqliteWorkspace::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  STRATA_RETURN_IF_ERROR(CheckName(new_name));
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Directory(new_parent));
  if (dir.nlink == 0) return Errno(ENOENT, "linking into a removed directory");
  STRATA_ASSIGN_OR_RETURN(auto existing, db_->FindEntry(dir.ino, new_name));
  if (existing) return Errno(EEXIST, "'" + std::string(new_name) + "' exists");
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (S_ISDIR(row.mode)) return Errno(EPERM, "hard link to a directory");
  if (row.nlink == 0) return Errno(ENOENT, "hard link to a deleted file");
  const int64_t now = NowNs();
  row.nlink++;
  row.ctime_ns = now;
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->InsertEntry(dir.ino, new_name, row.ino, dir.next_cookie++));
  Touch(dir, now);
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return ToAttr(row);
}

// ---- removing names

Status SqliteWorkspace::Unlink(InodeId parent, std::string_view name) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Directory(parent));
  STRATA_ASSIGN_OR_RETURN(auto ino, db_->FindEntry(dir.ino, name));
  if (!ino) return Errno(ENOENT, "no entry '" + std::string(name) + "'");
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(*ino));
  if (S_ISDIR(row.mode)) return Errno(EISDIR, "unlink of a directory");
  const int64_t now = NowNs();
  bool deleted = false;
  STRATA_RETURN_IF_ERROR(db_->DeleteEntry(dir.ino, name));
  Touch(dir, now);
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));
  STRATA_RETURN_IF_ERROR(DropLink(row, now, &deleted));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  if (deleted) doomed_files_.push_back(row.ino);
  return Status::Ok();
}

Status SqliteWorkspace::RemoveDirectory(InodeId parent, std::string_view name) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow dir, Directory(parent));
  STRATA_ASSIGN_OR_RETURN(auto ino, db_->FindEntry(dir.ino, name));
  if (!ino) return Errno(ENOENT, "no entry '" + std::string(name) + "'");
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(*ino));
  if (!S_ISDIR(row.mode)) return Errno(ENOTDIR, "rmdir of a non-directory");
  STRATA_RETURN_IF_ERROR(EnsureLoaded(row));  // a base directory is empty only if its tree is
  STRATA_ASSIGN_OR_RETURN(bool has_entries, db_->HasEntries(row.ino));
  if (has_entries) return Errno(ENOTEMPTY, "directory not empty");
  const int64_t now = NowNs();
  bool deleted = false;
  STRATA_RETURN_IF_ERROR(db_->DeleteEntry(dir.ino, name));
  Touch(dir, now);
  dir.nlink--;  // its ".." is gone
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(dir));
  STRATA_RETURN_IF_ERROR(DropLink(row, now, &deleted));
  return txn.Commit();
}

Status SqliteWorkspace::Rename(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                               unsigned flags) {
  MutexLock lock(&mu_);
  return RenameLocked(parent, name, new_parent, new_name, flags, nullptr);
}

Status SqliteWorkspace::RenameLeavingWhiteout(InodeId parent, std::string_view name, InodeId new_parent,
                                              std::string_view new_name, unsigned flags, const Credentials& who) {
  if (flags & kRenameExchange) return Errno(EINVAL, "rename: a whiteout with an exchange");
  MutexLock lock(&mu_);
  return RenameLocked(parent, name, new_parent, new_name, flags, &who);
}

Status SqliteWorkspace::RenameLocked(InodeId parent, std::string_view name, InodeId new_parent,
                                     std::string_view new_name, unsigned flags, const Credentials* whiteout_owner) {
  if ((flags & ~(kRenameNoReplace | kRenameExchange)) != 0 || flags == (kRenameNoReplace | kRenameExchange))
    return Errno(EINVAL, "rename: bad flags");
  const bool exchange = flags & kRenameExchange;
  STRATA_RETURN_IF_ERROR(CheckName(name));
  STRATA_RETURN_IF_ERROR(CheckName(new_name));
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  // sp and dp are the same object when both parents are one directory, so
  // changes made through either name are written once.
  STRATA_ASSIGN_OR_RETURN(InodeRow sp, Directory(parent));
  std::optional<InodeRow> other;
  if (new_parent != parent) {
    STRATA_ASSIGN_OR_RETURN(other, Directory(new_parent));
  }
  InodeRow& dp = other ? *other : sp;
  if (dp.nlink == 0) return Errno(ENOENT, "rename into a removed directory");
  STRATA_ASSIGN_OR_RETURN(auto src_ino, db_->FindEntry(sp.ino, name));
  if (!src_ino) return Errno(ENOENT, "no entry '" + std::string(name) + "'");
  STRATA_ASSIGN_OR_RETURN(auto dst_ino, db_->FindEntry(dp.ino, new_name));
  if (exchange && !dst_ino) return Errno(ENOENT, "no entry '" + std::string(new_name) + "'");
  if ((flags & kRenameNoReplace) && dst_ino) return Errno(EEXIST, "'" + std::string(new_name) + "' exists");
  if (dst_ino && *dst_ino == *src_ino) return Status::Ok();  // two names of one file: POSIX says do nothing

  STRATA_ASSIGN_OR_RETURN(InodeRow src, Inode(*src_ino));
  std::optional<InodeRow> dst;
  if (dst_ino) {
    STRATA_ASSIGN_OR_RETURN(dst, Inode(*dst_ino));
  }
  const bool src_dir = S_ISDIR(src.mode);
  const bool dst_dir = dst && S_ISDIR(dst->mode);
  const bool moves = sp.ino != dp.ino;
  // A directory cannot become its own descendant.
  if (src_dir && moves) {
    STRATA_ASSIGN_OR_RETURN(bool loop, IsAncestor(src.ino, dp.ino));
    if (loop) return Errno(EINVAL, "rename of a directory into itself");
  }
  if (exchange && dst_dir && moves) {
    STRATA_ASSIGN_OR_RETURN(bool loop, IsAncestor(dst->ino, sp.ino));
    if (loop) return Errno(EINVAL, "rename of a directory into itself");
  }

  const int64_t now = NowNs();
  bool deleted = false;
  if (exchange) {
    STRATA_RETURN_IF_ERROR(db_->SetEntryIno(sp.ino, name, dst->ino));
    STRATA_RETURN_IF_ERROR(db_->SetEntryIno(dp.ino, new_name, src.ino));
    if (moves && src_dir != dst_dir) {  // a subdirectory changes sides
      if (src_dir) {
        sp.nlink--;
        dp.nlink++;
      } else {
        sp.nlink++;
        dp.nlink--;
      }
    }
    if (src_dir) src.parent = dp.ino;
    if (dst_dir) dst->parent = sp.ino;
    dst->ctime_ns = now;
    dst->changed = true;
    STRATA_RETURN_IF_ERROR(db_->UpdateInode(*dst));
  } else {
    if (dst) {
      if (dst_dir && !src_dir) return Errno(EISDIR, "rename of a non-directory over a directory");
      if (!dst_dir && src_dir) return Errno(ENOTDIR, "rename of a directory over a non-directory");
      if (dst_dir) {
        STRATA_RETURN_IF_ERROR(EnsureLoaded(*dst));
        STRATA_ASSIGN_OR_RETURN(bool has_entries, db_->HasEntries(dst->ino));
        if (has_entries) return Errno(ENOTEMPTY, "rename over a non-empty directory");
        dp.nlink--;  // the replaced directory's ".."
      }
      STRATA_RETURN_IF_ERROR(db_->DeleteEntry(dp.ino, new_name));
      STRATA_RETURN_IF_ERROR(DropLink(*dst, now, &deleted));
    }
    STRATA_RETURN_IF_ERROR(db_->DeleteEntry(sp.ino, name));
    // A new cookie: a listing in progress sees the entry at most once more.
    STRATA_RETURN_IF_ERROR(db_->InsertEntry(dp.ino, new_name, src.ino, dp.next_cookie++));
    if (src_dir && moves) {
      sp.nlink--;
      dp.nlink++;
      src.parent = dp.ino;
    }
  }
  src.ctime_ns = now;
  src.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(src));
  Touch(sp, now);
  Touch(dp, now);
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(sp));
  if (other) STRATA_RETURN_IF_ERROR(db_->UpdateInode(*other));
  if (whiteout_owner != nullptr) {  // joins this transaction, reading the parent as written above
    InodeRow whiteout;
    whiteout.mode = S_IFCHR;
    STRATA_RETURN_IF_ERROR(CreateEntry(parent, name, std::move(whiteout), {whiteout_owner->uid, whiteout_owner->gid, 0})
                               .status());
  }
  STRATA_RETURN_IF_ERROR(txn.Commit());
  if (deleted) doomed_files_.push_back(dst->ino);
  return Status::Ok();
}

// ---- xattrs

Status SqliteWorkspace::SetXattr(InodeId ino, std::string_view name, std::string_view value, int flags) {
  if (name.empty() || name.size() > 255) return Errno(ERANGE, "bad xattr name");
  if (value.size() > 65536) return Errno(E2BIG, "xattr value too large");
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (IsAclXattr(name)) {
    STRATA_RETURN_IF_ERROR(SetAcl(row, name, value, flags & kSetAclKillSgid));
  } else {
    STRATA_ASSIGN_OR_RETURN(auto existing, db_->GetXattr(ino, name));
    if ((flags & XATTR_CREATE) && existing) return Errno(EEXIST, "xattr exists");
    if ((flags & XATTR_REPLACE) && !existing) return Errno(ENODATA, "no such xattr");
    STRATA_RETURN_IF_ERROR(db_->PutXattr(ino, name, value));
  }
  row.ctime_ns = NowNs();
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  return txn.Commit();
}

Result<std::string> SqliteWorkspace::GetXattr(InodeId ino, std::string_view name) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  STRATA_ASSIGN_OR_RETURN(auto value, db_->GetXattr(row.ino, name));
  if (!value) return Errno(ENODATA, "no such xattr");
  return std::move(*value);
}

Result<std::vector<std::string>> SqliteWorkspace::ListXattrs(InodeId ino) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  return db_->ListXattrs(row.ino);
}

Status SqliteWorkspace::RemoveXattr(InodeId ino, std::string_view name) {
  MutexLock lock(&mu_);
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (IsAclXattr(name)) {
    STRATA_RETURN_IF_ERROR(RemoveAcl(row, name));
  } else {
    STRATA_ASSIGN_OR_RETURN(bool removed, db_->DeleteXattr(ino, name));
    if (!removed) return Errno(ENODATA, "no such xattr");
  }
  row.ctime_ns = NowNs();
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  return txn.Commit();
}

// ---- lifetime

void SqliteWorkspace::Ref(InodeId ino) {
  MutexLock lock(&mu_);
  refs_[ino]++;
}

bool SqliteWorkspace::RefIfCurrent(InodeId ino, uint64_t swaps) {
  MutexLock lock(&mu_);
  if (content_swaps_.load(std::memory_order_relaxed) != swaps) return false;
  refs_[ino]++;
  return true;
}

void SqliteWorkspace::Unref(InodeId ino, uint64_t count) {
  MutexLock lock(&mu_);
  auto it = refs_.find(ino);
  if (it == refs_.end()) return;
  if (it->second > count) {
    it->second -= count;
    return;
  }
  refs_.erase(it);
  // The last reference to a file without names: delete it now. Errors are left
  // for Recover() at the next Open, which deletes such inodes too.
  auto row = db_->GetInode(ino);
  if (!row.ok() || !*row || (*row)->nlink != 0) return;
  Transaction txn(*db_);
  if (!txn.status().ok() || !db_->DeleteInode(ino).ok() || !txn.Commit().ok()) return;
  doomed_files_.push_back(ino);
}

}  // namespace strata::workspace_internal
