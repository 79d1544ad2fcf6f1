// Conformance: file data and attributes — read/write at offsets, holes,
// truncate, chmod/chown/utimensat, open-but-unlinked files, sync calls,
// statfs, mmap, O_DIRECT, fallocate, SEEK_DATA/SEEK_HOLE, copy_file_range.

#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conformance.h"

namespace strata::conformance {
namespace {

using Files = ConformanceTest;

constexpr off_t kMiB = 1 << 20;

// ---- read / write ----------------------------------------------------------

TEST_F(Files, ReadWriteAtOffsets) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), "hello", 0));
  ASSERT_TRUE(PwriteAll(fd.get(), "world", 100));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 105);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 200, 0, &got));
  EXPECT_EQ(got, "hello" + std::string(95, '\0') + "world");
  ASSERT_TRUE(PreadUpTo(fd.get(), 10, 103, &got));
  EXPECT_EQ(got, "ld") << "a read crossing end of file is short";
  ASSERT_TRUE(PreadUpTo(fd.get(), 10, 500, &got));
  EXPECT_EQ(got, "") << "a read past end of file returns 0";
  ASSERT_TRUE(PwriteAll(fd.get(), "XY", 2));
  ASSERT_TRUE(PreadUpTo(fd.get(), 5, 0, &got));
  EXPECT_EQ(got, "heXYo");
  // The file offset: sequential read/write and lseek.
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_END), 105);
  EXPECT_EQ(lseek(fd.get(), 1, SEEK_SET), 1);
  char buf[3];
  ASSERT_EQ(read(fd.get(), buf, 3), 3);
  EXPECT_EQ(std::string(buf, 3), "eXY");
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_CUR), 4);
  ASSERT_TRUE(WriteAll(fd.get(), "!"));
  fd.Reset();
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got.substr(0, 5), "heXY!");
  EXPECT_EQ(got.size(), 105u);
}

TEST_F(Files, LargeDataInOddSizedPieces) {
  const std::string data = Pattern(3 * kMiB + 123, 7);
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("big"), O_WRONLY | O_CREAT, 0644));
  for (size_t off = 0; off < data.size(); off += 4097) {
    ASSERT_TRUE(WriteAll(fd.get(), std::string_view(data).substr(off, 4097)));
  }
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("big"), &got));
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data) << "content differs after a 3 MiB write";
  // Overwrite a few ranges in place, then compare with the model again.
  std::string model = data;
  ASSERT_TRUE(Open(&fd, P("big"), O_RDWR));
  const off_t offsets[] = {0, 65535, 1234567, 3 * kMiB + 100};
  for (off_t off : offsets) {
    std::string patch = Pattern(1000, static_cast<uint32_t>(off));
    ASSERT_TRUE(PwriteAll(fd.get(), patch, off));
    if (static_cast<size_t>(off) + patch.size() > model.size()) model.resize(off + patch.size());
    model.replace(off, patch.size(), patch);
  }
  ASSERT_TRUE(PreadUpTo(fd.get(), model.size() + 10, 0, &got));
  ASSERT_EQ(got.size(), model.size());
  EXPECT_TRUE(got == model) << "content differs after overwrites (read through the writing fd)";
  fd.Reset();
  ASSERT_TRUE(ReadFile(P("big"), &got));
  EXPECT_TRUE(got == model) << "content differs after overwrites (read after reopen)";
}

TEST_F(Files, HolesReadAsZeros) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("sparse"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), "x", kMiB + 3));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, kMiB + 4);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), kMiB + 10, 0, &got));
  ASSERT_EQ(got.size(), static_cast<size_t>(kMiB + 4));
  EXPECT_EQ(got.find_first_not_of('\0'), static_cast<size_t>(kMiB + 3));
  EXPECT_EQ(got.back(), 'x');
  // Seeking past the end and writing leaves a hole too.
  ASSERT_EQ(lseek(fd.get(), 5000, SEEK_END), kMiB + 4 + 5000);
  ASSERT_TRUE(WriteAll(fd.get(), "y"));
  ASSERT_TRUE(PreadUpTo(fd.get(), 5001, kMiB + 4, &got));
  EXPECT_EQ(got, std::string(5000, '\0') + "y");
}

TEST_F(Files, OffsetsBeyond4GiB) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("far"), O_RDWR | O_CREAT, 0644));
  const off_t far = (off_t{5} << 30) + 17;
  ASSERT_TRUE(PwriteAll(fd.get(), "tail", far));
  ASSERT_TRUE(PwriteAll(fd.get(), "edge", (off_t{1} << 32) - 2));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, far + 4);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 4, far, &got));
  EXPECT_EQ(got, "tail");
  ASSERT_TRUE(PreadUpTo(fd.get(), 8, (off_t{1} << 32) - 4, &got));
  EXPECT_EQ(got, std::string(2, '\0') + "edge" + std::string(2, '\0'));
  ASSERT_TRUE(PreadUpTo(fd.get(), 4, 0, &got));
  EXPECT_EQ(got, std::string(4, '\0')) << "bytes near 0 must not alias the ones past 4 GiB";
  ASSERT_OK(ftruncate(fd.get(), 0));
}

// ---- truncate --------------------------------------------------------------

