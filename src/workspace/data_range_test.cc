// Workspace unit tests of ranges of data: Allocate, SeekData, CopyRange.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "testing/workspace_test_util.h"

namespace strata {
namespace {

using namespace workspace_testing;


// Walks the file with SeekData as a program would (SEEK_DATA, then SEEK_HOLE
// from there, ...) and checks it against the expected content: every hole
// reads as zeros, every non-zero byte is inside data, the end is a hole.
// Returns the holes found, for exact checks.
std::vector<std::pair<uint64_t, uint64_t>> CheckSeek(Workspace& ws, InodeId ino, const std::string& content) {
  std::vector<std::pair<uint64_t, uint64_t>> holes;
  const uint64_t size = content.size();
  uint64_t pos = 0;
  while (pos < size) {
    auto hole = ws.SeekData(ino, pos, SEEK_HOLE);
    EXPECT_TRUE(hole.ok()) << "SEEK_HOLE at " << pos << ": " << hole.status().ToString();
    if (!hole.ok()) break;
    EXPECT_GE(*hole, pos);
    EXPECT_LE(*hole, size);
    if (*hole >= size) break;
    auto data = ws.SeekData(ino, *hole, SEEK_DATA);
    uint64_t hole_end = size;
    if (data.ok()) {
      EXPECT_GT(*data, *hole) << "SEEK_DATA from a hole must not return the hole";
      hole_end = std::min(*data, size);
    } else {
      EXPECT_EQ(Errno(data), ENXIO) << data.status().ToString();
    }
    holes.emplace_back(*hole, hole_end);
    size_t nonzero = content.find_first_not_of('\0', *hole);
    EXPECT_TRUE(nonzero == std::string::npos || nonzero >= hole_end)
        << "hole [" << *hole << ", " << hole_end << ") holds a non-zero byte at " << nonzero;
    if (hole_end >= size) break;
    pos = hole_end;
  }
  EXPECT_EQ(Errno(ws.SeekData(ino, size, SEEK_DATA)), ENXIO);
  EXPECT_EQ(Errno(ws.SeekData(ino, size, SEEK_HOLE)), ENXIO);
  return holes;
}

// SeekData answers by 4 KiB block: a hole is the blocks a zeroed range covers whole.
uint64_t Up(uint64_t x) { return (x + 4095) / 4096 * 4096; }
uint64_t Down(uint64_t x) { return x / 4096 * 4096; }

// Whether fallocate reserves space in directory dir.
bool CanReserve(const std::string& dir) {
  const std::string probe = dir + "/.reserve-probe";
  int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ::fallocate(fd, 0, 0, 4096) == 0;
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return ok;
}

uint64_t AllocatedBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TEST_F(WorkspaceTest, AllocateGrowsOrKeepsTheSizeAndRefusesWhatFallocateRefuses) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  W(*ws, f.ino, 0, "abc");
  const int64_t old_mtime = ws->GetAttr(f.ino)->mtime_ns;
  ASSERT_TRUE(ws->Allocate(f.ino, 0, 0, 8192).ok());
  EXPECT_EQ(ws->GetAttr(f.ino)->size, 8192u);
  EXPECT_GT(ws->GetAttr(f.ino)->mtime_ns, old_mtime);
  EXPECT_EQ(ReadAll(*ws, f.ino), "abc" + std::string(8189, '\0'));
  ASSERT_TRUE(ws->Allocate(f.ino, 0, 100, 1000).ok());  // inside: nothing changes
  ASSERT_TRUE(ws->Allocate(f.ino, kAllocKeepSize, 8000, 1 << 20).ok());
  EXPECT_EQ(ws->GetAttr(f.ino)->size, 8192u);
  EXPECT_EQ(ReadAll(*ws, f.ino), "abc" + std::string(8189, '\0'));
  // The space is reserved in the data file, past the end too (KEEP_SIZE),
  // where the filesystem under the store can reserve space at all.
  if (CanReserve(dir_.path())) {
    EXPECT_GE(AllocatedBytes(WsDir() + "/data/" + std::to_string(f.ino)), 8000u + (1 << 20) - 8192);
  }
  // Allocated but never written: a hole, from the block after the one "abc" is in.
  EXPECT_EQ(CheckSeek(*ws, f.ino, ReadAll(*ws, f.ino)), (std::vector<std::pair<uint64_t, uint64_t>>{{4096, 8192}}));

