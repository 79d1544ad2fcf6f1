#include "env/beneath.h"

#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace strata {
namespace {

// -1 unknown, 0 no, 1 yes; decided by the first call.
std::atomic<int> openat2_available{-1};

int RetryOpenat(int dir_fd, const char* name, int flags, mode_t mode) {
  int fd;
  do fd = ::openat(dir_fd, name, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

// openat2 of the whole path, or -1 with errno ENOSYS where the kernel lacks it.
int Openat2(int root_fd, const std::string& rel, int flags, mode_t mode) {
#ifdef SYS_openat2
  if (openat2_available.load(std::memory_order_relaxed) == 0) {
    errno = ENOSYS;
    return -1;
  }
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  do fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof(how));
  while (fd < 0 && errno == EINTR);
  // EPERM comes from seccomp filters (some container runtimes) that block
  // the call; they mean "not available" too. A refused link is ELOOP/EXDEV.
  if (fd < 0 && (errno == ENOSYS || errno == EPERM) && openat2_available.load() != 1) {
    openat2_available = 0;
    errno = ENOSYS;
    return -1;
  }
  if (fd >= 0) openat2_available = 1;
  return static_cast<int>(fd);
#else
  (void)root_fd, (void)rel, (void)flags, (void)mode;
  errno = ENOSYS;
  return -1;
#endif
}

// The by-hand walk: every directory component with O_NOFOLLOW | O_DIRECTORY.
int WalkOpen(int root_fd, std::string_view rel, int flags, mode_t mode) {
  UniqueFd dir;
  int at = root_fd;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    std::string name(rel.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return RetryOpenat(at, name.c_str(), flags, mode);
    int next = RetryOpenat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (next < 0) return -1;
    dir = UniqueFd(next);
    at = dir.get();
    start = slash + 1;
  }
}

// After a failed open of rel: the first component that is a link, or "" if
// none is. Each prefix is looked at without following its last name, and the
// ones before it were no links, so no link is followed on the way.
std::string FirstLink(int root_fd, std::string_view rel) {
  size_t end = 0;
  while (end != std::string_view::npos) {
    end = rel.find('/', end + 1);
    const std::string prefix(rel.substr(0, end));
    struct stat st;
    if (::fstatat(root_fd, prefix.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "";
    if (S_ISLNK(st.st_mode)) return prefix;
  }
  return "";
}

}  // namespace

bool IsPlainRelativePath(std::string_view rel) {
  if (rel.empty() || rel.front() == '/') return false;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    std::string_view part = rel.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

void UseOpenat2ForTesting(bool use) { openat2_available = use ? -1 : 0; }

bool HaveOpenat2() {
  if (openat2_available.load() == -1) {
    int fd = Openat2(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd >= 0) ::close(fd);
  }
  return openat2_available.load() == 1;
}

Status OpenError(const std::string& what, const std::string& shown, int err) {
  if (err == ELOOP || err == EXDEV)
    return Status::IOErrorWithMessage(shown + " is (or lies under) a symbolic link; strata follows no links inside a store", err);
  if (err == ENOENT) return Status::NotFound(shown + " does not exist");
  return Status::IOError(what + " " + shown, err);
}

Result<UniqueFd> OpenBeneath(int root_fd, std::string_view rel, int flags, mode_t mode, const std::string& shown) {
  if (!IsPlainRelativePath(rel)) return Status::InvalidArgument("'" + std::string(rel) + "' is not a plain name inside the store");
  flags |= O_CLOEXEC | O_NOFOLLOW;
  const std::string path(rel);
  int fd = Openat2(root_fd, path, flags, mode);
  if (fd < 0 && errno == ENOSYS) fd = WalkOpen(root_fd, rel, flags, mode);
  if (fd < 0) {
    const int err = errno;
    // A link where a directory is expected fails as ENOTDIR: name the link.
    if (err == ENOTDIR || err == ELOOP || err == EXDEV) {
      if (std::string link = FirstLink(root_fd, rel); !link.empty()) {
        std::string link_shown = shown;
        if (shown.size() > rel.size() && shown.compare(shown.size() - rel.size(), rel.size(), rel) == 0)
          link_shown = shown.substr(0, shown.size() - rel.size()) + link;
        return Status::IOErrorWithMessage(
            link_shown + " is a symbolic link; strata follows no links inside a store", ELOOP);
      }
    }
    return OpenError("opening", shown, err);
  }
  UniqueFd out(fd);
  if (flags & O_PATH) {
    // O_PATH | O_NOFOLLOW opens a link itself instead of failing: refuse it here.
    struct stat st;
    if (::fstat(out.get(), &st) != 0) return OpenError("stat", shown, errno);
    if (S_ISLNK(st.st_mode)) return OpenError("opening", shown, ELOOP);
  }
  return out;
}

Result<ParentDir> OpenParentBeneath(int root_fd, std::string_view rel, const std::string& shown) {
  if (!IsPlainRelativePath(rel)) return Status::InvalidArgument("'" + std::string(rel) + "' is not a plain name inside the store");
  size_t slash = rel.rfind('/');
  ParentDir out;
  if (slash == std::string_view::npos) {
    int fd = ::fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return Status::IOError("duplicating a descriptor for " + shown, errno);
    out.fd = UniqueFd(fd);
    out.name = std::string(rel);
    return out;
  }
  STRATA_ASSIGN_OR_RETURN(out.fd, OpenBeneath(root_fd, rel.substr(0, slash), O_PATH | O_DIRECTORY, 0, shown));
  out.name = std::string(rel.substr(slash + 1));
  return out;
}

}  // namespace strata
