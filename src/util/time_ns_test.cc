#include "util/time_ns.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(TimeNsTest, SplitRoundsDownBefore1970) {
  EXPECT_EQ(SplitNs(0), (SplitTime{0, 0}));
  EXPECT_EQ(SplitNs(1'500'000'000), (SplitTime{1, 500'000'000}));
  EXPECT_EQ(SplitNs(-1), (SplitTime{-1, 999'999'999}));
  EXPECT_EQ(SplitNs(-500'000'000), (SplitTime{-1, 500'000'000}));
  EXPECT_EQ(SplitNs(-1'000'000'000), (SplitTime{-1, 0}));
  EXPECT_EQ(SplitNs(-1'000'000'001), (SplitTime{-2, 999'999'999}));
}

TEST(TimeNsTest, JoinUndoesSplit) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{-1'000'000'000}, int64_t{-297'000'000'123},
                     int64_t{1'700'000'000'123'456'789}, int64_t{-9'000'000'000'000'000'000}}) {
    const SplitTime t = SplitNs(ns);
    EXPECT_LT(t.nsec, 1'000'000'000u) << ns;
    EXPECT_EQ(JoinNs(t.sec, t.nsec), ns);
  }
}

TEST(TimeNsTest, TimespecHasNoNegativeNanoseconds) {
  const timespec ts = ToTimespec(-250'000'000);
  EXPECT_EQ(ts.tv_sec, -1);
  EXPECT_EQ(ts.tv_nsec, 750'000'000);
}

TEST(TimeNsTest, NowIsAfterThisCodeWasWritten) {
  EXPECT_GT(NowNs(), JoinNs(1'700'000'000, 0));  // 2023-11
}

}  // namespace
}  // namespace strata
