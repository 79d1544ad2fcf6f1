// Crash safety of the store, through FaultEnv: for every mutating file
// operation of a write (objects into packs, seal, publish, index, ref), a run
// fails from that operation on (the process "dies" there), then the power is
// cut (unsynced bytes, creations and renames are lost), then the store is
// opened again as the next process would. Every time: it opens, verify finds
// nothing damaged, the branch is at the old or the new commit, and whatever it
// points at reads back whole; when the write reported success, the branch is
// at the new commit.
#include <gtest/gtest.h>

#include "testing/fault_env.h"
#include "store/fsck.h"
#include "store/index.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

struct Written {
  Hash commit;
  std::vector<std::string> data;
};

// A commit of `files` chunks (about 3 packs of 1 MiB), moving branch main from `parent`.
Result<Written> WriteCommit(Store& store, const std::optional<Hash>& parent, uint64_t seed, int files) {
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store.BeginWrite());
  Written w;
  Tree tree;
  for (int i = 0; i < files; i++) {
    w.data.push_back(testing::RandomBytes(120000, seed * 1000 + i));
    STRATA_ASSIGN_OR_RETURN(PutResult put, store.Put(ObjectType::kChunk, w.data.back()));
    TreeEntry e;
    e.name = "f" + std::to_string(100 + i);
    e.mode = 0644;
    e.size = w.data.back().size();
    e.chunks = {{put.id, e.size}};
    tree.entries.push_back(std::move(e));
  }
  STRATA_ASSIGN_OR_RETURN(PutResult root, store.Put(ObjectType::kTree, EncodeTree(tree)));
  Commit c;
  c.root = root.id;
  if (parent) c.parents = {*parent};
  STRATA_ASSIGN_OR_RETURN(PutResult commit, store.Put(ObjectType::kCommit, EncodeCommit(c)));
  STRATA_RETURN_IF_ERROR(store.Flush());
  STRATA_RETURN_IF_ERROR(store.CompareAndSwapRef("main", parent, commit.id));
  w.commit = commit.id;
  return w;
}

// Every file of the commit main points at, in order.
std::vector<std::string> ReadMain(Store& store) {
  std::vector<std::string> out;
  auto head = store.GetRef("main");
  if (!head.ok() || !*head) return {"no main"};
  auto commit = store.GetCommit(**head);
  if (!commit.ok()) return {commit.status().ToString()};
  auto tree = store.GetTree(commit->root);
  if (!tree.ok()) return {tree.status().ToString()};
  for (const TreeEntry& e : tree->entries) {
    auto data = store.Get(e.chunks.at(0).id, ObjectType::kChunk);
    out.push_back(data.ok() ? *data : data.status().ToString());
  }
  return out;
}

TEST(CrashTest, EveryFailurePointFollowedByAPowerCutLeavesAConsistentStore) {
  uint64_t points = 0;
  for (uint64_t n = 1;; n++) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/store";
    StoreConfig config;
    config.pack_size = 1 << 20;
    ASSERT_TRUE(Store::Init(path, config).ok());
    std::vector<std::string> before;
    Hash old_head;
    {
      auto store = Store::Open(path);
      ASSERT_TRUE(store.ok());
      auto w = WriteCommit(**store, std::nullopt, 1, 5);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      old_head = w->commit;
      before = w->data;
    }

    FaultEnv env(Env::Default());
    env.FailAt(n, n % 2 ? EIO : ENOSPC, /*sticky=*/true);
    bool completed = false;
    std::vector<std::string> written;
    {
      auto store = Store::Open(path, &env);
      if (store.ok()) {
        auto w = WriteCommit(**store, old_head, 2, 20);
        completed = w.ok();
        if (completed) written = w->data;
      }
    }
    const bool failure_hit = env.operations() >= n;
    ASSERT_TRUE(env.PowerCut().ok());

    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << "failure at operation " << n << ": " << store.status().ToString();
    auto verify = VerifyStore(**store, nullptr);
    ASSERT_TRUE(verify.ok());
    for (const auto& p : verify->problems) ADD_FAILURE() << "operation " << n << ": " << p.pack << " " << p.message;
    auto fsck = CheckStore(**store, {}, nullptr);
    ASSERT_TRUE(fsck.ok());
    EXPECT_TRUE(fsck->missing.empty()) << "operation " << n << ": " << fsck->missing.front().message;
    std::vector<std::string> now = ReadMain(**store);
    if (completed) {
      EXPECT_EQ(now, written) << "operation " << n << ": a write that succeeded was lost";
    } else {
      EXPECT_TRUE(now == before || now.size() == 20) << "operation " << n << ": main holds neither commit";
    }
    if (!failure_hit) break;  // the whole write ran without reaching operation n
    points++;
  }
  EXPECT_GT(points, 20u);  // packs, syncs, renames, directory syncs: many points were tried
}

// The same for a merge of small packs (pack_merge.h), which runs when a
// store opens with a full tier: whatever operation of it fails, followed by a
// power cut, every commit of the history still reads back whole and verify
// and fsck are clean.
TEST(CrashTest, AMergeOfSmallPacksCutAtAnyPointLosesNothing) {
  uint64_t points = 0;
  for (uint64_t n = 1;; n++) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/store";
    ASSERT_TRUE(Store::Init(path, StoreConfig()).ok());
    std::vector<Written> history;
    {
      auto store = Store::Open(path);
      ASSERT_TRUE(store.ok());
      (*store)->SetPackMerging(false);
      std::optional<Hash> head;
      for (uint64_t i = 0; i < 8; i++) {  // one small pack each: a full tier
        auto w = WriteCommit(**store, head, 10 + i, 1);
        ASSERT_TRUE(w.ok()) << w.status().ToString();
        head = w->commit;
        history.push_back(*w);
      }
    }
    FaultEnv env(Env::Default());
    env.FailAt(n, n % 2 ? EIO : ENOSPC, /*sticky=*/true);
    { auto store = Store::Open(path, &env); }  // merges at the end of its recovery
    const bool failure_hit = env.operations() >= n;
    ASSERT_TRUE(env.PowerCut().ok());

    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << "failure at operation " << n << ": " << store.status().ToString();
    auto verify = VerifyStore(**store, nullptr);
    ASSERT_TRUE(verify.ok());
    for (const auto& p : verify->problems) ADD_FAILURE() << "operation " << n << ": " << p.pack << " " << p.message;
    auto fsck = CheckStore(**store, {}, nullptr);
    ASSERT_TRUE(fsck.ok());
    EXPECT_TRUE(fsck->missing.empty()) << "operation " << n << ": " << fsck->missing.front().message;
    for (const Written& w : history) {
      auto commit = (*store)->GetCommit(w.commit);
      ASSERT_TRUE(commit.ok()) << "operation " << n << ": " << commit.status().ToString();
      auto tree = (*store)->GetTree(commit->root);
      ASSERT_TRUE(tree.ok()) << "operation " << n << ": " << tree.status().ToString();
      auto data = (*store)->Get(tree->entries.at(0).chunks.at(0).id, ObjectType::kChunk);
      ASSERT_TRUE(data.ok()) << "operation " << n << ": " << data.status().ToString();
      EXPECT_EQ(*data, w.data.at(0)) << "operation " << n;
    }
    if (!failure_hit) {
      EXPECT_LT(*(*store)->index()->PackCount(), 8u) << "the merge never ran";
      break;
    }
    points++;
  }
  EXPECT_GE(points, 5u);  // temp pack, its sync, publish, directory syncs, removals
}

}  // namespace
}  // namespace strata
