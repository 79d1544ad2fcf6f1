#include "daemon/mount_source.h"

#include <gtest/gtest.h>

#include <sstream>

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

// A mount table as /proc/mounts shows one: a strata mount at /mnt/ws, a
// tmpfs inside it, a strata mount stacked on an ext4 one, a space escaped.
constexpr const char* kTable =
    "/dev/vda1 / ext4 rw,relatime 0 0\n"
    "strata:one:/var/lib/strata /mnt/ws fuse.strata rw,nosuid,nodev 0 0\n"
    "tmpfs /mnt/ws/scratch tmpfs rw 0 0\n"
    "/dev/vdb /mnt/stacked ext4 rw 0 0\n"
    "strata+origin:two:/srv/cache /mnt/stacked fuse.strata rw 0 0\n"
    "strata:three:/s /mnt/my\\040ws fuse.strata rw 0 0\n";

std::optional<EnclosingMount> Enclosing(const std::string& path) {
  std::istringstream table(kTable);
  return EnclosingMountIn(table, path);
}

TEST(MountSourceTest, EnclosingMountIsTheLongestMountpointAbovePath) {
  for (const char* path : {"/mnt/ws", "/mnt/ws/sub", "/mnt/ws/sub/deeper/file", "/mnt/ws/scratchy"}) {
    auto m = Enclosing(path);
    ASSERT_TRUE(m.has_value()) << path;
    EXPECT_EQ(m->mountpoint, "/mnt/ws") << path;
    EXPECT_EQ(m->source.workspace, "one");
    EXPECT_EQ(m->source.store, "/var/lib/strata");
  }
  auto spaced = Enclosing("/mnt/my ws/a");
  ASSERT_TRUE(spaced.has_value());
  EXPECT_EQ(spaced->mountpoint, "/mnt/my ws");
  EXPECT_EQ(spaced->source.workspace, "three");
}

TEST(MountSourceTest, OfStackedMountsTheOneOnTopEncloses) {
  auto m = Enclosing("/mnt/stacked/x");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source.remote, "origin");
  EXPECT_EQ(m->source.workspace, "two");
}

TEST(MountSourceTest, NoEnclosingStrataMountOutsideOrInAnotherFilesystemInside) {
  EXPECT_FALSE(Enclosing("/").has_value());
  EXPECT_FALSE(Enclosing("/mnt").has_value());
  EXPECT_FALSE(Enclosing("/mnt/wsx").has_value());            // a prefix of the name is not a directory above
  EXPECT_FALSE(Enclosing("/mnt/ws/scratch/f").has_value());   // the tmpfs, not the workspace
}

}  // namespace
}  // namespace strata::daemon