TEST_F(Files, FtruncateDownAndUp) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(WriteAll(fd.get(), "0123456789"));
  ASSERT_OK(ftruncate(fd.get(), 4));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 4);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "0123");
  ASSERT_OK(ftruncate(fd.get(), 10));
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, std::string("0123") + std::string(6, '\0')) << "cut bytes must not come back when extending";
  ASSERT_OK(ftruncate(fd.get(), 0));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 0);
  // The file offset is not moved by truncation: writing now leaves a hole.
  ASSERT_TRUE(WriteAll(fd.get(), "z"));
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, std::string(10, '\0') + "z");
}

TEST_F(Files, TruncateByPathLargeFile) {
  const std::string data = Pattern(200000, 3);
  ASSERT_TRUE(WriteFile(P("f"), data));
  Fd reader;
  ASSERT_TRUE(Open(&reader, P("f"), O_RDONLY));
  ASSERT_OK(truncate(P("f").c_str(), 70001));
  struct stat st;
  ASSERT_OK(fstat(reader.get(), &st));
  EXPECT_EQ(st.st_size, 70001) << "an open fd sees the new size";
  ASSERT_OK(truncate(P("f").c_str(), 200000));
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  ASSERT_EQ(got.size(), 200000u);
  EXPECT_TRUE(got.compare(0, 70001, data, 0, 70001) == 0) << "kept prefix changed";
  EXPECT_EQ(got.find_first_not_of('\0', 70001), std::string::npos) << "bytes past the cut must read as zeros";
}

TEST_F(Files, TruncateErrors) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Touch(P("f")));
  EXPECT_ERRNO(truncate(P("d").c_str(), 0), EISDIR);
  EXPECT_ERRNO(truncate(P("missing").c_str(), 0), ENOENT);
  EXPECT_ERRNO(truncate(P("f").c_str(), -1), EINVAL);
  Fd ro;
  ASSERT_TRUE(Open(&ro, P("f"), O_RDONLY));
  EXPECT_ERRNO(ftruncate(ro.get(), 10), EINVAL, EBADF);  // "not open for writing": Linux says EINVAL
}

TEST_F(Files, WriteAndTruncateUpdateMtimeAndCtime) {
  ASSERT_TRUE(WriteFile(P("f"), "data"));
  const timespec old[2] = {{1000000, 0}, {1000000, 0}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), old, 0));
  struct stat before, after;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_WRONLY));
  ASSERT_TRUE(PwriteAll(fd.get(), "more", 4));
  ASSERT_OK(fstat(fd.get(), &after));
  EXPECT_TRUE(Before(before.st_mtim, after.st_mtim)) << "write: mtime " << TimeText(after.st_mtim);
  EXPECT_TRUE(Before(before.st_ctim, after.st_ctim)) << "write: ctime " << TimeText(after.st_ctim);
  EXPECT_EQ(after.st_atim.tv_sec, 1000000) << "write must not touch atime";
  fd.Reset();
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), old, 0));
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  ASSERT_OK(truncate(P("f").c_str(), 2));
  ASSERT_TRUE(Stat(P("f"), &after));
  EXPECT_TRUE(Before(before.st_mtim, after.st_mtim)) << "truncate: mtime " << TimeText(after.st_mtim);
  EXPECT_TRUE(Before(before.st_ctim, after.st_ctim)) << "truncate: ctime " << TimeText(after.st_ctim);
}

// ---- setattr ---------------------------------------------------------------

TEST_F(Files, Chmod) {
  ASSERT_TRUE(Touch(P("f"), 0644));
  ASSERT_OK(symlink("f", P("link").c_str()));
  struct stat before, st;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  ASSERT_OK(chmod(P("f").c_str(), 0600));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_TRUE(Before(before.st_ctim, st.st_ctim)) << "chmod must change ctime";
  EXPECT_TRUE(SameTime(before.st_mtim, st.st_mtim)) << "chmod must not change mtime";
  ASSERT_OK(chmod(P("link").c_str(), 0640));  // follows the link
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDONLY));
  ASSERT_OK(fchmod(fd.get(), 0755));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_OK(chmod(P("f").c_str(), 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0u);
  if (IsRoot()) {  // special bits (a non-root owner may lose S_ISGID)
    ASSERT_OK(chmod(P("f").c_str(), 07755));
    ASSERT_TRUE(Stat(P("f"), &st));
    EXPECT_EQ(st.st_mode & 07777, 07755u);
  }
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_OK(chmod(P("d").c_str(), 01777));
  ASSERT_TRUE(Stat(P("d"), &st));
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_ERRNO(chmod(P("missing").c_str(), 0644), ENOENT);
}

TEST_F(Files, ChownAsRoot) {
  if (!IsRoot()) GTEST_SKIP() << "chown to another user needs root";
  ASSERT_TRUE(Touch(P("f"), 0644));
  ASSERT_OK(symlink("f", P("link").c_str()));
  struct stat before, st;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  ASSERT_OK(chown(P("f").c_str(), kNobody, kNogroup));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNogroup);
  EXPECT_TRUE(Before(before.st_ctim, st.st_ctim)) << "chown must change ctime";
  ASSERT_OK(chown(P("f").c_str(), static_cast<uid_t>(-1), 1234));  // group only
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, 1234u);
  // lchown changes the link itself, not the target.
  ASSERT_OK(lchown(P("link").c_str(), 4321, 4321));
  struct stat lst;
  ASSERT_TRUE(Lstat(P("link"), &lst));
  EXPECT_EQ(lst.st_uid, 4321u);
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_uid, kNobody);
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDONLY));
  ASSERT_OK(fchown(fd.get(), 0, 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, 0u);
  // Changing the owner of a set-id executable clears S_ISUID and (with group
  // execute) S_ISGID, even for root on Linux.
  ASSERT_OK(chmod(P("f").c_str(), 06755));
  ASSERT_OK(chown(P("f").c_str(), kNobody, kNogroup));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "mode 0" << std::oct << (st.st_mode & 07777);
}