  EXPECT_EQ(Errno(ws->Allocate(f.ino, 0, 0, 0)), EINVAL);
  EXPECT_EQ(Errno(ws->Allocate(f.ino, kAllocPunchHole, 0, 10)), EOPNOTSUPP);  // punching needs KEEP_SIZE
  EXPECT_EQ(Errno(ws->Allocate(f.ino, kAllocPunchHole | kAllocZeroRange | kAllocKeepSize, 0, 10)), EOPNOTSUPP);
  EXPECT_EQ(Errno(ws->Allocate(f.ino, 0x08 /* COLLAPSE_RANGE */, 0, 4096)), EOPNOTSUPP);
  EXPECT_EQ(Errno(ws->Allocate(f.ino, 0, uint64_t{INT64_MAX} - 10, 100)), EFBIG);
  EXPECT_EQ(Errno(ws->Allocate(f.ino, 0, UINT64_MAX - 10, 100)), EFBIG);
  EXPECT_EQ(Errno(ws->Allocate(kRootInode, 0, 0, 10)), EISDIR);
  auto fifo = ws->MakeNode(kRootInode, "fifo", S_IFIFO | 0644, 0, kWho);
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(Errno(ws->Allocate(fifo->ino, 0, 0, 10)), ENODEV);
  EXPECT_EQ(Errno(ws->Allocate(987654, 0, 0, 10)), ENOENT);
  EXPECT_EQ(ws->GetAttr(f.ino)->size, 8192u);
}

TEST_F(WorkspaceTest, PunchingABaseFileHidesItsBytesWithoutCopyingThem) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr big = L(*ws, L(*ws, kRootInode, "a").ino, "big");
  const std::string data_file = WsDir() + "/data/" + std::to_string(big.ino);
  std::string expect = big_;
  auto punch = [&](uint64_t off, uint64_t len) {
    Status s = ws->Allocate(big.ino, kAllocPunchHole | kAllocKeepSize, off, len);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (off >= expect.size()) return;
    const uint64_t n = std::min<uint64_t>(len, expect.size() - off);
    expect.replace(off, n, n, '\0');
  };
  // Across the boundary of the first two chunks (700 KiB each).
  const uint64_t a = 700 * 1024 - 100, b = 700 * 1024 + 40900;
  punch(a, b - a);
  EXPECT_EQ(ws->GetAttr(big.ino)->size, big_.size());
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  EXPECT_EQ(ReadAll(*ws, big.ino, 4096), expect);
  EXPECT_EQ(CheckSeek(*ws, big.ino, expect), (std::vector<std::pair<uint64_t, uint64_t>>{{Up(a), Down(b)}}));
  EXPECT_LT(AllocatedBytes(data_file), 64u * 1024) << "punching must not copy base bytes";

  // A write inside the hole is data again; the rest of the hole stays one.
  W(*ws, big.ino, a + 10000, "written");
  expect.replace(a + 10000, 7, "written");
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  EXPECT_EQ(CheckSeek(*ws, big.ino, expect).size(), 2u);

  // Punching written bytes over the base: zeros, not the base bytes below.
  W(*ws, big.ino, 2000000, std::string(10000, 'w'));
  expect.replace(2000000, 10000, std::string(10000, 'w'));
  punch(2000000 + 100, 5000);
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);

  // Up to and past the end: the base tail is dropped (and SEEK_DATA finds nothing there).
  const uint64_t tail = 611 * 4096;
  punch(tail, big_.size());
  EXPECT_EQ(ws->GetAttr(big.ino)->size, big_.size());
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  EXPECT_EQ(Errno(ws->SeekData(big.ino, tail, SEEK_DATA)), ENXIO);
  EXPECT_EQ(*ws->SeekData(big.ino, tail - 1, SEEK_HOLE), tail);
  // Wholly past the end: nothing happens.
  punch(big_.size() + 10, 100);
  EXPECT_EQ(ws->GetAttr(big.ino)->size, big_.size());
  CheckSeek(*ws, big.ino, expect);

  // All of it survives a reopen.
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  CheckSeek(*ws, big.ino, expect);
  EXPECT_EQ(ws->Info().changed_inodes, 1u);
}

