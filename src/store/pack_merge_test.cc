// Bounded packs and descriptors: the pack cache closes what it cannot keep,
// small packs are merged by size tier, and a store that takes many small
// commits keeps few packs and few descriptors, also under a low fd limit.
#include "store/pack_merge.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "store/fsck.h"
#include "store/index.h"
#include "store/pack_reader.h"
#include "store/store.h"
#include "store/store_test_fixture.h"
#include "testing/gated_env_test_util.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) n++;
  return n;
}

// One small commit as a commit command makes it: a chunk, a tree, a commit
// object, in a write session, flushed, then the branch moved.
Hash SmallCommit(Store& store, uint64_t seed, std::optional<Hash> parent) {
  auto session = store.BeginWrite();
  EXPECT_TRUE(session.ok());
  const std::string data = testing::RandomBytes(200 + seed % 300, seed);
  auto chunk = store.Put(ObjectType::kChunk, data);
  EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
  Tree tree;
  TreeEntry e;
  e.name = "f";
  e.kind = EntryKind::kFile;
  e.mode = 0644;
  e.size = data.size();
  e.chunks.push_back({chunk->id, data.size()});
  tree.entries.push_back(e);
  auto root = store.Put(ObjectType::kTree, EncodeTree(tree));
  Commit c;
  c.root = root->id;
  if (parent) c.parents.push_back(*parent);
  c.message = "commit " + std::to_string(seed);
  auto commit = store.Put(ObjectType::kCommit, EncodeCommit(c));
  EXPECT_TRUE(store.Flush().ok());
  EXPECT_TRUE(store.CompareAndSwapRef("main", parent, commit->id).ok());
  return commit->id;
}

// The file of `id` read back, or the error.
std::string ReadFile(Store& store, const Hash& id) {
  auto commit = store.GetCommit(id);
  if (!commit.ok()) return commit.status().ToString();
  auto tree = store.GetTree(commit->root);
  if (!tree.ok()) return tree.status().ToString();
  auto data = store.Get(tree->entries.at(0).chunks.at(0).id, ObjectType::kChunk);
  return data.ok() ? *data : data.status().ToString();
}

class PackMergeTest : public StoreTest {
 protected:
  uint64_t Packs() { return *store_->index()->PackCount(); }
};

TEST(PackMergePolicyTest, MergesOneFullTierOfSmallPacksOnly) {
  const uint64_t pack_size = 32 << 20;
  std::map<std::string, uint64_t> packs;
  for (int i = 0; i < 7; i++) packs["a" + std::to_string(i)] = 1000;  // tier 0, one short of a merge
  for (int i = 0; i < 20; i++) packs["big" + std::to_string(i)] = pack_size / 2;  // never merged
  EXPECT_TRUE(PickPacksToMerge(packs, pack_size).empty());
  packs["a7"] = 60 << 10;  // still tier 0 (below kSmallestTier)
  EXPECT_EQ(PickPacksToMerge(packs, pack_size).size(), 8u);
  packs.erase("a7");
  packs["b"] = 100 << 10;  // tier 1: does not complete tier 0
  EXPECT_TRUE(PickPacksToMerge(packs, pack_size).empty());
}

TEST_F(PackMergeTest, PackCacheKeepsAtMostItsCapacityOpen) {
  store_->SetPackMerging(false);
  std::vector<Hash> commits;
  std::optional<Hash> head;
  for (int i = 0; i < 40; i++) commits.push_back(*(head = SmallCommit(*store_, i, head)));
  ASSERT_EQ(Packs(), 40u);
  PackCache cache(store_->backend(), 8);
  const size_t before = OpenFds();
  for (int round = 0; round < 2; round++) {
    for (const Hash& id : commits) {
      auto loc = store_->index()->Lookup(id);
      ASSERT_TRUE(loc.ok() && *loc);
      auto object = cache.ReadObject((*loc)->pack, (*loc)->entry);
      ASSERT_TRUE(object.ok()) << object.status().ToString();
      EXPECT_LE(cache.open_count(), 8u);
      EXPECT_LE(OpenFds(), before + 8);
    }
  }
  EXPECT_EQ(cache.open_count(), 8u);
  EXPECT_GE(PackCache::DefaultCapacity(), 8u);
}

