// Exporter: see exporter.h for what is restored and the safety rules.
//
// Every entry is created relative to the file descriptor of its parent
// directory, which was itself opened with O_NOFOLLOW, so no path string from the
// store (or planted in dest by someone else) is ever resolved through a symlink.
// Metadata is applied in this order, each step for a reason:
//   contents  -> writing clears setuid/setgid and security.capability
//   owner     -> chown clears setuid/setgid and security.capability too
//   xattrs    -> after the two steps that would drop them
//   mode      -> after chown, so setuid/setgid bits stick
//   times     -> last, since every step above may bump them
// Directories get all of that only after their contents are written.
#include "snapshot/exporter.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/unique_fd.h"

namespace strata {
namespace {

bool IsAllZero(std::string_view data) { return data.find_first_not_of('\0') == std::string_view::npos; }

// Namespaces whose xattrs an unprivileged caller usually may not set.
bool IsPrivilegedXattr(std::string_view name) {
  return name.starts_with("trusted.") || name.starts_with("security.");
}

// Removes the POSIX ACLs an exported inode has but its entry does not: ones it
// inherited from a default ACL of the directory it was created in (only a
// destination that had one beforehand, since directories get their own
// default ACL after their contents). remove is fremovexattr or lremovexattr
// bound to the inode; a filesystem without ACLs has none to remove.
template <typename Remove>
bool DropInheritedAcls(const std::vector<std::pair<std::string, std::string>>& xattrs, bool is_dir,
                       Remove remove) {
  for (const char* acl : {"system.posix_acl_access", "system.posix_acl_default"}) {
    if (!is_dir && std::string_view(acl) == "system.posix_acl_default") continue;
    bool stored = false;
    for (const auto& [name, value] : xattrs) stored = stored || name == acl;
    if (!stored && remove(acl) != 0 && errno != ENODATA && errno != EOPNOTSUPP) return false;
  }
  return true;
}

// Splits a hard-link target into its components, refusing anything that is not
// a plain relative path: absolute paths, and empty, "." or ".." components.
Result<std::vector<std::string_view>> SplitLinkTarget(std::string_view target) {
  std::vector<std::string_view> parts;
  if (target.starts_with('/')) return Status::Corruption("absolute path");
  size_t start = 0;
  while (true) {
    size_t slash = target.find('/', start);
    std::string_view part = target.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (!IsValidEntryName(part))
      return Status::Corruption("bad path component \"" + std::string(part) + "\"");
    parts.push_back(part);
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// Opens dest for the export, creating it (0700) when missing. It must be a real
// directory (not a symlink to one) and empty, so an export never mixes with or
// overwrites anything.
Result<UniqueFd> OpenEmptyDest(const std::string& dest, bool* created) {
  *created = ::mkdir(dest.c_str(), 0700) == 0;
  if (!*created && errno != EEXIST) return Status::IOError("cannot create " + dest, errno);
  UniqueFd fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOTDIR || errno == ELOOP)
      return Status::InvalidArgument("export destination " + dest + " exists and is not a directory");
    return Status::IOError("cannot open " + dest, errno);
  }
  // fdopendir takes ownership of its fd, so give it a duplicate.
  int dir_fd = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0);
  DIR* dir = dir_fd < 0 ? nullptr : ::fdopendir(dir_fd);
  if (dir == nullptr) {
    int err = errno;
    if (dir_fd >= 0) ::close(dir_fd);
    return Status::IOError("cannot list " + dest, err);
  }
  bool empty = true;
  errno = 0;
  while (const dirent* d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return Status::IOError("cannot list " + dest, err);
  if (!empty) return Status::InvalidArgument("export destination " + dest + " is not empty");
  return fd;
}

class Exporter {
 public:
  Exporter(Store& store, const ExportOptions& options, Progress* progress, std::string dest, int root_fd)
      : store_(store), options_(options), progress_(progress), dest_(std::move(dest)), root_fd_(root_fd) {}

  // Writes the entries of `tree` into the open directory dir_fd, whose path
  // inside the export is rel ("" for the root).
  Status ExportTreeInto(int dir_fd, const Tree& tree, const std::string& rel);

