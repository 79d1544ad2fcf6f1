#include "util/hash.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(HashTest, KnownSha256Vector) {
  // FIPS 180-2 test vector for "abc".
  EXPECT_EQ(Sha256::Of("abc", 3).ToHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, IncrementalEqualsOneShot) {
  Sha256 s;
  s.Update("ab");
  s.Update("c");
  EXPECT_EQ(s.Finish(), Sha256::Of("abc", 3));
}

TEST(HashTest, HexRoundTripAndRejects) {
  Hash h = Sha256::Of("x", 1);
  auto back = Hash::FromHex(h.ToHex());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, h);
  EXPECT_FALSE(Hash::FromHex("abc").has_value());
  EXPECT_FALSE(Hash::FromHex(std::string(64, 'g')).has_value());
  EXPECT_TRUE(Hash::FromHex(std::string(64, 'A')).has_value());
}

}  // namespace
}  // namespace strata
