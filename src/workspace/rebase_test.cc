// RebaseOnto: a workspace whose commit was refused with "head moved" replays
// its changes on the new head, or lists the conflicts and changes nothing.
#include "store/revision.h"
#include "store/tree_diff.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

class RebaseTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    base_ = MakeBase();
    ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base_).ok());
  }
  Hash CommitOk(Workspace& ws) {
    auto out = ws.Commit(CommitRequest{"m", "tester", ""});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(out.ok() && out->commit) << "nothing was committed";
    return out.ok() && out->commit ? *out->commit : Hash();
  }
  RebaseOutcome RebaseOk(Workspace& ws, const Hash& onto) {
    auto out = ws.RebaseOnto(onto, {});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? std::move(out).value() : RebaseOutcome();
  }
  InodeId At(Workspace& ws, const std::string& path) {
    InodeId at = kRootInode;
    for (size_t start = 0; start <= path.size();) {
      size_t slash = std::min(path.find('/', start), path.size());
      at = L(ws, at, path.substr(start, slash - start)).ino;
      start = slash + 1;
    }
    return at;
  }
  // The paths of the non-directory entries that differ between two trees.
  std::vector<std::string> ChangedFiles(const Hash& a, const Hash& b) {
    std::vector<std::string> out;
    Status s = DiffTrees(*store_, a, b, [&](const TreeChange& c) {
      const TreeEntry& e = c.new_entry ? *c.new_entry : *c.old_entry;
      if (e.kind != EntryKind::kDirectory) out.push_back(std::string(1, ChangeLetter(c.type)) + " " + c.path);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  Hash RootOf(const Hash& commit) { return store_->GetCommit(commit)->root; }

  Hash base_;
};

using Lines = std::vector<std::string>;

TEST_F(RebaseTest, TheLoserOfACommitRaceRebasesAndCommits) {
  auto one = CreateAndOpen(base_, "one");
  auto two = CreateAndOpen(base_, "two");
  ASSERT_TRUE(one && two);
  W(*one, At(*one, "a/small"), 0, "HELLO from one");
  W(*one, Mk(*one, kRootInode, "from_one").ino, 0, "1");
  W(*two, At(*two, "c/x"), 0, "two");
  W(*two, Mk(*two, At(*two, "a/sub"), "new2").ino, 0, "2");
  ASSERT_TRUE(two->Unlink(At(*two, "b"), "other").ok());

  Hash c1 = CommitOk(*one);
  auto refused = two->Commit(CommitRequest{"m", "tester", ""});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsConflict());
  EXPECT_NE(refused.status().message().find("head moved"), std::string::npos) << refused.status().ToString();

  RebaseOutcome out = RebaseOk(*two, c1);
  EXPECT_FALSE(out.up_to_date);
  EXPECT_TRUE(out.conflicts.empty());
  EXPECT_TRUE(out.differs);
  EXPECT_EQ(two->Info().base, c1);
  EXPECT_EQ(two->Info().branch, "main");
  // Both sides' changes, and the base hard link naming the file one changed.
  EXPECT_EQ(ReadAll(*two, At(*two, "a/small")), "HELLO from one");
  EXPECT_EQ(ReadAll(*two, At(*two, "b/link_to_small")), "HELLO from one");
  EXPECT_EQ(At(*two, "b/link_to_small"), At(*two, "a/small"));
  EXPECT_EQ(ReadAll(*two, At(*two, "from_one")), "1");
  EXPECT_EQ(ReadAll(*two, At(*two, "c/x")), "two");
  EXPECT_EQ(ReadAll(*two, At(*two, "a/sub/new2")), "2");
  EXPECT_EQ(Errno(two->Lookup(At(*two, "b"), "other")), ENOENT);
  EXPECT_EQ(ReadAll(*two, At(*two, "a/big")), big_);
  // What the next commit would hold is the merged tree, and against the new
  // head it is exactly two's changes.
  auto snap = two->Snapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->root, out.root);
  // (b/link_to_small: two wrote b, and a commit records the linked inode's
  // metadata on a link entry, as import does; the fixture's base link has none.)
  EXPECT_EQ(ChangedFiles(RootOf(c1), out.root), (Lines{"A a/sub/new2", "M b/link_to_small", "D b/other", "M c/x"}));

  // Opened again, it is still rebased; its commit goes on top of one's.
  two.reset();
  two = std::move(Workspace::Open(*store_, "two")).value();
  EXPECT_EQ(two->Info().base, c1);
  Hash c2 = CommitOk(*two);
  EXPECT_EQ(store_->GetCommit(c2)->parents, std::vector<Hash>{c1});
  EXPECT_EQ(*store_->GetRef("main"), c2);
  EXPECT_EQ(RootOf(c2), out.root);
  EXPECT_EQ(ChangedFiles(RootOf(base_), RootOf(c2)),
            (Lines{"M a/small", "A a/sub/new2", "M b/link_to_small", "D b/other", "M c/x", "A from_one"}));
  EXPECT_EQ(two->Info().changed_inodes, 0u);
}