  const ExportStats& stats() const { return stats_; }

 private:
  Status ExportEntry(int dir_fd, const TreeEntry& e, const std::string& rel);
  Status ExportFile(int dir_fd, const TreeEntry& e, const std::string& rel);
  Status ExportDirectory(int dir_fd, const TreeEntry& e, const std::string& rel);
  Status ExportSymlink(int dir_fd, const TreeEntry& e, const std::string& rel);
  Status ExportHardlink(int dir_fd, const TreeEntry& e, const std::string& rel);
  Status ExportSpecial(int dir_fd, const TreeEntry& e, const std::string& rel);

  Status WriteAll(int fd, std::string_view data, uint64_t offset, const std::string& rel);
  // Owner, xattrs, mode, times through an open fd (files and directories).
  Status FinishFd(int fd, const TreeEntry& e, const std::string& rel);
  // The same by name in dir_fd, never following the name (symlinks, specials).
  Status FinishAt(int dir_fd, const TreeEntry& e, const std::string& rel, bool set_mode);
  // Handles a failed setxattr: without privileges, trusted.* and security.*
  // attributes are skipped (counted once per entry); anything else is an error.
  Status XattrFailed(const std::string& name, size_t size, const std::string& rel, bool* skipped);

  std::string Display(const std::string& rel) const { return rel.empty() ? dest_ : dest_ + "/" + rel; }
  Status OsError(const std::string& what, const std::string& rel) const {
    return Status::IOError(what + " " + Display(rel), errno);
  }

