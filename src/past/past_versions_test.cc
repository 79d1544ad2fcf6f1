// .strata/ beside a workspace: past versions found by commit id and by
// branch, read-only, hidden from the root's listing, numbered apart.
#include "past/past_versions.h"

#include <sys/stat.h>

#include "past/past_inodes.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

using past_internal::IsPast;

class PastVersionsTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    base_ = MakeBase();
    ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, base_).ok());
    ws_ = CreateAndOpen(base_);
    ASSERT_TRUE(ws_);
    // The second commit changes a/small.
    InodeId small = L(*ws_, L(*ws_, kRootInode, "a").ino, "small").ino;
    ASSERT_TRUE(ws_->SetAttr(small, SetAttrRequest{.size = 0}).ok());
    W(*ws_, small, 0, "changed");
    auto out = ws_->Commit(CommitRequest{"second", "tester", ""});
    ASSERT_TRUE(out.ok() && out->commit) << out.status().ToString();
    second_ = *out->commit;
    Wrap();
  }
  void Wrap(uint32_t max_views = 256) {
    past_.reset();
    PastVersionsOptions options;
    options.workspace_name = [](uint64_t n) { return "past-" + std::to_string(n); };
    options.max_views = max_views;
    past_ = WithPastVersions(*ws_, *store_, std::move(options));
  }
  // The inode at a '/'-separated path, through the wrapper, following
  // symlinks (relative ones, as the branches of .strata/ are) as stat does.
  Result<Attr> At(const std::string& path) {
    std::vector<Attr> dirs(1);  // the directories walked through, the root first
    dirs[0].ino = kRootInode;
    std::vector<std::string> todo;  // names still to walk, the next one last
    auto push_path = [&todo](const std::string& p) {
      std::vector<std::string> names;
      for (size_t start = 0; start < p.size();) {
        size_t slash = std::min(p.find('/', start), p.size());
        names.push_back(p.substr(start, slash - start));
        start = slash + 1;
      }
      todo.insert(todo.end(), names.rbegin(), names.rend());
    };
    push_path(path);
    Attr at = dirs[0];
    for (int links = 0; !todo.empty();) {
      const std::string name = todo.back();
      todo.pop_back();
      if (name == "..") {
        if (dirs.size() > 1) dirs.pop_back();
        at = dirs.back();
        continue;
      }
      STRATA_ASSIGN_OR_RETURN(at, past_->Lookup(dirs.back().ino, name));
      if (S_ISLNK(at.mode)) {
        if (++links > 8) return Status::IOErrorWithMessage("too many links", ELOOP);
        STRATA_ASSIGN_OR_RETURN(std::string target, past_->ReadLink(at.ino));
        push_path(target);
        at = dirs.back();
        continue;
      }
      dirs.push_back(at);
    }
    return at;
  }
  InodeId Ino(const std::string& path) {
    auto a = At(path);
    EXPECT_TRUE(a.ok()) << path << ": " << a.status().ToString();
    return a.ok() ? a->ino : 0;
  }

  Hash base_, second_;
  std::unique_ptr<Workspace> ws_;
  std::unique_ptr<PastVersions> past_;
};

TEST_F(PastVersionsTest, ACommitByIdOrPrefixAndABranchAtItsHeadReadAsTheyWere) {
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/commits/" + base_.ToHex() + "/a/small")), "hello");
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/commits/" + base_.ToHex().substr(0, 8) + "/a/small")), "hello");
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/commits/" + second_.ToHex() + "/a/small")), "changed");
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/branches/main/a/small")), "changed");
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/commits/" + base_.ToHex() + "/b/link_to_small")), "hello");
  auto link = past_->ReadLink(past_->Lookup(Ino(".strata/branches/main"), "sym")->ino);
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(*link, "a/small");
  auto x = past_->GetXattr(Ino(".strata/branches/main/top"), "user.k");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, "v");
  // The workspace itself is unchanged by all this.
  EXPECT_EQ(ReadAll(*past_, Ino("a/small")), "changed");
}

TEST_F(PastVersionsTest, TheRootsListingDoesNotShowItAndCommitsDoNotHoldIt) {
  ASSERT_TRUE(At(".strata").ok());
  EXPECT_EQ(Names(*past_, kRootInode).count(".strata"), 0u);
  EXPECT_EQ(Names(*past_, Ino(".strata")), (std::set<std::string>{"branches", "commits"}));
  EXPECT_TRUE(Names(*past_, Ino(".strata/commits")).empty());
  EXPECT_EQ(Names(*past_, Ino(".strata/branches")), (std::set<std::string>{"main"}));
  W(*past_, Mk(*past_, kRootInode, "new").ino, 0, "n");
  auto out = past_->Commit(CommitRequest{"third", "tester", ""});
  ASSERT_TRUE(out.ok() && out->commit) << out.status().ToString();
  auto tree = store_->GetTree(store_->GetCommit(*out->commit)->root);
  ASSERT_TRUE(tree.ok());
  for (const TreeEntry& e : tree->entries) EXPECT_NE(e.name, ".strata");
}

