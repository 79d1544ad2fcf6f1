// Conformance: extended attributes (user.*) and permission checks as a
// non-root user (uid/gid 65534, in a forked child; these tests run only as
// root).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conformance.h"

namespace strata::conformance {
namespace {

// ---- xattrs ----------------------------------------------------------------

class Xattrs : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(Touch(P("probe")));
    if (setxattr(P("probe").c_str(), "user.probe", "1", 1, 0) != 0 && (errno == ENOTSUP || errno == EOPNOTSUPP)) {
      GTEST_SKIP() << "user.* xattrs not supported by this filesystem";
    }
    ASSERT_OK(unlink(P("probe").c_str()));
  }
};

// Names listed by listxattr (NUL-separated), in order.
std::vector<std::string> ListNames(const std::string& path) {
  std::string buf(65536, '\0');
  ssize_t n = listxattr(path.c_str(), buf.data(), buf.size());
  std::vector<std::string> names;
  if (n < 0) {
    names.push_back("<listxattr failed: " + ErrnoText(errno) + ">");
    return names;
  }
  for (size_t pos = 0; pos < static_cast<size_t>(n);) {
    size_t end = buf.find('\0', pos);
    names.push_back(buf.substr(pos, end - pos));
    pos = end + 1;
  }
  return names;
}

// Only the user.* names (security.* labels may be present on some systems).
std::vector<std::string> UserNames(const std::string& path) {
  std::vector<std::string> all = ListNames(path), user;
  for (auto& n : all) {
    if (n.rfind("user.", 0) == 0 || n.rfind("<", 0) == 0) user.push_back(n);
  }
  std::sort(user.begin(), user.end());
  return user;
}

std::string Get(const std::string& path, const char* name) {
  std::string buf(65536, '\0');
  ssize_t n = getxattr(path.c_str(), name, buf.data(), buf.size());
  if (n < 0) return "<getxattr failed: " + ErrnoText(errno) + ">";
  buf.resize(static_cast<size_t>(n));
  return buf;
}

void CheckBasicXattrs(const std::string& path) {
  SCOPED_TRACE(path);
  ASSERT_OK(setxattr(path.c_str(), "user.one", "value1", 6, 0));
  ASSERT_OK(setxattr(path.c_str(), "user.two", "v2", 2, 0));
  EXPECT_EQ(Get(path, "user.one"), "value1");
  EXPECT_EQ(Get(path, "user.two"), "v2");
  EXPECT_EQ(UserNames(path), (std::vector<std::string>{"user.one", "user.two"}));
  // Overwrite with a shorter value, then remove.
  ASSERT_OK(setxattr(path.c_str(), "user.one", "x", 1, 0));
  EXPECT_EQ(Get(path, "user.one"), "x");
  ASSERT_OK(removexattr(path.c_str(), "user.one"));
  char c;
  EXPECT_ERRNO(getxattr(path.c_str(), "user.one", &c, 1), ENODATA);
  EXPECT_ERRNO(removexattr(path.c_str(), "user.one"), ENODATA);
  EXPECT_EQ(UserNames(path), std::vector<std::string>{"user.two"});
  ASSERT_OK(removexattr(path.c_str(), "user.two"));
  EXPECT_TRUE(UserNames(path).empty());
}

TEST_F(Xattrs, SetGetListRemoveOnFile) {
  ASSERT_TRUE(Touch(P("f")));
  CheckBasicXattrs(P("f"));
}

TEST_F(Xattrs, SetGetListRemoveOnDirectory) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  CheckBasicXattrs(P("d"));
}

TEST_F(Xattrs, CreateAndReplaceFlags) {
  ASSERT_TRUE(Touch(P("f")));
  std::string path = P("f");
  const char* f = path.c_str();
  EXPECT_ERRNO(setxattr(f, "user.k", "v", 1, XATTR_REPLACE), ENODATA);
  ASSERT_OK(setxattr(f, "user.k", "v", 1, XATTR_CREATE));
  EXPECT_ERRNO(setxattr(f, "user.k", "w", 1, XATTR_CREATE), EEXIST);
  EXPECT_EQ(Get(path, "user.k"), "v");
  ASSERT_OK(setxattr(f, "user.k", "replaced", 8, XATTR_REPLACE));
  EXPECT_EQ(Get(path, "user.k"), "replaced");
  EXPECT_ERRNO(setxattr(f, "user.k", "v", 1, XATTR_CREATE | XATTR_REPLACE), EINVAL, EEXIST);
}

