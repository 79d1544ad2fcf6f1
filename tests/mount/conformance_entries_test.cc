// Conformance: names and entries — lookup/stat, mkdir/rmdir/unlink, open and
// create flags, mknod, symlink/readlink, link.

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>

#include "conformance.h"

namespace strata::conformance {
namespace {

using Entries = ConformanceTest;

const std::string kName255(255, 'n');
const std::string kName256(256, 'n');

// ---- lookup / stat / lstat -------------------------------------------------

TEST_F(Entries, StatOfMissingNameIsENOENT) {
  struct stat st;
  EXPECT_ERRNO(stat(P("missing").c_str(), &st), ENOENT);
  EXPECT_ERRNO(lstat(P("missing").c_str(), &st), ENOENT);
  EXPECT_ERRNO(stat(P("missing/below").c_str(), &st), ENOENT);
  EXPECT_ERRNO(access(P("missing").c_str(), F_OK), ENOENT);
}

TEST_F(Entries, FileAsPathComponentIsENOTDIR) {
  ASSERT_TRUE(Touch(P("f")));
  struct stat st;
  EXPECT_ERRNO(stat(P("f/x").c_str(), &st), ENOTDIR);
  EXPECT_ERRNO(lstat(P("f/x").c_str(), &st), ENOTDIR);
  EXPECT_ERRNO(open(P("f/x").c_str(), O_WRONLY | O_CREAT, 0644), ENOTDIR);
  EXPECT_ERRNO(mkdir(P("f/d").c_str(), 0755), ENOTDIR);
  EXPECT_ERRNO(unlink(P("f/x").c_str()), ENOTDIR);
  EXPECT_ERRNO(stat(P("f/").c_str(), &st), ENOTDIR);
}

TEST_F(Entries, NameOf256BytesIsENAMETOOLONG) {
  ASSERT_TRUE(Touch(P("f")));
  struct stat st;
  EXPECT_ERRNO(stat(P(kName256).c_str(), &st), ENAMETOOLONG);
  EXPECT_ERRNO(lstat(P(kName256).c_str(), &st), ENAMETOOLONG);
  EXPECT_ERRNO(open(P(kName256).c_str(), O_WRONLY | O_CREAT, 0644), ENAMETOOLONG);
  EXPECT_ERRNO(mkdir(P(kName256).c_str(), 0755), ENAMETOOLONG);
  EXPECT_ERRNO(symlink("f", P(kName256).c_str()), ENAMETOOLONG);
  EXPECT_ERRNO(link(P("f").c_str(), P(kName256).c_str()), ENAMETOOLONG);
  EXPECT_ERRNO(rename(P("f").c_str(), P(kName256).c_str()), ENAMETOOLONG);
  EXPECT_ERRNO(mknod(P(kName256).c_str(), S_IFIFO | 0644, 0), ENAMETOOLONG);
  // The failed calls created nothing, and f is still there.
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_EQ(names, std::vector<std::string>{"f"});
}

TEST_F(Entries, NameOf255BytesWorks) {
  ASSERT_TRUE(WriteFile(P(kName255), "long"));
  struct stat st;
  ASSERT_TRUE(Stat(P(kName255), &st));
  EXPECT_EQ(st.st_size, 4);
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_OK(rename(P(kName255).c_str(), P("d/" + kName255).c_str()));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(P("d"), &names));
  EXPECT_EQ(names, std::vector<std::string>{kName255});
  ASSERT_OK(unlink(P("d/" + kName255).c_str()));
}

TEST_F(Entries, NewFileAttributes) {
  timespec before = Now();
  before.tv_sec -= 1;  // coarse filesystem clocks may lag CLOCK_REALTIME
  ASSERT_TRUE(Touch(P("f"), 0640));
  timespec after = Now();
  after.tv_sec += 1;
  struct stat dst;
  ASSERT_TRUE(Stat(dir(), &dst));
  struct stat st;
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "mode 0" << std::oct << st.st_mode;
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(st.st_gid, (dst.st_mode & S_ISGID) ? dst.st_gid : getegid());
  EXPECT_NE(st.st_ino, 0u);
  EXPECT_NE(st.st_ino, dst.st_ino);
  EXPECT_EQ(st.st_dev, dst.st_dev);
  EXPECT_GT(st.st_blksize, 0);
  for (const timespec* t : {&st.st_atim, &st.st_mtim, &st.st_ctim}) {
    EXPECT_FALSE(Before(*t, before)) << TimeText(*t) << " before " << TimeText(before);
    EXPECT_FALSE(Before(after, *t)) << TimeText(*t) << " after " << TimeText(after);
  }
  // fstat through an fd agrees with stat, and lstat of a non-link too.
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDONLY));
  struct stat fst, lst;
  ASSERT_OK(fstat(fd.get(), &fst));
  ASSERT_TRUE(Lstat(P("f"), &lst));
  EXPECT_EQ(fst.st_ino, st.st_ino);
  EXPECT_EQ(lst.st_ino, st.st_ino);
  EXPECT_EQ(fst.st_mode, st.st_mode);
}

