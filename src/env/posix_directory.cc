// The in-place files and directory handles of PosixEnv and of the confined
// Env (env.h: RandomRWFile, Directory), and the calls both make the same way.
// Every call retries EINTR and keeps the call's errno in its Status.
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "env/posix_files.h"

namespace strata::posix_internal {
namespace {

FileInfo InfoOf(const struct stat& st) {
  FileInfo info;
  info.size = static_cast<uint64_t>(st.st_size);
  info.allocated = static_cast<uint64_t>(st.st_blocks) * 512;
  info.mode = st.st_mode;
  info.links = st.st_nlink;
  return info;
}

// openat of a name directly in dir_fd that never follows a symlink nor leaves
// the directory (nor its filesystem); openat2 says so to the kernel where it
// has the call.
int OpenInside(int dir_fd, const std::string& name, int flags) {
  flags |= O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
#ifdef SYS_openat2
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & O_CREAT) ? 0600 : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  long fd;
  do fd = ::syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);  // EPERM: a seccomp filter
#endif
  return ::openat(dir_fd, name.c_str(), flags, 0600);
}

class PosixRandomRWFile : public RandomRWFile {
 public:
  PosixRandomRWFile(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const override {
    *got = 0;
    while (*got < n) {
      ssize_t r = ::pread(fd_.get(), out + *got, n - *got, static_cast<off_t>(offset + *got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::IOError("reading " + path_, errno);
      if (r == 0) break;
      *got += static_cast<size_t>(r);
    }
    return Status::Ok();
  }

  Status WriteAt(uint64_t offset, std::string_view data) override {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::pwrite(fd_.get(), data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::IOError("writing " + path_, errno);
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (::ftruncate(fd_.get(), static_cast<off_t>(size)) != 0) return Status::IOError("truncating " + path_, errno);
    return Status::Ok();
  }

  Status Allocate(uint64_t offset, uint64_t length) override {
    return Fallocate(0, offset, length, "reserving space in ");
  }

  Status PunchHole(uint64_t offset, uint64_t length) override {
    return Fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length, "punching ");
  }

  Status Sync() override {
    if (::fdatasync(fd_.get()) != 0) return Status::IOError("syncing " + path_, errno);
    return Status::Ok();
  }

  Result<FileInfo> Stat() const override {
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) return Status::IOError("stat " + path_, errno);
    return InfoOf(st);
  }

  // lseek moves the descriptor's offset; nothing else uses it (all I/O is pread/pwrite).
  Result<std::optional<uint64_t>> NextData(uint64_t offset) const override {
    off_t at = ::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_DATA);
    if (at < 0 && errno == ENXIO) return std::optional<uint64_t>();
    if (at < 0) return Status::IOError("seeking in " + path_, errno);
    return std::optional<uint64_t>(static_cast<uint64_t>(at));
  }

  Result<uint64_t> NextHole(uint64_t offset) const override {
    off_t at = ::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_HOLE);
    if (at < 0) return Status::IOError("seeking in " + path_, errno);
    return static_cast<uint64_t>(at);
  }

 private:
  Status Fallocate(int mode, uint64_t offset, uint64_t length, const char* what) {
    int rc;
    do rc = ::fallocate(fd_.get(), mode, static_cast<off_t>(offset), static_cast<off_t>(length));
    while (rc != 0 && errno == EINTR);
    if (rc != 0) return Status::IOError(what + path_, errno);
    return Status::Ok();
  }

  const UniqueFd fd_;
  const std::string path_;
};

class PosixDirectory : public Directory {
 public:
  PosixDirectory(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  const std::string& path() const override { return path_; }

  Result<std::unique_ptr<RandomRWFile>> OpenFile(const std::string& name, bool create) override {
    UniqueFd fd(OpenInside(fd_.get(), name, O_RDWR | O_NONBLOCK | (create ? O_CREAT : 0)));
    if (!fd.valid()) {
      if (errno == ENOENT) return Status::NotFound(PathOf(name) + " does not exist");
      return Status::IOError("opening " + PathOf(name), errno);
    }
    return std::unique_ptr<RandomRWFile>(new PosixRandomRWFile(std::move(fd), PathOf(name)));
  }

  Result<FileInfo> Stat(const std::string& name) override {
    struct stat st;
    if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return Status::NotFound(PathOf(name) + " does not exist");
      return Status::IOError("stat " + PathOf(name), errno);
    }
    return InfoOf(st);
  }

  Result<std::vector<std::string>> List() override { return ListOpenDirectory(fd_.get(), path_); }

  Status Sync() override {
    if (::fsync(fd_.get()) != 0) return Status::IOError("syncing " + path_, errno);
    return Status::Ok();
  }

