// The bucket's `generations` object (seal_grants.h): what is written reads
// back the same, and anything else is refused rather than half-understood.
#include "remote/seal_grants.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(SealGrants, BucketGenerationsRoundTrip) {
  for (BucketGenerations g : {BucketGenerations{{0, 1}, "-"}, BucketGenerations{{4278190080, 4294967296}, "-"},
                              BucketGenerations{{7, 7}, std::string(32, 'a')}}) {
    auto back = DecodeBucketGenerations(EncodeBucketGenerations(g));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->left.first, g.left.first);
    EXPECT_EQ(back->left.end, g.left.end);
    EXPECT_EQ(back->claim, g.claim);
  }
}

TEST(SealGrants, DamagedBucketGenerationsAreRefused) {
  for (const char* body :
       {"", "strata-generations 1 0 1 -", "strata-generations 2 0 1 -\n", "strata-generations 1 2 1 -\n",
        "strata-generations 1 0 4294967297 -\n", "strata-generations 1 00 1 -\n", "strata-generations 1 -1 1 -\n",
        "strata-generations 1 0 1\n", "strata-generations 1 0 1 x\n", "strata-generations 1 0 1 - \n",
        "strata-generations 1 0  1 -\n", "strata-generations 1 0 1 ABCDEFABCDEFABCDEFABCDEFABCDEFAB\n"})
    EXPECT_TRUE(DecodeBucketGenerations(body).status().IsCorruption()) << body;
}

}  // namespace
}  // namespace strata
