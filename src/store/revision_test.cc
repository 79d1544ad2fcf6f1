#include "store/revision.h"

#include <gtest/gtest.h>

#include "testing/store_test_util.h"

namespace strata {
namespace {

class RevisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
    // A tree with dir/file, and three commits on main: c0 <- c1 <- c2.
    Tree sub;
    TreeEntry f;
    f.name = "file";
    f.kind = EntryKind::kFile;
    sub.entries = {f};
    Hash sub_id = store_->Put(ObjectType::kTree, EncodeTree(sub))->id;
    Tree root;
    TreeEntry d;
    d.name = "dir";
    d.kind = EntryKind::kDirectory;
    d.subtree = sub_id;
    root.entries = {d};
    root_ = store_->Put(ObjectType::kTree, EncodeTree(root))->id;
    std::optional<Hash> parent;
    for (int i = 0; i < 3; i++) {
      Commit c;
      c.root = root_;
      c.message = "c" + std::to_string(i);
      if (parent) c.parents = {*parent};
      commits_.push_back(store_->Put(ObjectType::kCommit, EncodeCommit(c))->id);
      parent = commits_.back();
    }
    ASSERT_TRUE(store_->Flush().ok());
    ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, commits_[2]).ok());
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  Hash root_;
  std::vector<Hash> commits_;
};

TEST_F(RevisionTest, BranchIdPrefixAndAncestors) {
  EXPECT_EQ(*ResolveRevision(*store_, "main"), commits_[2]);
  EXPECT_EQ(*ResolveRevision(*store_, "main~1"), commits_[1]);
  EXPECT_EQ(*ResolveRevision(*store_, "main~"), commits_[1]);
  EXPECT_EQ(*ResolveRevision(*store_, "main~2"), commits_[0]);
  EXPECT_EQ(*ResolveRevision(*store_, commits_[0].ToHex()), commits_[0]);
  std::string upper = commits_[1].ToHex().substr(0, 12);
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  EXPECT_EQ(*ResolveRevision(*store_, upper), commits_[1]);
  EXPECT_EQ(*ResolveRevision(*store_, commits_[1].ToHex().substr(0, 12) + "~1"), commits_[0]);
}

TEST_F(RevisionTest, HeadIsTheDefaultBranch) {
  EXPECT_EQ(*ResolveRevision(*store_, "HEAD"), commits_[2]);
  EXPECT_EQ(*ResolveRevision(*store_, "HEAD~2"), commits_[0]);
  // Beside main, another branch changes nothing; without main, HEAD is
  // ambiguous until only one branch is left.
  ASSERT_TRUE(store_->CompareAndSwapRef("other", std::nullopt, commits_[0]).ok());
  EXPECT_EQ(*ResolveRevision(*store_, "HEAD"), commits_[2]);
  ASSERT_TRUE(store_->DeleteRef("main", commits_[2]).ok());
  EXPECT_EQ(*ResolveRevision(*store_, "HEAD"), commits_[0]);
  ASSERT_TRUE(store_->CompareAndSwapRef("third", std::nullopt, commits_[1]).ok());
  auto ambiguous = ResolveRevision(*store_, "HEAD");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("HEAD is ambiguous"), std::string::npos);
  // A branch called HEAD is taken at its word.
  ASSERT_TRUE(store_->CompareAndSwapRef("HEAD", std::nullopt, commits_[1]).ok());
  EXPECT_EQ(*ResolveRevision(*store_, "HEAD"), commits_[1]);
}

TEST_F(RevisionTest, Ranges) {
  auto r = SplitRevRange("main~2..main");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->from, "main~2");
  EXPECT_EQ(r->to, "main");
  r = SplitRevRange("..topic");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->from, "HEAD");
  EXPECT_EQ(r->to, "topic");
  r = SplitRevRange("main..");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to, "HEAD");
  EXPECT_FALSE(SplitRevRange("main"));
  EXPECT_FALSE(SplitRevRange("main:dir/..x"));  // after ':' it is a path
}

TEST_F(RevisionTest, BadRevisionsAreClearErrors) {
  EXPECT_TRUE(ResolveRevision(*store_, "main~3").status().IsNotFound());
  EXPECT_TRUE(ResolveRevision(*store_, "nosuch").status().IsNotFound());
  EXPECT_FALSE(ResolveRevision(*store_, "main~x").ok());
  EXPECT_FALSE(ResolveRevision(*store_, "").ok());
  auto too_short = ResolveRevision(*store_, "abc");  // too short to be a prefix
  ASSERT_FALSE(too_short.ok());
  EXPECT_NE(too_short.status().message().find("needs 4 hex digits at least"), std::string::npos)
      << too_short.status().message();
  // Tree ids are not commits.
  EXPECT_TRUE(ResolveRevision(*store_, root_.ToHex()).status().IsNotFound());
}

TEST_F(RevisionTest, PathsInsideACommit) {
  EXPECT_EQ(LookupPath(*store_, root_, "dir/file")->kind, EntryKind::kFile);
  EXPECT_EQ(LookupPath(*store_, root_, "/dir//file")->name, "file");
  EXPECT_EQ(LookupPath(*store_, root_, "")->subtree, root_);
  EXPECT_TRUE(LookupPath(*store_, root_, "dir/none").status().IsNotFound());
  EXPECT_EQ(LookupPath(*store_, root_, "dir/file/x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(LookupPath(*store_, root_, "dir/../dir").status().code(), Status::Code::kInvalidArgument);
  RevPath rp = SplitRevPath("main~1:a/b");
  EXPECT_EQ(rp.rev, "main~1");
  EXPECT_EQ(rp.path, "a/b");
}

TEST(RefNameTest, Rules) {
  for (const char* ok : {"main", "feature/x", "v1.2", "a_b-c"}) EXPECT_TRUE(IsValidRefName(ok)) << ok;
  for (const char* bad : {"", "-x", "/a", "a/", "a..b", "a~1", "a:b", "a b", ".hidden", "a//b"})
    EXPECT_FALSE(IsValidRefName(bad)) << bad;
}

}  // namespace
}  // namespace strata
