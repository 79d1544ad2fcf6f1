#include "remote/transfer.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/fault_env.h"
#include "store/index.h"
#include "store/reachability.h"
#include "testing/store_test_util.h"
#include "testing/tree_test_util.h"

namespace strata {
namespace {

// Builds commits of small trees: "dir/NAME" files with the given contents.
class TransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/from", StoreConfig()).ok());
    ASSERT_TRUE(Store::Init(dir_.path() + "/to", StoreConfig()).ok());
    from_ = std::move(Store::Open(dir_.path() + "/from")).value();
    to_ = std::move(Store::Open(dir_.path() + "/to")).value();
  }

  // A commit of files {name: content} under "dir/", on top of parent.
  Hash CommitFiles(const std::map<std::string, std::string>& files, const std::optional<Hash>& parent) {
    std::vector<TreeEntry> entries;
    for (const auto& [name, content] : files) {
      TreeEntry e;
      e.name = name;
      e.mode = 0644;
      e.size = content.size();
      e.chunks = {{from_->Put(ObjectType::kChunk, content)->id, content.size()}};
      entries.push_back(e);
    }
    TreeEntry dir;
    dir.name = "dir";
    dir.kind = EntryKind::kDirectory;
    dir.mode = 0755;
    dir.subtree = testing::PutTree(*from_, entries);
    Commit c;
    c.root = testing::PutTree(*from_, {dir});
    if (parent) c.parents = {*parent};
    c.message = "files";
    Hash id = from_->Put(ObjectType::kCommit, EncodeCommit(c))->id;
    EXPECT_TRUE(from_->Flush().ok());
    return id;
  }
  // Problems of everything `commit` reaches in `store`: unreadable trees and
  // commits, chunks not stored.
  static std::vector<ReachabilityProblem> Missing(Store& store, const Hash& commit) {
    std::unordered_set<Hash> stored;
    auto objects = store.index()->ListObjects();
    for (const auto& [id, size] : objects.value()) stored.insert(id);
    Reachability walk(store, &stored);
    walk.AddCommit(commit, "test");
    return walk.problems();
  }
  void ExpectComplete(Store& store, const Hash& head) {
    auto problems = Missing(store, head);
    EXPECT_TRUE(problems.empty()) << problems.front().where << ": " << problems.front().message;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> from_, to_;
};

// A source that lacks what its own history names (a remote whose packs were
// lost) is damaged: Corruption (exit 3), not "not found" (exit 1).
TEST_F(TransferTest, AnObjectMissingFromTheSourceIsDamage) {
  Hash c1 = CommitFiles({{"a", "alpha"}}, std::nullopt);
  Hash c2 = CommitFiles({{"a", "beta"}}, c1);
  auto chunk = ComputeObjectId(ObjectType::kChunk, "beta");
  ASSERT_TRUE(from_->index()->DeleteObjects({chunk}).ok());
  auto copied = CopyHistory(*from_, *to_, c2);
  ASSERT_FALSE(copied.ok());
  EXPECT_TRUE(copied.status().IsCorruption()) << copied.status().ToString();
  ASSERT_TRUE(from_->index()->DeleteObjects({c1}).ok());
  copied = CopyHistory(*from_, *to_, c2);
  EXPECT_TRUE(copied.status().IsCorruption()) << copied.status().ToString();
}

TEST_F(TransferTest, CopiesAHistoryOnceAndThenOnlyWhatIsNew) {
  Hash c1 = CommitFiles({{"a", "alpha"}, {"b", testing::RandomBytes(300000, 1)}}, std::nullopt);
  Hash c2 = CommitFiles({{"a", "alpha"}, {"b", testing::RandomBytes(300000, 1)}, {"c", "gamma"}}, c1);
  auto first = CopyHistory(*from_, *to_, c2);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->commits, 2u);
  EXPECT_EQ(first->trees, 4u);
  EXPECT_EQ(first->chunks, 3u);
  EXPECT_EQ(first->chunk_bytes, 300000u + 5 + 5);
  ExpectComplete(*to_, c2);

  auto again = CopyHistory(*from_, *to_, c2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->commits + again->trees + again->chunks, 0u);

  Hash c3 = CommitFiles({{"a", "alpha"}, {"b", testing::RandomBytes(300000, 1)}, {"d", "delta"}}, c2);
  auto third = CopyHistory(*from_, *to_, c3);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->commits, 1u);
  EXPECT_EQ(third->trees, 2u);   // dir and the top changed
  EXPECT_EQ(third->chunks, 1u);  // "delta"; the big chunk is there
  EXPECT_EQ(third->chunks_present, 2u);
  ExpectComplete(*to_, c3);
}