TEST_F(WorkspaceTest, PunchingWrittenBytesFreesTheirSpace) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  const std::string data = testing::RandomBytes(1 << 20, 5);
  W(*ws, f.ino, 0, data);
  const std::string data_file = WsDir() + "/data/" + std::to_string(f.ino);
  ASSERT_TRUE(ws->Sync(f.ino).ok());
  EXPECT_GE(AllocatedBytes(data_file), uint64_t{1} << 20);
  ASSERT_TRUE(ws->Allocate(f.ino, kAllocPunchHole | kAllocKeepSize, 4096, (1 << 20) - 8192).ok());
  EXPECT_LT(AllocatedBytes(data_file), 64u * 1024);
  std::string expect = data;
  expect.replace(4096, (1 << 20) - 8192, (1 << 20) - 8192, '\0');
  EXPECT_EQ(ReadAll(*ws, f.ino), expect);
  EXPECT_EQ(CheckSeek(*ws, f.ino, expect),
            (std::vector<std::pair<uint64_t, uint64_t>>{{4096, (1 << 20) - 4096}}));
  // Unaligned edges: exact zeros, neighbours untouched.
  ASSERT_TRUE(ws->Allocate(f.ino, kAllocPunchHole | kAllocKeepSize, 10, 20).ok());
  expect.replace(10, 20, 20, '\0');
  EXPECT_EQ(ReadAll(*ws, f.ino), expect);
  CheckSeek(*ws, f.ino, expect);
}

TEST_F(WorkspaceTest, ZeroRangeReadsZerosAndMayGrowTheFile) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr big = L(*ws, L(*ws, kRootInode, "a").ino, "big");
  std::string expect = big_;
  ASSERT_TRUE(ws->Allocate(big.ino, kAllocZeroRange | kAllocKeepSize, 100, 1000).ok());
  expect.replace(100, 1000, 1000, '\0');
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  // Across the end without KEEP_SIZE: the file grows.
  ASSERT_TRUE(ws->Allocate(big.ino, kAllocZeroRange, big_.size() - 10, 5000).ok());
  expect.replace(big_.size() - 10, 10, 10, '\0');
  expect.resize(big_.size() + 4990, '\0');
  EXPECT_EQ(ws->GetAttr(big.ino)->size, expect.size());
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  EXPECT_EQ(CheckSeek(*ws, big.ino, expect),
            (std::vector<std::pair<uint64_t, uint64_t>>{{Up(big_.size() - 10), expect.size()}}))
      << "[100, 1100) covers no block whole: no hole";
  // With KEEP_SIZE past the end: the size stays.
  ASSERT_TRUE(ws->Allocate(big.ino, kAllocZeroRange | kAllocKeepSize, expect.size(), 5000).ok());
  EXPECT_EQ(ws->GetAttr(big.ino)->size, expect.size());
}

