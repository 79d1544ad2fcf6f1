#include "store/tree.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

Tree SampleTree() {
  Tree t;
  TreeEntry dir;
  dir.name = "dir";
  dir.kind = EntryKind::kDirectory;
  dir.mode = 0755;
  dir.subtree = Sha256::Of("sub", 3);
  TreeEntry file;
  file.name = "file.txt";
  file.kind = EntryKind::kFile;
  file.mode = 04755;
  file.uid = 1000;
  file.gid = 100;
  file.mtime_sec = -5;  // before the epoch
  file.mtime_nsec = 123456789;
  file.xattrs = {{"user.a", "1"}, {"user.b", std::string("\0x", 2)}};
  file.chunks = {{Sha256::Of("c1", 2), 10}, {Sha256::Of("c2", 2), 20}};
  file.size = 30;
  TreeEntry link;
  link.name = "link";
  link.kind = EntryKind::kSymlink;
  link.target = "/abs/target";
  TreeEntry dev;
  dev.name = "zdev";
  dev.kind = EntryKind::kCharDevice;
  dev.rdev = 0x0103;
  t.entries = {dir, file, link, dev};
  return t;
}

TEST(TreeTest, RoundTripsEveryField) {
  Tree t = SampleTree();
  auto back = DecodeTree(EncodeTree(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->entries, t.entries);
  ASSERT_NE(back->Find("link"), nullptr);
  EXPECT_EQ(back->Find("link")->target, "/abs/target");
  EXPECT_EQ(back->Find("nope"), nullptr);
}

TEST(TreeTest, EveryTruncationIsRejected) {
  std::string data = EncodeTree(SampleTree());
  for (size_t n = 0; n < data.size(); n++)
    EXPECT_FALSE(DecodeTree(data.substr(0, n)).ok()) << "prefix of " << n << " bytes decoded";
  EXPECT_FALSE(DecodeTree(data + "x").ok());
}

TEST(TreeTest, HostileNamesAndOrderAreRejected) {
  for (const char* bad : {"..", ".", "a/b", ""}) {
    Tree t;
    TreeEntry e;
    e.name = bad;
    e.kind = EntryKind::kFifo;
    t.entries.push_back(e);
    EXPECT_TRUE(DecodeTree(EncodeTree(t)).status().IsCorruption()) << "name '" << bad << "'";
  }
  Tree unsorted = SampleTree();
  std::swap(unsorted.entries[0], unsorted.entries[1]);
  EXPECT_TRUE(DecodeTree(EncodeTree(unsorted)).status().IsCorruption());
}

TEST(TreeTest, FileSizeMustMatchChunks) {
  Tree t = SampleTree();
  t.entries[1].size = 31;
  EXPECT_TRUE(DecodeTree(EncodeTree(t)).status().IsCorruption());
}

TEST(TreeTest, UnknownVersionIsUnsupported) {
  std::string data = EncodeTree(SampleTree());
  data[0] = 9;
  EXPECT_EQ(DecodeTree(data).status().code(), Status::Code::kUnsupported);
}

TEST(TreeTest, EntryNameRules) {
  EXPECT_TRUE(IsValidEntryName("ok name"));
  EXPECT_TRUE(IsValidEntryName(std::string(255, 'x')));
  EXPECT_FALSE(IsValidEntryName(std::string(256, 'x')));
  EXPECT_FALSE(IsValidEntryName(std::string("a\0b", 3)));
}

}  // namespace
}  // namespace strata
