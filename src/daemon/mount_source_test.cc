#include "daemon/mount_source.h"

#include <gtest/gtest.h>

namespace strata::daemon {
namespace {

TEST(MountSourceTest, LocalStoreRoundTrips) {
  MountSource in{"", "ws1", "/var/lib/strata store:2"};
  std::string text = FormatMountSource(in);
  EXPECT_EQ(text, "strata:ws1:/var/lib/strata store:2");
  auto out = ParseMountSource(text);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->remote, "");
  EXPECT_EQ(out->workspace, "ws1");
  EXPECT_EQ(out->store, "/var/lib/strata store:2");  // a ':' in the store stays in the store
}

TEST(MountSourceTest, RemoteStoreRoundTrips) {
  auto out = ParseMountSource(FormatMountSource({"ceph", "team/dev", "/home/u/.local/share/strata"}));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->remote, "ceph");
  EXPECT_EQ(out->workspace, "team/dev");
  EXPECT_EQ(out->store, "/home/u/.local/share/strata");
}

TEST(MountSourceTest, OlderSourcesWithoutStoreParse) {
  auto local = ParseMountSource("strata:ws1");
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->workspace, "ws1");
  EXPECT_EQ(local->store, "");
  auto remote = ParseMountSource("strata+origin:read-only/42");
  ASSERT_TRUE(remote.has_value());
  EXPECT_EQ(remote->remote, "origin");
  EXPECT_EQ(remote->workspace, "read-only/42");
}

TEST(MountSourceTest, OtherSourcesAreRejected) {
  for (const char* text : {"", "strata", "sshfs:host", "stratum:ws", "strata+:ws", "strata:", "strata::/store",
                           "strata:ws:relative/store", "/dev/vda"})
    EXPECT_FALSE(ParseMountSource(text).has_value()) << text;
}

TEST(MountSourceTest, UnescapesProcMountsFields) {
  EXPECT_EQ(UnescapeMountField("/tmp/a\\040b\\011c\\012d\\134e"), "/tmp/a b\tc\nd\\e");
  // Not an escape: left as it is.
  EXPECT_EQ(UnescapeMountField("a\\9xy\\04"), "a\\9xy\\04");
  EXPECT_EQ(UnescapeMountField("plain"), "plain");
}

}  // namespace
}  // namespace strata::daemon
