// Reading a user's directory tree: lstat, readlink, xattrs and file contents.
//
// These are the OS calls the importer makes on the tree it is given (the store's
// own files go through Env). None of them follows a symlink.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace strata {

struct FileStat {
  mode_t mode = 0;  // type and permission bits, as st_mode
  uid_t uid = 0;
  gid_t gid = 0;
  uint64_t size = 0;
  int64_t mtime_sec = 0;
  uint32_t mtime_nsec = 0;
  int64_t ctime_sec = 0;  // changes with any write or metadata change; cannot be set by users
  uint32_t ctime_nsec = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  nlink_t nlink = 0;
  dev_t rdev = 0;
};

Result<FileStat> LstatPath(const std::string& path);
// The absolute path with symlinks and "." / ".." resolved (realpath).
Result<std::string> CanonicalPath(const std::string& path);
// Entry names of a directory (without "." and ".."), sorted bytewise.
Result<std::vector<std::string>> ListDirectorySorted(const std::string& path);
Result<std::string> ReadSymlink(const std::string& path);
// All xattrs of path (not following a symlink), sorted by name. A filesystem
// without xattr support yields an empty list.
Result<std::vector<std::pair<std::string, std::string>>> ReadXattrs(const std::string& path);

// A regular file opened for sequential reading (O_NOFOLLOW).
class SourceFile {
 public:
  // sequential: hint the kernel to read ahead aggressively (worth a syscall
  // for large files only).
  static Result<SourceFile> Open(const std::string& path, bool sequential);
  ~SourceFile();
  SourceFile(SourceFile&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;
  SourceFile& operator=(SourceFile&&) = delete;

  // Reads up to n bytes appended to *out; returns the number read (0 at end).
  // A regular file returns fewer than n only at its end.
  Result<size_t> ReadAppend(size_t n, std::string* out);

 private:
  SourceFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace strata