TEST_F(Entries, UmaskIsApplied) {
  umask(027);
  ASSERT_TRUE(Touch(P("f"), 0666));
  ASSERT_OK(mkdir(P("d").c_str(), 0777));
  umask(0);
  struct stat st;
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_TRUE(Stat(P("d"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

TEST_F(Entries, DotAndDotDotResolve) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  struct stat top, d, dotdot, dot;
  ASSERT_TRUE(Stat(dir(), &top));
  ASSERT_TRUE(Stat(P("d"), &d));
  ASSERT_TRUE(Stat(P("d/.."), &dotdot));
  ASSERT_TRUE(Stat(P("d/."), &dot));
  EXPECT_EQ(dotdot.st_ino, top.st_ino);
  EXPECT_EQ(dot.st_ino, d.st_ino);
}

// ---- mkdir / rmdir / unlink ------------------------------------------------

TEST_F(Entries, MkdirCreatesDirectory) {
  struct stat parent_before;
  ASSERT_TRUE(Stat(dir(), &parent_before));
  ASSERT_OK(mkdir(P("d").c_str(), 0751));
  struct stat st;
  ASSERT_TRUE(Stat(P("d"), &st));
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0751u);
  EXPECT_EQ(st.st_uid, geteuid());
  // An empty directory has 2 links ("." and its name); some filesystems
  // (btrfs) always report 1 for directories, which Linux tools accept.
  EXPECT_TRUE(st.st_nlink == 2 || st.st_nlink == 1) << "nlink " << st.st_nlink;
  struct stat parent_after;
  ASSERT_TRUE(Stat(dir(), &parent_after));
  if (parent_before.st_nlink >= 2) {
    EXPECT_EQ(parent_after.st_nlink, parent_before.st_nlink + 1) << "the new subdirectory's \"..\" links the parent";
  }
  ASSERT_OK(rmdir(P("d").c_str()));
  ASSERT_TRUE(Stat(dir(), &parent_after));
  EXPECT_EQ(parent_after.st_nlink, parent_before.st_nlink);
  EXPECT_ERRNO(stat(P("d").c_str(), &st), ENOENT);
}

TEST_F(Entries, MkdirErrors) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(symlink("nowhere", P("dangling").c_str()));
  EXPECT_ERRNO(mkdir(P("d").c_str(), 0755), EEXIST);
  EXPECT_ERRNO(mkdir(P("f").c_str(), 0755), EEXIST);
  EXPECT_ERRNO(mkdir(P("dangling").c_str(), 0755), EEXIST);
  EXPECT_ERRNO(mkdir(P("missing/d").c_str(), 0755), ENOENT);
  EXPECT_ERRNO(mkdir(P("f/d").c_str(), 0755), ENOTDIR);
}

TEST_F(Entries, RmdirErrors) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Touch(P("d/child")));
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(symlink("d", P("link").c_str()));
  EXPECT_ERRNO(rmdir(P("d").c_str()), ENOTEMPTY);
  EXPECT_ERRNO(rmdir(P("f").c_str()), ENOTDIR);
  EXPECT_ERRNO(rmdir(P("link").c_str()), ENOTDIR);
  EXPECT_ERRNO(rmdir(P("missing").c_str()), ENOENT);
  EXPECT_ERRNO(rmdir(P("d/.").c_str()), EINVAL);
  struct stat st;
  EXPECT_TRUE(Stat(P("d/child"), &st)) << "failed rmdir must leave the contents";
  ASSERT_OK(unlink(P("d/child").c_str()));
  EXPECT_OK(rmdir(P("d").c_str()));
}