TEST_F(Files, UtimensatExplicitNanoseconds) {
  ASSERT_TRUE(Touch(P("f")));
  struct stat before, st;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  const timespec t[2] = {{1000000000, 123456789}, {1234567890, 987654321}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), t, 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(SameTime(st.st_atim, t[0])) << "atime " << TimeText(st.st_atim);
  EXPECT_TRUE(SameTime(st.st_mtim, t[1])) << "mtime " << TimeText(st.st_mtim);
  EXPECT_TRUE(Before(before.st_ctim, st.st_ctim)) << "utimensat must change ctime";
  // futimens, on a directory.
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("d"), O_RDONLY | O_DIRECTORY));
  const timespec u[2] = {{1500000000, 1}, {1600000000, 999999999}};
  ASSERT_OK(futimens(fd.get(), u));
  ASSERT_TRUE(Stat(P("d"), &st));
  EXPECT_TRUE(SameTime(st.st_atim, u[0])) << "atime " << TimeText(st.st_atim);
  EXPECT_TRUE(SameTime(st.st_mtim, u[1])) << "mtime " << TimeText(st.st_mtim);
  const timespec bad[2] = {{0, 1000000000}, {0, 0}};
  EXPECT_ERRNO(utimensat(AT_FDCWD, P("f").c_str(), bad, 0), EINVAL);
}

TEST_F(Files, UtimensatNowAndOmit) {
  ASSERT_TRUE(Touch(P("f")));
  const timespec old[2] = {{1000000000, 111}, {1100000000, 222}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), old, 0));
  struct stat before, st;
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();

  timespec lo = Now();
  lo.tv_sec -= 1;
  const timespec now_omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), now_omit, 0));
  timespec hi = Now();
  hi.tv_sec += 1;
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(Before(lo, st.st_atim) && Before(st.st_atim, hi)) << "UTIME_NOW atime " << TimeText(st.st_atim);
  EXPECT_TRUE(SameTime(st.st_mtim, old[1])) << "UTIME_OMIT mtime changed to " << TimeText(st.st_mtim);
  EXPECT_TRUE(Before(before.st_ctim, st.st_ctim)) << "ctime must change";

  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), old, 0));
  const timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), omit_now, 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(SameTime(st.st_atim, old[0])) << "UTIME_OMIT atime changed to " << TimeText(st.st_atim);
  EXPECT_TRUE(Before(lo, st.st_mtim)) << "UTIME_NOW mtime " << TimeText(st.st_mtim);

  // Both omitted: nothing changes at all.
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), old, 0));
  ASSERT_TRUE(Stat(P("f"), &before));
  PassTimestampTick();
  const timespec omit_omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), omit_omit, 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(SameTime(st.st_atim, old[0]));
  EXPECT_TRUE(SameTime(st.st_mtim, old[1]));
  EXPECT_TRUE(SameTime(st.st_ctim, before.st_ctim));

  // NULL times: both now.
  ASSERT_OK(utimensat(AT_FDCWD, P("f").c_str(), nullptr, 0));
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(Before(lo, st.st_atim)) << "atime " << TimeText(st.st_atim);
  EXPECT_TRUE(Before(lo, st.st_mtim)) << "mtime " << TimeText(st.st_mtim);
}

TEST_F(Files, UtimensatNoFollowSetsLinkTimes) {
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(symlink("f", P("link").c_str()));
  struct stat target_before;
  ASSERT_TRUE(Stat(P("f"), &target_before));
  const timespec t[2] = {{1300000000, 5}, {1400000000, 6}};
  ASSERT_OK(utimensat(AT_FDCWD, P("link").c_str(), t, AT_SYMLINK_NOFOLLOW));
  struct stat lst, st;
  ASSERT_TRUE(Lstat(P("link"), &lst));
  EXPECT_TRUE(SameTime(lst.st_mtim, t[1])) << "link mtime " << TimeText(lst.st_mtim);
  ASSERT_TRUE(Stat(P("f"), &st));
  EXPECT_TRUE(SameTime(st.st_mtim, target_before.st_mtim)) << "target must be untouched";
}

// ---- open but unlinked -----------------------------------------------------

TEST_F(Files, OpenUnlinkedFileKeepsWorking) {
  Fd fd, other;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(WriteAll(fd.get(), "abc"));
  ASSERT_TRUE(Open(&other, P("f"), O_RDONLY));
  ASSERT_OK(unlink(P("f").c_str()));
  struct stat st;
  EXPECT_ERRNO(stat(P("f").c_str(), &st), ENOENT);
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_nlink, 0u);
  ASSERT_TRUE(PwriteAll(fd.get(), "defgh", 3));
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "abcdefgh");
  ASSERT_TRUE(PreadUpTo(other.get(), 100, 0, &got));
  EXPECT_EQ(got, "abcdefgh") << "second fd opened before unlink";
  ASSERT_OK(ftruncate(fd.get(), 4));
  ASSERT_OK(fchmod(fd.get(), 0600));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 4);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_OK(fsync(fd.get()));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_TRUE(names.empty()) << "unlinked file still listed: " << names[0];
  // A new file under the same name is a different file.
  ASSERT_TRUE(WriteFile(P("f"), "new"));
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "abcd");
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "new");
}