  Store& store_;
  const ExportOptions& options_;
  Progress* const progress_;
  const std::string dest_;
  const int root_fd_;
  ExportStats stats_;
  // Paths (relative to the root) of the non-directories written so far, with
  // their file type: the only valid hard-link targets.
  std::unordered_map<std::string, mode_t> linkable_;
};

Status Exporter::ExportTreeInto(int dir_fd, const Tree& tree, const std::string& rel) {
  for (const TreeEntry& e : tree.entries) {
    // DecodeTree checks names too, but a name reaching the *at() calls unchecked
    // ("..", "a/b") would escape dest, so the writer checks again.
    if (!IsValidEntryName(e.name))
      return Status::Corruption("invalid entry name \"" + e.name + "\" in " + Display(rel));
    STRATA_RETURN_IF_ERROR(ExportEntry(dir_fd, e, rel.empty() ? e.name : rel + "/" + e.name));
  }
  return Status::Ok();
}

Status Exporter::ExportEntry(int dir_fd, const TreeEntry& e, const std::string& rel) {
  switch (e.kind) {
    case EntryKind::kFile: return ExportFile(dir_fd, e, rel);
    case EntryKind::kDirectory: return ExportDirectory(dir_fd, e, rel);
    case EntryKind::kSymlink: return ExportSymlink(dir_fd, e, rel);
    case EntryKind::kHardlink: return ExportHardlink(dir_fd, e, rel);
    case EntryKind::kFifo:
    case EntryKind::kSocket:
    case EntryKind::kCharDevice:
    case EntryKind::kBlockDevice: return ExportSpecial(dir_fd, e, rel);
  }
  return Status::Corruption("unknown entry kind for " + Display(rel));
}

Status Exporter::ExportFile(int dir_fd, const TreeEntry& e, const std::string& rel) {
  // 0600 until the end: the stored mode may forbid writing, and nobody else
  // should read a half-written file.
  UniqueFd fd(::openat(dir_fd, e.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return OsError("cannot create file", rel);
  uint64_t offset = 0, written_end = 0;
  for (const ChunkRef& c : e.chunks) {
    Result<std::string> data = store_.Get(c.id, ObjectType::kChunk);
    if (!data.ok()) return data.status().WithContext("exporting " + Display(rel));
    if (data->size() != c.length) {
      return Status::Corruption("chunk " + c.id.ToHex() + " of " + Display(rel) + " has " +
                                std::to_string(data->size()) + " bytes, the tree says " +
                                std::to_string(c.length));
    }
    // Zero chunks are left as holes, so sparse files (VM images) stay sparse.
    if (!IsAllZero(*data)) {
      STRATA_RETURN_IF_ERROR(WriteAll(fd.get(), *data, offset, rel));
      written_end = offset + c.length;
    }
    offset += c.length;
  }
  if (offset != e.size) return Status::Corruption("size of " + Display(rel) + " does not match its chunks");
  if (written_end < offset && ::ftruncate(fd.get(), static_cast<off_t>(offset)) != 0)
    return OsError("cannot set the size of", rel);
  STRATA_RETURN_IF_ERROR(FinishFd(fd.get(), e, rel));
  if (fd.Close() != 0) return OsError("cannot close", rel);
  linkable_.emplace(rel, S_IFREG);
  stats_.files++;
  stats_.bytes += e.size;
  if (progress_ != nullptr) progress_->Add(1, e.size);
  return Status::Ok();
}

Status Exporter::WriteAll(int fd, std::string_view data, uint64_t offset, const std::string& rel) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // cannot make progress; do not spin
      return OsError("cannot write", rel);
    }
    data.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status Exporter::ExportDirectory(int dir_fd, const TreeEntry& e, const std::string& rel) {
  // 0700 while filling it; the stored mode (maybe 0555) comes after.
  if (::mkdirat(dir_fd, e.name.c_str(), 0700) != 0) return OsError("cannot create directory", rel);
  UniqueFd fd(::openat(dir_fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return OsError("cannot open directory", rel);
  Result<Tree> tree = store_.GetTree(e.subtree);
  if (!tree.ok()) return tree.status().WithContext("exporting " + Display(rel));
  stats_.directories++;
  STRATA_RETURN_IF_ERROR(ExportTreeInto(fd.get(), *tree, rel));
  // Post-order: creating the children changed the mtime, and a read-only mode
  // would have stopped us from creating them.
  // Known limit: without privileges, a directory stored without owner search
  // permission (e.g. 0600) blocks later hard links into it from resolving.
  return FinishFd(fd.get(), e, rel);
}

Status Exporter::ExportSymlink(int dir_fd, const TreeEntry& e, const std::string& rel) {
  // The target is stored text; it is never resolved, so an absolute or ".."
  // target is harmless here.
  if (::symlinkat(e.target.c_str(), dir_fd, e.name.c_str()) != 0)
    return OsError("cannot create symlink", rel);
  stats_.symlinks++;
  linkable_.emplace(rel, S_IFLNK);
  return FinishAt(dir_fd, e, rel, /*set_mode=*/false);  // Linux has no symlink modes
}

Status Exporter::ExportHardlink(int dir_fd, const TreeEntry& e, const std::string& rel) {
  auto refuse = [&](const std::string& why) {
    return Status::Corruption("hard link " + Display(rel) + " -> \"" + e.target + "\": " + why);
  };
  Result<std::vector<std::string_view>> parts = SplitLinkTarget(e.target);
  if (!parts.ok()) return refuse(parts.status().message());
  // The map only holds non-directories written by this export, so this also
  // refuses directories, paths through symlinks and entries that come later.
  auto expected = linkable_.find(e.target);
  if (expected == linkable_.end()) return refuse("not an entry exported before it");

  // Resolve the target's directory one component at a time from the root, never
  // following a symlink, in case the tree was changed under us since we wrote it.
  UniqueFd parent;
  int at = root_fd_;
  for (size_t i = 0; i + 1 < parts->size(); i++) {
    std::string part((*parts)[i]);
    UniqueFd next(::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return OsError("cannot resolve hard link target " + e.target + " for", rel);
    parent = std::move(next);
    at = parent.get();
  }
  std::string last(parts->back());
  struct stat st;
  if (::fstatat(at, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return OsError("cannot find hard link target " + e.target + " for", rel);
  if ((st.st_mode & S_IFMT) != expected->second) {
    return Status::IOError(
        "hard link target " + e.target + " changed during the export; refusing to link " + Display(rel),
        EINVAL);
  }
  // flags = 0: linkat does not follow a symlink at the old path.
  if (::linkat(at, last.c_str(), dir_fd, e.name.c_str(), 0) != 0)
    return OsError("cannot create hard link", rel);
  stats_.hardlinks++;
  return Status::Ok();
}

Status Exporter::ExportSpecial(int dir_fd, const TreeEntry& e, const std::string& rel) {
  mode_t type = 0;
  bool device = false;
  switch (e.kind) {
    case EntryKind::kFifo: type = S_IFIFO; break;
    case EntryKind::kSocket: type = S_IFSOCK; break;  // a bound-to-nothing socket inode, like tar makes
    case EntryKind::kCharDevice:
      type = S_IFCHR;
      device = true;
      break;
    case EntryKind::kBlockDevice:
      type = S_IFBLK;
      device = true;
      break;
    default: return Status::Corruption("not a special file: " + Display(rel));
  }
  if (device && !options_.privileged) {
    stats_.skipped++;
    return Status::Ok();
  }
  dev_t rdev = device ? static_cast<dev_t>(e.rdev) : 0;
  if (::mknodat(dir_fd, e.name.c_str(), type | 0600, rdev) != 0)
    return OsError(std::string("cannot create ") + EntryKindName(e.kind), rel);
  stats_.specials++;
  linkable_.emplace(rel, type);
  return FinishAt(dir_fd, e, rel, /*set_mode=*/true);
}

Status Exporter::XattrFailed(const std::string& name, size_t size, const std::string& rel, bool* skipped) {
  if (errno == EPERM && !options_.privileged && IsPrivilegedXattr(name)) {
    if (!*skipped) stats_.skipped++;
    *skipped = true;
    return Status::Ok();
  }
  const int err = errno;
  return Status::IOErrorWithMessage(XattrRefusal(dest_, name, size, Display(rel), err), err);
}

Status Exporter::FinishFd(int fd, const TreeEntry& e, const std::string& rel) {
  if (options_.privileged && ::fchown(fd, e.uid, e.gid) != 0) return OsError("cannot set the owner of", rel);
  bool skipped = false;
  for (const auto& [name, value] : e.xattrs) {
    if (::fsetxattr(fd, name.c_str(), value.data(), value.size(), 0) != 0)
      STRATA_RETURN_IF_ERROR(XattrFailed(name, value.size(), rel, &skipped));
  }
  if (!DropInheritedAcls(e.xattrs, e.kind == EntryKind::kDirectory,
                         [fd](const char* name) { return ::fremovexattr(fd, name); }))
    return OsError("cannot remove an inherited ACL of", rel);
  if (::fchmod(fd, e.mode) != 0) return OsError("cannot set the mode of", rel);
  const timespec times[2] = {{e.mtime_sec, e.mtime_nsec}, {e.mtime_sec, e.mtime_nsec}};
  if (::futimens(fd, times) != 0) return OsError("cannot set the mtime of", rel);
  return Status::Ok();
}

Status Exporter::FinishAt(int dir_fd, const TreeEntry& e, const std::string& rel, bool set_mode) {
  const char* name = e.name.c_str();
  if (options_.privileged && ::fchownat(dir_fd, name, e.uid, e.gid, AT_SYMLINK_NOFOLLOW) != 0)
    return OsError("cannot set the owner of", rel);
  // A symlink or fifo cannot be opened for fsetxattr without following or
  // blocking; lsetxattr on /proc/self/fd/<dir>/<name> reaches it through our
  // directory fd and does not follow the last component.
  const std::string proc_path = "/proc/self/fd/" + std::to_string(dir_fd) + "/" + e.name;
  bool skipped = false;
  for (const auto& [xname, value] : e.xattrs) {
    if (::lsetxattr(proc_path.c_str(), xname.c_str(), value.data(), value.size(), 0) != 0)
      STRATA_RETURN_IF_ERROR(XattrFailed(xname, value.size(), rel, &skipped));
  }
  // Symlinks have no ACLs; special files may have inherited some.
  if (set_mode && !DropInheritedAcls(e.xattrs, false, [&](const char* xname) {
        return ::lremovexattr(proc_path.c_str(), xname);
      }))
    return OsError("cannot remove an inherited ACL of", rel);
  if (set_mode && ::fchmodat(dir_fd, name, e.mode, AT_SYMLINK_NOFOLLOW) != 0)
    return OsError("cannot set the mode of", rel);
  const timespec times[2] = {{e.mtime_sec, e.mtime_nsec}, {e.mtime_sec, e.mtime_nsec}};
  if (::utimensat(dir_fd, name, times, AT_SYMLINK_NOFOLLOW) != 0)
    return OsError("cannot set the mtime of", rel);
  return Status::Ok();
}

// Removes everything inside the directory dir_fd, never following a symlink.
// Directories are made 0700 first: the export may have given one a mode that
// forbids removing its entries.
Status RemoveContents(int dir_fd, const std::string& display) {
  (void)::fchmod(dir_fd, 0700);
  int list_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  DIR* dir = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (dir == nullptr) {
    int err = errno;
    if (list_fd >= 0) ::close(list_fd);
    return Status::IOError("cannot list " + display, err);
  }
  std::vector<std::string> names;
  while (const dirent* d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : names) {
    const std::string path = display + "/" + name;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::IOError("cannot stat " + path, errno);
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) return Status::IOError("cannot open " + path, errno);
      STRATA_RETURN_IF_ERROR(RemoveContents(sub.get(), path));
    }
    if (::unlinkat(dir_fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0)
      return Status::IOError("cannot remove " + path, errno);
  }
  return Status::Ok();
}

// status with "; note" after its message; code and errno unchanged.
Status WithNote(const Status& status, const std::string& note) {
  const std::string msg = status.message() + "; " + note;
  switch (status.code()) {
    case Status::Code::kCorruption: return Status::Corruption(msg);
    case Status::Code::kNotFound: return Status::NotFound(msg);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(msg);
    case Status::Code::kIOError: return Status::IOErrorWithMessage(msg, status.errno_value());
    default: return status.WithContext(note);
  }
}

}  // namespace

std::string XattrRefusal(const std::string& dest, const std::string& name, size_t size, const std::string& path,
                         int err) {
  std::string why;
  if (err == ENOSPC || err == E2BIG || err == ERANGE)
    why = "; the file system of " + dest +
          " holds less than that for one file (ext4 without the ea_inode feature holds about one block of "
          "xattrs per file)";
  else if (err == ENOTSUP)
    why = "; the file system of " + dest + " does not support this kind of xattr";
  return "the target refused xattr " + name + " (" + std::to_string(size) + " bytes) of " + path + ": " +
         std::strerror(err) + why;
}

Status RemovePartialExport(const std::string& dest, bool remove_dest, const Status& failure) {
  UniqueFd fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  Status removed = fd.valid() ? RemoveContents(fd.get(), dest) : Status::IOError("cannot open " + dest, errno);
  fd = UniqueFd();
  if (removed.ok() && remove_dest && ::rmdir(dest.c_str()) != 0)
    removed = Status::IOError("cannot remove " + dest, errno);
  return WithNote(failure, removed.ok() ? "nothing was left in " + dest
                                         : "a partial tree is left in " + dest + " (" + removed.message() + ")");
}

Result<ExportStats> ExportTree(Store& store, const Hash& root, const std::string& dest,
                               const ExportOptions& options, Progress* progress) {
  // Read the root first, so a bad revision does not leave an empty dest behind.
  Result<Tree> tree = store.GetTree(root);
  if (!tree.ok()) return tree.status().WithContext("exporting tree " + root.ToHex());
  std::string display = dest;
  while (display.size() > 1 && display.back() == '/') display.pop_back();
  bool created = false;
  STRATA_ASSIGN_OR_RETURN(UniqueFd root_fd, OpenEmptyDest(dest, &created));
  Exporter exporter(store, options, progress, display, root_fd.get());
  // An export is all or nothing: what a failed one wrote is removed again,
  // so that a half-written tree is never taken for the commit.
  if (Status s = exporter.ExportTreeInto(root_fd.get(), *tree, ""); !s.ok()) {
    root_fd = UniqueFd();
    return RemovePartialExport(display, created, s);
  }
  return exporter.stats();
}

}  // namespace strata
