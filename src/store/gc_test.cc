#include "store/gc.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "store/fsck.h"
#include "store/index.h"
#include "testing/fault_env.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

// A small history builder: each commit is one directory "d" holding files.
class GcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/store";
    StoreConfig config;
    config.pack_size = 1 << 20;  // the smallest allowed: many packs, so that repacking has work
    ASSERT_TRUE(Store::Init(path_, config).ok());
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }

  // A commit whose tree is d/<name> for each file; returns its id.
  static Hash MakeCommit(Store& store, const std::map<std::string, std::string>& files,
                         const std::optional<Hash>& parent) {
    Tree dir;
    for (const auto& [name, data] : files) {
      TreeEntry e;
      e.name = name;
      e.kind = EntryKind::kFile;
      e.mode = 0644;
      // Two chunks per file, so a file shares one chunk with another when their halves match.
      for (std::string_view half : {std::string_view(data).substr(0, data.size() / 2),
                                    std::string_view(data).substr(data.size() / 2)}) {
        auto put = store.Put(ObjectType::kChunk, half);
        EXPECT_TRUE(put.ok()) << put.status().ToString();
        e.chunks.push_back({put->id, half.size()});
        e.size += half.size();
      }
      dir.entries.push_back(std::move(e));
    }
    auto dir_id = store.Put(ObjectType::kTree, EncodeTree(dir));
    Tree root;
    TreeEntry d;
    d.name = "d";
    d.kind = EntryKind::kDirectory;
    d.mode = 0755;
    d.subtree = dir_id->id;
    root.entries.push_back(d);
    auto root_id = store.Put(ObjectType::kTree, EncodeTree(root));
    Commit c;
    c.root = root_id->id;
    if (parent) c.parents.push_back(*parent);
    c.message = "test";
    auto commit = store.Put(ObjectType::kCommit, EncodeCommit(c));
    EXPECT_TRUE(store.Flush().ok());
    return commit->id;
  }

  Hash CommitOnBranch(const std::string& branch, const std::map<std::string, std::string>& files) {
    auto head = store_->GetRef(branch);
    auto session = store_->BeginWrite();
    EXPECT_TRUE(session.ok());
    Hash id = MakeCommit(*store_, files, *head);
    EXPECT_TRUE(store_->CompareAndSwapRef(branch, *head, id).ok());
    return id;
  }

  // Every file of every commit along the first parents of `id`, read back.
  static std::string ReadHistory(Store& store, Hash id) {
    std::string out;
    for (;;) {
      auto commit = store.GetCommit(id);
      if (!commit.ok()) return "error: " + commit.status().ToString();
      auto root = store.GetTree(commit->root);
      if (!root.ok()) return "error: " + root.status().ToString();
      auto dir = store.GetTree(root->entries.at(0).subtree);
      if (!dir.ok()) return "error: " + dir.status().ToString();
      for (const TreeEntry& e : dir->entries) {
        out += e.name + "=";
        for (const ChunkRef& c : e.chunks) {
          auto data = store.Get(c.id, ObjectType::kChunk);
          if (!data.ok()) return "error: " + data.status().ToString();
          out += *data;
        }
        out += ";";
      }
      if (commit->parents.empty()) return out;
      id = commit->parents[0];
    }
  }

  void ExpectFsckClean() {
    auto fsck = CheckStore(*store_, {}, nullptr);
    ASSERT_TRUE(fsck.ok()) << fsck.status().ToString();
    for (const auto& p : fsck->integrity.problems) ADD_FAILURE() << p.pack << " " << p.object << " " << p.message;
    for (const auto& p : fsck->missing) ADD_FAILURE() << p.object << " at " << p.where << ": " << p.message;
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

std::string Data(uint64_t seed, size_t n = 20000) { return testing::RandomBytes(n, seed); }

TEST_F(GcTest, DeletesWhatNoBranchReachesAndKeepsHistory) {
  Hash a1 = CommitOnBranch("main", {{"x", Data(1)}, {"y", Data(2)}});
  Hash a2 = CommitOnBranch("main", {{"x", Data(1)}, {"z", Data(3)}});
  Hash t1 = CommitOnBranch("tmp", {{"x", Data(1)}, {"w", Data(4)}});  // shares x with main
  std::string main_before = ReadHistory(*store_, a2);
  ASSERT_TRUE(store_->DeleteRef("tmp", t1).ok());

  auto report = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  // tmp's commit, its root tree, its directory tree and w's two chunks.
  EXPECT_EQ(report->objects_deleted, 5u);
  EXPECT_FALSE(*store_->Contains(t1));
  EXPECT_TRUE(*store_->Contains(a1));  // history stays
  EXPECT_EQ(ReadHistory(*store_, a2), main_before);
  ExpectFsckClean();

  auto again = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->objects_deleted, 0u);
}

