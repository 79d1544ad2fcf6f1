// Reset: a new base; with hard, the content becomes the commit's tree.
#include "store/revision.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

class ResetTest : public WorkspaceTest {
 protected:
  Hash CommitOk(Workspace& ws) {
    auto out = ws.Commit(CommitRequest{"m", "tester", ""});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(out.ok() && out->commit) << "nothing was committed";
    return out.ok() && out->commit ? *out->commit : Hash();
  }
  ResetOutcome ResetOk(Workspace& ws, const Hash& commit, bool hard) {
    auto out = ws.Reset(ResetRequest{commit, hard});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : ResetOutcome();
  }
  // A second commit on the branch: a/small rewritten, c/x gone, z added.
  Hash SecondCommit(const Hash& base) {
    auto other = CreateAndOpen(base, "other");
    Attr a = L(*other, kRootInode, "a");
    W(*other, L(*other, a.ino, "small").ino, 0, "HELLO");
    EXPECT_TRUE(other->Unlink(L(*other, kRootInode, "c").ino, "x").ok());
    W(*other, Mk(*other, kRootInode, "z").ino, 0, "zed");
    return CommitOk(*other);
  }
};

TEST_F(ResetTest, HardMakesTheContentTheCommitsTree) {
  Hash base = MakeBase();
  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
  Hash second = SecondCommit(base);
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr small = L(*ws, a.ino, "small");
  W(*ws, small.ino, 0, "local");
  Mk(*ws, kRootInode, "mine");
  ws->Ref(small.ino);  // the kernel holds the old file open

  ResetOutcome out = ResetOk(*ws, second, true);
  EXPECT_TRUE(out.content_replaced);
  EXPECT_EQ(ws->Info().base, second);
  EXPECT_EQ(ws->Info().changed_inodes, 0u) << "a hard reset discards every change";
  EXPECT_EQ(Names(*ws, kRootInode), (std::set<std::string>{"a", "b", "c", "empty", "sym", "top", "z"}));
  Attr new_small = L(*ws, L(*ws, kRootInode, "a").ino, "small");
  EXPECT_EQ(ReadAll(*ws, new_small.ino), "HELLO");
  EXPECT_TRUE(Names(*ws, L(*ws, kRootInode, "c").ino).empty());
  EXPECT_EQ(Errno(ws->Lookup(kRootInode, "mine")), ENOENT);
  // Names the kernel may cache are reported: the held file's old name, new top-level names.
  auto has = [&](InodeId dir, const std::string& name) {
    return std::find(out.stale.entries.begin(), out.stale.entries.end(), std::make_pair(dir, name)) !=
           out.stale.entries.end();
  };
  EXPECT_TRUE(has(a.ino, "small"));
  EXPECT_TRUE(has(kRootInode, "z"));

  // The held file lives on without a name, with its old bytes; its number is
  // not reused.
  EXPECT_NE(new_small.ino, small.ino);
  EXPECT_GT(new_small.ino, small.ino);
  EXPECT_EQ(ReadAll(*ws, small.ino), "local");
  EXPECT_EQ(ws->GetAttr(small.ino)->nlink, 0u);
  ws->Unref(small.ino, 1);
  EXPECT_EQ(Errno(ws->GetAttr(small.ino)), ENOENT) << "deleted when the kernel let go";
  EXPECT_EQ(Errno(ws->GetAttr(a.ino)), ENOENT) << "an inode nobody held is gone at once";

  // Nothing to commit; the snapshot is the commit's tree; opened again, the same.
  auto snap = ws->Snapshot();
  ASSERT_TRUE(snap.ok());
  EXPECT_FALSE(snap->differs);
  EXPECT_EQ(snap->root, store_->GetCommit(second)->root);
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ws->Info().base, second);
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "a").ino, "small").ino), "HELLO");
  auto out2 = ws->Commit(CommitRequest{"m", "tester", ""});
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_FALSE(out2->commit) << "nothing to commit after a hard reset";
}

TEST_F(ResetTest, HardToTheBaseDiscardsChangesAndKeepsBaseHardLinks) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr b = L(*ws, kRootInode, "b");
  ASSERT_TRUE(ws->Unlink(b.ino, "other").ok());
  ResetOk(*ws, base, true);
  EXPECT_EQ(ws->Info().changed_inodes, 0u);
  Attr link = L(*ws, L(*ws, kRootInode, "b").ino, "link_to_small");
  EXPECT_EQ(link.ino, L(*ws, L(*ws, kRootInode, "a").ino, "small").ino) << "the base hard link resolves again";
  EXPECT_EQ(ReadAll(*ws, link.ino), "hello");
  EXPECT_TRUE(Names(*ws, L(*ws, kRootInode, "b").ino).count("other"));
}

