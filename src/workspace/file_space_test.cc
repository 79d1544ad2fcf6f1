// Workspace unit tests of the space of a file: the largest file (EFBIG past
// it), the bytes a file holds (Attr::blocks), SEEK_DATA / SEEK_HOLE by block.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "testing/workspace_test_util.h"

namespace strata {
namespace {

using namespace workspace_testing;

constexpr uint64_t kLimit = (uint64_t{1} << 44) - 4096;  // 16 TiB - 4 KiB
constexpr uint64_t kMiB = 1 << 20;

TEST_F(WorkspaceTest, NoFileGrowsPastSixteenTiBLessABlock) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  Attr g = Mk(*ws, kRootInode, "g");
  W(*ws, g.ino, 0, "some bytes");
  for (uint64_t offset : {kLimit, kLimit + 1, uint64_t{1} << 44, uint64_t{INT64_MAX} - 1}) {
    EXPECT_EQ(Errno(ws->Write(f.ino, offset, "x")), EFBIG) << offset;
    EXPECT_EQ(Errno(ws->CopyRange(g.ino, 0, f.ino, offset, 10)), EFBIG) << offset;
  }
  // Reaching past the limit: cut short at it, as ext4 does.
  auto n = ws->Write(f.ino, kLimit - 1, "xy");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(ws->GetAttr(f.ino)->size, kLimit);
  char got = 0;
  ASSERT_TRUE(ws->Read(f.ino, kLimit - 1, 1, &got).ok());
  EXPECT_EQ(got, 'x');
  SetAttrRequest up, zero, to_limit;
  up.size = kLimit + 1;
  zero.size = 0;
  to_limit.size = kLimit;
  EXPECT_EQ(Errno(ws->SetAttr(f.ino, up)), EFBIG);
  ASSERT_TRUE(ws->SetAttr(f.ino, zero).ok());
  auto copied = ws->CopyRange(g.ino, 0, f.ino, kLimit - 4, 10);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(*copied, 4u);
  ASSERT_TRUE(ws->SetAttr(f.ino, zero).ok());
  EXPECT_EQ(Errno(ws->Allocate(f.ino, kAllocKeepSize, kLimit - 4096, 4097)), EFBIG);
  EXPECT_TRUE(ws->SetAttr(f.ino, to_limit).ok());
}

// What a file holds is kept between looks and brought up to date by each
// write (file_space.h, HeldBytes): at every point it must equal a count made
// anew, by a workspace opened afresh that has kept nothing.
TEST_F(WorkspaceTest, BlocksKeptBetweenLooksEqualACountMadeAnew) {
  // Zero chunks, a dense middle and zero chunks again.
  const std::string content = std::string(8 * kMiB, '\0') + testing::RandomBytes(3 * kMiB, 5) +
                              std::string(8 * kMiB, '\0') + "x";
  auto ws = CreateAndOpen(PutCommit({File("img", content, 2 * kMiB)}));
  ASSERT_TRUE(ws);
  const InodeId img = L(*ws, kRootInode, "img").ino;
  auto afresh = [&]() {
    ws.reset();
    ws = std::move(Workspace::Open(*store_, "ws")).value();
    return ws->GetAttr(img)->blocks;
  };
  uint64_t seed = 17;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 25; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      // Into zero chunks, the dense part and bytes written before; some unaligned.
      const uint64_t at = (seed >> 20) % (content.size() - 8192) / (i % 3 == 0 ? 1 : 4096) * (i % 3 == 0 ? 1 : 4096);
      W(*ws, img, at, std::string(i % 2 ? 4096 : 6000, 'w'));
      ASSERT_GT(ws->GetAttr(img)->blocks, 0u);  // looked at between writes, so the count is kept
    }
    if (round == 2) {  // a change other than a write: counted anew from then on
      ASSERT_TRUE(ws->Allocate(img, kAllocPunchHole | kAllocKeepSize, 9 * kMiB, 64 * 1024).ok());
      ASSERT_TRUE(ws->GetAttr(img).ok());
      W(*ws, img, 9 * kMiB + 4096, std::string(4096, 'p'));
    }
    // Synced first: the data file's own blocks (its extent tree) settle when written back.
    ASSERT_TRUE(ws->Sync(img).ok());
    const uint64_t kept = ws->GetAttr(img)->blocks;
    EXPECT_EQ(kept, afresh()) << "round " << round;
  }
}