TEST_F(WorkspaceTest, SeekDataAndHole) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr big = L(*ws, a.ino, "big");
  // A base file is data throughout, a hole only at its end.
  EXPECT_EQ(*ws->SeekData(big.ino, 0, SEEK_DATA), 0u);
  EXPECT_EQ(*ws->SeekData(big.ino, 12345, SEEK_DATA), 12345u);
  EXPECT_EQ(*ws->SeekData(big.ino, 0, SEEK_HOLE), big_.size());
  EXPECT_EQ(Errno(ws->SeekData(big.ino, big_.size(), SEEK_DATA)), ENXIO);
  EXPECT_EQ(Errno(ws->SeekData(big.ino, big_.size(), SEEK_HOLE)), ENXIO);
  SetAttrRequest down, up;
  down.size = 1000;
  up.size = 100000;
  ASSERT_TRUE(ws->SetAttr(big.ino, down).ok());
  ASSERT_TRUE(ws->SetAttr(big.ino, up).ok());
  // Truncated and grown again: the regrown part is a hole, from the block after 1000.
  EXPECT_EQ(*ws->SeekData(big.ino, 0, SEEK_HOLE), 4096u);
  EXPECT_EQ(*ws->SeekData(big.ino, 1000, SEEK_DATA), 1000u) << "the block holding byte 999 is data to its end";
  EXPECT_EQ(Errno(ws->SeekData(big.ino, 4096, SEEK_DATA)), ENXIO);

  // A new sparse file: data only where written, also far beyond the first
  // window SeekData looks at.
  Attr f = Mk(*ws, kRootInode, "sparse");
  EXPECT_EQ(Errno(ws->SeekData(f.ino, 0, SEEK_DATA)), ENXIO);  // empty
  EXPECT_EQ(Errno(ws->SeekData(f.ino, 0, SEEK_HOLE)), ENXIO);
  W(*ws, f.ino, 1 << 20, std::string(4096, 'x'));
  const uint64_t far = (uint64_t{5} << 30) + 3;
  W(*ws, f.ino, far, "far");
  EXPECT_EQ(*ws->SeekData(f.ino, 0, SEEK_DATA), uint64_t{1} << 20);
  EXPECT_EQ(*ws->SeekData(f.ino, 0, SEEK_HOLE), 0u);
  EXPECT_EQ(*ws->SeekData(f.ino, 1 << 20, SEEK_HOLE), (1u << 20) + 4096);
  EXPECT_EQ(*ws->SeekData(f.ino, (1 << 20) + 4096, SEEK_DATA), far / 4096 * 4096) << "data by 4 KiB block";
  EXPECT_EQ(*ws->SeekData(f.ino, far, SEEK_HOLE), far + 3);
  EXPECT_EQ(Errno(ws->SeekData(f.ino, far + 3, SEEK_DATA)), ENXIO);

  EXPECT_EQ(Errno(ws->SeekData(f.ino, 0, SEEK_SET)), EINVAL);
  EXPECT_EQ(Errno(ws->SeekData(a.ino, 0, SEEK_DATA)), EISDIR);
  EXPECT_EQ(Errno(ws->SeekData(987654, 0, SEEK_DATA)), ENOENT);
}

TEST_F(WorkspaceTest, CopyRangeOfABaseFileSharesItsChunks) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr big = L(*ws, a.ino, "big");
  // cp: the whole file, from 0 to 0, into a new file (asking for more than there is).
  Attr copy = Mk(*ws, kRootInode, "copy");
  auto n = ws->CopyRange(big.ino, 0, copy.ino, 0, uint64_t{1} << 40);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, big_.size());
  EXPECT_EQ(ws->GetAttr(copy.ino)->size, big_.size());
  EXPECT_EQ(ReadAll(*ws, copy.ino), big_);
  EXPECT_NE(::access((WsDir() + "/data/" + std::to_string(copy.ino)).c_str(), F_OK), 0)
      << "the copy wrote bytes instead of sharing the base chunks";
  // The two files are independent afterwards.
  W(*ws, copy.ino, 10, "COPY");
  EXPECT_EQ(ReadAll(*ws, big.ino), big_);

  // A changed base file: shared chunks plus its changes (written bytes and a hole).
  std::string expect = big_;
  W(*ws, big.ino, 1000000, "patched");
  expect.replace(1000000, 7, "patched");
  ASSERT_TRUE(ws->Allocate(big.ino, kAllocPunchHole | kAllocKeepSize, 2000000, 100000).ok());
  expect.replace(2000000, 100000, 100000, '\0');
  Attr copy2 = Mk(*ws, kRootInode, "copy2");
  ASSERT_EQ(*ws->CopyRange(big.ino, 0, copy2.ino, 0, big_.size()), big_.size());
  EXPECT_EQ(ReadAll(*ws, copy2.ino), expect);
  EXPECT_LT(AllocatedBytes(WsDir() + "/data/" + std::to_string(copy2.ino)), 64u * 1024);
  EXPECT_EQ(CheckSeek(*ws, copy2.ino, expect),
            (std::vector<std::pair<uint64_t, uint64_t>>{{Up(2000000), Down(2100000)}}));

  // Part of it only: the copy ends where asked.
  Attr part = Mk(*ws, kRootInode, "part");
  ASSERT_EQ(*ws->CopyRange(big.ino, 0, part.ino, 0, 1500000), 1500000u);
  EXPECT_EQ(ReadAll(*ws, part.ino), expect.substr(0, 1500000));

  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ReadAll(*ws, copy2.ino), expect);
  EXPECT_EQ(ReadAll(*ws, part.ino), expect.substr(0, 1500000));
  EXPECT_EQ(ReadAll(*ws, copy.ino).substr(0, 20), big_.substr(0, 10) + "COPY" + big_.substr(14, 6));
}

