// Conformance: how file data meets the kernel's caches and the limits of a
// filesystem — O_DIRECT (also through Linux AIO) against buffered readers of
// the same file, offsets at and past the largest file, st_blocks of sparse
// files, and SEEK_DATA / SEEK_HOLE at block granularity.

#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/falloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "conformance.h"

namespace strata::conformance {
namespace {

using Io = ConformanceTest;

constexpr off_t kKiB = 1024;
constexpr off_t kMiB = 1 << 20;
constexpr off_t kTiB = off_t{1} << 40;

// A page-aligned buffer, as O_DIRECT wants.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t n) : size(n) {
    void* mem = nullptr;
    if (posix_memalign(&mem, 4096, n) == 0) data.reset(static_cast<char*>(mem));
  }
  std::unique_ptr<char, decltype(&free)> data{nullptr, &free};
  size_t size;
};

// One Linux AIO write (io_setup, io_submit, io_getevents by their syscalls:
// the libaio wrappers add nothing this needs). Returns the event's result: the
// bytes written, or -errno.
long AioPwrite(int fd, const char* buf, size_t n, off_t offset) {
  aio_context_t ctx = 0;
  if (syscall(SYS_io_setup, 1, &ctx) != 0) return -errno;
  iocb cb{};
  cb.aio_fildes = static_cast<uint32_t>(fd);
  cb.aio_lio_opcode = IOCB_CMD_PWRITE;
  cb.aio_buf = reinterpret_cast<uint64_t>(buf);
  cb.aio_nbytes = n;
  cb.aio_offset = offset;
  iocb* list[1] = {&cb};
  long result = 0;
  if (syscall(SYS_io_submit, ctx, 1, list) != 1) {
    result = -errno;
  } else {
    io_event ev{};
    long got = syscall(SYS_io_getevents, ctx, 1, 1, &ev, nullptr);
    result = got == 1 ? static_cast<long>(ev.res) : -EIO;
  }
  syscall(SYS_io_destroy, ctx);
  return result;
}

// ---- O_DIRECT and the page cache --------------------------------------------

// A buffered reader holds the file's pages in the page cache; writes through
// another descriptor opened with O_DIRECT (Linux AIO, then pwrite) must be
// what it reads next, not the cached bytes from before.
TEST_F(Io, DirectWritesReachBufferedReadersOfTheSameRange) {
  constexpr size_t kLen = 64 * 1024;
  ASSERT_TRUE(WriteFile(P("f"), std::string(kLen, '\x55')));
  Fd buffered;
  ASSERT_TRUE(Open(&buffered, P("f"), O_RDWR));
  std::string got;
  ASSERT_TRUE(PreadUpTo(buffered.get(), kLen, 0, &got));  // now in the page cache
  ASSERT_EQ(got, std::string(kLen, '\x55'));

  int raw = open(P("f").c_str(), O_RDWR | O_DIRECT);
  if (raw < 0 && errno == EINVAL) GTEST_SKIP() << "this filesystem refuses O_DIRECT (tmpfs does)";
  ASSERT_GE(raw, 0) << "open(O_DIRECT): " << ErrnoText(errno);
  Fd direct(raw);
  AlignedBuffer buf(16 * 1024);
  ASSERT_NE(buf.data, nullptr);
  memset(buf.data.get(), 0xaa, buf.size);
  ASSERT_EQ(AioPwrite(direct.get(), buf.data.get(), buf.size, 4096), static_cast<long>(buf.size))
      << "io_submit of an O_DIRECT write";
  std::string want = std::string(kLen, '\x55').replace(4096, buf.size, buf.size, '\xaa');
  ASSERT_TRUE(PreadUpTo(buffered.get(), kLen, 0, &got));
  EXPECT_TRUE(got == want) << "a buffered read after an AIO O_DIRECT write returns the bytes from before it at "
                           << got.find('\x55', 4096);

  memset(buf.data.get(), 0x33, buf.size);
  ASSERT_EQ(pwrite(direct.get(), buf.data.get(), buf.size, 32 * 1024), static_cast<ssize_t>(buf.size))
      << "pwrite(O_DIRECT): " << ErrnoText(errno);
  want.replace(32 * 1024, buf.size, buf.size, '\x33');
  ASSERT_TRUE(PreadUpTo(buffered.get(), kLen, 0, &got));
  EXPECT_TRUE(got == want) << "a buffered read after an O_DIRECT pwrite returns the bytes from before it";

  // And the other way: a buffered write is what an O_DIRECT read gets.
  ASSERT_TRUE(PwriteAll(buffered.get(), std::string(4096, '\x77'), 0));
  ASSERT_EQ(pread(direct.get(), buf.data.get(), 4096, 0), 4096) << "pread(O_DIRECT): " << ErrnoText(errno);
  EXPECT_EQ(std::string(buf.data.get(), 4096), std::string(4096, '\x77'));
}