TEST_F(Files, RenameOverOpenFileKeepsDescriptorContent) {
  ASSERT_TRUE(WriteFile(P("target"), "original"));
  ASSERT_TRUE(WriteFile(P("replacement"), "replacement"));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("target"), O_RDWR));
  ASSERT_OK(rename(P("replacement").c_str(), P("target").c_str()));
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "original");
  ASSERT_TRUE(PwriteAll(fd.get(), "!", 8));
  ASSERT_TRUE(PreadUpTo(fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "original!");
  ASSERT_TRUE(ReadFile(P("target"), &got));
  EXPECT_EQ(got, "replacement") << "writes through the old fd must not reach the new file";
}

// ---- sync / statfs ---------------------------------------------------------

TEST_F(Files, SyncCallsSucceed) {
  Fd fd, ro, d;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(WriteAll(fd.get(), Pattern(100000, 1)));
  EXPECT_OK(fsync(fd.get()));
  ASSERT_TRUE(WriteAll(fd.get(), "more"));
  EXPECT_OK(fdatasync(fd.get()));
  EXPECT_OK(syncfs(fd.get()));
  ASSERT_TRUE(Open(&ro, P("f"), O_RDONLY));
  EXPECT_OK(fsync(ro.get()));
  ASSERT_TRUE(Open(&d, dir(), O_RDONLY | O_DIRECTORY));
  EXPECT_OK(fsync(d.get()));
  EXPECT_OK(fdatasync(d.get()));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 100004);
}

TEST_F(Files, StatfsIsSane) {
  struct statfs sf;
  ASSERT_OK(statfs(dir().c_str(), &sf));
  EXPECT_GT(sf.f_bsize, 0);
  EXPECT_GE(sf.f_namelen, 255);
  EXPECT_LE(sf.f_bfree, sf.f_blocks);
  EXPECT_LE(sf.f_bavail, sf.f_bfree);
  if (sf.f_files != 0) {  // tmpfs may report 0/0 (unlimited)
    EXPECT_LE(sf.f_ffree, sf.f_files);
  }
  Fd fd;
  ASSERT_TRUE(Open(&fd, dir(), O_RDONLY | O_DIRECTORY));
  struct statfs fsf;
  ASSERT_OK(fstatfs(fd.get(), &fsf));
  EXPECT_EQ(fsf.f_type, sf.f_type);
  EXPECT_EQ(fsf.f_bsize, sf.f_bsize);
  struct statvfs sv;
  ASSERT_OK(statvfs(dir().c_str(), &sv));
  EXPECT_GT(sv.f_frsize, 0u);
  EXPECT_GE(sv.f_namemax, 255u);
}

// ---- mmap ------------------------------------------------------------------

struct Mapping {
  void* addr = MAP_FAILED;
  size_t len = 0;
  ~Mapping() {
    if (addr != MAP_FAILED) munmap(addr, len);
  }
  char* p() const { return static_cast<char*>(addr); }
};

TEST_F(Files, MmapSharedWritesReachTheFile) {
  const size_t len = 3 * 4096;
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_OK(ftruncate(fd.get(), static_cast<off_t>(len)));
  Mapping m;
  m.len = len;
  m.addr = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  ASSERT_NE(m.addr, MAP_FAILED) << "mmap: " << ErrnoText(errno);
  const std::string a = Pattern(300, 1), b = Pattern(5000, 2);
  memcpy(m.p() + 100, a.data(), a.size());
  memcpy(m.p() + 4096 + 1000, b.data(), b.size());
  ASSERT_OK(msync(m.addr, len, MS_SYNC));
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), len, 0, &got));
  ASSERT_EQ(got.size(), len);
  EXPECT_TRUE(got.compare(100, a.size(), a) == 0) << "first write through the mapping not read back";
  EXPECT_TRUE(got.compare(4096 + 1000, b.size(), b) == 0) << "second write through the mapping not read back";
  EXPECT_EQ(got.substr(0, 100), std::string(100, '\0'));
  // And the other way round: write() is visible in the shared mapping.
  ASSERT_TRUE(PwriteAll(fd.get(), "via write", 8000));
  EXPECT_EQ(std::string(m.p() + 8000, 9), "via write");
  // After unmapping, a fresh open sees the data too.
  munmap(m.addr, len);
  m.addr = MAP_FAILED;
  fd.Reset();
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_TRUE(got.compare(100, a.size(), a) == 0);
  EXPECT_EQ(got.substr(8000, 9), "via write");
}

TEST_F(Files, MmapPrivateWritesStayPrivate) {
  const std::string data = Pattern(8192, 9);
  ASSERT_TRUE(WriteFile(P("f"), data));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDONLY));
  Mapping m;
  m.len = data.size();
  m.addr = mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  ASSERT_NE(m.addr, MAP_FAILED) << "mmap: " << ErrnoText(errno);
  EXPECT_TRUE(memcmp(m.p(), data.data(), data.size()) == 0) << "mapping does not show the file";
  memset(m.p(), 'P', 5000);
  ASSERT_OK(msync(m.addr, m.len, MS_SYNC));
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_TRUE(got == data) << "MAP_PRIVATE writes reached the file";
}