TEST_F(WorkspaceTest, BlocksCountWrittenBytesAndBaseBytesButNoHoles) {
  // A base file of 8 MiB of zeros and one byte: four zero chunks and "x".
  const std::string sparse = std::string(8 * kMiB, '\0') + "x";
  const std::string dense = testing::RandomBytes(3 * kMiB, 9);
  auto ws = CreateAndOpen(PutCommit({File("sparse", sparse, 2 * kMiB), File("dense", dense, 2 * kMiB)}));
  ASSERT_TRUE(ws);
  Attr s = L(*ws, kRootInode, "sparse");
  EXPECT_LT(s.blocks * 512, 4096u) << "zero chunks hold nothing";
  EXPECT_GE(s.blocks * 512, 1u);
  Attr d = L(*ws, kRootInode, "dense");
  EXPECT_EQ(d.blocks, 3 * kMiB / 512);

  // Written bytes count what data/<ino> holds: a block, not the hole before it.
  W(*ws, s.ino, 3 * kMiB, std::string(4096, 'w'));
  EXPECT_GE(ws->GetAttr(s.ino)->blocks * 512, 4096u);
  EXPECT_LT(ws->GetAttr(s.ino)->blocks * 512, 64 * 1024u);
  // Bytes written over base bytes replace them: counted once.
  W(*ws, d.ino, kMiB, std::string(kMiB, 'o'));
  EXPECT_GE(ws->GetAttr(d.ino)->blocks * 512, 3 * kMiB);
  EXPECT_LT(ws->GetAttr(d.ino)->blocks * 512, 3 * kMiB + 64 * 1024);

  Attr f = Mk(*ws, kRootInode, "new");
  W(*ws, f.ino, 1600 * 1000, std::string(50 * 1024, 'n'));
  EXPECT_GE(ws->GetAttr(f.ino)->blocks * 512, 50 * 1024u);
  EXPECT_LT(ws->GetAttr(f.ino)->blocks * 512, 128 * 1024u) << "the hole before the bytes counts";
  SetAttrRequest grow;
  grow.size = 64 * kMiB;
  Attr g = Mk(*ws, kRootInode, "grown");
  ASSERT_TRUE(ws->SetAttr(g.ino, grow).ok());
  EXPECT_EQ(ws->GetAttr(g.ino)->blocks, 0u);
}

TEST_F(WorkspaceTest, SeekAnswersByFourKiBBlock) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr t = Mk(*ws, kRootInode, "tiny");
  W(*ws, t.ino, 2, "x");
  EXPECT_EQ(*ws->SeekData(t.ino, 0, SEEK_DATA), 0u) << "the block holding byte 2 is data from its start";
  EXPECT_EQ(*ws->SeekData(t.ino, 0, SEEK_HOLE), 3u);
  Attr f = Mk(*ws, kRootInode, "f");
  SetAttrRequest grow;
  grow.size = 64 * kMiB + 100;
  ASSERT_TRUE(ws->SetAttr(f.ino, grow).ok());
  W(*ws, f.ino, 5000, "y");              // block 1
  W(*ws, f.ino, 4 * 4096 - 1, "zz");     // blocks 3 and 4
  W(*ws, f.ino, 64 * kMiB + 7, "end");  // the last, partial block, past the first window
  EXPECT_EQ(*ws->SeekData(f.ino, 0, SEEK_DATA), 4096u);
  EXPECT_EQ(*ws->SeekData(f.ino, 4097, SEEK_DATA), 4097u);
  EXPECT_EQ(*ws->SeekData(f.ino, 4096, SEEK_HOLE), 2 * 4096u);
  EXPECT_EQ(*ws->SeekData(f.ino, 2 * 4096, SEEK_DATA), 3 * 4096u);
  EXPECT_EQ(*ws->SeekData(f.ino, 3 * 4096 + 5, SEEK_HOLE), 5 * 4096u);
  EXPECT_EQ(*ws->SeekData(f.ino, 100, SEEK_HOLE), 100u);
  EXPECT_EQ(*ws->SeekData(f.ino, 5 * 4096, SEEK_DATA), 64 * kMiB);
  EXPECT_EQ(*ws->SeekData(f.ino, 64 * kMiB, SEEK_HOLE), 64 * kMiB + 100);
  // A hole that ends at the end of the file counts its last partial block.
  Attr h = Mk(*ws, kRootInode, "h");
  W(*ws, h.ino, 0, "a");
  grow.size = 10000;
  ASSERT_TRUE(ws->SetAttr(h.ino, grow).ok());
  EXPECT_EQ(*ws->SeekData(h.ino, 0, SEEK_HOLE), 4096u);
  EXPECT_EQ(Errno(ws->SeekData(h.ino, 4096, SEEK_DATA)), ENXIO);
}

}  // namespace
}  // namespace strata