TEST_F(WorkspaceTest, CopyRangeBetweenAndWithinFiles) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr big = L(*ws, a.ino, "big");
  Attr f = Mk(*ws, kRootInode, "f");
  std::string fdata = std::string(300000, 'x');
  W(*ws, f.ino, 0, fdata);
  // From the middle of a base file into the middle of another, growing it.
  ASSERT_EQ(*ws->CopyRange(big.ino, 1000, f.ino, 250000, 100000), 100000u);
  fdata.resize(350000);
  fdata.replace(250000, 100000, big_, 1000, 100000);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
  // A source with a hole overwrites the destination's bytes with a hole.
  Attr s = Mk(*ws, kRootInode, "s");
  W(*ws, s.ino, 0, std::string(4096, 'a'));
  W(*ws, s.ino, 3 * 4096, std::string(4096, 'b'));
  const std::string sdata = std::string(4096, 'a') + std::string(2 * 4096, '\0') + std::string(4096, 'b');
  ASSERT_EQ(*ws->CopyRange(s.ino, 0, f.ino, 8192, 1 << 20), sdata.size());
  fdata.replace(8192, sdata.size(), sdata);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
  EXPECT_EQ(CheckSeek(*ws, f.ino, fdata),
            (std::vector<std::pair<uint64_t, uint64_t>>{{8192 + 4096, 8192 + 3 * 4096}}));
  // Within one file, ranges apart.
  ASSERT_EQ(*ws->CopyRange(f.ino, 0, f.ino, 400000, 5000), 5000u);
  fdata.resize(405000);
  fdata.replace(400000, 5000, fdata, 0, 5000);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
  ASSERT_EQ(*ws->CopyRange(f.ino, 1000, f.ino, 0, 1000), 1000u);  // adjacent is not overlapping
  fdata.replace(0, 1000, fdata, 1000, 1000);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
  // Past the end of the source: nothing; across it: up to the end.
  EXPECT_EQ(*ws->CopyRange(s.ino, sdata.size(), f.ino, 0, 100), 0u);
  EXPECT_EQ(*ws->CopyRange(s.ino, sdata.size() + 5, f.ino, 0, 100), 0u);
  ASSERT_EQ(*ws->CopyRange(s.ino, sdata.size() - 10, f.ino, 0, 100), 10u);
  fdata.replace(0, 10, sdata, sdata.size() - 10, 10);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
  EXPECT_EQ(*ws->CopyRange(s.ino, 0, f.ino, 0, 0), 0u);

  // Errors, as copy_file_range(2).
  EXPECT_EQ(Errno(ws->CopyRange(f.ino, 0, f.ino, 100, 200)), EINVAL);  // overlapping
  EXPECT_EQ(Errno(ws->CopyRange(f.ino, 100, f.ino, 0, 200)), EINVAL);
  EXPECT_EQ(Errno(ws->CopyRange(a.ino, 0, f.ino, 0, 10)), EISDIR);
  EXPECT_EQ(Errno(ws->CopyRange(f.ino, 0, a.ino, 0, 10)), EISDIR);
  auto fifo = ws->MakeNode(kRootInode, "fifo", S_IFIFO | 0644, 0, kWho);
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(Errno(ws->CopyRange(fifo->ino, 0, f.ino, 0, 10)), EINVAL);
  EXPECT_EQ(Errno(ws->CopyRange(f.ino, 10, s.ino, 0, UINT64_MAX - 5)), EOVERFLOW);
  EXPECT_EQ(Errno(ws->CopyRange(f.ino, 0, s.ino, uint64_t{INT64_MAX}, 10)), EFBIG);
  EXPECT_EQ(Errno(ws->CopyRange(987654, 0, s.ino, 0, 10)), ENOENT);
  EXPECT_EQ(ReadAll(*ws, f.ino), fdata);
}