// ---- O_DIRECT --------------------------------------------------------------

TEST_F(Files, DirectIoAlignedBuffers) {
  int raw = open(P("f").c_str(), O_RDWR | O_CREAT | O_DIRECT, 0644);
  if (raw < 0 && errno == EINVAL) GTEST_SKIP() << "this filesystem refuses O_DIRECT (tmpfs does)";
  ASSERT_GE(raw, 0) << "open(O_DIRECT): " << ErrnoText(errno);
  Fd fd(raw);
  constexpr size_t kLen = 3 * 4096;
  void* mem = nullptr;
  ASSERT_EQ(posix_memalign(&mem, 4096, kLen), 0);
  std::unique_ptr<char, decltype(&free)> buf(static_cast<char*>(mem), &free);
  const std::string data = Pattern(kLen, 4);
  memcpy(buf.get(), data.data(), kLen);
  ASSERT_EQ(pwrite(fd.get(), buf.get(), kLen, 0), static_cast<ssize_t>(kLen)) << "pwrite: " << ErrnoText(errno);
  memset(buf.get(), 0, kLen);
  ASSERT_EQ(pread(fd.get(), buf.get(), 2 * 4096, 4096), static_cast<ssize_t>(2 * 4096))
      << "pread: " << ErrnoText(errno);
  EXPECT_TRUE(memcmp(buf.get(), data.data() + 4096, 2 * 4096) == 0) << "O_DIRECT read-back differs";
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, static_cast<off_t>(kLen));
  fd.Reset();
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_TRUE(got == data) << "buffered read after O_DIRECT write differs";
}

// ---- fallocate / SEEK_DATA / copy_file_range -------------------------------
//
// What ext4 and strata both do. Hole positions are checked exactly only for
// ranges aligned to 4 KiB, where ext4 (4 KiB blocks) reports them exactly too;
// elsewhere the rule is POSIX's: a hole reads as zeros, data may hold zeros.

// Walks fd with SEEK_HOLE / SEEK_DATA and checks every hole reads as zeros
// and the last hole ends at end of file. Returns the holes, [start, end).
std::vector<std::pair<off_t, off_t>> Holes(int fd) {
  std::vector<std::pair<off_t, off_t>> holes;
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  off_t pos = 0;
  while (pos < st.st_size) {
    off_t hole = lseek(fd, pos, SEEK_HOLE);
    EXPECT_GE(hole, pos) << "lseek(" << pos << ", SEEK_HOLE): " << ErrnoText(errno);
    if (hole < pos || hole >= st.st_size) break;
    off_t data = lseek(fd, hole, SEEK_DATA);
    if (data < 0) {
      EXPECT_EQ(errno, ENXIO) << "lseek(SEEK_DATA) after the last hole";
      data = st.st_size;
    }
    EXPECT_GT(data, hole);
    holes.emplace_back(hole, data);
    std::string got;
    EXPECT_TRUE(PreadUpTo(fd, static_cast<size_t>(data - hole), hole, &got));
    EXPECT_EQ(got.find_first_not_of('\0'), std::string::npos)
        << "the hole at " << hole << " holds data at " << hole + static_cast<off_t>(got.find_first_not_of('\0'));
    pos = data;
  }
  return holes;
}

using HoleList = std::vector<std::pair<off_t, off_t>>;

TEST_F(Files, FallocateExtends) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(WriteAll(fd.get(), "abc"));
  ASSERT_OK(fallocate(fd.get(), 0, 0, 8192));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 8192);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 10000, 0, &got));
  EXPECT_EQ(got, "abc" + std::string(8189, '\0'));
  // Inside the file: no size change.
  ASSERT_OK(fallocate(fd.get(), 0, 100, 1000));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 8192);
  // KEEP_SIZE beyond the end: no size change either, and nothing to read there.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, 8192, kMiB));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 8192);
  ASSERT_TRUE(PreadUpTo(fd.get(), 10000, 0, &got));
  EXPECT_EQ(got, "abc" + std::string(8189, '\0'));
  // Writing into the reserved range and past the end works as usual.
  ASSERT_TRUE(PwriteAll(fd.get(), "tail", 10000));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 10004);
  // posix_fallocate is fallocate(mode 0) here.
  EXPECT_EQ(posix_fallocate(fd.get(), 0, 20000), 0);
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 20000);
  ASSERT_TRUE(PreadUpTo(fd.get(), 30000, 0, &got));
  EXPECT_EQ(got, "abc" + std::string(9997, '\0') + "tail" + std::string(9996, '\0'));
}

TEST_F(Files, FallocateErrors) {
  ASSERT_TRUE(WriteFile(P("f"), "data"));
  Fd fd, ro;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR));
  EXPECT_ERRNO(fallocate(fd.get(), 0, 0, 0), EINVAL);
  EXPECT_ERRNO(fallocate(fd.get(), 0, -1, 10), EINVAL);
  EXPECT_ERRNO(fallocate(fd.get(), 0, 0, -10), EINVAL);
  EXPECT_ERRNO(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE, 0, 10), EOPNOTSUPP);  // punching needs KEEP_SIZE
  EXPECT_ERRNO(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 10),
               EOPNOTSUPP);
  EXPECT_ERRNO(fallocate(fd.get(), 0, INT64_MAX - 10, 100), EFBIG);
  ASSERT_TRUE(Open(&ro, P("f"), O_RDONLY));
  EXPECT_ERRNO(fallocate(ro.get(), 0, 0, 10), EBADF);
  Fd d;
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Open(&d, P("d"), O_RDONLY | O_DIRECTORY));
  EXPECT_ERRNO(fallocate(d.get(), 0, 0, 10), EBADF);  // a directory is never open for writing
  std::string got;
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_EQ(got, "data") << "a refused fallocate changed the file";
}

