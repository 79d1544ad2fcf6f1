#include "store/tree_diff.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/store_test_util.h"
#include "testing/tree_test_util.h"

namespace strata {
namespace {

class TreeDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
  }

  static TreeEntry File(const std::string& name, const std::string& data) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kFile;
    e.mode = 0644;
    e.mtime_sec = 1000;
    e.size = data.size();
    if (!data.empty()) e.chunks = {{Sha256::Of(data.data(), data.size()), data.size()}};
    return e;
  }
  static TreeEntry Symlink(const std::string& name, const std::string& target) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kSymlink;
    e.mode = 0777;
    e.target = target;
    return e;
  }
  TreeEntry Dir(const std::string& name, std::vector<TreeEntry> entries) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kDirectory;
    e.mode = 0755;
    e.subtree = PutTree(std::move(entries));
    return e;
  }
  Hash PutTree(std::vector<TreeEntry> entries) { return testing::PutTree(*store_, std::move(entries)); }

  // "A path", "M path [fields]"... in the order reported.
  std::vector<std::string> Diff(const std::optional<Hash>& a, const std::optional<Hash>& b,
                                TreeDiffStats* stats = nullptr) {
    std::vector<std::string> out;
    Status s = DiffTrees(
        *store_, a, b,
        [&](const TreeChange& c) {
          out.push_back(Describe(c));
          return Status::Ok();
        },
        stats);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  static std::string Describe(const TreeChange& c) {
    std::string s = std::string(1, ChangeLetter(c.type)) + " " + c.path;
    if (c.type == ChangeType::kModified) {
      std::string f;
      for (const std::string& n : ChangedFieldNames(c.fields)) f += (f.empty() ? "" : ",") + n;
      s += " [" + f + "]";
    }
    EXPECT_EQ(c.old_entry.has_value(), c.type != ChangeType::kAdded) << s;
    EXPECT_EQ(c.new_entry.has_value(), c.type != ChangeType::kDeleted) << s;
    return s;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

using Lines = std::vector<std::string>;

TEST_F(TreeDiffTest, EqualTreesCostNothing) {
  Hash t = PutTree({File("a", "1"), Dir("d", {File("b", "2")})});
  TreeDiffStats stats;
  EXPECT_EQ(Diff(t, t, &stats), Lines{});
  EXPECT_EQ(stats.trees_read, 0u);
  EXPECT_EQ(stats.subtrees_skipped, 1u);
  EXPECT_EQ(Diff(std::nullopt, std::nullopt), Lines{});
}

TEST_F(TreeDiffTest, AddedDeletedModifiedInNameOrder) {
  Hash a = PutTree({File("keep", "same"), File("edit", "old"), File("gone", "x"), Symlink("link", "keep")});
  Hash b = PutTree({File("keep", "same"), File("edit", "new!"), File("new", "y"), Symlink("link", "edit")});
  EXPECT_EQ(Diff(a, b), (Lines{"M edit [content]", "D gone", "M link [content]", "A new"}));
  EXPECT_EQ(Diff(b, a), (Lines{"M edit [content]", "A gone", "M link [content]", "D new"}));
}

TEST_F(TreeDiffTest, EveryKindOfMetadataCounts) {
  TreeEntry base = File("f", "data");
  base.xattrs = {{"user.a", "1"}};
  Hash a = PutTree({base});
  auto changed = [&](auto change) {
    TreeEntry e = base;
    change(e);
    return Diff(a, PutTree({e}));
  };
  EXPECT_EQ(changed([](TreeEntry& e) { e.mode = 0600; }), Lines{"M f [mode]"});
  EXPECT_EQ(changed([](TreeEntry& e) { e.uid = 7; }), Lines{"M f [owner]"});
  EXPECT_EQ(changed([](TreeEntry& e) { e.gid = 7; }), Lines{"M f [owner]"});
  EXPECT_EQ(changed([](TreeEntry& e) { e.mtime_nsec = 1; }), Lines{"M f [mtime]"});
  EXPECT_EQ(changed([](TreeEntry& e) { e.xattrs[0].second = "2"; }), Lines{"M f [xattrs]"});
  EXPECT_EQ(changed([](TreeEntry& e) { e.xattrs.clear(); }), Lines{"M f [xattrs]"});
  // Same size, other bytes: the chunk ids differ.
  EXPECT_EQ(changed([](TreeEntry& e) { e.chunks = File("f", "DATA").chunks; }), Lines{"M f [content]"});
  EXPECT_EQ(changed([](TreeEntry& e) {
              e.mode = 0600;
              e.mtime_sec = 5;
              e.uid = 1;
            }),
            Lines{"M f [mode,owner,mtime]"});
  EXPECT_EQ(changed([](TreeEntry&) {}), Lines{});

  TreeEntry dev;
  dev.name = "f";
  dev.kind = EntryKind::kCharDevice;
  dev.rdev = 0x0103;
  Hash d1 = PutTree({dev});
  dev.rdev = 0x0105;
  EXPECT_EQ(Diff(d1, PutTree({dev})), Lines{"M f [content]"});
  EXPECT_EQ(Diff(a, d1), Lines{"T f"});
}

TEST_F(TreeDiffTest, TypeChangesReportWhatIsBelowADirectory) {
  Hash a = PutTree({Dir("x", {File("one", "1"), Dir("sub", {File("two", "2")})}), File("y", "y")});
  Hash b = PutTree({File("x", "now a file"), Dir("y", {File("inside", "i")})});
  EXPECT_EQ(Diff(a, b), (Lines{"T x", "D x/one", "D x/sub", "D x/sub/two", "T y", "A y/inside"}));
}

TEST_F(TreeDiffTest, AgainstAnEmptyTreeEverythingIsAddedOrDeleted) {
  Hash t = PutTree({Dir("d", {Dir("e", {File("f", "1")}), File("g", "")}), File("h", "2")});
  EXPECT_EQ(Diff(std::nullopt, t), (Lines{"A d", "A d/e", "A d/e/f", "A d/g", "A h"}));
  EXPECT_EQ(Diff(t, std::nullopt), (Lines{"D d", "D d/e", "D d/e/f", "D d/g", "D h"}));
  EXPECT_EQ(Diff(PutTree({}), t), Diff(std::nullopt, t));
}

TEST_F(TreeDiffTest, DirectoriesReportTheirOwnMetadataAndTheirEntries) {
  Hash a = PutTree({Dir("d", {File("f", "1")})});
  TreeEntry d = Dir("d", {File("f", "2")});
  d.mtime_sec = 99;
  EXPECT_EQ(Diff(a, PutTree({d})), (Lines{"M d [mtime]", "M d/f [content]"}));
  // Only the metadata: the subtree is equal and skipped.
  TreeEntry same = Dir("d", {File("f", "1")});
  same.mode = 0700;
  TreeDiffStats stats;
  EXPECT_EQ(Diff(a, PutTree({same}), &stats), Lines{"M d [mode]"});
  EXPECT_EQ(stats.trees_read, 2u);  // the two roots only
  EXPECT_EQ(stats.subtrees_skipped, 1u);
}

// A wide and deep tree changed in one file: only the trees on the path to it
// are read, however many others there are.
TEST_F(TreeDiffTest, CostIsProportionalToTheDifference) {
  constexpr int kWidth = 50, kDepth = 6;
  // Every level holds kWidth unchanged directories and one that leads down.
  std::function<Hash(int, const std::string&)> build = [&](int level, const std::string& leaf) -> Hash {
    std::vector<TreeEntry> entries;
    for (int i = 0; i < kWidth; i++)
      entries.push_back(Dir("same" + std::to_string(i), {File("f" + std::to_string(level), "unchanged")}));
    if (level == kDepth) {
      entries.push_back(File("leaf", leaf));
    } else {
      TreeEntry down;
      down.name = "down";
      down.kind = EntryKind::kDirectory;
      down.subtree = build(level + 1, leaf);
      entries.push_back(down);
    }
    return PutTree(entries);
  };
  Hash a = build(0, "before"), b = build(0, "after");
  TreeDiffStats stats;
  std::string path;
  for (int i = 0; i < kDepth; i++) path += "down/";
  EXPECT_EQ(Diff(a, b, &stats), Lines{"M " + path + "leaf [content]"});
  EXPECT_EQ(stats.trees_read, 2u * (kDepth + 1));
  EXPECT_EQ(stats.subtrees_skipped, uint64_t{kWidth} * (kDepth + 1));
}

TEST_F(TreeDiffTest, EntriesAndTheTopDirectoryOfACommit) {
  Commit c1, c2;
  c1.root = PutTree({File("a", "1")});
  c2 = c1;
  c2.root_meta.mtime_sec = 12;
  c2.root = PutTree({File("a", "1"), File("b", "2")});
  TreeEntry r1 = RootEntry(c1), r2 = RootEntry(c2);
  EXPECT_EQ(r1.kind, EntryKind::kDirectory);
  EXPECT_EQ(r1.subtree, c1.root);
  std::vector<std::string> out;
  auto collect = [&](const TreeChange& c) {
    out.push_back(Describe(c));
    return Status::Ok();
  };
  ASSERT_TRUE(DiffEntries(*store_, &r1, &r2, "", collect).ok());
  EXPECT_EQ(out, (Lines{"M  [mtime]", "A b"}));
  // Under a path: the paths are prefixed.
  out.clear();
  ASSERT_TRUE(DiffEntries(*store_, &r1, &r2, "top", collect).ok());
  EXPECT_EQ(out, (Lines{"M top [mtime]", "A top/b"}));
  // Single entries: a file compared with nothing, and two equal ones.
  TreeEntry f = File("a", "1");
  out.clear();
  ASSERT_TRUE(DiffEntries(*store_, nullptr, &f, "x/a", collect).ok());
  ASSERT_TRUE(DiffEntries(*store_, &f, &f, "x/a", collect).ok());
  ASSERT_TRUE(DiffEntries(*store_, nullptr, nullptr, "x/a", collect).ok());
  EXPECT_EQ(out, Lines{"A x/a"});
}

TEST_F(TreeDiffTest, TheVisitorCanStopTheWalk) {
  Hash t = PutTree({File("a", "1"), File("b", "2"), File("c", "3")});
  int seen = 0;
  Status s = DiffTrees(*store_, std::nullopt, t, [&](const TreeChange&) {
    return ++seen == 2 ? Status::InvalidArgument("enough") : Status::Ok();
  });
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(seen, 2);
}

TEST_F(TreeDiffTest, AMissingTreeIsAnError) {
  Hash missing = Sha256::Of("no such tree", 12);
  TreeEntry d;
  d.name = "d";
  d.kind = EntryKind::kDirectory;
  d.subtree = missing;
  Hash a = PutTree({d});
  Status s = DiffTrees(*store_, std::nullopt, a, [](const TreeChange&) { return Status::Ok(); });
  EXPECT_FALSE(s.ok());
  // Equal ids are never read, missing or not.
  EXPECT_TRUE(DiffTrees(*store_, missing, missing, [](const TreeChange&) { return Status::Ok(); }).ok());
}

}  // namespace
}  // namespace strata
