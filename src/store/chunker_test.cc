#include "store/chunker.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "testing/store_test_util.h"
#include "util/hash.h"

namespace strata {
namespace {

std::vector<std::string> Split(const Chunker& c, const std::string& data) {
  std::vector<std::string> chunks;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t cut = c.NextCut(reinterpret_cast<const uint8_t*>(data.data()) + pos, data.size() - pos);
    chunks.push_back(data.substr(pos, cut));
    pos += cut;
  }
  return chunks;
}

std::set<Hash> Ids(const std::vector<std::string>& chunks) {
  std::set<Hash> ids;
  for (const auto& c : chunks) ids.insert(Sha256::Of(c.data(), c.size()));
  return ids;
}

TEST(ChunkerTest, SizesStayWithinBoundsAndAverageIsNearTarget) {
  Chunker chunker{ChunkerParams{}};
  std::string data = testing::RandomBytes(64 << 20, 1);
  auto chunks = Split(chunker, data);
  for (size_t i = 0; i + 1 < chunks.size(); i++) {
    EXPECT_GE(chunks[i].size(), chunker.params().min_size);
    EXPECT_LE(chunks[i].size(), chunker.params().max_size);
  }
  double avg = static_cast<double>(data.size()) / chunks.size();
  // Normalized chunking keeps the mean close to avg_size (here 512 KiB + min).
  EXPECT_GT(avg, 0.6 * chunker.params().avg_size);
  EXPECT_LT(avg, 2.0 * chunker.params().avg_size);
}

TEST(ChunkerTest, SmallInputIsOneChunk) {
  Chunker chunker{ChunkerParams{}};
  std::string data = testing::RandomBytes(100000, 2);
  EXPECT_EQ(Split(chunker, data).size(), 1u);
  EXPECT_EQ(chunker.NextCut(nullptr, 0), 0u);
}

TEST(ChunkerTest, InsertionNearStartChangesOnlyNearbyChunks) {
  Chunker chunker{ChunkerParams{}};
  std::string original = testing::RandomBytes(32 << 20, 3);
  std::string edited = original;
  edited.insert(5000, "a few inserted bytes that shift everything after them");
  auto before = Ids(Split(chunker, original));
  auto after = Split(chunker, edited);
  size_t changed = 0;
  for (const Hash& id : Ids(after)) changed += before.count(id) == 0;
  // The chunk holding the edit changes; content-defined cuts re-synchronise
  // right after it, so everything else is shared.
  EXPECT_GE(after.size(), 40u);
  EXPECT_LE(changed, 2u) << "of " << after.size() << " chunks";
}

TEST(ChunkerTest, DeletionInTheMiddleChangesOnlyNearbyChunks) {
  Chunker chunker{ChunkerParams{}};
  std::string original = testing::RandomBytes(32 << 20, 4);
  std::string edited = original;
  edited.erase(16 << 20, 4096);
  auto before = Ids(Split(chunker, original));
  size_t changed = 0;
  for (const Hash& id : Ids(Split(chunker, edited))) changed += before.count(id) == 0;
  EXPECT_LE(changed, 2u);
}

TEST(ChunkerTest, CutPointsAreStableAcrossBuilds) {
  // The gear table and masks are part of the store format: if this golden
  // value changes, chunk ids change and new data stops deduplicating against
  // old stores. Change it only together with the format version.
  Chunker chunker{ChunkerParams{}};
  std::string data = testing::RandomBytes(8 << 20, 42);
  auto chunks = Split(chunker, data);
  std::string lengths;
  for (const auto& c : chunks) lengths += std::to_string(c.size()) + ",";
  EXPECT_EQ(Sha256::Of(lengths.data(), lengths.size()).ToHex().substr(0, 16), "d78f94ab587e821b") << lengths;
}

// A table passed in explicitly: the default one cuts byte for byte as the
// one-argument constructor (the golden value above), another one elsewhere
// while keeping the size bounds.
TEST(ChunkerTest, GearTableOption) {
  std::string data = testing::RandomBytes(8 << 20, 42);
  auto by_default = Split(Chunker{ChunkerParams{}}, data);
  auto explicit_default = Split(Chunker{ChunkerParams{}, Chunker::DefaultGearTable()}, data);
  EXPECT_EQ(by_default, explicit_default);
  GearTable keyed{};
  std::string bytes = testing::RandomBytes(sizeof(keyed), 7);
  std::memcpy(keyed.data(), bytes.data(), sizeof(keyed));
  Chunker keyed_chunker{ChunkerParams{}, keyed};
  auto chunks = Split(keyed_chunker, data);
  EXPECT_NE(chunks, by_default);
  std::string joined;
  for (size_t i = 0; i < chunks.size(); i++) {
    if (i + 1 < chunks.size()) {
      EXPECT_GE(chunks[i].size(), keyed_chunker.params().min_size);
      EXPECT_LE(chunks[i].size(), keyed_chunker.params().max_size);
    }
    joined += chunks[i];
  }
  EXPECT_EQ(joined, data);
  size_t shared = 0;
  auto default_ids = Ids(by_default);
  for (const Hash& id : Ids(chunks)) shared += default_ids.count(id);
  EXPECT_EQ(shared, 0u);  // no cut falls where the public table puts it, so no chunk matches
}

TEST(ChunkerTest, ParamsValidation) {
  EXPECT_TRUE(ChunkerParams{}.Valid());
  EXPECT_FALSE((ChunkerParams{1024, 3000, 8192}.Valid()));  // avg not a power of two
  EXPECT_FALSE((ChunkerParams{8192, 4096, 16384}.Valid()));  // min above avg
}

}  // namespace
}  // namespace strata