TEST_F(Entries, UnlinkRemovesOnlyTheName) {
  ASSERT_TRUE(WriteFile(P("f"), "data"));
  ASSERT_TRUE(Touch(P("g")));
  ASSERT_OK(unlink(P("f").c_str()));
  struct stat st;
  EXPECT_ERRNO(stat(P("f").c_str(), &st), ENOENT);
  EXPECT_TRUE(Stat(P("g"), &st));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_EQ(names, std::vector<std::string>{"g"});
  // A new file under the old name starts empty.
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_size, 0);
}

TEST_F(Entries, UnlinkErrors) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Touch(P("f")));
  EXPECT_ERRNO(unlink(P("d").c_str()), EISDIR);  // POSIX says EPERM; Linux says EISDIR
  EXPECT_ERRNO(unlink(P("missing").c_str()), ENOENT);
  EXPECT_ERRNO(unlink(P("f/x").c_str()), ENOTDIR);
  // unlink of a symlink to a directory removes the link, not the directory.
  ASSERT_OK(symlink("d", P("link").c_str()));
  ASSERT_OK(unlink(P("link").c_str()));
  struct stat st;
  EXPECT_TRUE(Stat(P("d"), &st));
}

// ---- open / create ---------------------------------------------------------

TEST_F(Entries, CreateExclusive) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_WRONLY | O_CREAT | O_EXCL, 0600));
  ASSERT_TRUE(WriteAll(fd.get(), "first"));
  fd.Reset();
  EXPECT_ERRNO(open(P("f").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600), EEXIST);
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  EXPECT_ERRNO(open(P("d").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600), EEXIST);
  // O_EXCL does not follow symlinks, not even dangling ones.
  ASSERT_OK(symlink("nowhere", P("dangling").c_str()));
  EXPECT_ERRNO(open(P("dangling").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600), EEXIST);
  struct stat st;
  EXPECT_ERRNO(stat(P("nowhere").c_str(), &st), ENOENT);
  // O_CREAT without O_EXCL opens the existing file and keeps its data.
  ASSERT_TRUE(Open(&fd, P("f"), O_WRONLY | O_CREAT, 0600));
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "first");
}

TEST_F(Entries, CreateThroughDanglingSymlinkCreatesTarget) {
  ASSERT_OK(symlink("target", P("link").c_str()));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("link"), O_WRONLY | O_CREAT, 0644));
  ASSERT_TRUE(WriteAll(fd.get(), "via link"));
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("target"), &got));
  EXPECT_EQ(got, "via link");
}

TEST_F(Entries, OpenTruncate) {
  ASSERT_TRUE(WriteFile(P("f"), "hello world"));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_WRONLY | O_TRUNC));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 0);
  ASSERT_TRUE(WriteAll(fd.get(), "hi"));
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "hi") << "old bytes must not come back after O_TRUNC";
  // The shell's "> file": O_CREAT|O_TRUNC on an existing file.
  ASSERT_TRUE(Open(&fd, P("f"), O_WRONLY | O_CREAT | O_TRUNC, 0644));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 0);
  fd.Reset();
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "");
  // O_RDWR|O_TRUNC of a file other fds hold open: they see the new size.
  ASSERT_TRUE(WriteFile(P("g"), "0123456789"));
  Fd holder;
  ASSERT_TRUE(Open(&holder, P("g"), O_RDONLY));
  ASSERT_TRUE(Open(&fd, P("g"), O_RDWR | O_TRUNC));
  ASSERT_OK(fstat(holder.get(), &st));
  EXPECT_EQ(st.st_size, 0);
  ASSERT_TRUE(PreadUpTo(holder.get(), 100, 0, &got));
  EXPECT_EQ(got, "");
}

