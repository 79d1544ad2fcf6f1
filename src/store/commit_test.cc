#include "store/commit.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(CommitTest, RoundTrips) {
  Commit c;
  c.root = Sha256::Of("root", 4);
  c.root_meta = {0750, 12, 34, 1700000000, 999999999, {{"user.x", "y"}}};
  c.parents = {Sha256::Of("p1", 2), Sha256::Of("p2", 2)};
  c.author = "me@host";
  c.time_ns = 1700000000123456789;
  c.message = "multi\nline";
  auto back = DecodeCommit(EncodeCommit(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, c);
}

TEST(CommitTest, TruncationsAndTrailingBytesAreRejected) {
  Commit c;
  c.message = "m";
  std::string data = EncodeCommit(c);
  for (size_t n = 0; n < data.size(); n++) EXPECT_FALSE(DecodeCommit(data.substr(0, n)).ok());
  EXPECT_FALSE(DecodeCommit(data + "z").ok());
}

}  // namespace
}  // namespace strata