TEST_F(Files, FallocatePunchHole) {
  const std::string data = Pattern(3 * 4096, 5);
  ASSERT_TRUE(WriteFile(P("f"), data));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR));
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096));
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), data.size() + 1, 0, &got));
  std::string want = data;
  want.replace(4096, 4096, std::string(4096, '\0'));
  EXPECT_TRUE(got == want) << "punched range must read as zeros, the rest unchanged";
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size())) << "punching keeps the size";
  EXPECT_EQ(Holes(fd.get()), (HoleList{{4096, 8192}})) << "a punched aligned range is a hole";
  // Unaligned, within a block: zeros exactly there.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10, 20));
  want.replace(10, 20, std::string(20, '\0'));
  // Across the end of the file: zeros up to it, the size unchanged.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, data.size() - 100, kMiB));
  want.replace(data.size() - 100, 100, std::string(100, '\0'));
  // Past the end: nothing.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2 * kMiB, 4096));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
  ASSERT_TRUE(PreadUpTo(fd.get(), data.size() + 1, 0, &got));
  EXPECT_TRUE(got == want) << "content differs after unaligned punches";
  // Writing into the hole fills it again.
  ASSERT_TRUE(PwriteAll(fd.get(), "refill", 5000));
  want.replace(5000, 6, "refill");
  fd.Reset();
  ASSERT_TRUE(ReadFile(P("f"), &got));
  EXPECT_TRUE(got == want) << "content differs after writing into the hole";
}

TEST_F(Files, FallocateZeroRange) {
  const std::string data = Pattern(4 * 4096, 6);
  ASSERT_TRUE(WriteFile(P("f"), data));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR));
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 100, 5000));
  std::string want = data;
  want.replace(100, 5000, std::string(5000, '\0'));
  // Across the end without KEEP_SIZE: the file grows, the new part reads as zeros.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_ZERO_RANGE, data.size() - 10, 1000));
  want.replace(data.size() - 10, 10, std::string(10, '\0'));
  want.resize(data.size() + 990, '\0');
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, static_cast<off_t>(want.size()));
  // With KEEP_SIZE past the end: the size stays.
  ASSERT_OK(fallocate(fd.get(), FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, want.size(), 4096));
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, static_cast<off_t>(want.size()));
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), want.size() + 100, 0, &got));
  EXPECT_TRUE(got == want) << "zeroed ranges must read as zeros, the rest unchanged";
  Holes(fd.get());
}

TEST_F(Files, SeekDataAndHole) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("sparse"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), Pattern(4096, 6), kMiB));
  const off_t size = kMiB + 4096;
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_DATA), kMiB) << ErrnoText(errno);
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_HOLE), 0) << ErrnoText(errno);
  EXPECT_EQ(lseek(fd.get(), 100, SEEK_HOLE), 100) << "inside a hole, the hole starts at the offset";
  EXPECT_EQ(lseek(fd.get(), kMiB, SEEK_HOLE), size) << "the next hole after the last data is end of file";
  EXPECT_EQ(lseek(fd.get(), kMiB + 10, SEEK_DATA), kMiB + 10) << "inside data, data starts at the offset";
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_CUR), kMiB + 10) << "SEEK_DATA moves the file offset";
  EXPECT_ERRNO(lseek(fd.get(), size, SEEK_DATA), ENXIO);
  EXPECT_ERRNO(lseek(fd.get(), size, SEEK_HOLE), ENXIO);
  EXPECT_ERRNO(lseek(fd.get(), size + 10, SEEK_HOLE), ENXIO);
  EXPECT_ERRNO(lseek(fd.get(), -1, SEEK_DATA), ENXIO);
  EXPECT_EQ(Holes(fd.get()), (HoleList{{0, kMiB}}));
  // A dense file: data at 0, hole at the end.
  ASSERT_TRUE(WriteFile(P("dense"), Pattern(10000, 7)));
  Fd dense;
  ASSERT_TRUE(Open(&dense, P("dense"), O_RDONLY));
  EXPECT_EQ(lseek(dense.get(), 0, SEEK_DATA), 0);
  EXPECT_EQ(lseek(dense.get(), 0, SEEK_HOLE), 10000);
  // An empty file has neither.
  Fd empty;
  ASSERT_TRUE(Open(&empty, P("empty"), O_RDWR | O_CREAT, 0644));
  EXPECT_ERRNO(lseek(empty.get(), 0, SEEK_DATA), ENXIO);
  EXPECT_ERRNO(lseek(empty.get(), 0, SEEK_HOLE), ENXIO);
}

