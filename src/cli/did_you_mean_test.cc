#include "cli/did_you_mean.h"

#include <gtest/gtest.h>

namespace strata::cli {
namespace {

const std::vector<std::string> kCommands = {"commit", "diff", "export", "import", "log",  "mount",
                                            "rebase", "reset", "stats", "status", "umount", "workspace"};

TEST(DidYouMeanTest, DistanceCountsEachKindOfTypo) {
  EXPECT_EQ(EditDistance("commit", "commit"), 0u);
  EXPECT_EQ(EditDistance("comit", "commit"), 1u);    // a letter left out
  EXPECT_EQ(EditDistance("commmit", "commit"), 1u);  // one too many
  EXPECT_EQ(EditDistance("cimmit", "commit"), 1u);   // one wrong
  EXPECT_EQ(EditDistance("cmomit", "commit"), 1u);   // two swapped
  EXPECT_EQ(EditDistance("", "log"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(DidYouMeanTest, SuggestsTheNearCommand) {
  EXPECT_EQ(ClosestName("comit", kCommands), "commit");
  EXPECT_EQ(ClosestName("stauts", kCommands), "status");
  EXPECT_EQ(ClosestName("rebsae", kCommands), "rebase");
  EXPECT_EQ(ClosestName("lgo", kCommands), "log");
  EXPECT_EQ(ClosestName("workspaces", kCommands), "workspace");
}

TEST(DidYouMeanTest, OfEquallyNearOnesTakesTheOneOfNearestLengthThenTheFirst) {
  // "stat" is one from "stats" and two from "status".
  EXPECT_EQ(ClosestName("stat", kCommands), "stats");
  // "stauts" is one from both; "status" has its length.
  EXPECT_EQ(ClosestName("stauts", kCommands), "status");
  EXPECT_EQ(ClosestName("resut", {"reset", "rebut"}), "reset");
  EXPECT_EQ(ClosestName("resut", {"rebut", "reset"}), "rebut");
}

TEST(DidYouMeanTest, SuggestsNothingForFarWords) {
  EXPECT_EQ(ClosestName("frobnicate", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("x", kCommands), std::nullopt);   // 1 letter: only 1 allowed; "log" is 3 away
  EXPECT_EQ(ClosestName("cmt", kCommands), std::nullopt);  // 3 from commit, 1 allowed
  EXPECT_EQ(ClosestName("commit", {}), std::nullopt);
}

}  // namespace
}  // namespace strata::cli
