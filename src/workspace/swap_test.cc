// The swap of a hard reset or a rebase as the kernel sees it: it walks paths
// through the directories it holds and continues listings by offset, and
// hears of the swap only afterwards. A path in both trees must resolve
// through a held directory at once, and a listing going on across the swap
// must return every name both sides have exactly once.
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

constexpr int kFiles = 1500;

class SwapTest : public WorkspaceTest {
 protected:
  std::string FileName(int i) { return "f" + std::to_string(i); }
  // d/ with kFiles files, d/sub/deep, and top.
  Hash Base() {
    std::vector<TreeEntry> files;
    for (int i = 0; i < kFiles; i++) files.push_back(File(FileName(i), "old " + std::to_string(i)));
    files.push_back(Dir("sub", {File("deep", "deep")}));
    Hash base = PutCommit({Dir("d", std::move(files)), File("top", "top")});
    EXPECT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base).ok());
    return base;
  }
  // A second commit on main, made through another workspace: d/f7 changed,
  // d/f8 removed, d/new and z added.
  Hash Second(const Hash& base) {
    auto other = CreateAndOpen(base, "other");
    InodeId d = L(*other, kRootInode, "d").ino;
    W(*other, L(*other, d, "f7").ino, 0, "NEW");
    EXPECT_TRUE(other->Unlink(d, "f8").ok());
    W(*other, Mk(*other, d, "new").ino, 0, "new");
    W(*other, Mk(*other, kRootInode, "z").ino, 0, "z");
    auto c = other->Commit(CommitRequest{"second", "tester", ""});
    EXPECT_TRUE(c.ok() && c->commit);
    return c.ok() && c->commit ? *c->commit : Hash();
  }
  // Continues a listing from offset to its end (as the kernel does, with the
  // end it saw when the listing started).
  std::vector<std::string> Rest(Workspace& ws, InodeId dir, uint64_t offset, uint64_t end) {
    std::vector<std::string> out;
    for (;;) {
      auto page = ws.ReadDirectory(dir, offset, 200);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok() || page->empty()) break;
      for (const DirEntry& e : *page) {
        if (e.offset > end) return out;
        out.push_back(e.name);
        offset = e.offset;
      }
    }
    return out;
  }

  // Holds d (and root) as the kernel does, half-lists d, swaps with `swap`,
  // then checks what a lookup and the rest of the listing see.
  template <typename Swap>
  void CheckSwap(Swap swap) {
    Hash base = Base();
    auto ws = CreateAndOpen(base);
    ASSERT_TRUE(ws);
    Attr d = L(*ws, kRootInode, "d");
    ws->Ref(d.ino);  // a cached dentry: the kernel walks d/... through it
    Attr sub = L(*ws, d.ino, "sub");
    ws->Ref(sub.ino);
    Attr f3 = L(*ws, d.ino, "f3");
    ws->Ref(f3.ino);
    auto state = ws->GetDirectoryState(d.ino);
    ASSERT_TRUE(state.ok());
    auto first = ws->ReadDirectory(d.ino, 0, 700);
    ASSERT_TRUE(first.ok());
    ASSERT_EQ(first->size(), 700u);

    StaleCaches stale = swap(*ws, base);

    // A fresh lookup through the held directory resolves in the new tree.
    auto f5 = ws->Lookup(d.ino, "f5");
    ASSERT_TRUE(f5.ok()) << "a path in both trees vanished: " << f5.status().ToString();
    EXPECT_EQ(ReadAll(*ws, f5->ino), "old 5");
    EXPECT_EQ(ReadAll(*ws, L(*ws, d.ino, "f7").ino), "NEW 7");
    EXPECT_EQ(Errno(ws->Lookup(d.ino, "f8")), ENOENT);
    EXPECT_EQ(L(*ws, kRootInode, "d").ino, d.ino) << "the held directory keeps its number";
    EXPECT_EQ(L(*ws, d.ino, "sub").ino, sub.ino);
    EXPECT_EQ(ReadAll(*ws, L(*ws, sub.ino, "deep").ino), "deep");
    // The held file keeps its old bytes, unnamed; its name is new.
    EXPECT_NE(L(*ws, d.ino, "f3").ino, f3.ino);
    EXPECT_EQ(ws->GetAttr(f3.ino)->nlink, 0u);

    // The listing in progress goes on: every name both sides have, once.
    std::multiset<std::string> seen;
    for (const DirEntry& e : *first) seen.insert(e.name);
    for (const std::string& n : Rest(*ws, d.ino, first->back().offset, state->end_offset)) seen.insert(n);
    for (int i = 0; i < kFiles; i++) {
      if (i == 8) continue;
      EXPECT_EQ(seen.count(FileName(i)), 1u) << FileName(i);
    }
    EXPECT_EQ(seen.count("sub"), 1u);
    EXPECT_LE(seen.count("f8"), 1u);
    EXPECT_EQ(seen.count("new"), 0u) << "created after the listing started";
    // A listing started now shows exactly the new content.
    std::set<std::string> now = Names(*ws, d.ino);
    EXPECT_EQ(now.size(), static_cast<size_t>(kFiles) + 1) << "f8 gone, new and sub there";
    EXPECT_TRUE(now.count("new") && !now.count("f8"));

    // The kernel is told about the held file's name and the new name in the
    // held directory (it may have cached it as absent), not about d itself.
    auto has = [&](InodeId dir, const std::string& name) {
      return std::find(stale.entries.begin(), stale.entries.end(), std::make_pair(dir, name)) != stale.entries.end();
    };
    EXPECT_TRUE(has(d.ino, "f3"));
    EXPECT_TRUE(has(d.ino, "new"));
    EXPECT_TRUE(has(kRootInode, "z"));
    EXPECT_FALSE(has(kRootInode, "d")) << "d's dentry stays valid";

    // Nothing of this is a change; reopened, the same.
    auto snap = ws->Snapshot();
    ASSERT_TRUE(snap.ok());
    ws->Unref(d.ino, 1);
    ws->Unref(sub.ino, 1);
    ws->Unref(f3.ino, 1);
    ws.reset();
    ws = std::move(Workspace::Open(*store_, "ws")).value();
    EXPECT_EQ(Names(*ws, L(*ws, kRootInode, "d").ino).size(), static_cast<size_t>(kFiles) + 1);
    EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "d").ino, "f7").ino), "NEW 7");
  }
};

