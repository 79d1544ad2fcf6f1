// PosixEnv: Env over plain POSIX calls. Every call retries EINTR and reports
// failures with the path, so a user sees which file could not be written.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "env/env.h"
#include "env/posix_files.h"

namespace strata {
using namespace posix_internal;
namespace {

class PosixEnv : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) return Status::AlreadyExists(path + " already exists");
      return Status::IOError("creating " + path, errno);
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }

  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound(path + " does not exist");
      return Status::IOError("opening " + path, errno);
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return Status::IOError("stat " + path, err);
    }
    return std::unique_ptr<RandomAccessFile>(
        new PosixRandomAccessFile(fd, path, static_cast<uint64_t>(st.st_size)));
  }

  Result<std::string> ReadFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(auto file, NewRandomAccessFile(path));
    std::string data;
    STRATA_RETURN_IF_ERROR(file->Read(0, file->Size(), &data));
    return data;
  }

  Status WriteFileAtomically(const std::string& path, std::string_view data) override {
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    FdHolder fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (fd.get() < 0) return Status::IOError("creating " + tmp, errno);
    Status s = WriteAll(fd.get(), data.data(), data.size(), tmp);
    if (s.ok() && ::fsync(fd.get()) != 0) s = Status::IOError("syncing " + tmp, errno);
    if (s.ok() && ::close(fd.release()) != 0) s = Status::IOError("closing " + tmp, errno);
    if (s.ok()) s = Rename(tmp, path);
    if (!s.ok()) {
      ::unlink(tmp.c_str());
      return s;
    }
    auto slash = path.find_last_of('/');
    return SyncDir(slash == std::string::npos ? "." : path.substr(0, slash));
  }

  bool Exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return Status::NotFound(path + " does not exist");
      return Status::IOError("listing " + path, errno);
    }
    return ListOpenDirectory(fd.get(), path);
  }

  Status CreateDir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::IOError("creating directory " + path, errno);
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::IOError("removing " + path, errno);
    return Status::Ok();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return Status::IOError("renaming " + from + " to " + to, errno);
    return Status::Ok();
  }

  Status RenameNoReplace(const std::string& from, const std::string& to) override {
    return RenameNoReplaceAt(AT_FDCWD, from, AT_FDCWD, to, from, to);
  }

  Status RemoveTree(const std::string& path) override { return RemoveTreeAt(AT_FDCWD, path, path); }

  Status SyncDir(const std::string& path) override {
    FdHolder fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return Status::IOError("opening directory " + path, errno);
    if (::fsync(fd.get()) != 0) return Status::IOError("syncing directory " + path, errno);
    return Status::Ok();
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return Status::NotFound(path + " does not exist");
      return Status::IOError("stat " + path, errno);
    }
    return static_cast<uint64_t>(st.st_size);
  }

  bool ProcessAlive(int pid) override { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }
  Result<std::string> BootId() override { return ReadBootId(); }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IOError("opening lock file " + path, errno);
    return LockOpenFile(fd, path, mode, wait);
  }

  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return Status::NotFound(path + " does not exist");
      return Status::IOError("opening directory " + path, errno);
    }
    return NewPosixDirectory(std::move(fd), path);
  }

  Status SyncFile(const std::string& path) override {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return Status::NotFound(path + " does not exist");
      return Status::IOError("opening " + path, errno);
    }
    return SyncOpenFile(std::move(fd), path);
  }

  Result<uint64_t> FreeSpace(const std::string& path) override {
    UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd.valid()) return Status::IOError("opening " + path, errno);
    return FreeSpaceOf(fd.get(), path);
  }

  Result<std::unique_ptr<Env>> Beneath(const std::string& root) override { return NewConfinedEnv(root); }
};

}  // namespace

namespace posix_internal {
Result<std::unique_ptr<FileLock>> LockOpenFile(int fd_in, const std::string& path, LockMode mode, bool wait) {
  FdHolder fd(fd_in);
  int op = (mode == LockMode::kShared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
  int rc;
  do rc = ::flock(fd.get(), op);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EWOULDBLOCK) return Status::Conflict(path + " is locked by another process");
    return Status::IOError("locking " + path, errno);
  }
  return std::unique_ptr<FileLock>(new PosixFileLock(fd.release()));
}
}  // namespace posix_internal

Result<Buffer> RandomAccessFile::ReadBuffer(uint64_t offset, size_t n) const {
  std::string bytes;
  STRATA_RETURN_IF_ERROR(Read(offset, n, &bytes));
  Buffer out(n);
  std::memcpy(out.data(), bytes.data(), n);
  return out;
}

uint64_t RaiseFdLimitToHard() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    struct rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv;  // leaked on purpose: used until exit
  return env;
}

}  // namespace strata
