// Sealing and keyed ids: published vectors (McGrew-Viega GCM, RFC 4231 HMAC)
// and the properties the store will rely on: every change to a sealed value,
// its associated data or its key is refused.
#include "crypto/aead.h"

#include <gtest/gtest.h>

#include "crypto/keyed_id.h"
#include "util/hex.h"

namespace strata::crypto {
namespace {

std::string Unhex(std::string_view hex) { return HexDecode(hex).value(); }

Key256 KeyFromHex(std::string_view hex) {
  std::string bytes = Unhex(hex);
  Key256 key;
  std::copy(bytes.begin(), bytes.end(), key.bytes.begin());
  return key;
}

// "The Galois/Counter Mode of Operation", McGrew and Viega, test case 16
// (AES-256, 96-bit IV, 60-byte plaintext, 20 bytes of associated data).
TEST(AeadTest, McGrewViegaTestCase16) {
  Key256 key = KeyFromHex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  std::string iv = Unhex("cafebabefacedbaddecaf888");
  std::string pt = Unhex(
      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
  std::string aad = Unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
  auto sealed = SealWithNonce(key, iv, pt, aad);
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  EXPECT_EQ(HexEncode(*sealed),
            "cafebabefacedbaddecaf888"
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
            "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
            "76fc6ece0f4e1768cddf8853bb2d551b");
  auto opened = Open(key, *sealed, aad, "vector");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, pt);
}

// Test case 13: the zero key, no plaintext, no associated data: only a tag.
TEST(AeadTest, McGrewViegaTestCase13) {
  Key256 key;
  auto sealed = SealWithNonce(key, std::string(12, '\0'), "", "");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(HexEncode(sealed->substr(kNonceSize)), "530f8afbc74536b9a963b4f1c4cb738b");
}

TEST(AeadTest, RoundTripWithFreshNonces) {
  auto key = RandomKey();
  ASSERT_TRUE(key.ok());
  std::string pt(100000, 'x');
  auto a = Seal(*key, pt, "header+id");
  auto b = Seal(*key, pt, "header+id");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), pt.size() + kSealOverhead);
  EXPECT_NE(a->substr(0, kNonceSize), b->substr(0, kNonceSize));  // a new nonce each time
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->find(pt.substr(0, 64)), std::string::npos);
  auto opened = Open(*key, *a, "header+id", "object x");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(*opened, pt);
  auto empty = Seal(*key, "", "");
  ASSERT_TRUE(empty.ok());
  auto opened_empty = Open(*key, *empty, "", "empty");
  ASSERT_TRUE(opened_empty.ok());
  EXPECT_EQ(*opened_empty, "");
}

TEST(AeadTest, EveryTamperingIsRefused) {
  auto key = RandomKey();
  ASSERT_TRUE(key.ok());
  auto sealed = Seal(*key, "the bytes of a chunk", "aad");
  ASSERT_TRUE(sealed.ok());
  // A flipped bit anywhere: nonce, ciphertext, tag.
  for (size_t i = 0; i < sealed->size(); i++) {
    std::string bad = *sealed;
    bad[i] ^= 0x01;
    auto opened = Open(*key, bad, "aad", "object 1234");
    ASSERT_FALSE(opened.ok()) << "byte " << i;
    EXPECT_TRUE(opened.status().IsCorruption());
    EXPECT_NE(opened.status().message().find("object 1234"), std::string::npos);
  }
  EXPECT_TRUE(Open(*key, *sealed, "aae", "x").status().IsCorruption());   // other associated data
  EXPECT_TRUE(Open(*key, *sealed, "", "x").status().IsCorruption());      // none
  EXPECT_TRUE(Open(*key, sealed->substr(0, sealed->size() - 1), "aad", "x").status().IsCorruption());  // cut
  EXPECT_TRUE(Open(*key, *sealed + "z", "aad", "x").status().IsCorruption());  // grown
  EXPECT_TRUE(Open(*key, "short", "aad", "x").status().IsCorruption());
  auto other = RandomKey();
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(Open(*other, *sealed, "aad", "x").status().IsCorruption());  // wrong key
}

TEST(AeadTest, RefusesAWrongNonceSize) {
  Key256 key;
  EXPECT_FALSE(SealWithNonce(key, "short", "x", "").ok());
}

// RFC 4231, test cases 1 and 2.
TEST(KeyedIdTest, Rfc4231Vectors) {
  auto one = HmacSha256(std::string(20, '\x0b'), "Hi There");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->ToHex(), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  auto two = HmacSha256("Jefe", "what do ya want for nothing?");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->ToHex(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(KeyedIdTest, SameContentSameIdOnlyUnderOneKey) {
  auto k1 = RandomKey();
  auto k2 = RandomKey();
  ASSERT_TRUE(k1.ok() && k2.ok());
  auto a = KeyedId(*k1, "content");
  auto b = KeyedId(*k1, "content");
  auto c = KeyedId(*k2, "content");
  auto d = KeyedId(*k1, "contenT");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(*a, *b);  // dedup inside a store
  EXPECT_NE(*a, *c);
  EXPECT_NE(*a, *d);
  EXPECT_NE(*a, Sha256::Of("content", 7));  // not the public hash
}

// The precomputed-pad hasher is HMAC-SHA256 itself: it agrees with OpenSSL's
// HMAC for every split of the input and differs under another key.
TEST(KeyedIdTest, KeyedHasherIsHmacSha256) {
  auto k1 = RandomKey();
  auto k2 = RandomKey();
  ASSERT_TRUE(k1.ok() && k2.ok());
  const KeyedHasher hasher(*k1);
  const std::string content = "strata chunk 11" + std::string(1, '\0') + "hello world";
  auto expected = KeyedId(*k1, content);
  ASSERT_TRUE(expected.ok());
  for (size_t split : {size_t{0}, size_t{5}, content.size()})
    EXPECT_EQ(hasher.Of(std::string_view(content).substr(0, split), std::string_view(content).substr(split)),
              *expected);
  EXPECT_NE(KeyedHasher(*k2).Of("", content), *expected);
}

}  // namespace
}  // namespace strata::crypto