TEST_F(Entries, OpenAppendWritesAtEnd) {
  ASSERT_TRUE(WriteFile(P("f"), "abc"));
  Fd a, b;
  ASSERT_TRUE(Open(&a, P("f"), O_WRONLY | O_APPEND));
  ASSERT_TRUE(Open(&b, P("f"), O_WRONLY | O_APPEND));
  ASSERT_OK(lseek(a.get(), 0, SEEK_SET));
  ASSERT_TRUE(WriteAll(a.get(), "def"));
  ASSERT_TRUE(WriteAll(b.get(), "GHI"));  // b's end is where a left it
  ASSERT_TRUE(WriteAll(a.get(), "jk"));
  EXPECT_EQ(lseek(a.get(), 0, SEEK_CUR), 11);
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "abcdefGHIjk");
  // A plain writer in between moves the end too.
  Fd plain;
  ASSERT_TRUE(Open(&plain, P("f"), O_WRONLY));
  ASSERT_TRUE(PwriteAll(plain.get(), "XY", 11));
  ASSERT_TRUE(WriteAll(a.get(), "z"));
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "abcdefGHIjkXYz");
}

TEST_F(Entries, OpenMissingIsENOENT) {
  EXPECT_ERRNO(open(P("missing").c_str(), O_RDONLY), ENOENT);
  EXPECT_ERRNO(open(P("missing").c_str(), O_RDWR | O_TRUNC), ENOENT);
  EXPECT_ERRNO(open(P("missing/x").c_str(), O_RDWR | O_CREAT, 0644), ENOENT);
}

TEST_F(Entries, OpenDirectoryForWritingIsEISDIR) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  EXPECT_ERRNO(open(P("d").c_str(), O_WRONLY), EISDIR);
  EXPECT_ERRNO(open(P("d").c_str(), O_RDWR), EISDIR);
  EXPECT_ERRNO(open(P("d").c_str(), O_WRONLY | O_CREAT, 0644), EISDIR);
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("d"), O_RDONLY));
  char c;
  EXPECT_ERRNO(read(fd.get(), &c, 1), EISDIR);
  ASSERT_TRUE(Touch(P("f")));
  EXPECT_ERRNO(open(P("f").c_str(), O_RDONLY | O_DIRECTORY), ENOTDIR);
}

TEST_F(Entries, AccessModeOfDescriptorIsEnforced) {
  ASSERT_TRUE(WriteFile(P("f"), "abc"));
  Fd ro, wo;
  ASSERT_TRUE(Open(&ro, P("f"), O_RDONLY));
  ASSERT_TRUE(Open(&wo, P("f"), O_WRONLY));
  char c = 'x';
  EXPECT_ERRNO(write(ro.get(), &c, 1), EBADF);
  EXPECT_ERRNO(read(wo.get(), &c, 1), EBADF);
}

// ---- mknod -----------------------------------------------------------------

TEST_F(Entries, MknodFifo) {
  ASSERT_OK(mknod(P("fifo").c_str(), S_IFIFO | 0640, 0));
  ASSERT_OK(mkfifo(P("fifo2").c_str(), 0600));
  struct stat st;
  ASSERT_TRUE(Lstat(P("fifo"), &st));
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "mode 0" << std::oct << st.st_mode;
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_TRUE(Lstat(P("fifo2"), &st));
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_ERRNO(mknod(P("fifo").c_str(), S_IFIFO | 0640, 0), EEXIST);
  // The node works as a pipe.
  Fd r, w;
  ASSERT_TRUE(Open(&r, P("fifo"), O_RDONLY | O_NONBLOCK));
  ASSERT_TRUE(Open(&w, P("fifo"), O_WRONLY | O_NONBLOCK));
  ASSERT_TRUE(WriteAll(w.get(), "through the pipe"));
  char buf[64];
  ssize_t n = read(r.get(), buf, sizeof buf);
  ASSERT_EQ(n, 16) << "read from fifo: " << ErrnoText(errno);
  EXPECT_EQ(std::string(buf, 16), "through the pipe");
}