TEST_F(PastVersionsTest, EveryChangeToAPastVersionIsRefused) {
  const std::string top = ".strata/branches/main";
  const InodeId small = Ino(top + "/a/small"), a = Ino(top + "/a");
  EXPECT_EQ(Errno(past_->Write(small, 0, "x")), EROFS);
  EXPECT_EQ(Errno(past_->SetAttr(small, SetAttrRequest{.size = 0})), EROFS);
  EXPECT_EQ(Errno(past_->MakeNode(a, "f", S_IFREG | 0644, 0, kWho)), EROFS);
  EXPECT_EQ(Errno(past_->MakeDirectory(Ino(".strata/commits"), "d", 0755, kWho)), EROFS);
  EXPECT_EQ(Errno(past_->Unlink(a, "small")), EROFS);
  EXPECT_EQ(Errno(past_->Rename(a, "small", kRootInode, "moved", 0)), EROFS);
  EXPECT_EQ(Errno(past_->Rename(kRootInode, "top", a, "moved", 0)), EROFS);
  EXPECT_EQ(Errno(past_->SetXattr(small, "user.x", "1", 0)), EROFS);
  EXPECT_EQ(Errno(past_->Allocate(small, 0, 0, 10)), EROFS);
  // The name .strata itself, while it is shown.
  EXPECT_EQ(Errno(past_->MakeDirectory(kRootInode, ".strata", 0755, kWho)), EROFS);
  EXPECT_EQ(Errno(past_->RemoveDirectory(kRootInode, ".strata")), EROFS);
  EXPECT_EQ(Errno(past_->Rename(kRootInode, "top", kRootInode, ".strata", 0)), EROFS);
  // Out of a past version into the workspace: a copy, not a link.
  EXPECT_EQ(Errno(past_->Link(small, kRootInode, "linked")), EXDEV);
  const InodeId copy = Mk(*past_, kRootInode, "copy").ino;
  EXPECT_EQ(Errno(past_->CopyRange(small, 0, copy, 0, 5)), EXDEV);
  EXPECT_EQ(ReadAll(*past_, small), "changed");
  EXPECT_EQ(ReadAll(*ws_, Ino("top")), "top file");
}

TEST_F(PastVersionsTest, InodeNumbersNeverMeetTheWorkspacesAndDotDotLeadsBack) {
  const Attr top_of_base = *At(".strata/commits/" + base_.ToHex());
  const Attr top_of_main = *At(".strata/branches/main");
  const Attr small_in_base = *At(".strata/commits/" + base_.ToHex() + "/a/small");
  const Attr small_in_main = *At(".strata/branches/main/a/small");
  const Attr small_now = *At("a/small");
  for (const Attr& p : {top_of_base, top_of_main, small_in_base, small_in_main}) EXPECT_TRUE(IsPast(p.ino));
  EXPECT_FALSE(IsPast(small_now.ino));
  EXPECT_NE(small_in_base.ino, small_in_main.ino);
  EXPECT_NE(top_of_base.ino, top_of_main.ino);
  EXPECT_EQ(top_of_main.ino, Ino(".strata/commits/" + second_.ToHex()));  // one past version per commit
  EXPECT_NE(top_of_base.ino, Ino(".strata/commits/" + base_.ToHex().substr(0, 8)));  // a prefix is a name of its own
  // The same name looked up again is the same inode.
  EXPECT_EQ(Ino(".strata/branches/main/a/small"), small_in_main.ino);
  EXPECT_EQ(past_->GetDirectoryState(top_of_base.ino)->parent, Ino(".strata/commits"));
  EXPECT_EQ(past_->GetDirectoryState(Ino(".strata/branches/main/a"))->parent, top_of_main.ino);
  EXPECT_EQ(past_->GetDirectoryState(Ino(".strata"))->parent, kRootInode);
  // A listing of a past directory names the inodes its lookups give.
  auto listed = past_->ReadDirectory(top_of_main.ino, 0, 100);
  ASSERT_TRUE(listed.ok());
  EXPECT_FALSE(listed->empty());
  for (const DirEntry& e : *listed)
    EXPECT_EQ(e.ino, past_->Lookup(top_of_main.ino, e.name)->ino) << e.name;
}