TEST_F(Xattrs, SizeQueriesAndSmallBuffers) {
  ASSERT_TRUE(Touch(P("f")));
  std::string path = P("f");
  ASSERT_OK(setxattr(path.c_str(), "user.size", "twelve bytes", 12, 0));
  EXPECT_EQ(getxattr(path.c_str(), "user.size", nullptr, 0), 12) << "size query: " << ErrnoText(errno);
  char small[4];
  EXPECT_ERRNO(getxattr(path.c_str(), "user.size", small, sizeof small), ERANGE);
  EXPECT_ERRNO(getxattr(path.c_str(), "user.missing", nullptr, 0), ENODATA);
  // listxattr: size query and a too-small buffer.
  ssize_t list_len = listxattr(path.c_str(), nullptr, 0);
  ASSERT_GE(list_len, static_cast<ssize_t>(sizeof "user.size")) << "listxattr size query: " << ErrnoText(errno);
  std::string buf(static_cast<size_t>(list_len), '\0');
  EXPECT_EQ(listxattr(path.c_str(), buf.data(), buf.size()), list_len);
  EXPECT_ERRNO(listxattr(path.c_str(), small, 2), ERANGE);
  // An empty value exists and has length 0.
  ASSERT_OK(setxattr(path.c_str(), "user.empty", "", 0, 0));
  EXPECT_EQ(getxattr(path.c_str(), "user.empty", nullptr, 0), 0);
  EXPECT_EQ(getxattr(path.c_str(), "user.empty", small, sizeof small), 0);
  // Binary values with NULs round-trip.
  std::string bin = Pattern(2000, 11);
  bin[0] = '\0';
  bin[1999] = '\0';
  ASSERT_OK(setxattr(path.c_str(), "user.bin", bin.data(), bin.size(), 0));
  EXPECT_TRUE(Get(path, "user.bin") == bin) << "binary value differs";
  EXPECT_EQ(UserNames(path), (std::vector<std::string>{"user.bin", "user.empty", "user.size"}));
}

TEST_F(Xattrs, ManyAttributesAndDescriptorCalls) {
  ASSERT_TRUE(Touch(P("f")));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDONLY));
  std::vector<std::string> want;
  for (int i = 0; i < 20; ++i) {
    std::string name = "user.attr" + std::to_string(100 + i);
    std::string value = "value " + std::to_string(i);
    ASSERT_OK(fsetxattr(fd.get(), name.c_str(), value.data(), value.size(), 0));
    want.push_back(name);
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(UserNames(P("f")), want);
  char buf[64];
  ssize_t n = fgetxattr(fd.get(), "user.attr107", buf, sizeof buf);
  ASSERT_GE(n, 0) << "fgetxattr: " << ErrnoText(errno);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "value 7");
  ASSERT_OK(fremovexattr(fd.get(), "user.attr107"));
  EXPECT_GT(flistxattr(fd.get(), nullptr, 0), 0);
  EXPECT_EQ(UserNames(P("f")).size(), 19u);
}

TEST_F(Xattrs, AttributesBelongToTheInode) {
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(setxattr(P("f").c_str(), "user.k", "v", 1, 0));
  ASSERT_OK(link(P("f").c_str(), P("g").c_str()));
  EXPECT_EQ(Get(P("g"), "user.k"), "v");
  ASSERT_OK(rename(P("f").c_str(), P("h").c_str()));
  EXPECT_EQ(Get(P("h"), "user.k"), "v");
  // Through a symlink, getxattr follows; lsetxattr of user.* on the link
  // itself is refused by Linux.
  ASSERT_OK(symlink("h", P("link").c_str()));
  EXPECT_EQ(Get(P("link"), "user.k"), "v");
  EXPECT_ERRNO(lsetxattr(P("link").c_str(), "user.k", "v", 1, 0), EPERM);
  char c;
  EXPECT_ERRNO(lgetxattr(P("link").c_str(), "user.k", &c, 1), ENODATA);
}