  Result<std::unique_ptr<Directory>> OpenSubdirectory(const std::string& name, bool create) override {
    if (create && ::mkdirat(fd_.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::IOError("creating " + PathOf(name), errno);
    UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return Status::NotFound(PathOf(name) + " does not exist");
      return Status::IOError("opening " + PathOf(name), errno);
    }
    return std::unique_ptr<Directory>(new PosixDirectory(std::move(fd), PathOf(name)));
  }

  Status MoveTo(const std::string& name, Directory& to, const std::string& to_name) override {
    auto& target = static_cast<PosixDirectory&>(to);
    if (::renameat2(fd_.get(), name.c_str(), target.fd_.get(), to_name.c_str(), RENAME_NOREPLACE) == 0)
      return Status::Ok();
    if (errno == ENOENT) return Status::NotFound(PathOf(name) + " does not exist");
    if (errno == EEXIST) return Status::AlreadyExists(target.PathOf(to_name) + " already exists");
    return Status::IOError("moving " + PathOf(name) + " to " + target.PathOf(to_name), errno);
  }

  Status Remove(const std::string& name) override {
    if (::unlinkat(fd_.get(), name.c_str(), 0) == 0) return Status::Ok();
    if (errno == ENOENT) return Status::NotFound(PathOf(name) + " does not exist");
    return Status::IOError("removing " + PathOf(name), errno);
  }

 private:
  std::string PathOf(const std::string& name) const { return path_ + "/" + name; }

  const UniqueFd fd_;
  const std::string path_;
};

}  // namespace

std::unique_ptr<Directory> NewPosixDirectory(UniqueFd fd, std::string path) {
  return std::unique_ptr<Directory>(new PosixDirectory(std::move(fd), std::move(path)));
}

Result<std::vector<std::string>> ListOpenDirectory(int fd, const std::string& path) {
  const int list_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
  if (d == nullptr) {
    const int err = errno;
    if (list_fd >= 0) ::close(list_fd);
    return Status::IOError("listing " + path, err);
  }
  ::rewinddir(d);  // the descriptor's position is shared with earlier listings
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return Status::IOError("listing " + path, err);
  return names;
}

Status RenameNoReplaceAt(int from_dir, const std::string& from_name, int to_dir, const std::string& to_name,
                         const std::string& from, const std::string& to) {
  if (::renameat2(from_dir, from_name.c_str(), to_dir, to_name.c_str(), RENAME_NOREPLACE) == 0) return Status::Ok();
  // A non-empty directory in the way may be ENOTEMPTY rather than EEXIST.
  if (errno == EEXIST || errno == ENOTEMPTY) return Status::AlreadyExists(to + " already exists");
  if (errno == ENOENT) return Status::NotFound(from + " does not exist");
  return Status::IOError("renaming " + from + " to " + to, errno);
}

Status RemoveTreeAt(int dir_fd, const std::string& name, const std::string& path) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return Status::IOError("removing " + path, errno);
  // A directory (unlink says EISDIR, or EPERM as POSIX allows): its entries
  // first, reached through a descriptor of it that never follows a link.
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT ? Status::Ok() : Status::IOError("opening " + path, errno);
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> names, ListOpenDirectory(fd.get(), path));
  for (const std::string& n : names) STRATA_RETURN_IF_ERROR(RemoveTreeAt(fd.get(), n, path + "/" + n));
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return Status::IOError("removing directory " + path, errno);
  return Status::Ok();
}

Result<std::string> ReadBootId() {
  const char* path = "/proc/sys/kernel/random/boot_id";
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::IOError(std::string("opening ") + path, errno);
  char buf[64];
  ssize_t n;
  do n = ::read(fd.get(), buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0) return Status::IOError(std::string("reading ") + path, errno);
  std::string id(buf, static_cast<size_t>(n));
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (id.empty()) return Status::IOErrorWithMessage(std::string(path) + " is empty", EIO);
  return id;
}

Status SyncOpenFile(UniqueFd fd, const std::string& path) {
  if (::fdatasync(fd.get()) != 0) return Status::IOError("syncing " + path, errno);
  return Status::Ok();
}

Result<uint64_t> FreeSpaceOf(int fd, const std::string& path) {
  struct statvfs st;
  if (::fstatvfs(fd, &st) != 0) return Status::IOError("statvfs " + path, errno);
  // f_bavail also for root: f_bfree counts blocks that not even root can
  // allocate on some filesystems (ext4 keeps 2 % of the disk, at most 4096
  // clusters, for its own use).
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace strata::posix_internal
