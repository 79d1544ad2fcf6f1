// Files written at scattered offsets are cut at fixed offsets, commit in
// proportion to what changed, and keep that layout; other files stay
// content-defined (chunk_layout.h).
#include "workspace/chunk_layout.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "testing/store_test_util.h"

namespace strata::workspace_internal {
namespace {

Hash IdOf(std::string_view data) { return Sha256::Of(data.data(), data.size()); }

// The file cut at fixed offsets from the start, as a commit of a fixed layout makes it.
std::vector<ChunkRef> FixedAll(const std::string& data) {
  std::vector<ChunkRef> out;
  for (size_t pos = 0; pos < data.size(); pos += kFixedChunkSize) {
    const std::string_view c = std::string_view(data).substr(pos, kFixedChunkSize);
    out.push_back(ChunkRef{IdOf(c), c.size()});
  }
  return out;
}

class ChunkLayoutTest : public ::testing::Test {
 protected:
  // Rechunks `now` over old chunks `old` (of `before`, all of it the base).
  std::vector<ChunkRef> Run(const std::vector<ChunkRef>& old, uint64_t base_len, const std::string& now,
                            std::vector<Extent> written) {
    RechunkInput in;
    in.old_chunks = old;
    in.base_len = base_len;
    in.size = now.size();
    in.written = std::move(written);
    read_ = hashed_ = 0;
    auto read = [&](uint64_t off, size_t n, char* out) {
      now.copy(out, n, off);
      read_ += n;
      return Status::Ok();
    };
    auto put = [](std::string_view data) -> Result<Hash> { return IdOf(data); };
    ZeroChunk zero(chunker_, IdOf);
    auto chunks = Rechunk(chunker_, zero, in, read, put, &hashed_);
    EXPECT_TRUE(chunks.ok()) << chunks.status().ToString();
    return chunks.ok() ? *chunks : std::vector<ChunkRef>();
  }

  // n writes of 4 KiB at random 4 KiB-aligned offsets of *data; returns the written ranges, sorted and merged.
  static std::vector<Extent> ScatterWrites(std::string* data, int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::set<uint64_t> at;
    for (int i = 0; i < n; i++) {
      const uint64_t off = (rng() % (data->size() / 4096)) * 4096;
      data->replace(off, 4096, testing::RandomBytes(4096, seed * 1000 + i));
      at.insert(off);
    }
    std::vector<Extent> out;
    for (uint64_t off : at) {
      if (!out.empty() && out.back().end == off) {
        out.back().end += 4096;
      } else {
        out.push_back(Extent{off, off + 4096});
      }
    }
    return out;
  }

  static uint64_t Total(const std::vector<Extent>& ranges) {
    uint64_t n = 0;
    for (const Extent& r : ranges) n += r.end - r.start;
    return n;
  }

