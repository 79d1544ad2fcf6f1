// ExportCommit: the tree via ExportTree, then the root directory's own metadata,
// which lives in the commit because no tree entry describes the top directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include "snapshot/exporter.h"

namespace strata {

namespace {
Status ApplyRootMeta(const RootMeta& meta, const std::string& dest, bool privileged) {
  int fd = ::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening " + dest, errno);
  Status s;
  // Owner first: chown clears setuid/setgid and security.capability.
  if (privileged && ::fchown(fd, meta.uid, meta.gid) != 0) s = Status::IOError("chown " + dest, errno);
  for (const auto& [name, value] : meta.xattrs) {
    if (!s.ok()) break;
    if (::fsetxattr(fd, name.c_str(), value.data(), value.size(), 0) != 0) {
      const int err = errno;
      s = Status::IOErrorWithMessage(XattrRefusal(dest, name, value.size(), dest, err), err);
    }
  }
  // A destination made beforehand may carry ACLs the commit's top directory has not.
  for (const char* acl : {"system.posix_acl_access", "system.posix_acl_default"}) {
    bool stored = false;
    for (const auto& [name, value] : meta.xattrs) stored = stored || name == acl;
    if (s.ok() && !stored && ::fremovexattr(fd, acl) != 0 && errno != ENODATA && errno != EOPNOTSUPP)
      s = Status::IOError(std::string("removing ") + acl + " of " + dest, errno);
  }
  if (s.ok() && ::fchmod(fd, meta.mode) != 0) s = Status::IOError("chmod " + dest, errno);
  struct timespec times[2] = {{meta.mtime_sec, static_cast<long>(meta.mtime_nsec)},
                              {meta.mtime_sec, static_cast<long>(meta.mtime_nsec)}};
  if (s.ok() && ::futimens(fd, times) != 0) s = Status::IOError("setting times of " + dest, errno);
  ::close(fd);
  return s;
}
}  // namespace

Result<ExportStats> ExportCommit(Store& store, const Commit& commit, const std::string& dest,
                                 const ExportOptions& options, Progress* progress) {
  struct stat st;
  const bool existed = ::lstat(dest.c_str(), &st) == 0;
  STRATA_ASSIGN_OR_RETURN(ExportStats stats, ExportTree(store, commit.root, dest, options, progress));
  if (Status s = ApplyRootMeta(commit.root_meta, dest, options.privileged); !s.ok())
    return RemovePartialExport(dest, !existed, s);
  return stats;
}

}  // namespace strata
