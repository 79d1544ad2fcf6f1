// Key derivation: the RFC 5869 HKDF and RFC 7914 scrypt vectors, subkeys per
// purpose, and the keyed gear table.
#include <gtest/gtest.h>

#include <set>

#include "crypto/gear_table.h"
#include "crypto/passphrase_kdf.h"
#include "crypto/subkeys.h"
#include "util/hex.h"

namespace strata::crypto {
namespace {

std::string Unhex(std::string_view hex) { return HexDecode(hex).value(); }

// RFC 5869, test case 1.
TEST(HkdfTest, Rfc5869TestCase1) {
  auto okm = Hkdf(std::string(22, '\x0b'), Unhex("000102030405060708090a0b0c"), Unhex("f0f1f2f3f4f5f6f7f8f9"), 42);
  ASSERT_TRUE(okm.ok()) << okm.status().ToString();
  EXPECT_EQ(HexEncode(*okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

TEST(HkdfTest, RefusesImpossibleLengths) {
  EXPECT_FALSE(Hkdf("k", "", "", 0).ok());
  EXPECT_FALSE(Hkdf("k", "", "", 255 * 32 + 1).ok());
}

TEST(SubkeyTest, OnePerPurposeAndStable) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  std::set<std::string> seen;
  for (auto purpose : {kSubkeyObjectId, kSubkeyObjectSeal, kSubkeyChunkerGear, kSubkeyRefs}) {
    auto a = DeriveSubkey(*master, purpose);
    auto b = DeriveSubkey(*master, purpose);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
    EXPECT_NE(*a, *master);
    seen.insert(std::string(a->view()));
  }
  EXPECT_EQ(seen.size(), 4u);
  auto other = RandomKey();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*DeriveSubkey(*other, kSubkeyObjectId), *DeriveSubkey(*master, kSubkeyObjectId));
  EXPECT_FALSE(DeriveSubkey(*master, "").ok());
}

// RFC 7914 section 12, the first two vectors (the others need a GiB or take long).
TEST(ScryptTest, Rfc7914Vectors) {
  auto empty = Scrypt("", "", ScryptParams{4, 1, 1}, 64);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(HexEncode(*empty),
            "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
            "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906");
  auto nacl = Scrypt("password", "NaCl", ScryptParams{10, 8, 16}, 64);
  ASSERT_TRUE(nacl.ok()) << nacl.status().ToString();
  EXPECT_EQ(HexEncode(*nacl),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640");
}

TEST(ScryptTest, DefaultsAreInRangeAndForgedOnesAreNot) {
  ScryptParams defaults;
  EXPECT_TRUE(defaults.Check().ok());
  EXPECT_EQ(defaults.MemoryBytes(), 128u * 8 * ((1u << 17) + 1));
  EXPECT_FALSE((ScryptParams{9, 8, 1}).Check().ok());    // too weak
  EXPECT_FALSE((ScryptParams{25, 8, 1}).Check().ok());   // too slow
  EXPECT_FALSE((ScryptParams{22, 32, 1}).Check().ok());  // 16 GiB
  EXPECT_FALSE((ScryptParams{14, 0, 1}).Check().ok());
  EXPECT_FALSE((ScryptParams{14, 8, 0}).Check().ok());
  EXPECT_FALSE((ScryptParams{255, 8, 1}).Check().ok());
  EXPECT_FALSE(DeriveWrappingKey("pw", "salt", ScryptParams{9, 8, 1}).ok());
}

TEST(GearTableTest, KeyedStableAndUnlikeAnotherKey) {
  auto master = RandomKey();
  auto other = RandomKey();
  ASSERT_TRUE(master.ok() && other.ok());
  auto a = DeriveGearTable(*master);
  auto b = DeriveGearTable(*master);
  auto c = DeriveGearTable(*other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  std::set<uint64_t> distinct(a->begin(), a->end());
  EXPECT_EQ(distinct.size(), 256u);  // 256 random 64-bit values never collide in practice
}

}  // namespace
}  // namespace strata::crypto
