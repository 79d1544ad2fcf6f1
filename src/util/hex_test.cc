#include "util/hex.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(HexTest, EncodesLowerCaseAndDecodesBack) {
  const std::string bytes("\x00\x01\x7f\x80\xab\xff", 6);
  EXPECT_EQ(HexEncode(bytes), "00017f80abff");
  EXPECT_EQ(HexDecode("00017f80abff"), bytes);
  EXPECT_EQ(HexDecode("00017F80ABFF"), bytes);
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(HexTest, RefusesOddLengthAndNonDigits) {
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
  EXPECT_FALSE(HexDecode("0g").has_value());
  EXPECT_EQ(HexDigitValue('/'), -1);
  EXPECT_EQ(HexDigitValue('F'), 15);
}

TEST(HexTest, AppendsEitherCase) {
  std::string out;
  AppendHexByte(&out, 0xa5);
  AppendHexByte(&out, 0x3c, HexCase::kUpper);
  EXPECT_EQ(out, "a53C");
}

}  // namespace
}  // namespace strata