  Chunker chunker_{ChunkerParams()};
  uint64_t read_ = 0, hashed_ = 0;
};

TEST_F(ChunkLayoutTest, TheShapeTellsAFixedLayoutApart) {
  const Hash h = IdOf("x");
  EXPECT_TRUE(HasFixedShape({{h, kFixedChunkSize}, {h, kFixedChunkSize}, {h, 1}}));
  EXPECT_TRUE(HasFixedShape({{h, kFixedChunkSize}, {h, kFixedChunkSize}}));
  EXPECT_FALSE(HasFixedShape({{h, kFixedChunkSize}})) << "one chunk is any small file";
  EXPECT_FALSE(HasFixedShape({{h, kFixedChunkSize}, {h, kFixedChunkSize + 1}}));
  EXPECT_FALSE(HasFixedShape({{h, kFixedChunkSize}, {h, 100}, {h, 100}}));
  EXPECT_TRUE(FixedLayoutPossible(ChunkerParams()));
  ChunkerParams tiny;
  tiny.min_size = kFixedChunkSize;
  EXPECT_FALSE(FixedLayoutPossible(tiny)) << "content-defined cuts could then make the same shape";
}

TEST_F(ChunkLayoutTest, ScatteredWritesIntoANewSparseFileHashAboutWhatWasWritten) {
  std::string now(64 << 20, '\0');
  const std::vector<Extent> written = ScatterWrites(&now, 256, 1);
  const std::vector<ChunkRef> chunks = Run({}, 0, now, written);
  EXPECT_EQ(chunks, FixedAll(now));
  EXPECT_LE(hashed_, 2 * Total(written) + kFixedChunkSize) << "the touched fixed chunks and one zero chunk";
  EXPECT_LE(read_, 2 * Total(written)) << "the zeros between the writes are not read";
}

TEST_F(ChunkLayoutTest, AFixedFileKeepsItsLayoutAndCommitsWhatChanged) {
  const std::string before = testing::RandomBytes(32 << 20, 2);
  std::string now = before;
  const std::vector<Extent> written = ScatterWrites(&now, 200, 3);
  const std::vector<ChunkRef> chunks = Run(FixedAll(before), before.size(), now, written);
  EXPECT_EQ(chunks, FixedAll(now));
  EXPECT_GE(hashed_, Total(written));
  EXPECT_LE(hashed_, 2 * Total(written));
  // One byte changed: one chunk; nothing changed: nothing. Also below kFixedMinFileSize.
  std::string small = before.substr(0, 1 << 20);
  const std::vector<ChunkRef> small_old = FixedAll(small);
  small[12345] ^= 1;
  EXPECT_EQ(Run(small_old, small.size(), small, {{12345, 12346}}), FixedAll(small));
  EXPECT_EQ(hashed_, kFixedChunkSize);
  EXPECT_EQ(Run(FixedAll(before), before.size(), before, {}), FixedAll(before));
  EXPECT_EQ(hashed_, 0u);
}

TEST_F(ChunkLayoutTest, AFixedFileGrownOrCutStaysFixed) {
  const std::string before = testing::RandomBytes((20 << 20) + 100, 4);
  const std::string grown = before + testing::RandomBytes(3 << 20, 5);
  EXPECT_EQ(Run(FixedAll(before), before.size(), grown, {{before.size(), grown.size()}}), FixedAll(grown));
  EXPECT_LE(hashed_, (3u << 20) + 2 * kFixedChunkSize) << "the old short tail and what was appended";
  const std::string cut = before.substr(0, (5 << 20) + 7);
  EXPECT_EQ(Run(FixedAll(before), cut.size(), cut, {}), FixedAll(cut));
  EXPECT_EQ(hashed_, 7u) << "only the new short tail";
}

TEST_F(ChunkLayoutTest, AFixedFileRewrittenWholeIsContentDefinedAgain) {
  const std::string before = testing::RandomBytes(24 << 20, 6);
  const std::string now = testing::RandomBytes(24 << 20, 7);
  const std::vector<ChunkRef> chunks = Run(FixedAll(before), before.size(), now, {{0, now.size()}});
  EXPECT_FALSE(HasFixedShape(chunks));
  EXPECT_EQ(hashed_, now.size());
}

TEST_F(ChunkLayoutTest, AContentDefinedFileTurnsFixedOnlyWhenScatteredWritesTouchMostOfIt) {
  const std::string before = testing::RandomBytes(32 << 20, 8);
  const std::vector<ChunkRef> cdc = Run({}, 0, before, {{0, before.size()}});
  ASSERT_FALSE(HasFixedShape(cdc)) << "written in one go: content-defined";
  // A few writes touch a few chunks: re-hashing those is cheaper than turning fixed.
  std::string few = before;
  const std::vector<Extent> few_written = ScatterWrites(&few, 4, 9);
  EXPECT_FALSE(HasFixedShape(Run(cdc, before.size(), few, few_written)));
  EXPECT_LE(hashed_, 4 * 3 * ChunkerParams().max_size);
  // Writes everywhere would re-hash nearly all of it each commit: it turns fixed once.
  std::string many = before;
  const std::vector<Extent> many_written = ScatterWrites(&many, 400, 10);
  EXPECT_EQ(Run(cdc, before.size(), many, many_written), FixedAll(many));
  EXPECT_EQ(hashed_, many.size());
}

}  // namespace
}  // namespace strata::workspace_internal