TEST_F(GcTest, ExtraRootsAreKeptAndDryRunChangesNothing) {
  Hash kept = CommitOnBranch("a", {{"f", Data(5)}});
  Hash dropped = CommitOnBranch("b", {{"g", Data(6)}});
  ASSERT_TRUE(store_->DeleteRef("a", kept).ok());
  ASSERT_TRUE(store_->DeleteRef("b", dropped).ok());

  GcOptions options;
  options.extra_roots = [&]() -> Result<std::vector<RootSet>> {
    return std::vector<RootSet>{{"workspace w", kept, {}, {}}};
  };
  options.dry_run = true;
  auto dry = CollectGarbage(*store_, options);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(dry->objects_deleted, 5u);
  EXPECT_TRUE(*store_->Contains(dropped));

  options.dry_run = false;
  auto report = CollectGarbage(*store_, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->objects_deleted, 5u);
  EXPECT_FALSE(*store_->Contains(dropped));
  EXPECT_NE(ReadHistory(*store_, kept).find("f="), std::string::npos);
}

// A commit that lands while gc runs makes the packs on disk grow; what gc
// reports as reclaimed is what it removed less what it wrote, never the
// difference of the totals (which said "reclaimed 0 B" then).
TEST_F(GcTest, ReclaimedIsGcsOwnWorkWhileACommitAddsAPack) {
  Hash dropped = CommitOnBranch("b", {{"g", Data(7)}, {"h", Data(8)}});
  ASSERT_TRUE(store_->DeleteRef("b", dropped).ok());
  auto packs = store_->index()->ListPacks();
  ASSERT_TRUE(packs.ok());
  ASSERT_EQ(packs->size(), 1u);  // b's pack, wholly garbage now
  const uint64_t dead_pack = packs->begin()->second;

  int calls = 0;
  GcOptions options;
  options.extra_roots = [&]() -> Result<std::vector<RootSet>> {
    // The first marking runs before gc locks writers out: a commit lands then.
    if (calls++ == 0) CommitOnBranch("c", {{"big", Data(9, 200000)}});
    return std::vector<RootSet>{};
  };
  auto report = CollectGarbage(*store_, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->pack_bytes_after, report->pack_bytes_before);  // the disk holds more than before
  EXPECT_EQ(report->pack_bytes_removed, dead_pack);
  EXPECT_EQ(report->pack_bytes_written, 0u);
  EXPECT_EQ(report->reclaimed(), dead_pack);
  EXPECT_TRUE(store_->GetRef("c")->has_value());
  ExpectFsckClean();
}