TEST_F(RebaseTest, AConflictListsThePathsAndChangesNothing) {
  auto one = CreateAndOpen(base_, "one");
  auto two = CreateAndOpen(base_, "two");
  ASSERT_TRUE(one && two);
  W(*one, At(*one, "a/small"), 0, "ONE");
  ASSERT_TRUE(one->Unlink(At(*one, "c"), "x").ok());
  Hash c1 = CommitOk(*one);

  const InodeId small = At(*two, "a/small");
  W(*two, small, 0, "TWO");
  W(*two, At(*two, "c/x"), 0, "changed, deleted there");
  W(*two, Mk(*two, kRootInode, "mine").ino, 0, "mine");
  const uint64_t changed = two->Info().changed_inodes;

  RebaseOutcome out = RebaseOk(*two, c1);
  ASSERT_EQ(out.conflicts.size(), 2u);
  EXPECT_EQ(out.conflicts[0], (MergeConflict{"a/small", "changed on both sides"}));
  EXPECT_EQ(out.conflicts[1], (MergeConflict{"c/x", "deleted on one side, changed on the other"}));
  EXPECT_TRUE(out.stale.entries.empty() && out.stale.inodes.empty());
  // Nothing changed: the base, the inodes, the bytes, the changed marks.
  EXPECT_EQ(two->Info().base, base_);
  EXPECT_EQ(two->Info().changed_inodes, changed);
  EXPECT_EQ(At(*two, "a/small"), small);
  EXPECT_EQ(ReadAll(*two, small), "TWOlo");
  EXPECT_EQ(ReadAll(*two, At(*two, "mine")), "mine");
  EXPECT_EQ(ReadAll(*two, At(*two, "c/x")), "changed, deleted there");
  auto refused = two->Commit(CommitRequest{"m", "tester", ""});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsConflict()) << "still based on the old head";
  // Writes go on as before, and the tree it would commit holds them.
  W(*two, small, 0, "ONE");
  auto snap = two->Snapshot();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->base, base_);
}

TEST_F(RebaseTest, OntoItsOwnBaseIsUpToDate) {
  auto ws = CreateAndOpen(base_);
  ASSERT_TRUE(ws);
  W(*ws, At(*ws, "top"), 0, "x");
  RebaseOutcome out = RebaseOk(*ws, base_);
  EXPECT_TRUE(out.up_to_date);
  EXPECT_EQ(ReadAll(*ws, At(*ws, "top")), "xop file");
}

TEST_F(RebaseTest, WithoutChangesItTakesTheNewHeadAndHasNothingToCommit) {
  auto one = CreateAndOpen(base_, "one");
  auto two = CreateAndOpen(base_, "two");
  ASSERT_TRUE(one && two);
  ASSERT_TRUE(one->Unlink(At(*one, "a"), "big").ok());
  Hash c1 = CommitOk(*one);
  const InodeId top = At(*two, "top");
  two->Ref(top);  // the kernel holds it: it lives on, unnamed
  RebaseOutcome out = RebaseOk(*two, c1);
  EXPECT_TRUE(out.conflicts.empty());
  EXPECT_FALSE(out.differs);
  EXPECT_EQ(out.root, RootOf(c1));
  EXPECT_FALSE(out.stale.inodes.empty()) << "the held inode and the root";
  EXPECT_EQ(Errno(two->Lookup(At(*two, "a"), "big")), ENOENT);
  EXPECT_EQ(two->GetAttr(top)->nlink, 0u);
  EXPECT_EQ(ReadAll(*two, top), "top file");
  auto again = two->Commit(CommitRequest{"m", "tester", ""});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->commit) << "nothing to commit";
}

}  // namespace
}  // namespace strata::workspace_testing
