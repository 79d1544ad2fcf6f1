#include "conformance.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace strata::conformance {

std::string ErrnoText(int err) {
  if (err == 0) return "0";
  const char* name = strerrorname_np(err);
  std::string text = name != nullptr ? name : "errno " + std::to_string(err);
  return text + " (" + strerror(err) + ")";
}

::testing::AssertionResult Succeeded(const char* expr, const Outcome& o) {
  if (o.rc != -1) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " failed: " << ErrnoText(o.err);
}

::testing::AssertionResult FailedWith(const char* expr, const Outcome& o, std::initializer_list<int> errs) {
  std::string want;
  for (int e : errs) {
    if (o.rc == -1 && o.err == e) return ::testing::AssertionSuccess();
    const char* name = strerrorname_np(e);
    want += (want.empty() ? "" : " or ") + std::string(name != nullptr ? name : std::to_string(e));
  }
  if (o.rc != -1) {
    return ::testing::AssertionFailure() << expr << " succeeded (returned " << o.rc << "), expected " << want;
  }
  return ::testing::AssertionFailure() << expr << " failed with " << ErrnoText(o.err) << ", expected " << want;
}

void Fd::Reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

::testing::AssertionResult Open(Fd* fd, const std::string& path, int flags, mode_t mode) {
  int raw = open(path.c_str(), flags, mode);
  if (raw < 0) {
    int err = errno;
    return ::testing::AssertionFailure() << "open(" << path << ", flags=0" << std::oct << flags << std::dec
                                         << ") failed: " << ErrnoText(err);
  }
  fd->Reset(raw);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult WriteAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return ::testing::AssertionFailure() << "write(fd " << fd << ", " << data.size() - done
                                           << " bytes) failed: " << ErrnoText(err);
    }
    if (n == 0) return ::testing::AssertionFailure() << "write(fd " << fd << ") wrote 0 bytes";
    done += static_cast<size_t>(n);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult PwriteAll(int fd, std::string_view data, off_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = pwrite(fd, data.data() + done, data.size() - done, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return ::testing::AssertionFailure() << "pwrite(fd " << fd << ", " << data.size() - done << " bytes, offset "
                                           << offset + static_cast<off_t>(done) << ") failed: " << ErrnoText(err);
    }
    if (n == 0) return ::testing::AssertionFailure() << "pwrite(fd " << fd << ") wrote 0 bytes";
    done += static_cast<size_t>(n);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult PreadUpTo(int fd, size_t n, off_t offset, std::string* out) {
  out->assign(n, '\0');
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, out->data() + done, n - done, offset + static_cast<off_t>(done));
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return ::testing::AssertionFailure() << "pread(fd " << fd << ", " << n - done << " bytes, offset "
                                           << offset + static_cast<off_t>(done) << ") failed: " << ErrnoText(err);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  out->resize(done);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult ReadToEnd(int fd, std::string* out) {
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return ::testing::AssertionFailure() << "read(fd " << fd << ") failed: " << ErrnoText(err);
    }
    if (r == 0) return ::testing::AssertionSuccess();
    out->append(buf, static_cast<size_t>(r));
  }
}

