#include "workspace/rechunk.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/store_test_util.h"

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
  // `holes` are parts of `written` that read as zeros; bytes_read_ gets the
  // bytes the rechunk read.
  uint64_t Check(const std::string& before, const std::string& now, std::vector<Extent> written,
                 uint64_t base_len, std::vector<Extent> holes = {}) {
    RechunkInput in;
    in.old_chunks = ChunkAll(chunker_, before);
    in.base_len = base_len;
    in.size = now.size();
    in.written = std::move(written);
    in.holes = std::move(holes);
    bytes_read_ = 0;
    auto read = [&](uint64_t off, size_t n, char* out) {
      EXPECT_LE(off + n, now.size());
      now.copy(out, n, off);
      bytes_read_ += n;
      return Status::Ok();
    };
    std::map<Hash, std::string> stored;
    auto put = [&](std::string_view data) -> Result<Hash> {
      Hash id = IdOf(data);
      stored[id] = std::string(data);
      return id;
    };
    uint64_t hashed = 0;
    ZeroChunk zero(chunker_, IdOf);
    auto chunks = Rechunk(chunker_, zero, in, read, put, &hashed);
    EXPECT_TRUE(chunks.ok()) << chunks.status().ToString();
    if (!chunks.ok()) return hashed;
    EXPECT_EQ(*chunks, ChunkAll(chunker_, now)) << "must equal chunking the whole new content";
    uint64_t total = 0;
    for (const ChunkRef& c : *chunks) total += c.length;
    EXPECT_EQ(total, now.size());
    return hashed;
  }

  Chunker chunker_{ChunkerParams()};
  uint64_t bytes_read_ = 0;
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
  EXPECT_EQ(bytes_read_, hashed) << "each byte chunked is read once";
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

// Zeros hold no cut, so after a change inside a long run of them the new cuts
// never meet the old ones again; the run is chunked by arithmetic instead.
TEST_F(RechunkTest, AChangeInsideALongRunOfZerosHashesOnlyAroundIt) {
  const uint64_t size = 48 << 20;
  std::string before(size, '\0');
  before.replace(0, 4, "head");
  std::string now = before;
  const std::string mib = testing::RandomBytes(1 << 20, 7);
  const uint64_t at = (size / 2) + 4321;
  now.replace(at, mib.size(), mib);
  uint64_t hashed = Check(before, now, {{at, at + mib.size()}}, size);
  EXPECT_LE(hashed, mib.size() + 4 * ChunkerParams().max_size);
  EXPECT_LE(bytes_read_, mib.size() + 3 * ChunkerParams().max_size) << "the zeros around it are not read";
}

// A file grown by truncate and written at both ends; one punched in the middle.
TEST_F(RechunkTest, HolesAndGrownTailsAreNotRead) {
  const uint64_t size = 40 << 20;
  std::string grown = testing::RandomBytes(1 << 20, 8) + std::string(size - (2 << 20), '\0');
  grown += testing::RandomBytes(1 << 20, 9);
  // Written at the end only; the bytes between the base and it were never written.
  uint64_t hashed = Check(grown.substr(0, 1 << 20), grown, {{size - (1 << 20), size}}, 1 << 20);
  EXPECT_LE(hashed, (2u << 20) + 4 * ChunkerParams().max_size);
  EXPECT_LE(bytes_read_, (2u << 20) + 2 * ChunkerParams().max_size);

  // A new file written whole, then a hole punched in its middle.
  std::string punched = testing::RandomBytes(size, 10);
  std::fill(punched.begin() + (4 << 20), punched.begin() + (36 << 20), '\0');
  hashed = Check("", punched, {{0, size}}, 0, {{4 << 20, 36 << 20}});
  EXPECT_LE(hashed, (8u << 20) + 4 * ChunkerParams().max_size);
  EXPECT_LE(bytes_read_, (8u << 20) + 2 * ChunkerParams().max_size);

  // Ending inside zeros: the tail shorter than max_size is cut as zeros.
  std::string ends_zero = testing::RandomBytes(1 << 20, 11) + std::string((9 << 20) + 12345, '\0');
  Check("", ends_zero, {{0, 1 << 20}}, 0);
}

TEST(UncoveredTest, ThePartsOfRangesNoCoverReaches) {
  using V = std::vector<Extent>;
  auto eq = [](const V& a, const V& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
      if (a[i].start != b[i].start || a[i].end != b[i].end) return false;
    return true;
  };
  EXPECT_TRUE(eq(Uncovered({{0, 100}}, {}), V{{0, 100}}));
  EXPECT_TRUE(eq(Uncovered({{0, 100}}, {{0, 100}}), V{}));
  EXPECT_TRUE(eq(Uncovered({{0, 100}}, {{10, 20}, {50, 60}}), V{{0, 10}, {20, 50}, {60, 100}}));
  EXPECT_TRUE(eq(Uncovered({{0, 10}, {20, 30}, {40, 50}}, {{5, 25}, {45, 60}}), V{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_TRUE(eq(Uncovered({{10, 20}}, {{0, 5}, {30, 40}}), V{{10, 20}}));
}

}  // namespace
}  // namespace strata::workspace_internal