TEST_F(SwapTest, AHardResetKeepsHeldDirectoriesAndListingsInProgress) {
  CheckSwap([&](Workspace& ws, const Hash& base) {
    Hash second = Second(base);
    auto out = ws.Reset(ResetRequest{second, true});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? out->stale : StaleCaches();
  });
}

TEST_F(SwapTest, ARebaseKeepsHeldDirectoriesAndListingsInProgress) {
  CheckSwap([&](Workspace& ws, const Hash& base) {
    Hash second = Second(base);
    W(ws, Mk(ws, kRootInode, "mine").ino, 0, "mine");  // a change of its own to replay
    auto out = ws.RebaseOnto(second, {});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(out.ok() && out->conflicts.empty());
    EXPECT_EQ(ReadAll(ws, L(ws, kRootInode, "mine").ino), "mine");
    return out.ok() ? out->stale : StaleCaches();
  });
}

// A held directory whose path is a file (or nothing) in the new tree stays
// what it was: empty, unnamed, refusing new entries.
TEST_F(SwapTest, AHeldDirectoryWhosePathIsNoDirectoryStaysUnnamed) {
  Hash base = PutCommit({Dir("x", {File("a", "a")}), Dir("y", {File("b", "b")})});
  Hash next = PutCommit({File("x", "now a file")});
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr x = L(*ws, kRootInode, "x");
  Attr y = L(*ws, kRootInode, "y");
  ws->Ref(x.ino);
  ws->Ref(y.ino);
  auto out = ws->Reset(ResetRequest{next, true});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ws->GetAttr(x.ino)->nlink, 0u);
  EXPECT_EQ(ws->GetAttr(y.ino)->nlink, 0u);
  EXPECT_TRUE(Names(*ws, x.ino).empty());
  EXPECT_EQ(Errno(ws->MakeNode(y.ino, "n", S_IFREG | 0644, 0, kWho)), ENOENT);
  Attr file = L(*ws, kRootInode, "x");
  EXPECT_NE(file.ino, x.ino);
  EXPECT_EQ(ReadAll(*ws, file.ino), "now a file");
  EXPECT_EQ(Errno(ws->Lookup(kRootInode, "y")), ENOENT);
}

// A lookup answered before a swap but referenced after it (the kernel's
// reference is taken once the answer is ready) must not hand out an inode the
// swap deleted: RefIfCurrent refuses it, and a lookup made again resolves in
// the new tree. One referenced before the swap keeps its inode alive.
TEST_F(SwapTest, AnAnswerFromBeforeASwapIsNotReferencedAfterIt) {
  Hash base = Base();
  Hash second = Second(base);
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  InodeId d = L(*ws, kRootInode, "d").ino;
  ws->Ref(d);
  const uint64_t before = ws->ContentSwaps();
  Attr late = L(*ws, d, "f5");   // answered; its reference not taken yet
  Attr early = L(*ws, d, "f6");
  ASSERT_TRUE(ws->RefIfCurrent(early.ino, before));
  ASSERT_TRUE(ws->Reset(ResetRequest{second, true}).ok());
  EXPECT_NE(ws->ContentSwaps(), before);
  EXPECT_FALSE(ws->RefIfCurrent(late.ino, before)) << "a reference to an inode of the old tree";
  auto gone = ws->GetAttr(late.ino);
  EXPECT_FALSE(gone.ok()) << "the swap deleted the inode nobody held";
  const uint64_t now = ws->ContentSwaps();
  Attr again = L(*ws, d, "f5");
  EXPECT_TRUE(ws->RefIfCurrent(again.ino, now));
  EXPECT_EQ(ReadAll(*ws, again.ino), "old 5");
  auto kept = ws->GetAttr(early.ino);
  ASSERT_TRUE(kept.ok()) << "a referenced inode outlives the swap";
  EXPECT_EQ(kept->nlink, 0u);
  ws->Unref(again.ino, 1);
  ws->Unref(early.ino, 1);
  ws->Unref(d, 1);
}

}  // namespace
}  // namespace strata::workspace_testing
