// Read-ahead: what the detector calls sequential, and what FileData then
// prefetches through the chunk cache (and within which bounds).
#include "workspace/read_ahead.h"

#include <gtest/gtest.h>

#include <random>

#include "testing/store_test_util.h"
#include "workspace/file_data.h"

namespace strata::workspace_internal {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(SequentialDetectorTest, SequentialReadsGetAGrowingWindowAfterTheRead) {
  SequentialDetector d;  // trigger 3, window 2 MiB doubling to 16 MiB
  EXPECT_TRUE(d.OnRead(1, 0, kMiB).empty()) << "one read is no pattern";
  EXPECT_TRUE(d.OnRead(1, kMiB, kMiB).empty());
  EXPECT_TRUE(d.OnRead(1, 2 * kMiB, kMiB).empty());
  auto w = d.OnRead(1, 3 * kMiB, kMiB);
  EXPECT_EQ(w.start, 4 * kMiB);
  EXPECT_EQ(w.end, 6 * kMiB);
  w = d.OnRead(1, 4 * kMiB, kMiB);
  EXPECT_EQ(w.end - w.start, 4 * kMiB);
  for (uint64_t off = 4 * kMiB; off < 64 * kMiB; off += kMiB) w = d.OnRead(1, off, kMiB);
  EXPECT_EQ(w.start, 64 * kMiB);
  EXPECT_EQ(w.end - w.start, 16 * kMiB) << "capped at max_window";
}

TEST(SequentialDetectorTest, SmallSequentialRequestsCountToo) {
  SequentialDetector d;
  SequentialDetector::Range w;
  for (uint64_t off = 0; off < kMiB; off += 128 << 10) w = d.OnRead(1, off, 128 << 10);
  EXPECT_FALSE(w.empty());
  EXPECT_EQ(w.start, kMiB);
}

TEST(SequentialDetectorTest, ReorderedRequestsOfOneStreamStaySequential) {
  // Daemon threads serve the kernel's read-ahead requests out of order.
  SequentialDetector d;
  int windows = 0;
  for (uint64_t i : {0, 2, 1, 3, 5, 4, 6, 8, 7, 9}) windows += !d.OnRead(1, i * kMiB, kMiB).empty();
  EXPECT_GE(windows, 6);
}

TEST(SequentialDetectorTest, RandomReadsOfALargeFileGetNoWindow) {
  SequentialDetector d;
  std::mt19937_64 rng(42);
  int windows = 0;
  for (int i = 0; i < 100000; i++) {
    const uint64_t off = (rng() % (1ull << 30)) & ~uint64_t{4095};
    windows += !d.OnRead(1, off, 4096).empty();
  }
  EXPECT_EQ(windows, 0);
}

TEST(SequentialDetectorTest, InterleavedReadersAndFilesAreTrackedApart) {
  SequentialDetector d;
  int windows_a = 0, windows_b = 0, windows_c = 0;
  for (uint64_t i = 0; i < 8; i++) {
    windows_a += !d.OnRead(1, i * kMiB, kMiB).empty();                 // reader a: file 1 from 0
    windows_b += !d.OnRead(1, 512 * kMiB + i * kMiB, kMiB).empty();    // reader b: file 1 from 512 MiB
    windows_c += !d.OnRead(2, 100 * kMiB * (i % 2), kMiB).empty();     // file 2: the same two blocks again
  }
  EXPECT_EQ(windows_a, 5);
  EXPECT_EQ(windows_b, 5);
  EXPECT_EQ(windows_c, 0);
}

// FileData over a base file of kChunks chunks of kChunk bytes in a store.
class FileDataReadAheadTest : public ::testing::Test {
 protected:
  static constexpr size_t kChunk = 256 << 10;
  static constexpr size_t kChunks = 128;  // a 32 MiB file

  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
    plan_.ino = 7;
    for (size_t i = 0; i < kChunks; i++) {
      std::string bytes = testing::RandomBytes(kChunk, 1000 + i);
      auto put = store_->Put(ObjectType::kChunk, bytes);
      ASSERT_TRUE(put.ok());
      plan_.base_chunks.push_back(ChunkRef{put->id, kChunk});
      content_ += bytes;
    }
    ASSERT_TRUE(store_->Flush().ok());
    plan_.size = plan_.base_len = content_.size();
    std::filesystem::create_directory(dir_.path() + "/data");
  }

  // Reads [off, off + n) through files and checks the bytes.
  void ReadAndCheck(FileData& files, uint64_t off, size_t n) {
    std::string buf(n, '\0');
    ASSERT_TRUE(files.Read(plan_, off, n, buf.data()).ok());
    ASSERT_EQ(buf, content_.substr(off, n)) << "at " << off;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  ReadPlan plan_;
  std::string content_;
};

TEST_F(FileDataReadAheadTest, SequentialReadsPrefetchWithinTheBounds) {
  constexpr uint64_t kBound = 4 * kChunk;
  ChunkCache cache(64 << 20, ReadAheadLimits{kBound, 2});
  {
    FileData files(Env::Default(), dir_.path() + "/data", *store_, cache);
    for (uint64_t off = 0; off < content_.size(); off += 128 << 10) {
      ReadAndCheck(files, off, 128 << 10);
      EXPECT_LE(cache.counters().readahead_bytes, kBound);
    }
  }  // waits for the prefetches still running
  ChunkCache::Counters c = cache.counters();
  EXPECT_GT(c.readahead_issued, kChunks / 2);
  EXPECT_GT(c.readahead_used, kChunks / 2);
  // The first three reads come before the stream is seen: they decode only
  // their frames (chunk 0, and the first half of chunk 1); from the fourth
  // on, whole chunks are loaded, each once, by a read or by read-ahead.
  EXPECT_EQ(c.part_fetches, 3u);
  EXPECT_EQ(c.fetches, kChunks - 1);
  EXPECT_LE(c.fetches_in_flight_max, 3u) << "2 prefetches and the read's own fetch";
  EXPECT_EQ(store_->ReadCounters().bytes_verified, content_.size() + (128 << 10));
}

TEST_F(FileDataReadAheadTest, RandomReadsPrefetchNothing) {
  ChunkCache cache(64 << 20);
  FileData files(Env::Default(), dir_.path() + "/data", *store_, cache);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; i++) ReadAndCheck(files, (rng() % content_.size()) & ~uint64_t{4095}, 4096);
  EXPECT_EQ(cache.counters().readahead_issued, 0u);
}

TEST_F(FileDataReadAheadTest, InternalReadsPrefetchNothing) {
  ChunkCache cache(64 << 20);
  FileData files(Env::Default(), dir_.path() + "/data", *store_, cache);
  plan_.ino = 0;  // a commit's or a copy's read, not a program's
  for (uint64_t off = 0; off < 8 * kChunk; off += kChunk) ReadAndCheck(files, off, kChunk);
  EXPECT_EQ(cache.counters().readahead_issued, 0u);
}

}  // namespace
}  // namespace strata::workspace_internal