TEST_F(GcTest, RewritesMostlyDeadPacksAndReadersFollow) {
  std::map<std::string, std::string> live, dead;
  for (int i = 0; i < 20; i++) {
    live["l" + std::to_string(i)] = Data(100 + i, 4000);
    dead["d" + std::to_string(i)] = Data(200 + i, 150000);
  }
  // One commit holds both, so every pack mixes a little live and much dead data.
  std::map<std::string, std::string> both = live;
  both.insert(dead.begin(), dead.end());
  Hash mixed = CommitOnBranch("main", both);
  Hash keep = CommitOnBranch("main", live);
  (void)mixed;
  // A second Store (another process, say a mount) has read the data before gc.
  auto reader = Store::Open(path_);
  ASSERT_TRUE(reader.ok());
  std::string expected = "";
  for (const auto& [name, data] : live) expected += name + "=" + data + ";";
  ASSERT_EQ(ReadHistory(**reader, keep).substr(0, expected.size()), expected);

  // Cut history: make main a fresh commit of the live files only.
  Hash alone;
  {
    auto session = store_->BeginWrite();
    alone = MakeCommit(*store_, live, std::nullopt);
    ASSERT_TRUE(store_->CompareAndSwapRef("main", keep, alone).ok());
  }

  auto report = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->packs_rewritten + report->packs_removed, 0u);
  EXPECT_GT(report->packs_written, 0u);
  EXPECT_LT(report->pack_bytes_after, report->pack_bytes_before / 4);
  EXPECT_EQ(ReadHistory(**reader, alone), expected);  // through stale pack handles and moved objects
  EXPECT_EQ(ReadHistory(*store_, alone), expected);
  ExpectFsckClean();
}

// An Env that runs `hook` once, just before the first pack is opened for
// reading through it: the moment between a read's index lookup and its read.
class BeforeFirstPackOpen : public FaultEnv {
 public:
  BeforeFirstPackOpen() : FaultEnv(Env::Default()) {}
  std::function<void(const std::string& pack_path)> hook;
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    if (hook && path.find("/packs/") != std::string::npos) std::exchange(hook, nullptr)(path);
    return FaultEnv::NewRandomAccessFile(path);
  }
};

// GetStored (what push and pull copy with) reads the object where the index
// now places it when gc moved it between the lookup and the read, as Get does.
TEST_F(GcTest, AStoredReadFollowsAnObjectGcMovedAfterItsLookup) {
  std::map<std::string, std::string> live, both;
  for (int i = 0; i < 20; i++) {
    live["l" + std::to_string(i)] = Data(100 + i, 4000);
    both["d" + std::to_string(i)] = Data(200 + i, 150000);
  }
  both.insert(live.begin(), live.end());
  Hash mixed = CommitOnBranch("main", both);
  Hash alone;
  {
    auto session = store_->BeginWrite();
    alone = MakeCommit(*store_, live, std::nullopt);
    ASSERT_TRUE(store_->CompareAndSwapRef("main", mixed, alone).ok());
  }
  auto root = store_->GetTree(store_->GetCommit(alone)->root);
  ASSERT_TRUE(root.ok());
  auto dir = store_->GetTree(root->entries.at(0).subtree);
  ASSERT_TRUE(dir.ok());
  const Hash chunk = dir->entries.at(0).chunks.at(0).id;

  BeforeFirstPackOpen env;
  auto reader = Store::Open(path_, &env);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::string first_pack;
  env.hook = [&](const std::string& pack_path) {
    first_pack = pack_path;
    auto report = CollectGarbage(*store_, GcOptions());
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  };
  auto stored = (*reader)->GetStored(chunk);
  ASSERT_FALSE(first_pack.empty()) << "the read opened no pack";
  ASSERT_FALSE(Env::Default()->Exists(first_pack)) << "gc left the chunk's pack: nothing moved, nothing tested";
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->type, ObjectType::kChunk);
  EXPECT_EQ(stored->raw_len, live.begin()->second.size() / 2);
}

