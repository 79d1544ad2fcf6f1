#include "util/coding.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(CodingTest, VarintRoundTripsBoundaries) {
  const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX - 1, UINT64_MAX};
  std::string buf;
  for (uint64_t v : values) PutVarint(&buf, v);
  Decoder d(buf);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(d.GetVarint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(d.empty());
}

TEST(CodingTest, FixedIsLittleEndian) {
  std::string buf;
  PutFixed32(&buf, 0x01020304);
  PutFixed64(&buf, 0x0102030405060708ULL);
  ASSERT_EQ(buf.size(), 12u);
  EXPECT_EQ(buf[0], 0x04);
  EXPECT_EQ(buf[4], 0x08);
  Decoder d(buf);
  uint32_t a;
  uint64_t b;
  ASSERT_TRUE(d.GetFixed32(&a) && d.GetFixed64(&b));
  EXPECT_EQ(a, 0x01020304u);
  EXPECT_EQ(b, 0x0102030405060708ULL);
}

TEST(CodingTest, TruncatedInputFailsAndStaysFailed) {
  std::string buf;
  PutLengthPrefixed(&buf, "hello world");
  buf.pop_back();
  Decoder d(buf);
  std::string_view s;
  EXPECT_FALSE(d.GetLengthPrefixed(&s));
  EXPECT_TRUE(d.failed());
  uint8_t byte;
  EXPECT_FALSE(d.GetByte(&byte));
}

TEST(CodingTest, OverlongVarintIsRejected) {
  std::string buf(11, '\xff');
  Decoder d(buf);
  uint64_t v;
  EXPECT_FALSE(d.GetVarint(&v));
  std::string ten(9, '\xff');
  ten.push_back('\x02');  // would set bit 64
  Decoder d2(ten);
  EXPECT_FALSE(d2.GetVarint(&v));
}

// Found by fuzzing: 0xED 0x00 decoded as 0x6D, whose encoding is 0x6D, so one
// tree had two byte strings. Only the minimal form is accepted.
TEST(CodingTest, NonMinimalVarintIsRejected) {
  uint64_t v;
  const std::string overlong("\xed\x00", 2), zero_byte(1, '\0');
  Decoder padded(overlong);
  EXPECT_FALSE(padded.GetVarint(&v));
  Decoder zero(zero_byte);
  ASSERT_TRUE(zero.GetVarint(&v));
  EXPECT_EQ(v, 0u);
  std::string enc;
  PutVarint(&enc, 128);
  Decoder minimal(enc);
  ASSERT_TRUE(minimal.GetVarint(&v));
  EXPECT_EQ(v, 128u);
}

}  // namespace
}  // namespace strata