TEST_F(PastVersionsTest, NamesThatAreNoPastVersionAreNotFound) {
  for (const std::string& name : std::vector<std::string>{".strata/commits/zzzz", ".strata/commits/" + base_.ToHex().substr(0, 3),
                           ".strata/commits/" + std::string(64, '0'), ".strata/branches/nope", ".strata/other"})
    EXPECT_EQ(Errno(At(name)), ENOENT) << name;
  EXPECT_EQ(Errno(past_->GetAttr(past_internal::PastInode(7, 1))), ENOENT);  // a view never opened
}

TEST_F(PastVersionsTest, BranchNamesWithSlashesAreDirectories) {
  ASSERT_TRUE(store_->CompareAndSwapRef("feature/x", std::nullopt, base_).ok());
  auto dir = At(".strata/branches/feature");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(S_ISDIR(dir->mode));
  EXPECT_EQ(Names(*past_, dir->ino), (std::set<std::string>{"x"}));
  EXPECT_EQ(past_->ReadLink(past_->Lookup(dir->ino, "x")->ino).value(), "../../commits/" + base_.ToHex());
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/branches/feature/x/a/small")), "hello");
  EXPECT_EQ(Names(*past_, Ino(".strata/branches")), (std::set<std::string>{"feature", "main"}));
}

TEST_F(PastVersionsTest, ABranchIsASymlinkToItsHeadAndOneThatMovedShowsItsNewHead) {
  auto link = past_->Lookup(Ino(".strata/branches"), "main");
  ASSERT_TRUE(link.ok());
  EXPECT_TRUE(S_ISLNK(link->mode));
  EXPECT_EQ(past_->ReadLink(link->ino).value(), "../commits/" + second_.ToHex());
  EXPECT_EQ(link->size, ("../commits/" + second_.ToHex()).size());
  EXPECT_EQ(Ino(".strata/branches/main"), Ino(".strata/commits/" + second_.ToHex()));
  const InodeId old_top = Ino(".strata/branches/main");
  ASSERT_TRUE(store_->CompareAndSwapRef("main", second_, base_).ok());
  auto moved = past_->Lookup(Ino(".strata/branches"), "main");
  ASSERT_TRUE(moved.ok());
  EXPECT_NE(moved->ino, link->ino);
  EXPECT_EQ(past_->ReadLink(moved->ino).value(), "../commits/" + base_.ToHex());
  EXPECT_EQ(ReadAll(*past_, Ino(".strata/branches/main/a/small")), "hello");
  // What the kernel still holds of the old head keeps reading it.
  EXPECT_EQ(past_->ReadLink(link->ino).value(), "../commits/" + second_.ToHex());
  EXPECT_EQ(ReadAll(*past_, past_->Lookup(past_->Lookup(old_top, "a").value().ino, "small").value().ino), "changed");
}

TEST_F(PastVersionsTest, TheNamesABranchMoveMakesStaleAreTheEntriesOfItsLastName) {
  ASSERT_TRUE(store_->CompareAndSwapRef("feature/x", std::nullopt, base_).ok());
  StaleCaches main = past_->CachedBranch("main");
  ASSERT_EQ(main.entries.size(), 1u);
  EXPECT_EQ(main.entries[0], std::make_pair(Ino(".strata/branches"), std::string("main")));
  EXPECT_TRUE(past_->CachedBranch("feature/x").entries.empty());  // feature/ was never looked up
  const InodeId feature = Ino(".strata/branches/feature");
  StaleCaches x = past_->CachedBranch("feature/x");
  ASSERT_EQ(x.entries.size(), 1u);
  EXPECT_EQ(x.entries[0], std::make_pair(feature, std::string("x")));
  EXPECT_TRUE(main.inodes.empty() && x.inodes.empty());
}

TEST_F(PastVersionsTest, ARealDotStrataWinsAndTheViewIsOffForIt) {
  Mkdir(*ws_, kRootInode, ".strata");
  auto a = At(".strata");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(IsPast(a->ino));
  EXPECT_EQ(Errno(At(".strata/commits")), ENOENT);
  EXPECT_TRUE(past_->RemoveDirectory(kRootInode, ".strata").ok());
  EXPECT_TRUE(IsPast(Ino(".strata")));
}

TEST_F(PastVersionsTest, PastVersionsWorkspacesAreRemovedAtTheEndAndBounded) {
  Wrap(/*max_views=*/1);
  ASSERT_TRUE(At(".strata/branches/main").ok());
  EXPECT_EQ(Errno(At(".strata/commits/" + base_.ToHex())), ENFILE);
  EXPECT_TRUE(At(".strata/branches/main/a").ok());  // the open one still answers
  auto listed = Workspace::List(*store_);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);
  past_.reset();
  listed = Workspace::List(*store_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, "ws");
}

}  // namespace
}  // namespace strata::workspace_testing