TEST_F(ResetTest, MixedKeepsTheContentAndTheNextCommitHoldsItOnTheNewBase) {
  Hash base = MakeBase();
  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
  Hash second = SecondCommit(base);
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr mine = Mk(*ws, kRootInode, "mine");
  W(*ws, mine.ino, 0, "mine");
  ResetOutcome out = ResetOk(*ws, second, false);
  EXPECT_FALSE(out.content_replaced);
  EXPECT_TRUE(out.differs);
  EXPECT_EQ(ws->Info().base, second);
  EXPECT_EQ(ReadAll(*ws, mine.ino), "mine") << "the content is untouched, inodes too";
  Hash c = CommitOk(*ws);
  Commit commit = *store_->GetCommit(c);
  EXPECT_EQ(commit.parents, std::vector<Hash>{second});
  // The commit holds the workspace's content: the base's tree plus "mine",
  // which undoes what the second commit changed.
  EXPECT_TRUE(LookupPath(*store_, commit.root, "mine").ok());
  EXPECT_TRUE(LookupPath(*store_, commit.root, "c/x").ok());
  EXPECT_FALSE(LookupPath(*store_, commit.root, "z").ok());

  // Mixed onto the commit it already equals: nothing to commit.
  ResetOutcome same = ResetOk(*ws, c, false);
  EXPECT_FALSE(same.differs);
  auto again = ws->Commit(CommitRequest{"m", "tester", ""});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->commit);
}


// A workspace started empty has a root that stood for no base tree; a reset or
// rebase gives it one. Every lookup used to fail ("base directory without a
// base path"), also after reopening.
TEST_F(ResetTest, AWorkspaceStartedEmptyTakesItsCommitsTreeByResetAndRebase) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  W(*ws, Mk(*ws, kRootInode, "a").ino, 0, "a");
  W(*ws, Mk(*ws, Mkdir(*ws, kRootInode, "d").ino, "f").ino, 0, "f");
  Hash m1 = CommitOk(*ws);
  W(*ws, L(*ws, kRootInode, "a").ino, 0, "changed");
  Mk(*ws, kRootInode, "scratch");

  ResetOutcome out = ResetOk(*ws, m1, true);
  EXPECT_TRUE(out.content_replaced);
  auto holds_m1 = [&](Workspace& w) {
    EXPECT_EQ(Names(w, kRootInode), (std::set<std::string>{"a", "d"}));
    EXPECT_EQ(ReadAll(w, L(w, kRootInode, "a").ino), "a");
    EXPECT_EQ(ReadAll(w, L(w, L(w, kRootInode, "d").ino, "f").ino), "f");
    auto snap = w.Snapshot();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_FALSE(snap->differs);
    EXPECT_EQ(snap->root, store_->GetCommit(m1)->root);
  };
  holds_m1(*ws);
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  holds_m1(*ws);

  // It goes on committing; a hard reset back and a mixed one forward work too.
  W(*ws, Mk(*ws, L(*ws, kRootInode, "d").ino, "g").ino, 0, "g");
  Hash m2 = CommitOk(*ws);
  ResetOk(*ws, m1, true);
  holds_m1(*ws);
  ResetOutcome mixed = ResetOk(*ws, m2, false);
  EXPECT_TRUE(mixed.differs) << "the content is m1's, the base m2";
  Hash m3 = CommitOk(*ws);
  EXPECT_EQ(store_->GetCommit(m3)->root, store_->GetCommit(m1)->root);

  // Rebase: another workspace (started empty too) moves the branch; this one
  // replays its change on top.
  auto other = CreateAndOpen(m3, "other");
  ASSERT_TRUE(other);
  W(*other, Mk(*other, kRootInode, "theirs").ino, 0, "t");
  Hash m4 = CommitOk(*other);
  W(*ws, Mk(*ws, L(*ws, kRootInode, "d").ino, "mine").ino, 0, "m");
  auto rebased = ws->RebaseOnto(m4, {});
  ASSERT_TRUE(rebased.ok()) << rebased.status().ToString();
  ASSERT_TRUE(rebased->conflicts.empty());
  EXPECT_EQ(Names(*ws, kRootInode), (std::set<std::string>{"a", "d", "theirs"}));
  EXPECT_EQ(Names(*ws, L(*ws, kRootInode, "d").ino), (std::set<std::string>{"f", "mine"}));
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "d").ino, "mine").ino), "m");
  Hash m5 = CommitOk(*ws);
  EXPECT_EQ(store_->GetCommit(m5)->parents, std::vector<Hash>{m4});
  EXPECT_TRUE(LookupPath(*store_, store_->GetCommit(m5)->root, "theirs").ok());
}

// A workspace started empty and never committed takes a commit by a hard
// reset: its base hard links resolve, also after reopening.
TEST_F(ResetTest, AWorkspaceNeverCommittedTakesACommitByAHardReset) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  W(*ws, Mk(*ws, kRootInode, "new").ino, 0, "n");
  ResetOk(*ws, base, true);
  EXPECT_EQ(Names(*ws, kRootInode), (std::set<std::string>{"a", "b", "c", "empty", "sym", "top"}));
  Attr link = L(*ws, L(*ws, kRootInode, "b").ino, "link_to_small");
  EXPECT_EQ(link.ino, L(*ws, L(*ws, kRootInode, "a").ino, "small").ino) << "base hard links resolve";
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "a").ino, "small").ino), "hello");
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "b").ino, "link_to_small").ino), "hello");
}

}  // namespace
}  // namespace strata::workspace_testing