TEST_F(Entries, MknodSocketAndRegular) {
  ASSERT_OK(mknod(P("sock").c_str(), S_IFSOCK | 0644, 0));
  ASSERT_OK(mknod(P("reg").c_str(), S_IFREG | 0600, 0));
  struct stat st;
  ASSERT_TRUE(Lstat(P("sock"), &st));
  EXPECT_TRUE(S_ISSOCK(st.st_mode)) << "mode 0" << std::oct << st.st_mode;
  ASSERT_TRUE(Lstat(P("reg"), &st));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(Entries, BindUnixSocket) {
  sockaddr_un addr{};
  std::string path = P("s");
  if (path.size() >= sizeof addr.sun_path) GTEST_SKIP() << "test directory path too long for sun_path";
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd srv(socket(AF_UNIX, SOCK_STREAM, 0));
  ASSERT_TRUE(srv.ok()) << "socket: " << ErrnoText(errno);
  ASSERT_OK(bind(srv.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr));
  ASSERT_OK(listen(srv.get(), 1));
  struct stat st;
  ASSERT_TRUE(Lstat(path, &st));
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  Fd cli(socket(AF_UNIX, SOCK_STREAM, 0));
  ASSERT_TRUE(cli.ok());
  EXPECT_OK(connect(cli.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr));
}

TEST_F(Entries, MknodDevices) {
  if (!IsRoot()) {
    EXPECT_ERRNO(mknod(P("null").c_str(), S_IFCHR | 0600, makedev(1, 3)), EPERM);
    GTEST_SKIP() << "device nodes need root";
  }
  int rc = mknod(P("null").c_str(), S_IFCHR | 0620, makedev(1, 3));
  if (rc != 0 && errno == EPERM) GTEST_SKIP() << "root without CAP_MKNOD here";
  ASSERT_EQ(rc, 0) << "mknod char: " << ErrnoText(errno);
  ASSERT_OK(mknod(P("loop").c_str(), S_IFBLK | 0600, makedev(7, 200)));
  struct stat st;
  ASSERT_TRUE(Lstat(P("null"), &st));
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "mode 0" << std::oct << st.st_mode;
  EXPECT_EQ(st.st_mode & 07777, 0620u);
  EXPECT_EQ(major(st.st_rdev), 1u);
  EXPECT_EQ(minor(st.st_rdev), 3u);
  ASSERT_TRUE(Lstat(P("loop"), &st));
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  EXPECT_EQ(major(st.st_rdev), 7u);
  EXPECT_EQ(minor(st.st_rdev), 200u);
  EXPECT_ERRNO(mknod(P("null").c_str(), S_IFCHR | 0600, makedev(1, 3)), EEXIST);
}

// ---- symlink / readlink ----------------------------------------------------

std::string Readlink(const std::string& path, size_t bufsize = 8192) {
  std::string buf(bufsize, '\0');
  ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
  if (n < 0) return "<readlink failed: " + ErrnoText(errno) + ">";
  buf.resize(static_cast<size_t>(n));
  return buf;
}

TEST_F(Entries, SymlinkAndReadlink) {
  ASSERT_TRUE(WriteFile(P("target"), "pointed at"));
  ASSERT_OK(symlink("target", P("link").c_str()));
  ASSERT_OK(symlink("../some/relative path", P("rel").c_str()));
  EXPECT_EQ(Readlink(P("link")), "target");
  EXPECT_EQ(Readlink(P("rel")), "../some/relative path");
  struct stat lst, st, tst;
  ASSERT_TRUE(Lstat(P("link"), &lst));
  EXPECT_TRUE(S_ISLNK(lst.st_mode)) << "mode 0" << std::oct << lst.st_mode;
  EXPECT_EQ(lst.st_size, 6) << "a symlink's size is its target's length";
  ASSERT_TRUE(Stat(P("link"), &st));
  ASSERT_TRUE(Stat(P("target"), &tst));
  EXPECT_EQ(st.st_ino, tst.st_ino);
  EXPECT_NE(lst.st_ino, tst.st_ino);
  std::string got;
  ASSERT_TRUE(ReadFile(P("link"), &got));
  EXPECT_EQ(got, "pointed at");
  // Dangling: lstat works, stat does not.
  EXPECT_ERRNO(stat(P("rel").c_str(), &st), ENOENT);
  EXPECT_TRUE(Lstat(P("rel"), &lst));
  // A short buffer truncates without a terminator.
  char small[3];
  EXPECT_EQ(readlink(P("link").c_str(), small, sizeof small), 3);
  EXPECT_EQ(std::string(small, 3), "tar");
}

TEST_F(Entries, SymlinkErrors) {
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(symlink("f", P("link").c_str()));
  EXPECT_ERRNO(symlink("x", P("f").c_str()), EEXIST);
  EXPECT_ERRNO(symlink("x", P("link").c_str()), EEXIST);
  char buf[16];
  EXPECT_ERRNO(readlink(P("f").c_str(), buf, sizeof buf), EINVAL);
  EXPECT_ERRNO(readlink(P("missing").c_str(), buf, sizeof buf), ENOENT);
  ASSERT_OK(symlink("b", P("a").c_str()));
  ASSERT_OK(symlink("a", P("b").c_str()));
  struct stat st;
  EXPECT_ERRNO(stat(P("a").c_str(), &st), ELOOP);
  EXPECT_ERRNO(open(P("link").c_str(), O_RDONLY | O_NOFOLLOW), ELOOP);
}

TEST_F(Entries, LongSymlinkTarget) {
  std::string target;
  while (target.size() < 4000) target += "component_" + std::to_string(target.size()) + "/";
  target.resize(4000);
  ASSERT_OK(symlink(target.c_str(), P("long").c_str()));
  EXPECT_EQ(Readlink(P("long")), target);
  struct stat st;
  ASSERT_TRUE(Lstat(P("long"), &st));
  EXPECT_EQ(st.st_size, 4000);
}

// ---- link ------------------------------------------------------------------

TEST_F(Entries, HardLinks) {
  ASSERT_TRUE(WriteFile(P("f"), "shared"));
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  struct stat before;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  ASSERT_OK(link(P("f").c_str(), P("g").c_str()));
  ASSERT_OK(link(P("f").c_str(), P("d/h").c_str()));
  struct stat f, g, h;
  ASSERT_TRUE(Stat(P("f"), &f));
  ASSERT_TRUE(Stat(P("g"), &g));
  ASSERT_TRUE(Stat(P("d/h"), &h));
  EXPECT_EQ(f.st_ino, g.st_ino);
  EXPECT_EQ(f.st_ino, h.st_ino);
  EXPECT_EQ(f.st_nlink, 3u);
  EXPECT_EQ(g.st_nlink, 3u);
  EXPECT_TRUE(Before(before.st_ctim, f.st_ctim)) << "link must change ctime: " << TimeText(before.st_ctim) << " -> "
                                                 << TimeText(f.st_ctim);
  // Data written through one name is seen through the others.
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("g"), O_WRONLY | O_APPEND));
  ASSERT_TRUE(WriteAll(fd.get(), " data"));
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("d/h"), &got));
  EXPECT_EQ(got, "shared data");
  // Attribute changes too.
  ASSERT_OK(chmod(P("f").c_str(), 0600));
  ASSERT_TRUE(Stat(P("g"), &g));
  EXPECT_EQ(g.st_mode & 07777, 0600u);
  // Removing names counts down.
  ASSERT_OK(unlink(P("f").c_str()));
  ASSERT_TRUE(Stat(P("g"), &g));
  EXPECT_EQ(g.st_nlink, 2u);
  ASSERT_OK(unlink(P("d/h").c_str()));
  ASSERT_TRUE(Stat(P("g"), &g));
  EXPECT_EQ(g.st_nlink, 1u);
  ASSERT_TRUE(ReadFile(P("g"), &got));
  EXPECT_EQ(got, "shared data");
}

