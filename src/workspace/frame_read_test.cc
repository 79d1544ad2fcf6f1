// Reads out of sequence decode only the frames of a chunk that hold their
// bytes (ChunkCache::GetPart, Store::GetRange): every offset class returns
// the right bytes, and a small read decodes one frame, not the chunk.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "testing/store_test_util.h"
#include "workspace/chunk_cache.h"
#include "workspace/file_data.h"

namespace strata::workspace_internal {
namespace {

constexpr uint64_t kFrame = uint64_t{1} << kDefaultFrameShift;

// Text that zstd shrinks, then random bytes that it does not: both frame codecs.
std::string Content(size_t n, uint64_t seed) {
  std::string text;
  while (text.size() < n / 2) text += "frame " + std::to_string(seed) + " line " + std::to_string(text.size()) + "\n";
  text.resize(n / 2);
  return text + testing::RandomBytes(n - n / 2, seed);
}

class FrameReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
    plan_.ino = 7;
    // Chunks of lengths on and off frame edges, and one of a single byte.
    for (size_t len : {size_t{600 << 10} + 1, size_t{kFrame}, size_t{1}, size_t{200 << 10} - 3, size_t{2 << 20}}) {
      std::string bytes = Content(len, len);
      auto put = store_->Put(ObjectType::kChunk, bytes);
      ASSERT_TRUE(put.ok());
      plan_.base_chunks.push_back(ChunkRef{put->id, len});
      chunk_starts_.push_back(content_.size());
      content_ += bytes;
    }
    chunk_starts_.push_back(content_.size());
    ASSERT_TRUE(store_->Flush().ok());
    plan_.base_len = content_.size();
    // The file was extended past its base by a truncate: a hole of zeros follows.
    plan_.size = content_.size() + 300000;
    content_.append(300000, '\0');
    std::filesystem::create_directory(dir_.path() + "/data");
  }

  // A fresh FileData: no stream is seen, so each read is out of sequence.
  void ReadAndCheck(ChunkCache& cache, uint64_t off, size_t n) {
    FileData files(Env::Default(), dir_.path() + "/data", *store_, cache);
    n = std::min<uint64_t>(n, plan_.size - off);
    std::string buf(n, 'X');
    ASSERT_TRUE(files.Read(plan_, off, n, buf.data()).ok()) << off << "+" << n;
    ASSERT_EQ(buf, content_.substr(off, n)) << "at " << off << "+" << n;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  ReadPlan plan_;
  std::string content_;
  std::vector<uint64_t> chunk_starts_;
};

TEST_F(FrameReadTest, ReadsAtEveryOffsetClassReturnTheRightBytes) {
  std::vector<uint64_t> offsets;
  for (size_t c = 0; c + 1 < chunk_starts_.size(); c++) {
    const uint64_t start = chunk_starts_[c], end = chunk_starts_[c + 1];
    for (uint64_t edge = start; edge < end; edge += kFrame)  // frame edges inside the chunk
      for (int64_t d : {-1, 0, 1}) offsets.push_back(edge + d);
    offsets.push_back(end - 1);  // the chunk's last byte
  }
  offsets.push_back(plan_.base_len - 1);  // the base's last byte, then the hole
  offsets.push_back(plan_.base_len);
  offsets.push_back(plan_.base_len + 12345);
  std::erase_if(offsets, [&](uint64_t off) { return off >= plan_.size; });  // before the first chunk: -1
  for (uint64_t off : offsets) {
    for (size_t n : {size_t{1}, size_t{4096}, size_t{kFrame}, size_t{kFrame} + 2, size_t{700 << 10}}) {
      ChunkCache cold(64 << 20);  // each read from the store, none from cached frames
      ReadAndCheck(cold, off, n);
    }
  }
  // The same reads against one cache: parts found again must be the right ones.
  ChunkCache shared(64 << 20);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; i++) ReadAndCheck(shared, offsets[rng() % offsets.size()], 1 + rng() % (200 << 10));
  EXPECT_GT(shared.counters().part_hits, 0u);
  // And the whole file at once.
  ChunkCache whole(64 << 20);
  ReadAndCheck(whole, 0, plan_.size);
}

TEST_F(FrameReadTest, ASmallReadDecodesOneFrameNotTheChunk) {
  ChunkCache cache(64 << 20);
  const StoreReadCounters before = store_->ReadCounters();
  ReadAndCheck(cache, 5 * kFrame + 100, 4096);  // inside the 600 KiB chunk
  const StoreReadCounters after = store_->ReadCounters();
  EXPECT_EQ(after.frames_decoded - before.frames_decoded, 1u);
  EXPECT_EQ(after.bytes_verified - before.bytes_verified, kFrame);
  EXPECT_EQ(after.range_reads - before.range_reads, 1u);
  EXPECT_EQ(after.sha256_checked_bytes, 0u);
  EXPECT_LT(after.bytes_stored - before.bytes_stored, 80u << 10) << "one frame and the table read";
  // A read across a frame edge decodes the two frames around it.
  ReadAndCheck(cache, 3 * kFrame - 10, 20);
  EXPECT_EQ(store_->ReadCounters().frames_decoded - after.frames_decoded, 2u);
  // Again: from the cached frames, nothing decoded.
  const uint64_t frames = store_->ReadCounters().frames_decoded;
  ReadAndCheck(cache, 3 * kFrame - 5, 10);
  EXPECT_EQ(store_->ReadCounters().frames_decoded, frames);
  EXPECT_EQ(cache.counters().part_hits, 1u);
}

TEST_F(FrameReadTest, FullChecksReadWholeChunksHashedWithSha256) {
  store_->SetReadCheck(ReadCheck::kFull);
  ChunkCache cache(64 << 20);
  ReadAndCheck(cache, 5 * kFrame + 100, 4096);
  const StoreReadCounters c = store_->ReadCounters();
  EXPECT_EQ(c.range_reads, 0u);
  EXPECT_EQ(c.sha256_checked_bytes, (600u << 10) + 1) << "the whole chunk, against its id";
}

TEST_F(FrameReadTest, DamagedFrameIsAnErrorNotWrongBytes) {
  // Flip a byte inside the 600 KiB chunk's frames (its last bytes are random, stored raw).
  auto files = Env::Default()->ListDir(dir_.path() + "/s/packs");
  ASSERT_EQ(files->size(), 1u);
  const std::string pack = dir_.path() + "/s/packs/" + (*files)[0];
  std::string data = *Env::Default()->ReadFile(pack);
  const std::string tail = content_.substr(chunk_starts_[1] - 1000, 1000);
  const size_t at = data.find(tail);
  ASSERT_NE(at, std::string::npos);
  data[at + 500] ^= 1;
  ASSERT_TRUE(Env::Default()->RemoveFile(pack).ok());
  auto w = Env::Default()->NewWritableFile(pack);
  ASSERT_TRUE((*w)->Append(data).ok() && (*w)->Close().ok());

  ChunkCache cache(64 << 20);
  FileData reader(Env::Default(), dir_.path() + "/data", *store_, cache);
  std::string buf(4096, '\0');
  Status s = reader.Read(plan_, chunk_starts_[1] - 600, 100, buf.data());
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(plan_.base_chunks[0].id.ToHex()), std::string::npos);
  EXPECT_NE(s.message().find("XXH3"), std::string::npos) << s.ToString();
  // A frame elsewhere in the chunk is intact and reads.
  ReadAndCheck(cache, 0, 4096);
}

}  // namespace
}  // namespace strata::workspace_internal