// The same while another thread keeps reading the range through the page
// cache: an asynchronous direct write (not extending the file, so the kernel
// does not make it synchronous) races reads that may cache the old bytes
// again after the kernel dropped them, and once it completes no read may
// return them.
TEST_F(Io, AsyncDirectWritesRacingBufferedReadsLeaveNoStalePages) {
  constexpr size_t kLen = 64 * 1024;
  ASSERT_TRUE(WriteFile(P("f"), std::string(2 * kLen, '\0')));
  int raw = open(P("f").c_str(), O_RDWR | O_DIRECT);
  if (raw < 0 && errno == EINVAL) GTEST_SKIP() << "this filesystem refuses O_DIRECT (tmpfs does)";
  ASSERT_GE(raw, 0) << "open(O_DIRECT): " << ErrnoText(errno);
  Fd direct(raw), racing, checking;
  ASSERT_TRUE(Open(&racing, P("f"), O_RDONLY));
  ASSERT_TRUE(Open(&checking, P("f"), O_RDONLY));
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    std::string b(kLen, '\0');
    while (!stop.load()) (void)!pread(racing.get(), b.data(), kLen, 0);
  });
  AlignedBuffer buf(kLen);
  ASSERT_NE(buf.data, nullptr);
  int stale_after = -1;
  long failed = 0;
  std::string got(kLen, '\0');
  for (int i = 0; i < 1000 && stale_after < 0 && failed == 0; i++) {
    const char fill = static_cast<char>(1 + i % 250);
    memset(buf.data.get(), fill, kLen);
    const long rc = AioPwrite(direct.get(), buf.data.get(), kLen, 0);
    if (rc != static_cast<long>(kLen)) failed = rc;
    if (pread(checking.get(), got.data(), kLen, 0) != static_cast<ssize_t>(kLen) ||
        got.find_first_not_of(fill) != std::string::npos)
      stale_after = i;
  }
  stop = true;
  reader.join();
  EXPECT_EQ(failed, 0) << "an AIO O_DIRECT write returned " << failed;
  EXPECT_EQ(stale_after, -1) << "after AIO O_DIRECT write number " << stale_after
                             << ", a buffered read returned the bytes from before it";
}

// ---- the largest file --------------------------------------------------------

// A write, truncation or copy past the largest file the filesystem holds
// fails with EFBIG (never EIO); one below it works and reads back.
void ExpectFitsOrTooLarge(const char* what, long rc, int err) {
  if (rc == -1) {
    EXPECT_EQ(err, EFBIG) << what << " failed with " << ErrnoText(err) << ", expected EFBIG";
  }
}

TEST_F(Io, OffsetsPastTheLargestFileAreTooLarge) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("f"), O_RDWR | O_CREAT, 0644));
  for (off_t offset : {16 * kTiB - 1, 16 * kTiB, off_t{INT64_MAX} - 1}) {
    errno = 0;
    const long rc = pwrite(fd.get(), "x", 1, offset);
    const int err = errno;
    const std::string what = "pwrite of 1 byte at " + std::to_string(offset);
    ExpectFitsOrTooLarge(what.c_str(), rc, err);
    if (rc == 1) {
      std::string got;
      EXPECT_TRUE(PreadUpTo(fd.get(), 1, offset, &got));
      EXPECT_EQ(got, "x") << what;
    }
    ASSERT_OK(ftruncate(fd.get(), 0));
  }
  errno = 0;
  long rc = ftruncate(fd.get(), off_t{INT64_MAX});
  ExpectFitsOrTooLarge("ftruncate to 2^63-1", rc, errno);
  ASSERT_OK(ftruncate(fd.get(), 0));
  errno = 0;
  rc = fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, off_t{INT64_MAX} - 4096, 4096);
  if (rc == -1 && errno != EOPNOTSUPP) ExpectFitsOrTooLarge("fallocate at 2^63-4097", rc, errno);

  ASSERT_TRUE(PwriteAll(fd.get(), Pattern(4096, 1), 0));
  Fd out;
  ASSERT_TRUE(Open(&out, P("out"), O_RDWR | O_CREAT, 0644));
  for (off_t offset : {16 * kTiB, off_t{INT64_MAX} - 4096}) {
    loff_t in_off = 0, out_off = offset;
    errno = 0;
    rc = copy_file_range(fd.get(), &in_off, out.get(), &out_off, 4096, 0);
    if (rc == -1 && errno == ENOSYS) GTEST_SKIP() << "kernel without copy_file_range";
    const std::string what = "copy_file_range to " + std::to_string(offset);
    ExpectFitsOrTooLarge(what.c_str(), rc, errno);
    ASSERT_OK(ftruncate(out.get(), 0));
  }
}

