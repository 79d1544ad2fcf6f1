#include "sandbox/limits.h"

#include <gtest/gtest.h>

namespace strata::sandbox {
namespace {

TEST(Limits, SizesParseWithBinaryUnits) {
  EXPECT_EQ(*ParseSize("64M"), 64u << 20);
  EXPECT_EQ(*ParseSize("1G"), 1u << 30);
  EXPECT_EQ(*ParseSize("100k"), 100u << 10);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("1.5K"), 1536u);
  for (const char* bad : {"", "M", "-1M", "12X", "nan", "inf", "0"}) EXPECT_FALSE(ParseSize(bad).ok()) << bad;
}

TEST(Limits, DurationsParseInSecondsByDefault) {
  EXPECT_EQ(*ParseDurationMs("60s"), 60'000u);
  EXPECT_EQ(*ParseDurationMs("10"), 10'000u);
  EXPECT_EQ(*ParseDurationMs("500ms"), 500u);
  EXPECT_EQ(*ParseDurationMs("2m"), 120'000u);
  EXPECT_EQ(*ParseDurationMs("1h"), 3'600'000u);
  for (const char* bad : {"", "s", "-5s", "5d", "nan", "0"}) EXPECT_FALSE(ParseDurationMs(bad).ok()) << bad;
}

TEST(Limits, SizesPrintAsTheyAreWritten) {
  EXPECT_EQ(FormatSize(64u << 20), "64M");
  EXPECT_EQ(FormatSize(1536u << 10), "1536K");
  EXPECT_EQ(FormatSize(100), "100");
  EXPECT_EQ(FormatSize(1u << 30), "1G");
}

}  // namespace
}  // namespace strata::sandbox
