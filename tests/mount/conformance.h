// Shared helpers for the syscall-level POSIX conformance suite.
//
// The suite runs against whatever directory CONFORMANCE_DIR names: a plain
// ext4/tmpfs directory (to prove the expectations are right) or a strata FUSE
// mount. Every test gets a fresh private subdirectory there (P("name") builds
// paths inside it) that is removed again when the test ends.
//
// Syscall outcomes are checked with the macros below, so a failure names the
// call and the errno it got:
//
//   ASSERT_OK(mkdir(P("d").c_str(), 0755));
//   EXPECT_ERRNO(rmdir(P("f").c_str()), ENOTDIR);
//   EXPECT_ERRNO(rename(a, b), ENOTEMPTY, EEXIST);   // any of these
//
// The process umask is 0 while a test runs, so the modes passed to open/mkdir
// are the modes the entries get (one test sets its own umask on purpose).

#ifndef STRATA_TESTS_MOUNT_CONFORMANCE_H_
#define STRATA_TESTS_MOUNT_CONFORMANCE_H_

#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace strata::conformance {

// "ENOENT (No such file or directory)"; "0" for no error.
std::string ErrnoText(int err);

// The return value of one syscall expression and the errno right after it.
struct Outcome {
  long rc = 0;
  int err = 0;
};

template <typename F>
Outcome Capture(F&& f) {
  errno = 0;
  long rc = static_cast<long>(f());
  return Outcome{rc, errno};
}

// Success means rc != -1.
::testing::AssertionResult Succeeded(const char* expr, const Outcome& o);
// Failure with rc == -1 and errno one of `errs`.
::testing::AssertionResult FailedWith(const char* expr, const Outcome& o, std::initializer_list<int> errs);

// GTEST_ASSERT_ (gtest's own building block for EXPECT_PRED_FORMAT*) keeps the
// failure message to ours: "rmdir(...) failed with ENOENT (...), expected ENOTDIR".
#define STRATA_CAPTURE_(expr) ::strata::conformance::Capture([&] { return (expr); })
#define ASSERT_OK(expr) \
  GTEST_ASSERT_(::strata::conformance::Succeeded(#expr, STRATA_CAPTURE_(expr)), GTEST_FATAL_FAILURE_)
#define EXPECT_OK(expr) \
  GTEST_ASSERT_(::strata::conformance::Succeeded(#expr, STRATA_CAPTURE_(expr)), GTEST_NONFATAL_FAILURE_)
#define ASSERT_ERRNO(expr, ...) \
  GTEST_ASSERT_(::strata::conformance::FailedWith(#expr, STRATA_CAPTURE_(expr), {__VA_ARGS__}), GTEST_FATAL_FAILURE_)
#define EXPECT_ERRNO(expr, ...)                                                                   \
  GTEST_ASSERT_(::strata::conformance::FailedWith(#expr, STRATA_CAPTURE_(expr), {__VA_ARGS__}), \
                GTEST_NONFATAL_FAILURE_)

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& other) noexcept : fd_(other.Release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// open(path, flags, mode) into *fd; the failure message names path and errno.
::testing::AssertionResult Open(Fd* fd, const std::string& path, int flags, mode_t mode = 0);

// write()/pwrite() the whole buffer, retrying short writes.
::testing::AssertionResult WriteAll(int fd, std::string_view data);
::testing::AssertionResult PwriteAll(int fd, std::string_view data, off_t offset);
// pread() up to n bytes at offset (stops early only at end of file).
::testing::AssertionResult PreadUpTo(int fd, size_t n, off_t offset, std::string* out);
// read() until end of file from the current offset.
::testing::AssertionResult ReadToEnd(int fd, std::string* out);

// Whole-file helpers by path.
::testing::AssertionResult WriteFile(const std::string& path, std::string_view data, mode_t mode = 0644);
::testing::AssertionResult ReadFile(const std::string& path, std::string* out);
// Creates an empty regular file (fails if it exists).
::testing::AssertionResult Touch(const std::string& path, mode_t mode = 0644);
// stat()/lstat() into *st with a message naming the path on failure.
::testing::AssertionResult Stat(const std::string& path, struct stat* st);
::testing::AssertionResult Lstat(const std::string& path, struct stat* st);

// Deterministic pseudo-random bytes (so failures reproduce).
std::string Pattern(size_t n, uint32_t seed);

// Sleeps past the granularity of coarse filesystem timestamps, so a later
// ctime/mtime is strictly greater than an earlier one.
void PassTimestampTick();
timespec Now();
// a < b, a == b on timespecs.
bool Before(const timespec& a, const timespec& b);
bool SameTime(const timespec& a, const timespec& b);
std::string TimeText(const timespec& t);

// Names in a directory (without "." and ".."), each once per appearance.
::testing::AssertionResult ListDir(const std::string& path, std::vector<std::string>* names);

// Runs fn in a forked child whose credentials are uid/gid (and no
// supplementary groups); fn returns an errno-style result (0 for success)
// which lands in *result. Only meaningful when the parent is root.
::testing::AssertionResult RunAs(uid_t uid, gid_t gid, const std::function<int()>& fn, int* result);
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
// For use inside fn: the errno of a failed call, 0 on success.
inline int ErrOf(long rc) { return rc == -1 ? errno : 0; }

bool IsRoot();

// Base fixture: a fresh directory under $CONFORMANCE_DIR per test.
class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Path of `rel` inside this test's directory.
  std::string P(std::string_view rel) const { return dir_ + "/" + std::string(rel); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  mode_t saved_umask_ = 022;
};

}  // namespace strata::conformance

#endif  // STRATA_TESTS_MOUNT_CONFORMANCE_H_