// A process limited by RLIMIT_FSIZE (ulimit -f) gets EFBIG for a write or a
// copy past it (the signal it would get is ignored here).
TEST_F(Io, FileSizeLimitOfTheProcessGivesTooLarge) {
  ASSERT_TRUE(WriteFile(P("in"), Pattern(kMiB, 2)));
  ASSERT_TRUE(Touch(P("out")));
  const std::string in = P("in"), out = P("out");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{static_cast<rlim_t>(8 * kTiB), static_cast<rlim_t>(8 * kTiB)};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(100);
    int in_fd = open(in.c_str(), O_RDONLY), out_fd = open(out.c_str(), O_WRONLY);
    if (in_fd < 0 || out_fd < 0) _exit(101);
    loff_t in_off = 0, out_off = 8 * kTiB;
    if (copy_file_range(in_fd, &in_off, out_fd, &out_off, kMiB, 0) != -1) _exit(102);
    if (errno == ENOSYS) _exit(77);
    if (errno != EFBIG) _exit(errno & 0x3f);
    if (pwrite(out_fd, "x", 1, 8 * kTiB) != -1) _exit(103);
    if (errno != EFBIG) _exit(64 + (errno & 0x1f));
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "kernel without copy_file_range";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "100+: setup, 102: the copy worked, 103: the write worked, below 64: the "
                                       "copy's errno, 64+: the write's errno";
}

// ---- st_blocks -----------------------------------------------------------------

// st_blocks counts what the file holds, not its size: tools that detect
// sparse files (cp --sparse=auto, tar -S, qemu-img) depend on it.
TEST_F(Io, StBlocksCountsWrittenBytesNotHoles) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("sparse"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), Pattern(50 * kKiB, 3), 1600 * 1000));
  ASSERT_OK(fsync(fd.get()));
  struct stat st;
  ASSERT_OK(fstat(fd.get(), &st));
  EXPECT_EQ(st.st_size, 1600 * 1000 + 50 * kKiB);
  EXPECT_GE(st.st_blocks * 512, 50 * kKiB) << "st_blocks must cover the written bytes";
  EXPECT_LT(st.st_blocks * 512, 256 * kKiB) << "st_blocks counts the hole before the written bytes";

  // Grown by truncation only: nothing held.
  ASSERT_TRUE(Touch(P("empty")));
  ASSERT_OK(truncate(P("empty").c_str(), 64 * kMiB));
  ASSERT_TRUE(Stat(P("empty"), &st));
  EXPECT_EQ(st.st_blocks, 0) << "a file that is all hole holds no blocks";

  // A dense file holds all of its bytes.
  ASSERT_TRUE(WriteFile(P("dense"), Pattern(300 * kKiB, 4)));
  ASSERT_TRUE(Stat(P("dense"), &st));
  EXPECT_GE(st.st_blocks * 512, 300 * kKiB);
  EXPECT_LT(st.st_blocks * 512, 400 * kKiB);
}

// ---- SEEK_DATA / SEEK_HOLE at 4 KiB --------------------------------------------

// Data and holes are reported by 4 KiB block, as ext4 does: a block holding
// any written byte is data from its start; a hole is whole blocks.
TEST_F(Io, SeekReportsDataAndHolesByBlock) {
  Fd fd;
  ASSERT_TRUE(Open(&fd, P("tiny"), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(PwriteAll(fd.get(), "x", 2));
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_DATA), 0) << "the block holding byte 2 is data from 0";
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_HOLE), 3) << "the only hole is the one at the end";

  Fd f;
  ASSERT_TRUE(Open(&f, P("f"), O_RDWR | O_CREAT, 0644));
  ASSERT_OK(ftruncate(f.get(), 64 * kKiB));
  ASSERT_TRUE(PwriteAll(f.get(), "y", 5000));           // in block 1
  ASSERT_TRUE(PwriteAll(f.get(), "zz", 4 * 4096 - 1));  // across blocks 3 and 4
  EXPECT_EQ(lseek(f.get(), 0, SEEK_DATA), 4096);
  EXPECT_EQ(lseek(f.get(), 4097, SEEK_DATA), 4097) << "inside a data block, data starts at the offset";
  EXPECT_EQ(lseek(f.get(), 4096, SEEK_HOLE), 2 * 4096) << "the rest of block 1 is data, not a hole";
  EXPECT_EQ(lseek(f.get(), 2 * 4096, SEEK_DATA), 3 * 4096);
  EXPECT_EQ(lseek(f.get(), 3 * 4096, SEEK_HOLE), 5 * 4096) << "blocks 3 and 4 are data from end to end";
  EXPECT_EQ(lseek(f.get(), 100, SEEK_HOLE), 100) << "inside a hole block, the hole starts at the offset";
  EXPECT_ERRNO(lseek(f.get(), 5 * 4096, SEEK_DATA), ENXIO);
}

}  // namespace
}  // namespace strata::conformance