TEST_F(Entries, LinkErrors) {
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_TRUE(Touch(P("g")));
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  EXPECT_ERRNO(link(P("f").c_str(), P("g").c_str()), EEXIST);
  EXPECT_ERRNO(link(P("f").c_str(), P("d").c_str()), EEXIST);
  EXPECT_ERRNO(link(P("d").c_str(), P("d2").c_str()), EPERM);
  EXPECT_ERRNO(link(P("missing").c_str(), P("x").c_str()), ENOENT);
  EXPECT_ERRNO(link(P("f").c_str(), P("missing/x").c_str()), ENOENT);
  struct stat st;
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_nlink, 1u) << "failed links must not change the count";
}

TEST_F(Entries, LinkToSymlinkLinksTheSymlink) {
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(symlink("f", P("s").c_str()));
  ASSERT_OK(link(P("s").c_str(), P("s2").c_str()));  // Linux: link() does not follow
  struct stat s, s2;
  ASSERT_TRUE(Lstat(P("s"), &s));
  ASSERT_TRUE(Lstat(P("s2"), &s2));
  EXPECT_TRUE(S_ISLNK(s2.st_mode));
  EXPECT_EQ(s.st_ino, s2.st_ino);
  EXPECT_EQ(s2.st_nlink, 2u);
  EXPECT_EQ(Readlink(P("s2")), "f");
}

}  // namespace
}  // namespace strata::conformance