TEST_F(TransferTest, AnInterruptedCopyLeavesNoDanglingObjectAndTheNextOneCompletes) {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 40; i++) files["f" + std::to_string(i)] = testing::RandomBytes(100000, 100 + i);
  Hash head = CommitFiles(files, std::nullopt);
  // Packs of 1 MiB (the smallest allowed): the copy seals several, and fails
  // at each point in turn.
  StoreConfig small;
  small.pack_size = 1 << 20;
  int interrupted = 0;
  for (uint64_t fail_at = 1;; fail_at += 2) {
    testing::TempDir d;
    ASSERT_TRUE(Store::Init(d.path() + "/to", small).ok());
    FaultEnv env(Env::Default());
    {
      auto opened = Store::Open(d.path() + "/to", &env);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      auto to = std::move(opened).value();
      env.FailAt(env.operations() + fail_at, EIO, /*sticky=*/true);
      TransferOptions options;
      options.threads = 2;
      if (CopyHistory(*from_, *to, head, options).ok()) break;  // failed nowhere: done
    }
    interrupted++;
    // Whatever arrived holds together: every commit or tree present has all it names.
    auto to = std::move(Store::Open(d.path() + "/to")).value();
    if (to->Contains(head).value()) {
      EXPECT_TRUE(Missing(*to, head).empty()) << "after a failure at write " << fail_at;
    }
    auto objects = to->index()->ListObjects();
    for (const auto& [id, size] : objects.value()) {  // and every tree
      auto tree = to->GetTree(id);
      if (!tree.ok()) continue;  // not a tree
      for (const TreeEntry& e : tree->entries)
        for (const ChunkRef& c : e.chunks)
          EXPECT_TRUE(to->Contains(c.id).value()) << "a tree arrived before its chunks (failure at " << fail_at << ")";
    }
    auto resumed = CopyHistory(*from_, *to, head);
    ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
    ExpectComplete(*to, head);
  }
  EXPECT_GT(interrupted, 5);
}

TEST_F(TransferTest, AncestryAndMergeBase) {
  Hash c1 = CommitFiles({{"a", "1"}}, std::nullopt);
  Hash c2 = CommitFiles({{"a", "2"}}, c1);
  Hash ours = CommitFiles({{"a", "3"}}, c2);
  Hash theirs = CommitFiles({{"a", "4"}}, c2);
  EXPECT_TRUE(IsAncestor(*from_, c1, ours).value());
  EXPECT_TRUE(IsAncestor(*from_, ours, ours).value());
  EXPECT_FALSE(IsAncestor(*from_, theirs, ours).value());
  EXPECT_EQ(MergeBase(*from_, ours, theirs).value(), std::optional<Hash>(c2));
  EXPECT_EQ(FirstParentLine(*from_, c1, ours).value(), (std::vector<Hash>{c2, ours}));
  EXPECT_FALSE(FirstParentLine(*from_, theirs, ours).ok());
  Hash unrelated = CommitFiles({{"z", "z"}}, std::nullopt);
  EXPECT_EQ(MergeBase(*from_, ours, unrelated).value(), std::nullopt);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

constexpr crypto::ScryptParams kFastScrypt{10, 8, 1};

std::unique_ptr<Store> OpenEncrypted(const std::string& path, const std::string& passphrase) {
  auto master = Store::Unlock(path, passphrase);
  EXPECT_TRUE(master.ok()) << master.status().ToString();
  return std::move(Store::Open(path, Env::Default(), &*master)).value();
}

// Copies go only where the objects open as they are: plain to plain, or
// between encrypted stores of one master key; anything else is refused
// before the destination holds a byte more.
TEST(TransferKeysTest, ForeignKeysAndMixedStoresAreRefusedAndOneKeyCopies) {
  testing::TempDir dir;
  const std::string a = dir.path() + "/a", same = dir.path() + "/same", other = dir.path() + "/other",
                    plain = dir.path() + "/plain";
  ASSERT_TRUE(Store::InitEncrypted(a, StoreConfig(), "pa", kFastScrypt).ok());
  ASSERT_TRUE(Store::InitEncrypted(other, StoreConfig(), "po", kFastScrypt).ok());
  ASSERT_TRUE(Store::Init(plain, StoreConfig()).ok());
  auto from = OpenEncrypted(a, "pa");
  auto master = Store::Unlock(a, "pa");
  ASSERT_TRUE(master.ok());
  ASSERT_TRUE(Store::InitEncryptedWithKey(same, StoreConfig(), "ps", *master, kFastScrypt).ok());
  auto to_same = OpenEncrypted(same, "ps");
  auto to_other = OpenEncrypted(other, "po");
  auto to_plain = std::move(Store::Open(plain)).value();

  Commit c;
  c.root = testing::PutTree(*from, {});
  c.message = "empty";
  Hash head = from->Put(ObjectType::kCommit, EncodeCommit(c))->id;
  ASSERT_TRUE(from->Flush().ok());

  for (Store* refused : {to_other.get(), to_plain.get()}) {
    auto copied = CopyHistory(*from, *refused, head);
    ASSERT_FALSE(copied.ok());
    EXPECT_TRUE(copied.status().IsInvalidArgument()) << copied.status().ToString();
    EXPECT_NE(copied.status().message().find("does not re-encrypt"), std::string::npos) << copied.status().message();
    auto held = refused->index()->ListObjects();
    ASSERT_TRUE(held.ok());
    EXPECT_TRUE(held->empty()) << refused->path();
  }
  EXPECT_FALSE(CopyHistory(*to_plain, *from, head).ok());  // plain into encrypted, too

  // Chunks arrive as they are; trees and commits are stored again, sealed by
  // the destination under key generations of its own.
  auto grant = from->GrantSealGenerations(16);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  ASSERT_TRUE(to_same->AdoptSealGenerations(*grant).ok());
  auto copied = CopyHistory(*from, *to_same, head);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  auto back = to_same->GetCommit(head);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->message, "empty");
}

}  // namespace
}  // namespace strata
