// The Env of PosixEnv::Beneath: the files of one store, reached from a
// descriptor of its root without following links (beneath.h says how and
// why). Paths keep their absolute form (root + "/packs/x.pack") so that the
// store's code and its messages stay as they are; the root prefix is only
// stripped here.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "env/beneath.h"
#include "env/posix_files.h"

namespace strata::posix_internal {
namespace {

class ConfinedEnv : public Env {
 public:
  ConfinedEnv(std::string root, UniqueFd root_fd) : root_(std::move(root)), root_fd_(std::move(root_fd)) {}

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    auto fd = OpenBeneath(root_fd_.get(), rel, O_WRONLY | O_CREAT | O_EXCL, 0600, path);
    if (!fd.ok()) {
      if (fd.status().errno_value() == EEXIST) return Status::AlreadyExists(path + " already exists");
      return fd.status();
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd->release(), path));
  }

  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    // O_NONBLOCK: a FIFO planted in the store must not hang the open.
    STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenBeneath(root_fd_.get(), rel, O_RDONLY | O_NONBLOCK, 0, path));
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Status::IOError("stat " + path, errno);
    if (!S_ISREG(st.st_mode)) return Status::IOErrorWithMessage(path + " is not a regular file", EINVAL);
    return std::unique_ptr<RandomAccessFile>(
        new PosixRandomAccessFile(fd.release(), path, static_cast<uint64_t>(st.st_size)));
  }

  Result<std::string> ReadFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(auto file, NewRandomAccessFile(path));
    std::string data;
    STRATA_RETURN_IF_ERROR(file->Read(0, file->Size(), &data));
    return data;
  }

  Status WriteFileAtomically(const std::string& path, std::string_view data) override {
    STRATA_ASSIGN_OR_RETURN(ParentDir dir, Parent(path));
    const std::string tmp = dir.name + ".tmp." + std::to_string(::getpid());
    ::unlinkat(dir.fd.get(), tmp.c_str(), 0);
    FdHolder fd(::openat(dir.fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) return OpenError("creating", path + ".tmp", errno);
    Status s = WriteAll(fd.get(), data.data(), data.size(), path);
    if (s.ok() && ::fsync(fd.get()) != 0) s = Status::IOError("syncing " + path, errno);
    if (s.ok() && ::close(fd.release()) != 0) s = Status::IOError("closing " + path, errno);
    if (s.ok() && ::renameat(dir.fd.get(), tmp.c_str(), dir.fd.get(), dir.name.c_str()) != 0)
      s = Status::IOError("renaming a temp file to " + path, errno);
    if (!s.ok()) {
      ::unlinkat(dir.fd.get(), tmp.c_str(), 0);
      return s;
    }
    return SyncDirFd(dir.fd.get(), path);
  }

  bool Exists(const std::string& path) override {
    auto rel = Relative(path);
    if (!rel.ok()) return false;
    if (rel->empty()) return true;
    auto dir = Parent(path);
    // A link on the way counts as there: the open that follows says what it is.
    if (!dir.ok()) return !dir.status().IsNotFound();
    struct stat st;
    return ::fstatat(dir->fd.get(), dir->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenDir(path));
    return ListOpenDirectory(fd.get(), path);
  }

  Status CreateDir(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    if (rel.empty()) return Status::Ok();
    STRATA_ASSIGN_OR_RETURN(ParentDir dir, Parent(path));
    if (::mkdirat(dir.fd.get(), dir.name.c_str(), 0700) == 0) return Status::Ok();
    if (errno != EEXIST) return OpenError("creating directory", path, errno);
    struct stat st;
    if (::fstatat(dir.fd.get(), dir.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return Status::IOError("stat " + path, errno);
    if (S_ISLNK(st.st_mode)) return OpenError("creating directory", path, ELOOP);
    if (!S_ISDIR(st.st_mode)) return Status::IOErrorWithMessage(path + " exists and is not a directory", ENOTDIR);
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(ParentDir dir, Parent(path));
    if (::unlinkat(dir.fd.get(), dir.name.c_str(), 0) != 0) return Status::IOError("removing " + path, errno);
    return Status::Ok();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    STRATA_ASSIGN_OR_RETURN(ParentDir a, Parent(from));
    STRATA_ASSIGN_OR_RETURN(ParentDir b, Parent(to));
    if (::renameat(a.fd.get(), a.name.c_str(), b.fd.get(), b.name.c_str()) != 0)
      return Status::IOError("renaming " + from + " to " + to, errno);
    return Status::Ok();
  }

  Status RenameNoReplace(const std::string& from, const std::string& to) override {
    STRATA_ASSIGN_OR_RETURN(ParentDir a, Parent(from));
    STRATA_ASSIGN_OR_RETURN(ParentDir b, Parent(to));
    return RenameNoReplaceAt(a.fd.get(), a.name, b.fd.get(), b.name, from, to);
  }

  Status RemoveTree(const std::string& path) override {
    auto dir = Parent(path);
    if (!dir.ok() && (dir.status().IsNotFound() || dir.status().errno_value() == ENOENT)) return Status::Ok();
    STRATA_RETURN_IF_ERROR(dir.status());
    return RemoveTreeAt(dir->fd.get(), dir->name, path);
  }

  Status SyncDir(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenDir(path));
    if (::fsync(fd.get()) != 0) return Status::IOError("syncing directory " + path, errno);
    return Status::Ok();
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(ParentDir dir, Parent(path));
    struct stat st;
    if (::fstatat(dir.fd.get(), dir.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return OpenError("stat", path, errno);
    if (S_ISLNK(st.st_mode)) return OpenError("stat", path, ELOOP);
    return static_cast<uint64_t>(st.st_size);
  }

  bool ProcessAlive(int pid) override { return Env::Default()->ProcessAlive(pid); }
  Result<std::string> BootId() override { return Env::Default()->BootId(); }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) override {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenBeneath(root_fd_.get(), rel, O_RDWR | O_CREAT, 0600, path));
    return LockOpenFile(fd.release(), path, mode, wait);
  }

  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override {
    auto fd = OpenDir(path);
    if (!fd.ok() && fd.status().errno_value() == ENOENT) return Status::NotFound(path + " does not exist");
    STRATA_RETURN_IF_ERROR(fd.status());
    return NewPosixDirectory(std::move(fd).value(), path);
  }

  Status SyncFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    auto fd = OpenBeneath(root_fd_.get(), rel, O_RDWR | O_NONBLOCK, 0, path);
    if (!fd.ok() && fd.status().errno_value() == ENOENT) return Status::NotFound(path + " does not exist");
    STRATA_RETURN_IF_ERROR(fd.status());
    return SyncOpenFile(std::move(fd).value(), path);
  }

  Result<uint64_t> FreeSpace(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenDir(path));
    return FreeSpaceOf(fd.get(), path);
  }

 private:
  // "" for the root itself.
  Result<std::string> Relative(const std::string& path) const {
    if (path == root_) return std::string();
    if (path.size() > root_.size() + 1 && path.compare(0, root_.size(), root_) == 0 && path[root_.size()] == '/') {
      std::string rel = path.substr(root_.size() + 1);
      if (IsPlainRelativePath(rel)) return rel;
    }
    return Status::InvalidArgument(path + " is not a plain path inside " + root_);
  }

  Result<ParentDir> Parent(const std::string& path) const {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    if (rel.empty()) return Status::InvalidArgument("the store's root " + root_ + " has no name inside it");
    return OpenParentBeneath(root_fd_.get(), rel, path);
  }

  Result<UniqueFd> OpenDir(const std::string& path) const {
    STRATA_ASSIGN_OR_RETURN(std::string rel, Relative(path));
    if (rel.empty()) {
      int fd = ::openat(root_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return Status::IOError("opening directory " + path, errno);
      return UniqueFd(fd);
    }
    return OpenBeneath(root_fd_.get(), rel, O_RDONLY | O_DIRECTORY, 0, path);
  }

  static Status SyncDirFd(int parent_path_fd, const std::string& path) {
    FdHolder fd(::openat(parent_path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return Status::IOError("opening the directory of " + path, errno);
    if (::fsync(fd.get()) != 0) return Status::IOError("syncing the directory of " + path, errno);
    return Status::Ok();
  }

  const std::string root_;
  const UniqueFd root_fd_;
};

// Forwards to another Env: the default Beneath of test Envs, which wrap one.
class ForwardingEnv : public Env {
 public:
  explicit ForwardingEnv(Env* base) : base_(base) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p) override { return base_->NewWritableFile(p); }
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& p) override {
    return base_->NewRandomAccessFile(p);
  }
  Result<std::string> ReadFile(const std::string& p) override { return base_->ReadFile(p); }
  Status WriteFileAtomically(const std::string& p, std::string_view d) override { return base_->WriteFileAtomically(p, d); }
  bool Exists(const std::string& p) override { return base_->Exists(p); }
  Result<std::vector<std::string>> ListDir(const std::string& p) override { return base_->ListDir(p); }
  Status CreateDir(const std::string& p) override { return base_->CreateDir(p); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Status Rename(const std::string& a, const std::string& b) override { return base_->Rename(a, b); }
  Status RenameNoReplace(const std::string& a, const std::string& b) override { return base_->RenameNoReplace(a, b); }
  Status RemoveTree(const std::string& p) override { return base_->RemoveTree(p); }
  Status SyncDir(const std::string& p) override { return base_->SyncDir(p); }
  Result<uint64_t> FileSize(const std::string& p) override { return base_->FileSize(p); }
  bool ProcessAlive(int pid) override { return base_->ProcessAlive(pid); }
  Result<std::string> BootId() override { return base_->BootId(); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& p, LockMode m, bool w) override {
    return base_->LockFile(p, m, w);
  }
  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& p) override { return base_->OpenDirectory(p); }
  Status SyncFile(const std::string& p) override { return base_->SyncFile(p); }
  Result<uint64_t> FreeSpace(const std::string& p) override { return base_->FreeSpace(p); }

 private:
  Env* const base_;
};

}  // namespace

Result<std::unique_ptr<Env>> NewConfinedEnv(const std::string& root) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening " + root, errno);
  return std::unique_ptr<Env>(new ConfinedEnv(root, UniqueFd(fd)));
}

}  // namespace strata::posix_internal

namespace strata {
Result<std::unique_ptr<Env>> Env::Beneath(const std::string&) {
  return std::unique_ptr<Env>(new posix_internal::ForwardingEnv(this));
}
}  // namespace strata
