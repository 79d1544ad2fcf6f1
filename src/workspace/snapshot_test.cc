// Snapshot: the tree of the next commit, without a commit and without
// touching the workspace's record of what changed.
#include <atomic>
#include <thread>

#include "store/revision.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

class SnapshotTest : public WorkspaceTest {
 protected:
  WorkspaceSnapshot SnapshotOk(Workspace& ws) {
    auto snap = ws.Snapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? *snap : WorkspaceSnapshot();
  }
  // The bytes of the file at path below tree root.
  std::string FileIn(const Hash& root, const std::string& path) {
    auto e = LookupPath(*store_, root, path);
    EXPECT_TRUE(e.ok()) << path << ": " << e.status().ToString();
    if (!e.ok()) return "<missing>";
    std::string out;
    for (const ChunkRef& ref : e->chunks) out += *store_->Get(ref.id, ObjectType::kChunk);
    return out;
  }
  bool Has(const Hash& root, const std::string& path) { return LookupPath(*store_, root, path).ok(); }
  Hash CommitOk(Workspace& ws) {
    auto out = ws.Commit(CommitRequest{"m", "tester", ""});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(out.ok() && out->commit) << "nothing was committed";
    return out.ok() && out->commit ? *out->commit : Hash();
  }
};

TEST_F(SnapshotTest, AnUnchangedWorkspaceIsItsBase) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  WorkspaceSnapshot snap = SnapshotOk(*ws);
  Commit c = *store_->GetCommit(base);
  EXPECT_EQ(snap.base, base);
  EXPECT_EQ(snap.root, c.root);
  EXPECT_EQ(snap.root_meta, c.root_meta);
  EXPECT_FALSE(snap.differs);
  EXPECT_EQ(snap.stats.directories_written, 0u) << "nothing changed: no tree is written";
}

TEST_F(SnapshotTest, HoldsTheChangesAndLeavesThemChanges) {
  Hash base = MakeBase();
  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr small = L(*ws, a.ino, "small");
  W(*ws, small.ino, 5, " world");
  Attr c = L(*ws, kRootInode, "c");
  Attr n = Mk(*ws, c.ino, "new");
  W(*ws, n.ino, 0, "new file");
  ASSERT_TRUE(ws->Unlink(L(*ws, kRootInode, "b").ino, "other").ok());
  ASSERT_TRUE(ws->SetXattr(kRootInode, "user.root", "changed", 0).ok());
  const uint64_t changed = ws->Info().changed_inodes;
  ASSERT_GT(changed, 0u);

  WorkspaceSnapshot snap = SnapshotOk(*ws);
  EXPECT_TRUE(snap.differs);
  EXPECT_EQ(snap.base, base);
  EXPECT_EQ(FileIn(snap.root, "a/small"), "hello world");
  EXPECT_EQ(FileIn(snap.root, "c/new"), "new file");
  EXPECT_FALSE(Has(snap.root, "b/other"));
  EXPECT_EQ(FileIn(snap.root, "a/big"), big_) << "unchanged files are in it too";
  EXPECT_EQ(snap.root_meta.xattrs, (std::vector<std::pair<std::string, std::string>>{{"user.root", "changed"}}));
  EXPECT_EQ(snap.stats.files_captured, 2u);

  // The workspace did not move: same base, branch, marks and data.
  EXPECT_EQ(ws->Info().changed_inodes, changed);
  EXPECT_EQ(ws->Info().base, base);
  EXPECT_EQ(*store_->GetRef("main"), base);
  EXPECT_EQ(ReadAll(*ws, small.ino), "hello world");
  // A second snapshot finds the same trees; the commit holds exactly them.
  EXPECT_EQ(SnapshotOk(*ws).root, snap.root);
  Hash commit = CommitOk(*ws);
  EXPECT_EQ(store_->GetCommit(commit)->root, snap.root);
  EXPECT_EQ(store_->GetCommit(commit)->root_meta, snap.root_meta);
  WorkspaceSnapshot after = SnapshotOk(*ws);
  EXPECT_FALSE(after.differs);
  EXPECT_EQ(after.base, commit);
  EXPECT_EQ(after.root, snap.root);
}

TEST_F(SnapshotTest, WritesAfterASnapshotGoToTheNextCommit) {
  Hash base = MakeBase();
  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr big = L(*ws, a.ino, "big");
  W(*ws, big.ino, 1000, "first");
  WorkspaceSnapshot snap = SnapshotOk(*ws);
  W(*ws, big.ino, 2000000, "second");
  std::string expected = big_;
  expected.replace(1000, 5, "first");
  EXPECT_EQ(FileIn(snap.root, "a/big"), expected);
  expected.replace(2000000, 6, "second");
  EXPECT_EQ(ReadAll(*ws, big.ino), expected) << "the snapshot released no written bytes";
  Hash commit = CommitOk(*ws);
  EXPECT_EQ(FileIn(store_->GetCommit(commit)->root, "a/big"), expected);
}

TEST_F(SnapshotTest, ANewEmptyWorkspace) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  WorkspaceSnapshot snap = SnapshotOk(*ws);
  EXPECT_FALSE(snap.base);
  EXPECT_TRUE(snap.differs);
  EXPECT_TRUE(store_->GetTree(snap.root)->entries.empty());
  Attr f = Mk(*ws, kRootInode, "f");
  W(*ws, f.ino, 0, "x");
  EXPECT_EQ(FileIn(SnapshotOk(*ws).root, "f"), "x");
}

TEST_F(SnapshotTest, WritersKeepRunningDuringSnapshots) {
  Hash base = MakeBase();
  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr log = Mk(*ws, kRootInode, "log");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    const std::string record = "0123456789abcdef";
    while (!stop) {
      auto n = ws->Write(log.ino, written, record);
      ASSERT_TRUE(n.ok()) << n.status().ToString();
      written += *n;
    }
  });
  size_t last = 0;
  for (int i = 0; i < 20; i++) {
    WorkspaceSnapshot snap = SnapshotOk(*ws);
    std::string seen = FileIn(snap.root, "log");
    EXPECT_EQ(seen.size() % 16, 0u) << "a snapshot is cut between two writes";
    EXPECT_GE(seen.size(), last);
    last = seen.size();
  }
  stop = true;
  writer.join();
  Hash commit = CommitOk(*ws);
  EXPECT_EQ(FileIn(store_->GetCommit(commit)->root, "log").size(), written.load());
}

}  // namespace
}  // namespace strata::workspace_testing