TEST_F(Files, SeekFindsHolesLeftByTruncateAndFallocate) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), Pattern(8192, 9), 0));
  ASSERT_OK(ftruncate(fd.get(), kMiB));  // grown by truncation: never written
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_HOLE), 8192);
  EXPECT_ERRNO(lseek(fd.get(), 8192, SEEK_DATA), ENXIO);
  ASSERT_OK(fallocate(fd.get(), 0, kMiB, kMiB));  // grown by fallocate: allocated, never written
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_HOLE), 8192);
  EXPECT_ERRNO(lseek(fd.get(), 8192, SEEK_DATA), ENXIO);
  ASSERT_TRUE(PwriteAll(fd.get(), Pattern(4096, 10), kMiB + 4096));
  EXPECT_EQ(lseek(fd.get(), 8192, SEEK_DATA), kMiB + 4096);
  EXPECT_EQ(lseek(fd.get(), kMiB + 4096, SEEK_HOLE), kMiB + 8192);
  EXPECT_EQ(Holes(fd.get()), (HoleList{{8192, kMiB + 4096}, {kMiB + 8192, 2 * kMiB}}));
}

TEST_F(Files, CopyFileRange) {
  const std::string data = Pattern(300000, 8);
  ASSERT_TRUE(WriteFile(P("src"), data));
  Fd in, out;
  ASSERT_TRUE(Open(&in, P("src"), O_RDONLY));
  ASSERT_TRUE(Open(&out, P("dst"), O_WRONLY | O_CREAT, 0644));
  loff_t off_in = 0, off_out = 0;
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = copy_file_range(in.get(), &off_in, out.get(), &off_out, left, 0);
    if (n < 0 && errno == ENOSYS) GTEST_SKIP() << "kernel without copy_file_range";
    ASSERT_GT(n, 0) << "copy_file_range: " << (n < 0 ? ErrnoText(errno) : "returned 0 early");
    left -= static_cast<size_t>(n);
  }
  EXPECT_EQ(off_in, static_cast<loff_t>(data.size()));
  EXPECT_EQ(off_out, static_cast<loff_t>(data.size()));
  EXPECT_EQ(lseek(in.get(), 0, SEEK_CUR), 0) << "explicit offsets must not move the file offset";
  std::string got;
  ASSERT_TRUE(ReadFile(P("dst"), &got));
  EXPECT_TRUE(got == data) << "copied content differs";
  // A range into the middle of an existing file.
  off_in = 5000;
  off_out = 3000;
  ssize_t n = copy_file_range(in.get(), &off_in, out.get(), &off_out, 1000, 0);
  ASSERT_EQ(n, 1000) << "copy_file_range: " << ErrnoText(errno);
  std::string want = data;
  want.replace(3000, 1000, data, 5000, 1000);
  ASSERT_TRUE(ReadFile(P("dst"), &got));
  EXPECT_TRUE(got == want) << "ranged copy differs";
}

TEST_F(Files, SeekDataSeesBytesWrittenThroughASharedMapping) {
  // The written page is still dirty in the page cache when lseek runs (no
  // msync): SEEK_DATA must find it all the same.
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_OK(ftruncate(fd.get(), kMiB));
  Mapping m;
  m.len = kMiB;
  m.addr = mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  ASSERT_NE(m.addr, MAP_FAILED) << "mmap: " << ErrnoText(errno);
  memcpy(m.p() + kMiB / 2, "mapped", 6);
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_DATA), kMiB / 2) << ErrnoText(errno);
  EXPECT_EQ(lseek(fd.get(), kMiB / 2, SEEK_HOLE), kMiB / 2 + 4096) << ErrnoText(errno);
  EXPECT_EQ(std::string(m.p() + kMiB / 2, 6), "mapped") << "the mapping lost what was written through it";
  Holes(fd.get());
}

TEST_F(Files, CopyFileRangeWithinOneFile) {
  std::string want = Pattern(20000, 11);
  ASSERT_TRUE(WriteFile(P("f"), want));
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR));
  loff_t in = 0, out = 10000;
  EXPECT_ERRNO(copy_file_range(fd.get(), &in, fd.get(), &out, 10001, 0), EINVAL) << "overlapping ranges";
  in = 10000;
  out = 5000;
  EXPECT_ERRNO(copy_file_range(fd.get(), &in, fd.get(), &out, 6000, 0), EINVAL) << "overlapping ranges";
  // Apart, and past the end (the file grows).
  in = 0;
  out = 30000;
  ASSERT_EQ(copy_file_range(fd.get(), &in, fd.get(), &out, 5000, 0), 5000) << ErrnoText(errno);
  want.resize(35000, '\0');
  want.replace(30000, 5000, want, 0, 5000);
  // Adjacent ranges do not overlap.
  in = 1000;
  out = 0;
  ASSERT_EQ(copy_file_range(fd.get(), &in, fd.get(), &out, 1000, 0), 1000) << ErrnoText(errno);
  want.replace(0, 1000, want, 1000, 1000);
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 35000);
  std::string got;
  ASSERT_TRUE(PreadUpTo(fd.get(), 40000, 0, &got));
  EXPECT_TRUE(got == want) << "same-file copies differ";
}