// Random writes, truncations, fallocate modes and copies on base and new
// files, against strings; after each step the content and what SeekData says
// about it are checked, and everything must survive reopening.
TEST_F(WorkspaceTest, RandomRangeOperationsMatchAModel) {
  const std::string base_data = testing::RandomBytes(1 << 20, 11);
  Hash base = PutCommit({File("f", base_data, 100000), File("g", base_data.substr(0, 300000), 64000)});
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  std::vector<InodeId> inos = {L(*ws, kRootInode, "f").ino, L(*ws, kRootInode, "g").ino,
                               Mk(*ws, kRootInode, "n").ino, Mk(*ws, kRootInode, "m").ino};
  std::vector<std::string> model = {base_data, base_data.substr(0, 300000), "", ""};
  std::mt19937_64 rng(2024);
  auto below = [&rng](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  int failures = 0;
  for (int step = 0; step < 400 && failures == 0; step++) {
    const size_t i = below(inos.size());
    std::string& m = model[i];
    const InodeId ino = inos[i];
    const uint64_t off = below(m.size() + 100000), len = 1 + below(rng() % 4 == 0 ? 300000 : 10000);
    std::string what;
    switch (rng() % 7) {
      case 0: {
        what = "write";
        std::string data = testing::RandomBytes(len, rng());
        W(*ws, ino, off, data);
        if (m.size() < off + len) m.resize(off + len, '\0');
        m.replace(off, len, data);
        break;
      }
      case 1: {
        what = "truncate";
        SetAttrRequest r;
        r.size = below(m.size() + 50000);
        ASSERT_TRUE(ws->SetAttr(ino, r).ok());
        m.resize(*r.size, '\0');
        break;
      }
      case 2:
      case 3: {
        const bool zero = rng() % 2, keep = zero ? rng() % 2 : true;
        what = zero ? "zero range" : "punch";
        const int mode = (zero ? kAllocZeroRange : kAllocPunchHole) | (keep ? kAllocKeepSize : 0);
        Status s = ws->Allocate(ino, mode, off, len);
        ASSERT_TRUE(s.ok()) << s.ToString();
        if (off < m.size()) {
          const uint64_t n = std::min<uint64_t>(len, m.size() - off);
          m.replace(off, n, n, '\0');
        }
        if (!keep && m.size() < off + len) m.resize(off + len, '\0');
        break;
      }
      case 4: {
        const bool keep = rng() % 2;
        what = "allocate";
        ASSERT_TRUE(ws->Allocate(ino, keep ? kAllocKeepSize : 0, off, len).ok());
        if (!keep && m.size() < off + len) m.resize(off + len, '\0');
        break;
      }
      case 5:
      case 6: {
        const size_t j = below(inos.size());
        const std::string src = model[j];
        uint64_t in_off = below(src.size() + 1000), out_off = off;
        uint64_t want = in_off >= src.size() ? 0 : std::min<uint64_t>(len, src.size() - in_off);
        if (rng() % 4 == 0 && i != j) {  // the cp case: an emptied file, from 0 to 0
          SetAttrRequest r;
          r.size = 0;
          ASSERT_TRUE(ws->SetAttr(ino, r).ok());
          m.clear();
          in_off = out_off = 0;
          want = src.size();
        }
        what = "copy " + std::to_string(j) + "@" + std::to_string(in_off) + " -> @" + std::to_string(out_off);
        auto n = ws->CopyRange(inos[j], in_off, ino, out_off, want == src.size() ? UINT64_MAX / 2 : len);
        if (i == j && want > 0 && out_off + want > in_off && out_off < in_off + want) {
          EXPECT_EQ(Errno(n), EINVAL) << what;
          break;
        }
        ASSERT_TRUE(n.ok()) << what << ": " << n.status().ToString();
        ASSERT_EQ(*n, want) << what;
        if (want > 0) {
          if (m.size() < out_off + want) m.resize(out_off + want, '\0');
          m.replace(out_off, want, src, in_off, want);
        }
        break;
      }
    }
    SCOPED_TRACE("step " + std::to_string(step) + ": " + what + " on file " + std::to_string(i) + " at " +
                 std::to_string(off) + " length " + std::to_string(len));
    std::string got = ReadAll(*ws, ino, 70000);
    if (got != m) {
      ADD_FAILURE() << "content differs (size " << got.size() << ", expected " << m.size() << ")";
      failures++;
    }
    CheckSeek(*ws, ino, m);
    if (HasFailure()) failures++;
    if (step % 100 == 99) {
      ws.reset();
      ws = std::move(Workspace::Open(*store_, "ws")).value();
      for (size_t k = 0; k < inos.size(); k++) EXPECT_TRUE(ReadAll(*ws, inos[k]) == model[k]) << "file " << k;
    }
  }
}

}  // namespace
}  // namespace strata