TEST_F(GcTest, RefusesASecondGcAndAnUnreadableGraph) {
  Hash c = CommitOnBranch("main", {{"f", Data(7)}});
  {
    auto held = Env::Default()->LockFile(path_ + "/gc-run.lock", LockMode::kExclusive, false);
    ASSERT_TRUE(held.ok());
    auto report = CollectGarbage(*store_, GcOptions());
    ASSERT_TRUE(report.status().IsConflict()) << report.status().ToString();
  }
  // A reachable tree the index lost: gc must stop, deleting nothing.
  auto commit = store_->GetCommit(c);
  CommitOnBranch("other", {{"g", Data(8)}});
  ASSERT_TRUE(store_->index()->DeleteObjects({commit->root}).ok());
  Hash other = **store_->GetRef("other");
  ASSERT_TRUE(store_->DeleteRef("other", other).ok());  // garbage that must survive the failed gc
  auto report = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(report.status().IsCorruption()) << report.status().ToString();
  EXPECT_NE(report.status().message().find("branch main"), std::string::npos);
  EXPECT_TRUE(*store_->Contains(other));
}

TEST_F(GcTest, FsckNamesTheFileOfAMissingChunk) {
  Hash c = CommitOnBranch("main", {{"precious", Data(9)}});
  auto root = store_->GetTree(store_->GetCommit(c)->root);
  auto dir = store_->GetTree(root->entries[0].subtree);
  ASSERT_TRUE(store_->index()->DeleteObjects({dir->entries[0].chunks[1].id}).ok());
  auto fsck = CheckStore(*store_, {}, nullptr);
  ASSERT_TRUE(fsck.ok()) << fsck.status().ToString();
  EXPECT_FALSE(fsck->ok());
  ASSERT_EQ(fsck->missing.size(), 1u);
  EXPECT_NE(fsck->missing[0].where.find("branch main): d/precious"), std::string::npos) << fsck->missing[0].where;
}

// Writers commit again and again, reusing the chunks of a branch that was just
// deleted (dedup hits on garbage), while gc runs in a loop. Nothing a branch
// reaches may ever go missing.
TEST_F(GcTest, ConcurrentCommitsLoseNothing) {
  for (int i = 0; i < 10; i++) {
    Hash t = CommitOnBranch("scratch", {{"s" + std::to_string(i), Data(1000 + i)}});
    (void)t;
  }
  std::atomic<bool> stop{false};
  std::atomic<int> gcs{0};
  std::thread collector([&] {
    auto gc_store = Store::Open(path_);  // its own Store, as `strata gc` is its own process
    ASSERT_TRUE(gc_store.ok());
    while (!stop) {
      auto report = CollectGarbage(**gc_store, GcOptions());
      ASSERT_TRUE(report.ok()) << report.status().ToString();
      gcs++;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; w++) {
    writers.emplace_back([&, w] {
      auto store = Store::Open(path_);
      ASSERT_TRUE(store.ok());
      std::string branch = "w" + std::to_string(w);
      std::optional<Hash> head;
      for (int round = 0; round < 40; round++) {
        auto session = (*store)->BeginWrite();
        ASSERT_TRUE(session.ok());
        // Content the deleted scratch branch had, plus something new.
        Hash id = MakeCommit(**store,
                             {{"old", Data(1000 + (round % 10))}, {"new", Data(5000 + 100 * w + round, 3000)}},
                             head);
        ASSERT_TRUE((*store)->CompareAndSwapRef(branch, head, id).ok());
        head = id;
        if (round == 5 && w == 0) {
          Hash scratch = **(*store)->GetRef("scratch");
          ASSERT_TRUE((*store)->DeleteRef("scratch", scratch).ok());
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  while (gcs < 3) std::this_thread::yield();  // at least a few full gcs, some racing the writers
  stop = true;
  collector.join();
  auto final_gc = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(final_gc.ok());
  ExpectFsckClean();
  for (int w = 0; w < 2; w++) {
    std::string history = ReadHistory(*store_, **store_->GetRef("w" + std::to_string(w)));
    EXPECT_EQ(history.find("error"), std::string::npos) << history.substr(0, 200);
  }
}

}  // namespace
}  // namespace strata