::testing::AssertionResult WriteFile(const std::string& path, std::string_view data, mode_t mode) {
  Fd fd;
  if (auto r = Open(&fd, path, O_WRONLY | O_CREAT | O_TRUNC, mode); !r) return r;
  if (auto r = WriteAll(fd.get(), data); !r) return r << " (writing " << path << ")";
  int raw = fd.Release();
  if (close(raw) != 0) {
    int err = errno;
    return ::testing::AssertionFailure() << "close(" << path << ") failed: " << ErrnoText(err);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult ReadFile(const std::string& path, std::string* out) {
  Fd fd;
  if (auto r = Open(&fd, path, O_RDONLY); !r) return r;
  if (auto r = ReadToEnd(fd.get(), out); !r) return r << " (reading " << path << ")";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Touch(const std::string& path, mode_t mode) {
  Fd fd;
  return Open(&fd, path, O_WRONLY | O_CREAT | O_EXCL, mode);
}

::testing::AssertionResult Stat(const std::string& path, struct stat* st) {
  if (stat(path.c_str(), st) == 0) return ::testing::AssertionSuccess();
  int err = errno;
  return ::testing::AssertionFailure() << "stat(" << path << ") failed: " << ErrnoText(err);
}

::testing::AssertionResult Lstat(const std::string& path, struct stat* st) {
  if (lstat(path.c_str(), st) == 0) return ::testing::AssertionSuccess();
  int err = errno;
  return ::testing::AssertionFailure() << "lstat(" << path << ") failed: " << ErrnoText(err);
}

std::string Pattern(size_t n, uint32_t seed) {
  std::string out(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<char>(x & 0xff);
  }
  return out;
}

void PassTimestampTick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

timespec Now() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

bool Before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

bool SameTime(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

std::string TimeText(const timespec& t) {
  char ns[16];
  snprintf(ns, sizeof ns, "%09ld", t.tv_nsec);
  return std::to_string(t.tv_sec) + "." + ns;
}

::testing::AssertionResult ListDir(const std::string& path, std::vector<std::string>* names) {
  names->clear();
  DIR* d = opendir(path.c_str());
  if (d == nullptr) {
    int err = errno;
    return ::testing::AssertionFailure() << "opendir(" << path << ") failed: " << ErrnoText(err);
  }
  for (;;) {
    errno = 0;
    dirent* e = readdir(d);
    if (e == nullptr) {
      int err = errno;
      closedir(d);
      if (err != 0) return ::testing::AssertionFailure() << "readdir(" << path << ") failed: " << ErrnoText(err);
      return ::testing::AssertionSuccess();
    }
    std::string name = e->d_name;
    if (name != "." && name != "..") names->push_back(name);
  }
}

::testing::AssertionResult RunAs(uid_t uid, gid_t gid, const std::function<int()>& fn, int* result) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    int err = errno;
    return ::testing::AssertionFailure() << "pipe2 failed: " << ErrnoText(err);
  }
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return ::testing::AssertionFailure() << "fork failed: " << ErrnoText(err);
  }
  if (pid == 0) {
    // Child: drop to uid/gid, run fn, report two ints: stage and result.
    close(fds[0]);
    int msg[2] = {0, 0};
    if (setgroups(0, nullptr) != 0) {
      msg[0] = 1;
    } else if (setgid(gid) != 0) {
      msg[0] = 2;
    } else if (setuid(uid) != 0) {
      msg[0] = 3;
    }
    if (msg[0] != 0) {
      msg[1] = errno;
    } else {
      msg[1] = fn();
    }
    ssize_t ignored = write(fds[1], msg, sizeof msg);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  int msg[2] = {-1, -1};
  size_t got = 0;
  while (got < sizeof msg) {
    ssize_t n = read(fds[0], reinterpret_cast<char*>(msg) + got, sizeof msg - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != sizeof msg) {
    return ::testing::AssertionFailure() << "child running as uid " << uid << " reported nothing (wait status "
                                         << status << ")";
  }
  if (msg[0] != 0) {
    static const char* kStage[] = {"", "setgroups", "setgid", "setuid"};
    return ::testing::AssertionFailure() << "child could not switch to uid " << uid << ": " << kStage[msg[0]]
                                         << " failed: " << ErrnoText(msg[1]);
  }
  *result = msg[1];
  return ::testing::AssertionSuccess();
}

bool IsRoot() { return geteuid() == 0; }

namespace {

// Removes everything under the directory open as `dirfd` (not the directory
// itself). Returns 0 or the first errno met, with *where naming the entry.
int RemoveContents(int dirfd, const std::string& path, std::string* where) {
  fchmod(dirfd, 0700);  // best effort: a test may have left it unwritable
  int dupfd = dup(dirfd);
  if (dupfd < 0) {
    *where = path;
    return errno;
  }
  DIR* d = fdopendir(dupfd);
  if (d == nullptr) {
    int err = errno;
    close(dupfd);
    *where = path;
    return err;
  }
  std::vector<std::pair<std::string, bool>> entries;
  for (;;) {
    errno = 0;
    dirent* e = readdir(d);
    if (e == nullptr) break;
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    entries.emplace_back(name, e->d_type == DT_DIR);
  }
  closedir(d);
  int first = 0;
  for (const auto& [name, is_dir_hint] : entries) {
    struct stat st;
    bool is_dir = is_dir_hint;
    if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) is_dir = S_ISDIR(st.st_mode);
    if (is_dir) {
      int sub = openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        int err = RemoveContents(sub, path + "/" + name, where);
        close(sub);
        if (err != 0 && first == 0) first = err;
      }
      if (unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && first == 0) {
        first = errno;
        *where = path + "/" + name;
      }
    } else if (unlinkat(dirfd, name.c_str(), 0) != 0 && first == 0) {
      first = errno;
      *where = path + "/" + name;
    }
  }
  return first;
}

}  // namespace

void ConformanceTest::SetUp() {
  const char* base = getenv("CONFORMANCE_DIR");
  if (base == nullptr || *base == '\0') {
    GTEST_FAIL() << "CONFORMANCE_DIR is not set: point it at the directory to test (e.g. a strata mount)";
  }
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string tmpl = std::string(base) + "/" + info->test_suite_name() + "." + info->name() + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    int err = errno;
    GTEST_FAIL() << "mkdtemp(" << tmpl << ") failed: " << ErrnoText(err);
  }
  dir_ = buf.data();
  saved_umask_ = umask(0);
}

void ConformanceTest::TearDown() {
  if (dir_.empty()) return;
  umask(saved_umask_);
  int fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    ADD_FAILURE() << "cleanup: open(" << dir_ << ") failed: " << ErrnoText(err);
    return;
  }
  std::string where;
  int err = RemoveContents(fd, dir_, &where);
  close(fd);
  if (err != 0) {
    ADD_FAILURE() << "cleanup: removing " << where << " failed: " << ErrnoText(err);
    return;
  }
  if (rmdir(dir_.c_str()) != 0) {
    err = errno;
    ADD_FAILURE() << "cleanup: rmdir(" << dir_ << ") failed: " << ErrnoText(err);
  }
}

}  // namespace strata::conformance
