#include "workspace/rechunk.h"

#include <gtest/gtest.h>

#include <map>

#include "store/test_util.h"

namespace strata::workspace_internal {
namespace {

Hash IdOf(std::string_view data) { return Sha256::Of(data.data(), data.size()); }

// Chunks of a whole buffer, cut by the chunker from the start: what an import makes.
std::vector<ChunkRef> ChunkAll(const Chunker& chunker, const std::string& data) {
  std::vector<ChunkRef> out;
  for (size_t pos = 0; pos < data.size();) {
    size_t n = std::min(chunker.params().max_size, data.size() - pos);
    size_t cut = chunker.NextCut(reinterpret_cast<const uint8_t*>(data.data() + pos), n);
    out.push_back(ChunkRef{IdOf(std::string_view(data).substr(pos, cut)), cut});
    pos += cut;
  }
  return out;
}

class RechunkTest : public ::testing::Test {
 protected:
  // Rechunks `now` (old content `before`, changed in `written`), checking it
  // equals chunking `now` whole; returns the bytes hashed.
  uint64_t Check(const std::string& before, const std::string& now, std::vector<Extent> written,
                 uint64_t base_len) {
    RechunkInput in;
    in.old_chunks = ChunkAll(chunker_, before);
    in.base_len = base_len;
    in.size = now.size();
    in.written = std::move(written);
    auto read = [&](uint64_t off, size_t n, char* out) {
      EXPECT_LE(off + n, now.size());
      now.copy(out, n, off);
      return Status::Ok();
    };
    std::map<Hash, std::string> stored;
    auto put = [&](std::string_view data) -> Result<Hash> {
      Hash id = IdOf(data);
      stored[id] = std::string(data);
      return id;
    };
    uint64_t hashed = 0;
    auto chunks = Rechunk(chunker_, in, read, put, &hashed);
    EXPECT_TRUE(chunks.ok()) << chunks.status().ToString();
    if (!chunks.ok()) return hashed;
    EXPECT_EQ(*chunks, ChunkAll(chunker_, now)) << "must equal chunking the whole new content";
    uint64_t total = 0;
    for (const ChunkRef& c : *chunks) total += c.length;
    EXPECT_EQ(total, now.size());
    return hashed;
  }

  Chunker chunker_{ChunkerParams()};
};

TEST_F(RechunkTest, ASmallChangeInALargeFileHashesOnlyTheChunksAroundIt) {
  const std::string before = testing::RandomBytes(16 << 20, 1);
  std::string now = before;
  now.replace(8 << 20, 10, "0123456789");
  uint64_t hashed = Check(before, now, {{8 << 20, (8 << 20) + 10}}, before.size());
  EXPECT_GT(hashed, 0u);
  EXPECT_LE(hashed, 3u * ChunkerParams().max_size) << "re-synchronised with the old cuts";
}

TEST_F(RechunkTest, UnchangedContentHashesNothing) {
  const std::string before = testing::RandomBytes(5 << 20, 2);
  EXPECT_EQ(Check(before, before, {}, before.size()), 0u);
}

TEST_F(RechunkTest, AppendingRechunksOnlyTheOldTail) {
  const std::string before = testing::RandomBytes(6 << 20, 3);
  const std::string now = before + testing::RandomBytes(1 << 20, 4);
  uint64_t hashed = Check(before, now, {{before.size(), now.size()}}, before.size());
  EXPECT_LE(hashed, (1u << 20) + 2 * ChunkerParams().max_size);
}

TEST_F(RechunkTest, TruncatedAndRegrownFiles) {
  const std::string before = testing::RandomBytes(6 << 20, 5);
  // Cut to 3 MiB: the chunk holding the new end is no longer whole.
  const std::string cut = before.substr(0, 3 << 20);
  EXPECT_LE(Check(before, cut, {}, cut.size()), 2u * ChunkerParams().max_size);
  // Cut to 1 MiB and grown again to 4 MiB: zeros after 1 MiB.
  std::string regrown = before.substr(0, 1 << 20) + std::string(3 << 20, '\0');
  Check(before, regrown, {}, 1 << 20);
}

TEST_F(RechunkTest, NewAndEmptyFiles) {
  const std::string data = testing::RandomBytes(3 << 20, 6);
  EXPECT_EQ(Check("", data, {{0, data.size()}}, 0), data.size());
  EXPECT_EQ(Check(data, "", {}, 0), 0u);
  // Several changed ranges, one in the first chunk, one near the end.
  std::string now = data;
  now[10] ^= 1;
  now[data.size() - 5] ^= 1;
  Check(data, now, {{10, 11}, {data.size() - 5, data.size() - 4}}, data.size());
}

}  // namespace
}  // namespace strata::workspace_internal