TEST_F(PackMergeTest, ThousandSmallCommitsKeepPacksAndFdsBoundedAndLoseNothing) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Hash> commits;
  std::optional<Hash> head;
  const size_t fds_before = OpenFds();
  uint64_t most_packs = 0;
  size_t most_fds = 0;
  for (uint64_t i = 0; i < 1000; i++) {
    commits.push_back(*(head = SmallCommit(*store_, i, head)));
    // Reading the new commit back opens its pack, as a mount that shows it does.
    ASSERT_EQ(ReadFile(*store_, commits.back()), testing::RandomBytes(200 + i % 300, i)) << "commit " << i;
    most_packs = std::max(most_packs, Packs());
    most_fds = std::max(most_fds, OpenFds());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Each tier holds fewer than kMergeFanIn packs; these packs fit in three.
  EXPECT_LE(most_packs, 3 * (kMergeFanIn - 1) + 1) << "packs grew with the commits";
  EXPECT_LT(most_fds, fds_before + 3 * kMergeFanIn) << "descriptors grew with the commits";
  for (uint64_t i = 0; i < commits.size(); i++)
    ASSERT_EQ(ReadFile(*store_, commits[i]), testing::RandomBytes(200 + i % 300, i)) << "commit " << i;
  auto fsck = CheckStore(*store_, {}, nullptr);
  ASSERT_TRUE(fsck.ok()) << fsck.status().ToString();
  EXPECT_TRUE(fsck->integrity.problems.empty());
  EXPECT_TRUE(fsck->missing.empty());
  std::printf("1000 small commits: %.1f s, at most %llu packs, %llu at the end\n", seconds,
              static_cast<unsigned long long>(most_packs), static_cast<unsigned long long>(Packs()));
}

TEST_F(PackMergeTest, MergeWaitsForNoWriterAndGcWaitsForNoMerge) {
  store_->SetPackMerging(false);
  std::optional<Hash> head;
  for (uint64_t i = 0; i < kMergeFanIn; i++) head = SmallCommit(*store_, i, head);
  ASSERT_EQ(Packs(), kMergeFanIn);
  {
    auto session = store_->BeginWrite();  // a writer in the middle of a commit
    ASSERT_TRUE(session.ok());
    auto merged = MergeSmallPacks(*store_);
    ASSERT_TRUE(merged.ok()) << merged.status().ToString();
    EXPECT_EQ(*merged, 0u);
    EXPECT_EQ(Packs(), kMergeFanIn);
  }
  EXPECT_TRUE(std::filesystem::is_empty(path_ + "/tmp"));  // the dropped merge left nothing behind
  auto merged = MergeSmallPacks(*store_);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*merged, kMergeFanIn);
  EXPECT_EQ(Packs(), 1u);
  EXPECT_EQ(ReadFile(*store_, *head), testing::RandomBytes(200 + (kMergeFanIn - 1) % 300, kMergeFanIn - 1));
}

// Counts the flushes of one directory; everything else goes to the default Env.
class DirSyncCounter : public testing::GatedEnv {
 public:
  explicit DirSyncCounter(std::string dir) : dir_(std::move(dir)) {}
  Status SyncDir(const std::string& path) override {
    if (path == dir_) syncs_++;
    return GatedEnv::SyncDir(path);
  }
  int syncs() const { return syncs_.load(); }

 private:
  const std::string dir_;
  std::atomic<int> syncs_{0};
};

// A merge removes a whole tier of packs: their removals are made durable by
// one flush of packs/, not one each.
TEST_F(PackMergeTest, MergeFlushesThePacksFolderOncePerMerge) {
  store_.reset();
  DirSyncCounter env(path_ + "/packs");
  auto opened = Store::Open(path_, &env);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  store.SetPackMerging(false);
  std::optional<Hash> head;
  for (uint64_t i = 0; i < kMergeFanIn; i++) head = SmallCommit(store, i, head);
  ASSERT_EQ(*store.index()->PackCount(), kMergeFanIn);
  const int before = env.syncs();
  auto merged = MergeSmallPacks(store);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*merged, kMergeFanIn);
  // One for the merged pack's publication, one for all the removals.
  EXPECT_EQ(env.syncs() - before, 2);
  EXPECT_EQ(*store.index()->PackCount(), 1u);
  auto files = Env::Default()->ListDir(path_ + "/packs");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u) << "a merged pack was left in packs/";
  EXPECT_EQ(ReadFile(store, *head), testing::RandomBytes(200 + (kMergeFanIn - 1) % 300, kMergeFanIn - 1));
}

// The case that failed: a process whose descriptor limit is low keeps every
// pack it read open, so after a few dozen commits the next one fails with
// "Too many open files". Run in a child so the limit stays there.
TEST_F(PackMergeTest, LowDescriptorLimitDoesNotStopCommits) {
  store_.reset();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit limit;
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = 64;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(2);
    auto store = Store::Open(path_);
    if (!store.ok()) ::_exit(3);
    std::optional<Hash> head;
    for (uint64_t i = 0; i < 300; i++) {
      head = SmallCommit(**store, i, head);
      if (ReadFile(**store, *head) != testing::RandomBytes(200 + i % 300, i)) {
        std::fprintf(stderr, "commit %llu: %s\n", static_cast<unsigned long long>(i), ReadFile(**store, *head).c_str());
        ::_exit(4);
      }
    }
    ::_exit(::testing::Test::HasFailure() ? 5 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace strata
