#include "env/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace strata {

Result<FileStat> LstatPath(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::IOError("stat " + path, errno);
  }
  FileStat f;
  f.mode = st.st_mode;
  f.uid = st.st_uid;
  f.gid = st.st_gid;
  f.size = static_cast<uint64_t>(st.st_size);
  f.mtime_sec = st.st_mtim.tv_sec;
  f.mtime_nsec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  f.ctime_sec = st.st_ctim.tv_sec;
  f.ctime_nsec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  f.nlink = st.st_nlink;
  f.rdev = st.st_rdev;
  return f;
}

Result<std::string> CanonicalPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return Status::IOError("resolving " + path, errno);
  std::string out(resolved);
  ::free(resolved);
  return out;
}

Result<std::vector<std::string>> ListDirectorySorted(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening directory " + path, errno);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    ::close(fd);
    return Status::IOError("opening directory " + path, err);
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return Status::IOError("reading directory " + path, err);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> ReadSymlink(const std::string& path) {
  std::string buf(256, '\0');
  for (;;) {
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return Status::IOError("readlink " + path, errno);
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.resize(buf.size() * 2);
  }
}

Result<std::vector<std::pair<std::string, std::string>>> ReadXattrs(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string names;
  for (;;) {
    ssize_t n = ::llistxattr(path.c_str(), nullptr, 0);
    if (n < 0) {
      if (errno == ENOTSUP) return out;
      return Status::IOError("listing xattrs of " + path, errno);
    }
    if (n == 0) return out;
    names.resize(static_cast<size_t>(n));
    n = ::llistxattr(path.c_str(), names.data(), names.size());
    if (n >= 0) {
      names.resize(static_cast<size_t>(n));
      break;
    }
    if (errno != ERANGE) return Status::IOError("listing xattrs of " + path, errno);  // else: grew, retry
  }
  for (size_t start = 0; start < names.size();) {
    size_t end = names.find('\0', start);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    std::string value;
    for (;;) {
      ssize_t n = ::lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
      if (n < 0) {
        if (errno == ENODATA) break;  // removed meanwhile
        return Status::IOError("reading xattr " + name + " of " + path, errno);
      }
      value.resize(static_cast<size_t>(n));
      n = ::lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
      if (n >= 0) {
        value.resize(static_cast<size_t>(n));
        out.emplace_back(std::move(name), std::move(value));
        break;
      }
      if (errno != ERANGE) return Status::IOError("reading xattr " + name + " of " + path, errno);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<SourceFile> SourceFile::Open(const std::string& path, bool sequential) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);  // not our file
  if (fd < 0) return Status::IOError("opening " + path, errno);
  if (sequential) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return SourceFile(fd, path);
}

SourceFile::~SourceFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<size_t> SourceFile::ReadAppend(size_t n, std::string* out) {
  size_t old = out->size();
  out->resize(old + n);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd_, out->data() + old + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      out->resize(old);
      return Status::IOError("reading " + path_, errno);
    }
    if (r == 0) break;  // end of file
    done += static_cast<size_t>(r);
  }
  out->resize(old + done);
  return done;
}

}  // namespace strata
