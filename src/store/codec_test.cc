#include "store/codec.h"

#include <gtest/gtest.h>

#include "store/test_util.h"

namespace strata {
namespace {

TEST(CodecTest, CompressibleDataUsesZstdAndRoundTrips) {
  std::string text(100000, 'a');
  std::string stored, back;
  ASSERT_EQ(Compress(text, 3, &stored), Codec::kZstd);
  EXPECT_LT(stored.size(), text.size() / 10);
  ASSERT_TRUE(Decompress(Codec::kZstd, stored, text.size(), &back).ok());
  EXPECT_EQ(back, text);
}

TEST(CodecTest, IncompressibleDataIsStoredRaw) {
  std::string random = testing::RandomBytes(100000, 7);
  std::string stored, back;
  ASSERT_EQ(Compress(random, 3, &stored), Codec::kRaw);
  EXPECT_EQ(stored, random);
  ASSERT_TRUE(Decompress(Codec::kRaw, stored, random.size(), &back).ok());
  EXPECT_EQ(back, random);
}

TEST(CodecTest, WrongLengthOrGarbageIsCorruption) {
  std::string text(5000, 'b');
  std::string stored, back;
  ASSERT_EQ(Compress(text, 3, &stored), Codec::kZstd);
  EXPECT_TRUE(Decompress(Codec::kZstd, stored, text.size() + 1, &back).IsCorruption());
  std::string garbage = stored;
  garbage[garbage.size() / 2] ^= 0x55;
  garbage[garbage.size() - 1] ^= 0x55;
  Status s = Decompress(Codec::kZstd, garbage, text.size(), &back);
  // zstd either rejects the frame or yields other bytes; the id check catches the latter.
  EXPECT_TRUE(!s.ok() || back != text);
  EXPECT_TRUE(Decompress(Codec::kRaw, "abc", 4, &back).IsCorruption());
  EXPECT_TRUE(Decompress(Codec::kZstd, "abc", 3, &back).IsCorruption());
}

}  // namespace
}  // namespace strata
