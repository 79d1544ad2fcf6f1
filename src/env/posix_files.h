// The file objects PosixEnv hands out, shared with the confined Env
// (confined_env.cc) that opens the same kinds of files below a directory.
#pragma once

#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "env/env.h"
#include "util/unique_fd.h"

namespace strata::posix_internal {

class PosixFileLock : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing the descriptor drops the flock

 private:
  const int fd_;
};

class FdHolder {
 public:
  explicit FdHolder(int fd) : fd_(fd) {}
  ~FdHolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdHolder(const FdHolder&) = delete;
  FdHolder& operator=(const FdHolder&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

inline Status WriteAll(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("writing " + path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    STRATA_RETURN_IF_ERROR(broken_);
    Status written = WriteAll(fd_, data.data(), data.size(), path_);
    if (written.ok()) {
      size_ += data.size();
      return written;
    }
    // Part of data may be in the file: cut it off, and write the next bytes
    // where these should have gone.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0 || ::lseek(fd_, static_cast<off_t>(size_), SEEK_SET) < 0) {
      const int err = errno;
      broken_ = Status::IOError(path_ + " could not be cut back after a failed write (" + written.message() + ")", err);
    }
    return written;
  }

  Status Sync() override {
    STRATA_RETURN_IF_ERROR(broken_);
    if (::fdatasync(fd_) != 0) return Status::IOError("syncing " + path_, errno);
    return Status::Ok();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Status::IOError("closing " + path_, errno);
    return Status::Ok();
  }

  uint64_t Size() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  uint64_t size_ = 0;
  Status broken_;  // set when a failed Append left bytes that could not be cut off
};

class PosixRandomAccessFile : public RandomAccessFile {
 public:
  PosixRandomAccessFile(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Status Read(uint64_t offset, size_t n, std::string* out) const override {
    out->resize(n);
    return ReadAt(offset, n, out->data());
  }

  Result<Buffer> ReadBuffer(uint64_t offset, size_t n) const override {
    Buffer out(n);
    STRATA_RETURN_IF_ERROR(ReadAt(offset, n, out.data()));
    return out;
  }

  uint64_t Size() const override { return size_; }

 private:
  Status ReadAt(uint64_t offset, size_t n, char* out) const {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::IOError("reading " + path_, errno);
      }
      if (r == 0)
        return Status::Corruption(path_ + " is shorter than expected (wanted " + std::to_string(n) +
                                  " bytes at offset " + std::to_string(offset) + ")");
      done += static_cast<size_t>(r);
    }
    return Status::Ok();
  }

  int fd_;
  std::string path_;
  uint64_t size_;
};

// Takes the flock on an open fd; Conflict when held elsewhere and !wait.
Result<std::unique_ptr<FileLock>> LockOpenFile(int fd, const std::string& path, LockMode mode, bool wait);

// The Directory over an open directory fd, named path in messages; its
// RandomRWFiles, and the other calls both Envs make alike (posix_directory.cc).
std::unique_ptr<Directory> NewPosixDirectory(UniqueFd fd, std::string path);
// fdatasync of an open file.
Status SyncOpenFile(UniqueFd fd, const std::string& path);
// Env::FreeSpace of the filesystem holding the open fd.
Result<uint64_t> FreeSpaceOf(int fd, const std::string& path);

// The names in the open directory fd (without "." and ".."), from its
// start whatever was read of it before; fd stays open and is not moved.
Result<std::vector<std::string>> ListOpenDirectory(int fd, const std::string& path);
// RenameNoReplace of from_name in from_dir to to_name in to_dir; from and to
// name them in messages.
Status RenameNoReplaceAt(int from_dir, const std::string& from_name, int to_dir, const std::string& to_name,
                         const std::string& from, const std::string& to);
// RemoveTree of name in the directory dir_fd, shown as path in messages.
Status RemoveTreeAt(int dir_fd, const std::string& name, const std::string& path);
// Env::BootId from the kernel.
Result<std::string> ReadBootId();

// The Env of Env::Beneath for the real file system (confined_env.cc).
Result<std::unique_ptr<Env>> NewConfinedEnv(const std::string& root);

}  // namespace strata::posix_internal
