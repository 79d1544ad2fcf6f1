#include "store/tree_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "testing/store_test_util.h"
#include "testing/tree_test_util.h"

namespace strata {
namespace {

class TreeMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
  }

  static TreeEntry File(const std::string& name, const std::string& data, int64_t mtime = 1000) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kFile;
    e.mode = 0644;
    e.mtime_sec = mtime;
    e.size = data.size();
    if (!data.empty()) e.chunks = {{Sha256::Of(data.data(), data.size()), data.size()}};
    return e;
  }
  static TreeEntry Link(const std::string& name, const std::string& target) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kHardlink;
    e.target = target;
    return e;
  }
  TreeEntry Dir(const std::string& name, std::vector<TreeEntry> entries, int64_t mtime = 1000) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kDirectory;
    e.mode = 0755;
    e.mtime_sec = mtime;
    e.subtree = PutTree(std::move(entries));
    return e;
  }
  Hash PutTree(std::vector<TreeEntry> entries) { return testing::PutTree(*store_, std::move(entries)); }
  // A top directory holding entries.
  TreeEntry Top(std::vector<TreeEntry> entries, int64_t mtime = 1000) { return Dir("", std::move(entries), mtime); }

  TreeMergeResult Merge(const TreeEntry* base, const TreeEntry& ours, const TreeEntry& theirs,
                        const ConflictChoices& choices = {}) {
    auto r = MergeTopDirectories(*store_, base, ours, theirs, choices);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : TreeMergeResult();
  }
  // The paths of the conflicts, in the order reported.
  static std::vector<std::string> Paths(const TreeMergeResult& r) {
    std::vector<std::string> out;
    for (const MergeConflict& c : r.conflicts) out.push_back(c.path);
    return out;
  }
  // Expects a clean merge whose top directory holds exactly `expected`.
  void ExpectMerged(const TreeMergeResult& r, const TreeEntry& expected) {
    EXPECT_EQ(Paths(r), std::vector<std::string>{});
    if (!r.conflicts.empty()) return;
    EXPECT_EQ(r.merged.subtree, expected.subtree) << "merged tree differs";
    EXPECT_EQ(r.merged.mode, expected.mode);
    EXPECT_EQ(r.merged.mtime_sec, expected.mtime_sec);
    EXPECT_EQ(r.merged.xattrs, expected.xattrs);
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

using Lines = std::vector<std::string>;

TEST_F(TreeMergeTest, ChangesToDifferentPathsAreAllKept) {
  TreeEntry base = Top({File("a", "1"), File("b", "2"), Dir("d", {File("x", "x")})});
  TreeEntry ours = Top({File("a", "ours"), File("b", "2"), Dir("d", {File("x", "x")})});
  TreeEntry theirs = Top({File("a", "1"), File("b", "2"), Dir("d", {File("x", "theirs"), File("y", "new")}, 2000)});
  ExpectMerged(Merge(&base, ours, theirs),
               Top({File("a", "ours"), File("b", "2"), Dir("d", {File("x", "theirs"), File("y", "new")}, 2000)}));
  // The merge is symmetric.
  ExpectMerged(Merge(&base, theirs, ours),
               Top({File("a", "ours"), File("b", "2"), Dir("d", {File("x", "theirs"), File("y", "new")}, 2000)}));
}

TEST_F(TreeMergeTest, TheSameChangeOnBothSidesIsNoConflict) {
  TreeEntry base = Top({File("a", "1"), File("gone", "g")});
  TreeEntry both = Top({File("a", "same edit"), File("new", "n")});
  ExpectMerged(Merge(&base, both, both), both);
  // Also when each side changed something else besides.
  TreeEntry ours = Top({File("a", "same edit"), File("mine", "m"), File("new", "n")});
  TreeEntry theirs = Top({File("a", "same edit"), File("new", "n"), File("yours", "y")});
  ExpectMerged(Merge(&base, ours, theirs),
               Top({File("a", "same edit"), File("mine", "m"), File("new", "n"), File("yours", "y")}));
}

TEST_F(TreeMergeTest, AddsOnBothSidesInOneDirectory) {
  // Each side adds a name to d, which changes d's mtime on both sides: the
  // later mtime wins instead of a conflict.
  TreeEntry base = Top({Dir("d", {File("old", "o")}, 1000)});
  TreeEntry ours = Top({Dir("d", {File("old", "o"), File("p", "ours")}, 3000)});
  TreeEntry theirs = Top({Dir("d", {File("old", "o"), File("q", "theirs")}, 2000)});
  ExpectMerged(Merge(&base, ours, theirs),
               Top({Dir("d", {File("old", "o"), File("p", "ours"), File("q", "theirs")}, 3000)}));
  // The top directory itself merges the same way.
  TreeEntry top_ours = Top({File("p", "1")}, 5000), top_theirs = Top({File("q", "2")}, 4000);
  TreeEntry empty = Top({});
  ExpectMerged(Merge(&empty, top_ours, top_theirs), Top({File("p", "1"), File("q", "2")}, 5000));
}

TEST_F(TreeMergeTest, DeleteOnOneSideOfAnUnchangedPath) {
  TreeEntry base = Top({File("a", "1"), File("b", "2"), Dir("d", {File("x", "x")})});
  TreeEntry ours = Top({File("b", "2")});  // a and d deleted
  TreeEntry theirs = Top({File("a", "1"), File("b", "theirs"), Dir("d", {File("x", "x")})});
  ExpectMerged(Merge(&base, ours, theirs), Top({File("b", "theirs")}));
}

TEST_F(TreeMergeTest, ConflictsAreListedInPathOrderAndNothingIsWritten) {
  TreeEntry base = Top({File("both", "1"), File("del", "1"), Dir("dir", {File("f", "1")}), File("ok", "1"),
                        Dir("sub", {File("deep", "1"), File("fine", "1")})});
  TreeEntry ours = Top({File("added", "ours"), File("both", "ours"), Dir("dir", {File("f", "1")}), File("ok", "1"),
                        Dir("sub", {File("deep", "ours"), File("fine", "ours")}), File("type", "file")});
  TreeEntry theirs =
      Top({File("added", "theirs"), File("both", "theirs"), File("del", "theirs"), File("dir", "now a file"),
           File("ok", "theirs"), Dir("sub", {File("deep", "theirs"), File("fine", "1")}), Dir("type", {})});
  TreeMergeResult r = Merge(&base, ours, theirs);
  EXPECT_EQ(Paths(r), (Lines{"added", "both", "del", "sub/deep", "type"}))
      << "dir: ours left it alone; ok, sub/fine: one side only";
  EXPECT_EQ(r.stats.trees_written, 0u);
  ASSERT_EQ(r.conflicts.size(), 5u);
  EXPECT_EQ(r.conflicts[0].reason, "added on both sides, differently");
  EXPECT_EQ(r.conflicts[1].reason, "changed on both sides");
  EXPECT_EQ(r.conflicts[2].reason, "deleted on one side, changed on the other");

  // A directory changed on one side, deleted or made a file on the other.
  TreeEntry edited = Top({File("both", "1"), File("del", "1"), Dir("dir", {File("f", "2")}), File("ok", "1"),
                          Dir("sub", {File("deep", "1"), File("fine", "1")})});
  TreeEntry removed =
      Top({File("both", "1"), File("del", "1"), File("ok", "1"), Dir("sub", {File("deep", "1"), File("fine", "1")})});
  EXPECT_EQ(Paths(Merge(&base, edited, removed)), Lines{"dir"});
  TreeEntry retyped = Top({File("both", "1"), File("del", "1"), File("dir", "x"), File("ok", "1"),
                           Dir("sub", {File("deep", "1"), File("fine", "1")})});
  TreeMergeResult t = Merge(&base, edited, retyped);
  EXPECT_EQ(Paths(t), Lines{"dir"});
  EXPECT_EQ(t.conflicts[0].reason, "changed on both sides: a dir on one, a file on the other");
}

TEST_F(TreeMergeTest, ChoicesSettleConflictsAndKeepEveryOtherChange) {
  TreeEntry base = Top({File("a", "1"), File("b", "1"), File("c", "1"), File("gone", "1"), File("only", "1")});
  TreeEntry ours = Top({File("a", "ours"), File("b", "ours"), File("c", "ours"), File("gone", "ours"),
                        File("only", "1"), File("new-ours", "o")});
  TreeEntry theirs =
      Top({File("a", "theirs"), File("b", "theirs"), File("c", "theirs"), File("only", "theirs"), File("new-theirs", "t")});
  using C = ConflictChoice;
  // Not every conflict settled: the others are still listed, nothing written.
  TreeMergeResult partial = Merge(&base, ours, theirs, {{"a", C::kOurs}});
  EXPECT_EQ(Paths(partial), (Lines{"b", "c", "gone"}));
  EXPECT_EQ(partial.unused_choices, Lines{});
  EXPECT_EQ(partial.stats.trees_written, 0u);

  TreeMergeResult r =
      Merge(&base, ours, theirs, {{"a", C::kOurs}, {"b", C::kTheirs}, {"c", C::kBoth}, {"gone", C::kTheirs}});
  ExpectMerged(r, Top({File("a", "ours"), File("b", "theirs"), File("c", "ours"), File("c.theirs", "theirs"),
                       File("new-ours", "o"), File("new-theirs", "t"), File("only", "theirs")}));
  // Theirs deleted what ours changed: --both keeps ours alone.
  TreeMergeResult kept = Merge(&base, ours, theirs,
                               {{"a", C::kOurs}, {"b", C::kOurs}, {"c", C::kOurs}, {"gone", C::kBoth}});
  ExpectMerged(kept, Top({File("a", "ours"), File("b", "ours"), File("c", "ours"), File("gone", "ours"),
                          File("new-ours", "o"), File("new-theirs", "t"), File("only", "theirs")}));
  // Ours deleted what theirs changed: --both leaves the path deleted and
  // theirs' version beside it.
  TreeEntry one = Top({File("x", "1"), File("y", "1")});
  ExpectMerged(Merge(&one, Top({File("y", "1")}), Top({File("x", "t"), File("y", "1")}), {{"x", C::kBoth}}),
               Top({File("x.theirs", "t"), File("y", "1")}));
}

TEST_F(TreeMergeTest, ChoicesThatCannotSettleAreReported) {
  using C = ConflictChoice;
  TreeEntry base = Top({File("f", "1"), File("only", "1")});
  TreeEntry ours = Top({File("f", "ours"), File("only", "1")});
  // A choice for a path that is not in conflict is reported, not ignored.
  TreeEntry theirs = Top({File("f", "theirs"), File("only", "theirs")});
  TreeMergeResult typo = Merge(&base, ours, theirs, {{"f", C::kOurs}, {"onyl", C::kOurs}, {"only", C::kTheirs}});
  EXPECT_EQ(typo.unused_choices, (Lines{"only", "onyl"}));
  EXPECT_EQ(Merge(&base, base, theirs, {{"f", C::kOurs}}).unused_choices, Lines{"f"}) << "nothing to merge";
  // --both whose name beside is taken.
  TreeEntry taken = Top({File("f", "theirs"), File("f.theirs", "x"), File("only", "1")});
  TreeMergeResult clash = Merge(&base, ours, taken, {{"f", C::kBoth}});
  EXPECT_EQ(Paths(clash), Lines{"f.theirs"});
  // --both where theirs is a directory.
  TreeEntry dir = Top({Dir("f", {}), File("only", "1")});
  TreeMergeResult d = Merge(&base, ours, dir, {{"f", C::kBoth}});
  EXPECT_EQ(Paths(d), Lines{"f"});
  EXPECT_NE(d.conflicts[0].reason.find("--both cannot"), std::string::npos) << d.conflicts[0].reason;
  ExpectMerged(Merge(&base, ours, dir, {{"f", C::kTheirs}}), Top({Dir("f", {}), File("only", "1")}));
}

TEST_F(TreeMergeTest, MetadataOfADirectoryChangedOnBothSides) {
  TreeEntry base = Top({Dir("d", {File("f", "1")})});
  TreeEntry ours_d = Dir("d", {File("f", "1"), File("g", "2")});
  ours_d.mode = 0700;
  TreeEntry theirs_d = Dir("d", {File("f", "1"), File("h", "3")});
  theirs_d.xattrs = {{"user.tag", "t"}};
  TreeEntry expected = Dir("d", {File("f", "1"), File("g", "2"), File("h", "3")});
  expected.mode = 0700;
  expected.xattrs = {{"user.tag", "t"}};
  ExpectMerged(Merge(&base, Top({ours_d}), Top({theirs_d})), Top({expected}));
  // The same field changed differently is a conflict on the directory.
  theirs_d.mode = 0750;
  TreeMergeResult r = Merge(&base, Top({ours_d}), Top({theirs_d}));
  EXPECT_EQ(Paths(r), Lines{"d"});
  EXPECT_EQ(r.conflicts[0].reason, "the directory's mode changed on both sides");
  // ...also for the top directory, reported as "".
  TreeEntry top_ours = Top({File("f", "1")}), top_theirs = Top({File("f", "1")});
  top_ours.uid = 1;
  top_theirs.uid = 2;
  EXPECT_EQ(Paths(Merge(&base, top_ours, top_theirs)), Lines{""});
  // A choice takes one side's metadata; the entries are still merged.
  TreeEntry mode_theirs = expected;
  mode_theirs.mode = 0750;
  ExpectMerged(Merge(&base, Top({ours_d}), Top({theirs_d}), {{"d", ConflictChoice::kTheirs}}), Top({mode_theirs}));
  EXPECT_EQ(Paths(Merge(&base, Top({ours_d}), Top({theirs_d}), {{"d", ConflictChoice::kBoth}})), Lines{"d"});
}

TEST_F(TreeMergeTest, NestedDirectoriesCostWhatChanged) {
  // Every level holds many unchanged directories; each side changes one
  // file at the bottom of a different branch of the same path.
  constexpr int kWidth = 40, kDepth = 5;
  std::function<TreeEntry(int, const std::string&, const std::string&)> level =
      [&](int depth, const std::string& left, const std::string& right) -> TreeEntry {
    std::vector<TreeEntry> entries;
    for (int i = 0; i < kWidth; i++) entries.push_back(Dir("same" + std::to_string(i), {File("f", std::to_string(i))}));
    if (depth == kDepth) {
      entries.push_back(File("left", left));
      entries.push_back(File("right", right));
    } else {
      entries.push_back(level(depth + 1, left, right));
      entries.back().name = "down";
    }
    return Dir(depth == 0 ? "" : "down", entries);
  };
  TreeEntry base = level(0, "l", "r"), ours = level(0, "L", "r"), theirs = level(0, "l", "R");
  TreeMergeResult r = Merge(&base, ours, theirs);
  ExpectMerged(r, level(0, "L", "R"));
  EXPECT_EQ(r.stats.trees_read, 3u * (kDepth + 1)) << "only the trees on the changed path";
  EXPECT_EQ(r.stats.trees_written, uint64_t{kDepth} + 1);
  EXPECT_EQ(r.stats.subtrees_skipped, uint64_t{kWidth} * (kDepth + 1));

  // A side that changed nothing: the other side is the merge, nothing is read.
  TreeMergeResult one_sided = Merge(&base, base, theirs);
  ExpectMerged(one_sided, theirs);
  EXPECT_EQ(one_sided.stats.trees_read, 0u);
  EXPECT_EQ(one_sided.stats.trees_written, 0u);

  // Both sides editing the same file deep down: one conflict, with its path.
  TreeMergeResult c = Merge(&base, level(0, "L", "r"), level(0, "X", "r"));
  std::string path;
  for (int i = 0; i < kDepth; i++) path += "down/";
  EXPECT_EQ(Paths(c), Lines{path + "left"});
}

TEST_F(TreeMergeTest, WithoutABaseEverythingIsAnAddition) {
  TreeEntry ours = Top({File("a", "1"), File("same", "s")});
  TreeEntry theirs = Top({File("b", "2"), File("same", "s")});
  ExpectMerged(Merge(nullptr, ours, theirs), Top({File("a", "1"), File("b", "2"), File("same", "s")}));
  EXPECT_EQ(Paths(Merge(nullptr, ours, Top({File("a", "other")}))), Lines{"a"});
}

TEST_F(TreeMergeTest, AHardLinkToAPathTheOtherSideDeletedIsAConflict) {
  TreeEntry base = Top({File("target", "data"), File("x", "1")});
  // Ours links to target; theirs deletes it.
  TreeEntry ours = Top({Link("zlink", "target"), File("target", "data"), File("x", "1")});
  TreeEntry theirs = Top({File("x", "1")});
  TreeMergeResult r = Merge(&base, ours, theirs);
  EXPECT_EQ(Paths(r), Lines{"zlink"});
  EXPECT_EQ(r.conflicts[0].reason, "a hard link to 'target', which the other side deleted or replaced");
  // The same from inside a directory only one side has (taken by its id).
  TreeEntry ours_dir = Top({Dir("znew", {Link("l", "target")}), File("target", "data"), File("x", "1")});
  EXPECT_EQ(Paths(Merge(&base, theirs, ours_dir)), Lines{"znew/l"});
  // Or replaced by a directory.
  TreeEntry theirs_dir = Top({Dir("target", {}), File("x", "1")});
  EXPECT_EQ(Paths(Merge(&base, ours, theirs_dir)), Lines{"zlink"});
}

TEST_F(TreeMergeTest, AHardLinkToDataTheOtherSideChangedIsKept) {
  TreeEntry base = Top({File("target", "data"), File("x", "1")});
  TreeEntry ours = Top({Link("zlink", "target"), File("target", "data"), File("x", "1")});
  TreeEntry theirs = Top({File("target", "new data"), File("x", "2")});
  ExpectMerged(Merge(&base, ours, theirs), Top({Link("zlink", "target"), File("target", "new data"), File("x", "2")}));
  // A link both sides already had is not looked at again: the side that
  // deleted its target also changed the link (here, into the data itself).
  TreeEntry linked = Top({Link("zlink", "target"), File("target", "data")});
  TreeEntry moved = Top({File("zlink", "data")});
  TreeEntry touched = Top({Link("zlink", "target"), File("other", "o"), File("target", "data")});
  ExpectMerged(Merge(&linked, moved, touched), Top({File("other", "o"), File("zlink", "data")}));
}

}  // namespace
}  // namespace strata