TEST_F(Xattrs, BadNames) {
  ASSERT_TRUE(Touch(P("f")));
  std::string path = P("f");
  std::string long_name = "user." + std::string(300, 'a');
  EXPECT_ERRNO(setxattr(path.c_str(), long_name.c_str(), "v", 1, 0), ERANGE);
  EXPECT_ERRNO(setxattr(path.c_str(), "", "v", 1, 0), ERANGE);
  EXPECT_ERRNO(setxattr(path.c_str(), "bogus.name", "v", 1, 0), EOPNOTSUPP);
  EXPECT_ERRNO(setxattr(P("missing").c_str(), "user.k", "v", 1, 0), ENOENT);
}

// ---- permissions as a non-root user ----------------------------------------

// Runs `f` (a syscall expression's lambda) as nobody; the Outcome has rc -1
// and the child's errno on failure.
Outcome AsNobody(const std::function<long()>& f) {
  int err = 0;
  auto r = RunAs(kNobody, kNogroup, [&] { return ErrOf(f()); }, &err);
  if (!r) {
    ADD_FAILURE() << r.message();
    return Outcome{-1, -1};
  }
  return Outcome{err == 0 ? 0 : -1, err};
}

#define EXPECT_NOBODY_OK(expr) \
  GTEST_ASSERT_(Succeeded("as nobody: " #expr, AsNobody([&]() -> long { return (expr); })), GTEST_NONFATAL_FAILURE_)
#define EXPECT_NOBODY_ERRNO(expr, ...)                                                                      \
  GTEST_ASSERT_(FailedWith("as nobody: " #expr, AsNobody([&]() -> long { return (expr); }), {__VA_ARGS__}), \
                GTEST_NONFATAL_FAILURE_)

class Perms : public ConformanceTest {
 protected:
  void SetUp() override {
    if (!IsRoot()) GTEST_SKIP() << "permission tests switch to uid 65534 and need root";
    ConformanceTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_OK(chmod(dir().c_str(), 0755));
    struct stat st;
    std::string d = dir();
    Outcome o = AsNobody([&]() -> long { return stat(d.c_str(), &st); });
    ASSERT_TRUE(Succeeded("as nobody: stat(test directory)", o))
        << "uid 65534 cannot reach " << d << "; make CONFORMANCE_DIR and its parents searchable (chmod 0755)";
  }
};

TEST_F(Perms, CreatingInRootOwnedDirectoryIsEACCES) {
  ASSERT_OK(mkdir(P("ro").c_str(), 0755));
  ASSERT_TRUE(Touch(P("ro/existing"), 0666));
  std::string x = P("ro/x"), y = P("ro/y"), existing = P("ro/existing");
  EXPECT_NOBODY_ERRNO(open(x.c_str(), O_WRONLY | O_CREAT, 0644), EACCES);
  EXPECT_NOBODY_ERRNO(mkdir(y.c_str(), 0755), EACCES);
  EXPECT_NOBODY_ERRNO(symlink("t", y.c_str()), EACCES);
  EXPECT_NOBODY_ERRNO(mkfifo(y.c_str(), 0644), EACCES);
  EXPECT_NOBODY_ERRNO(unlink(existing.c_str()), EACCES);
  EXPECT_NOBODY_ERRNO(rename(existing.c_str(), x.c_str()), EACCES);
  // Writing the world-writable file inside is fine.
  EXPECT_NOBODY_OK(open(existing.c_str(), O_WRONLY));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(P("ro"), &names));
  EXPECT_EQ(names, std::vector<std::string>{"existing"});
}

TEST_F(Perms, ReadingRootOnlyFileIsEACCES) {
  ASSERT_TRUE(WriteFile(P("secret"), "secret", 0600));
  ASSERT_TRUE(WriteFile(P("public"), "public", 0644));
  std::string secret = P("secret"), pub = P("public");
  struct stat st;
  EXPECT_NOBODY_ERRNO(open(secret.c_str(), O_RDONLY), EACCES);
  EXPECT_NOBODY_ERRNO(open(secret.c_str(), O_WRONLY), EACCES);
  EXPECT_NOBODY_ERRNO(access(secret.c_str(), R_OK), EACCES);
  EXPECT_NOBODY_OK(stat(secret.c_str(), &st));  // needs only search permission on the directory
  EXPECT_NOBODY_OK(open(pub.c_str(), O_RDONLY));
  EXPECT_NOBODY_ERRNO(open(pub.c_str(), O_WRONLY), EACCES);
  EXPECT_NOBODY_ERRNO(truncate(pub.c_str(), 0), EACCES);
  std::string got;
  ASSERT_TRUE(ReadFile(pub, &got));
  EXPECT_EQ(got, "public");
}

TEST_F(Perms, AttributeChangesOnForeignFile) {
  ASSERT_TRUE(Touch(P("shared"), 0666));
  ASSERT_TRUE(Touch(P("readonly"), 0644));
  std::string shared = P("shared"), ro = P("readonly");
  const timespec t[2] = {{1000000000, 0}, {1000000000, 0}};
  EXPECT_NOBODY_ERRNO(chmod(shared.c_str(), 0777), EPERM);
  EXPECT_NOBODY_ERRNO(chown(shared.c_str(), kNobody, kNogroup), EPERM);
  EXPECT_NOBODY_ERRNO(utimensat(AT_FDCWD, shared.c_str(), t, 0), EPERM);   // explicit times: owner only
  EXPECT_NOBODY_OK(utimensat(AT_FDCWD, shared.c_str(), nullptr, 0));       // "now": write access suffices
  EXPECT_NOBODY_ERRNO(utimensat(AT_FDCWD, ro.c_str(), nullptr, 0), EACCES);
  struct stat st;
  ASSERT_TRUE(Stat(shared, &st));
  EXPECT_EQ(st.st_mode & 07777, 0666u);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST_F(Perms, StickyDirectoryProtectsOthersFiles) {
  ASSERT_OK(mkdir(P("sticky").c_str(), 01777));
  struct stat st;
  ASSERT_TRUE(Stat(P("sticky"), &st));
  ASSERT_EQ(st.st_mode & 07777, 01777u);
  ASSERT_TRUE(WriteFile(P("sticky/rootfile"), "root's", 0666));
  std::string rootfile = P("sticky/rootfile"), mine = P("sticky/mine"), moved = P("sticky/moved");
  EXPECT_NOBODY_ERRNO(unlink(rootfile.c_str()), EPERM, EACCES);
  EXPECT_NOBODY_ERRNO(rename(rootfile.c_str(), moved.c_str()), EPERM, EACCES);
  EXPECT_NOBODY_OK(open(rootfile.c_str(), O_WRONLY));  // still writable: 0666
  // Own files in the sticky directory are the caller's to remove.
  EXPECT_NOBODY_OK(open(mine.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644));
  EXPECT_NOBODY_OK(rename(mine.c_str(), moved.c_str()));
  EXPECT_NOBODY_OK(unlink(moved.c_str()));
  EXPECT_TRUE(Stat(rootfile, &st));
}

TEST_F(Perms, NewEntriesBelongToTheCaller) {
  ASSERT_OK(mkdir(P("open").c_str(), 0777));
  std::string f = P("open/f"), d = P("open/d"), l = P("open/l"), p = P("open/p");
  EXPECT_NOBODY_OK(open(f.c_str(), O_WRONLY | O_CREAT, 0644));
  EXPECT_NOBODY_OK(mkdir(d.c_str(), 0755));
  EXPECT_NOBODY_OK(symlink("f", l.c_str()));
  EXPECT_NOBODY_OK(mkfifo(p.c_str(), 0644));
  for (const auto& path : {f, d, l, p}) {
    struct stat st;
    ASSERT_TRUE(Lstat(path, &st));
    EXPECT_EQ(st.st_uid, kNobody) << path;
    EXPECT_EQ(st.st_gid, kNogroup) << path;
  }
  // And the owner may now chmod its own file.
  EXPECT_NOBODY_OK(chmod(f.c_str(), 0600));
}

TEST_F(Perms, SetgidDirectoryPassesItsGroupOn) {
  ASSERT_OK(mkdir(P("sg").c_str(), 0777));
  ASSERT_OK(chown(P("sg").c_str(), 0, 1234));
  ASSERT_OK(chmod(P("sg").c_str(), 02777));
  std::string f = P("sg/f"), d = P("sg/d");
  EXPECT_NOBODY_OK(open(f.c_str(), O_WRONLY | O_CREAT, 0644));
  EXPECT_NOBODY_OK(mkdir(d.c_str(), 0755));
  struct stat st;
  ASSERT_TRUE(Stat(f, &st));
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, 1234u) << "a file in a setgid directory takes the directory's group";
  ASSERT_TRUE(Stat(d, &st));
  EXPECT_EQ(st.st_gid, 1234u);
  EXPECT_TRUE(st.st_mode & S_ISGID) << "a subdirectory of a setgid directory is setgid too";
}

TEST_F(Perms, SearchPermissionOnDirectories) {
  ASSERT_OK(mkdir(P("closed").c_str(), 0700));
  ASSERT_TRUE(Touch(P("closed/f"), 0644));
  ASSERT_OK(mkdir(P("exec_only").c_str(), 0711));
  ASSERT_TRUE(Touch(P("exec_only/f"), 0644));
  std::string closed_f = P("closed/f"), exec_only = P("exec_only"), exec_only_f = P("exec_only/f");
  struct stat st;
  EXPECT_NOBODY_ERRNO(stat(closed_f.c_str(), &st), EACCES);
  EXPECT_NOBODY_OK(stat(exec_only_f.c_str(), &st));
  EXPECT_NOBODY_ERRNO(open(exec_only.c_str(), O_RDONLY | O_DIRECTORY), EACCES);
}

TEST_F(Perms, WriteByNonOwnerClearsSetuid) {
  ASSERT_TRUE(Touch(P("suid"), 0644));
  ASSERT_OK(chmod(P("suid").c_str(), 04777));
  std::string path = P("suid");
  EXPECT_NOBODY_OK(([&]() -> long {
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0) return -1;
    long rc = write(fd, "x", 1);
    close(fd);
    return rc;
  })());
  struct stat st;
  ASSERT_TRUE(Stat(path, &st));
  EXPECT_EQ(st.st_size, 1);
  EXPECT_EQ(st.st_mode & 07777, 0777u) << "mode 0" << std::oct << (st.st_mode & 07777);
}

// A setgid file without group exec, written or fallocated by uid 65534, who
// is outside its group (root's): ext4 clears setgid, as the writer must not
// keep a set-id bit it could not have set. The kernel's FUSE code clears it
// only with group exec, so strata's daemon does it (ops_file.cc).
class SetgidKill : public Perms {
 protected:
  // Makes a 02666 root:root file of 64 KiB, runs `change` on it as nobody
  // through a descriptor opened for writing, and returns the mode after.
  unsigned ModeAfter(const char* what, const std::function<long(int)>& change) {
    const std::string path = P(what);
    EXPECT_TRUE(Touch(path, 0644));
    EXPECT_OK(truncate(path.c_str(), 65536));
    EXPECT_OK(chown(path.c_str(), 0, 0));
    EXPECT_OK(chmod(path.c_str(), 02666));
    EXPECT_NOBODY_OK(([&]() -> long {
      int fd = open(path.c_str(), O_WRONLY);
      if (fd < 0) return -1;
      long rc = change(fd);
      int saved = errno;
      close(fd);
      errno = saved;
      return rc;
    })());
    struct stat st;
    EXPECT_TRUE(Stat(path, &st));
    return st.st_mode & 07777;
  }
};

TEST_F(SetgidKill, WriteOutsideTheGroupClearsSetgid) {
  EXPECT_EQ(ModeAfter("w", [](int fd) -> long { return pwrite(fd, "x", 1, 10); }), 0666u);
}

TEST_F(SetgidKill, FallocateOutsideTheGroupClearsSetgid) {
  EXPECT_EQ(ModeAfter("grow", [](int fd) -> long { return fallocate(fd, 0, 0, 1 << 20); }), 0666u);
  EXPECT_EQ(ModeAfter("punch", [](int fd) -> long {
              return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192);
            }),
            0666u);
  EXPECT_EQ(ModeAfter("zero", [](int fd) -> long { return fallocate(fd, FALLOC_FL_ZERO_RANGE, 4096, 8192); }), 0666u);
}

TEST_F(SetgidKill, RootKeepsSetgid) {
  const std::string path = P("root");
  ASSERT_TRUE(Touch(path, 0644));
  ASSERT_OK(chmod(path.c_str(), 02666));
  Fd fd(open(path.c_str(), O_WRONLY));
  ASSERT_OK(fd.get());
  ASSERT_OK(pwrite(fd.get(), "x", 1, 0));
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
  struct stat st;
  ASSERT_TRUE(Stat(path, &st));
  EXPECT_EQ(st.st_mode & 07777, 02666u);
}

}  // namespace
}  // namespace strata::conformance