TEST_F(Files, CopyFileRangeAtTheEndAndWithFileOffsets) {
  const std::string src = Pattern(10000, 12);
  ASSERT_TRUE(WriteFile(P("src"), src));
  ASSERT_TRUE(WriteFile(P("dst"), std::string(3000, 'd')));
  Fd in, out;
  ASSERT_TRUE(Open(&in, P("src"), O_RDONLY));
  ASSERT_TRUE(Open(&out, P("dst"), O_RDWR));
  loff_t off_in = 10000, off_out = 0;
  EXPECT_EQ(copy_file_range(in.get(), &off_in, out.get(), &off_out, 100, 0), 0) << "at end of file: nothing";
  off_in = 20000;
  EXPECT_EQ(copy_file_range(in.get(), &off_in, out.get(), &off_out, 100, 0), 0) << "past end of file: nothing";
  off_in = 9990;
  EXPECT_EQ(copy_file_range(in.get(), &off_in, out.get(), &off_out, 100, 0), 10) << "short at end of file";
  EXPECT_EQ(off_in, 10000);
  EXPECT_EQ(off_out, 10);
  // NULL offsets: the file offsets are used and advanced.
  ASSERT_EQ(lseek(in.get(), 500, SEEK_SET), 500);
  ASSERT_EQ(lseek(out.get(), 2500, SEEK_SET), 2500);
  ASSERT_EQ(copy_file_range(in.get(), nullptr, out.get(), nullptr, 1000, 0), 1000) << ErrnoText(errno);
  EXPECT_EQ(lseek(in.get(), 0, SEEK_CUR), 1500);
  EXPECT_EQ(lseek(out.get(), 0, SEEK_CUR), 3500);
  std::string want = std::string(3000, 'd');
  want.replace(0, 10, src, 9990, 10);
  want.resize(3500);
  want.replace(2500, 1000, src, 500, 1000);
  std::string got;
  ASSERT_TRUE(ReadFile(P("dst"), &got));
  EXPECT_TRUE(got == want) << "copied content differs";
}

TEST_F(Files, CopyFileRangeOfASparseFileReadsTheSame) {
  // Data, a hole, data, a hole at the end; copied over a file full of 'd'.
  Fd src;
  ASSERT_TRUE(Open(&src, P("src"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(src.get(), Pattern(4096, 13), 0));
  ASSERT_TRUE(PwriteAll(src.get(), Pattern(4096, 14), 3 * 4096));
  ASSERT_OK(ftruncate(src.get(), 6 * 4096));
  std::string src_data;
  ASSERT_TRUE(PreadUpTo(src.get(), 6 * 4096, 0, &src_data));
  ASSERT_TRUE(WriteFile(P("dst"), std::string(8 * 4096, 'd')));
  Fd dst;
  ASSERT_TRUE(Open(&dst, P("dst"), O_RDWR));
  loff_t off_in = 0, off_out = 4096;
  size_t left = src_data.size();
  while (left > 0) {
    ssize_t n = copy_file_range(src.get(), &off_in, dst.get(), &off_out, left, 0);
    ASSERT_GT(n, 0) << "copy_file_range: " << (n < 0 ? ErrnoText(errno) : "returned 0 early");
    left -= static_cast<size_t>(n);
  }
  std::string want = std::string(8 * 4096, 'd');
  want.replace(4096, src_data.size(), src_data);
  std::string got;
  ASSERT_TRUE(PreadUpTo(dst.get(), want.size() + 1, 0, &got));
  EXPECT_TRUE(got == want) << "the source's holes must read as zeros in the copy";
  Holes(dst.get());
}

TEST_F(Files, CopyFileRangeErrors) {
  ASSERT_TRUE(WriteFile(P("a"), "aaaa"));
  ASSERT_TRUE(WriteFile(P("b"), "bbbb"));
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  Fd a_ro, a_wo, b_ro, b_rw, b_append, d;
  ASSERT_TRUE(Open(&a_ro, P("a"), O_RDONLY));
  ASSERT_TRUE(Open(&a_wo, P("a"), O_WRONLY));
  ASSERT_TRUE(Open(&b_ro, P("b"), O_RDONLY));
  ASSERT_TRUE(Open(&b_rw, P("b"), O_RDWR));
  ASSERT_TRUE(Open(&b_append, P("b"), O_WRONLY | O_APPEND));
  ASSERT_TRUE(Open(&d, P("d"), O_RDONLY | O_DIRECTORY));
  loff_t in = 0, out = 0;
  EXPECT_ERRNO(copy_file_range(d.get(), &in, b_rw.get(), &out, 4, 0), EISDIR);
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, d.get(), &out, 4, 0), EISDIR);
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, b_ro.get(), &out, 4, 0), EBADF) << "destination not writable";
  EXPECT_ERRNO(copy_file_range(a_wo.get(), &in, b_rw.get(), &out, 4, 0), EBADF) << "source not readable";
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, b_append.get(), &out, 4, 0), EBADF) << "destination O_APPEND";
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, b_rw.get(), &out, 4, 1), EINVAL) << "flags";
  // A negative offset: the kernel refuses it before any filesystem sees it
  // (EOVERFLOW on recent kernels, EINVAL on older ones).
  in = -1;
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, b_rw.get(), &out, 4, 0), EINVAL, EOVERFLOW);
  in = 0;
  out = -1;
  EXPECT_ERRNO(copy_file_range(a_ro.get(), &in, b_rw.get(), &out, 4, 0), EINVAL, EOVERFLOW);
  std::string got;
  ASSERT_TRUE(ReadFile(P("b"), &got));
  EXPECT_EQ(got, "bbbb") << "a refused copy changed the destination";
}

}  // namespace
}  // namespace strata::conformance
