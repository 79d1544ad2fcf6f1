#include "workspace/read_target.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace strata {
namespace {

std::shared_ptr<const Buffer> Chunk(const std::string& bytes) {
  auto b = std::make_shared<Buffer>(bytes.size());
  std::memcpy(b->data(), bytes.data(), bytes.size());
  return b;
}

std::string Gather(const ReadTarget& t) {
  std::string out;
  for (const iovec& v : t.pieces()) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

TEST(ReadTargetTest, FlatCopiesEverythingInOrder) {
  auto chunk = Chunk("0123456789");
  char out[16] = {};
  ReadTarget t(out);
  EXPECT_FALSE(t.gathered());
  std::memcpy(t.Space(3), "abc", 3);
  t.Share(chunk, chunk->view().substr(2, 5));
  std::memset(t.Space(2), 'z', 2);
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(std::string(out, 10), "abc23456zz");
}

TEST(ReadTargetTest, GatheredPointsIntoChunksInsteadOfCopying) {
  auto a = Chunk("AAAAAAAA"), b = Chunk("BBBBBBBB");
  ReadTarget t(64);
  EXPECT_TRUE(t.gathered());
  t.Share(a, a->view().substr(4));
  t.Share(b, b->view());
  ASSERT_EQ(t.pieces().size(), 2u);
  EXPECT_EQ(t.pieces()[0].iov_base, a->data() + 4);  // the chunk's own bytes, not a copy
  EXPECT_EQ(t.pieces()[1].iov_base, b->data());
  EXPECT_EQ(Gather(t), "AAAABBBBBBBB");
  EXPECT_EQ(t.size(), 12u);
}

TEST(ReadTargetTest, GatheredKeepsChunksAliveAfterTheCacheDropsThem) {
  auto chunk = Chunk(std::string(4096, 'k'));
  std::weak_ptr<const Buffer> watch = chunk;
  {
    ReadTarget t(8192);
    t.Share(chunk, chunk->view());
    chunk.reset();  // the cache evicts it while the reply is being sent
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(Gather(t), std::string(4096, 'k'));
  }
  EXPECT_TRUE(watch.expired());
}

TEST(ReadTargetTest, GatheredOwnBytesAndSharedBytesInterleave) {
  auto c = Chunk("chunk");
  ReadTarget t(32);
  std::memcpy(t.Space(2), "w1", 2);
  std::memcpy(t.Space(2), "w2", 2);  // continues the last piece: one piece, not two
  t.Share(c, c->view());
  std::memset(t.Space(3), '0', 3);
  ASSERT_EQ(t.pieces().size(), 3u);
  EXPECT_EQ(Gather(t), "w1w2chunk000");
}

TEST(ReadTargetTest, ManyPiecesFallBackToCopies) {
  auto c = Chunk("xy");
  ReadTarget t(2 * (ReadTarget::kMaxPieces + 100));
  for (size_t i = 0; i < ReadTarget::kMaxPieces + 100; i++) t.Share(c, c->view().substr(i % 2, 1));
  EXPECT_LE(t.pieces().size(), ReadTarget::kMaxPieces + 1);
  std::string expect;
  for (size_t i = 0; i < ReadTarget::kMaxPieces + 100; i++) expect += (i % 2 ? 'y' : 'x');
  EXPECT_EQ(Gather(t), expect);
}

TEST(ReadTargetTest, GatheredRefusesMoreThanItsCapacity) {
  ReadTarget t(4);
  t.Space(4);
  EXPECT_DEATH(t.Space(1), "");
}

}  // namespace
}  // namespace strata
