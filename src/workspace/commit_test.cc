// Commit: a workspace's changes become a commit, costing what changed.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "store/revision.h"
#include "testing/store_test_util.h"
#include "workspace/namespace_db.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

constexpr Credentials kWho{1000, 1000};

class CommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
  }

  std::unique_ptr<Workspace> Open(const std::optional<Hash>& base, const std::string& name, const std::string& branch) {
    EXPECT_TRUE(Workspace::Create(*store_, name, base, branch).ok());
    auto ws = Workspace::Open(*store_, name);
    EXPECT_TRUE(ws.ok()) << ws.status().ToString();
    return ws.ok() ? std::move(ws).value() : nullptr;
  }

  static Attr Mk(Workspace& ws, InodeId parent, const std::string& name, const std::string& data) {
    auto a = ws.MakeNode(parent, name, S_IFREG | 0644, 0, kWho);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    if (!data.empty()) {
      EXPECT_TRUE(ws.Write(a->ino, 0, data).ok());
    }
    return *a;
  }
  static Attr L(Workspace& ws, InodeId parent, const std::string& name) {
    auto a = ws.Lookup(parent, name);
    EXPECT_TRUE(a.ok()) << name;
    return a.ok() ? *a : Attr();
  }

  CommitOutcome CommitOk(Workspace& ws, const std::string& message, const std::string& branch = "") {
    auto out = ws.Commit(CommitRequest{message, "tester", branch});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : CommitOutcome();
  }

  // The bytes of the file at path in a commit.
  std::string FileOf(const Hash& commit, const std::string& path) {
    auto c = store_->GetCommit(commit);
    EXPECT_TRUE(c.ok());
    auto e = LookupPath(*store_, c->root, path);
    EXPECT_TRUE(e.ok()) << path << ": " << e.status().ToString();
    if (!e.ok()) return "<missing>";
    EXPECT_EQ(e->kind, EntryKind::kFile) << path;
    std::string out;
    for (const ChunkRef& ref : e->chunks) out += *store_->Get(ref.id, ObjectType::kChunk);
    return out;
  }
  // A new file "disk.img" of `size` bytes, never written (scattered_image below).
  struct ScatteredImage NewImage(Workspace& ws, uint64_t size);
  TreeEntry EntryOf(const Hash& commit, const std::string& path) {
    auto e = LookupPath(*store_, store_->GetCommit(commit)->root, path);
    EXPECT_TRUE(e.ok()) << path;
    return e.ok() ? *e : TreeEntry();
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

// A sparse image of `size` bytes written in 4 KiB blocks at scattered
// offsets, and what it must read back: the blocks written, zeros elsewhere.
struct ScatteredImage {
  static constexpr uint64_t kBlock = 4096;
  InodeId ino = 0;
  uint64_t size = 0;
  std::map<uint64_t, std::string> blocks;  // what the image holds at each block written

  void Scatter(Workspace& ws, int n, uint64_t seed) {
    for (int i = 0; i < n; i++) {
      const uint64_t at = ((seed * 7919 + i * 104729) % (size / kBlock)) * kBlock;
      blocks[at] = testing::RandomBytes(kBlock, seed * 1000 + i);
      ASSERT_TRUE(ws.Write(ino, at, blocks[at]).ok());
    }
  }
  // Every block written, and the blocks at `zeros` that were not.
  void ReadsBack(Workspace& ws, std::initializer_list<uint64_t> zeros) const {
    std::string buf(kBlock, '\0');
    for (const auto& [at, data] : blocks) {
      ASSERT_EQ(*ws.Read(ino, at, kBlock, buf.data()), kBlock);
      ASSERT_EQ(buf, data) << "at " << at;
    }
    for (uint64_t at : zeros) {
      if (blocks.count(at)) continue;
      ASSERT_EQ(*ws.Read(ino, at, kBlock, buf.data()), kBlock);
      EXPECT_EQ(buf, std::string(kBlock, '\0')) << "at " << at;
    }
  }
};

ScatteredImage CommitTest::NewImage(Workspace& ws, uint64_t size) {
  ScatteredImage image{Mk(ws, kRootInode, "disk.img", "").ino, size, {}};
  SetAttrRequest grow;
  grow.size = size;
  EXPECT_TRUE(ws.SetAttr(image.ino, grow).ok());
  return image;
}

TEST_F(CommitTest, ANewWorkspaceBecomesACommitWithEverythingInIt) {
  auto ws = Open(std::nullopt, "ws", "");
  ASSERT_TRUE(ws);
  Attr d = *ws->MakeDirectory(kRootInode, "dir", 0750, kWho);
  Attr f = Mk(*ws, d.ino, "file", "hello world");
  ASSERT_TRUE(ws->MakeSymlink(kRootInode, "sym", "dir/file", kWho).ok());
  ASSERT_TRUE(ws->SetXattr(f.ino, "user.k", "v", 0).ok());
  ASSERT_TRUE(ws->Link(f.ino, kRootInode, "zlink").ok());  // sorts after dir/file
  ASSERT_TRUE(ws->MakeNode(kRootInode, "fifo", S_IFIFO | 0600, 0, kWho).ok());

  EXPECT_FALSE(ws->Commit(CommitRequest{"m", "a", ""}).ok()) << "no branch to commit to";
  CommitOutcome out = CommitOk(*ws, "first", "main");
  ASSERT_TRUE(out.commit);
  EXPECT_EQ(*store_->GetRef("main"), out.commit);
  Commit c = *store_->GetCommit(*out.commit);
  EXPECT_TRUE(c.parents.empty());
  EXPECT_EQ(c.message, "first");
  EXPECT_EQ(FileOf(*out.commit, "dir/file"), "hello world");
  TreeEntry file = EntryOf(*out.commit, "dir/file");
  EXPECT_EQ(file.mode, 0644u);
  EXPECT_EQ(file.uid, 1000u);
  EXPECT_EQ(file.xattrs, (std::vector<std::pair<std::string, std::string>>{{"user.k", "v"}}));
  EXPECT_EQ(EntryOf(*out.commit, "dir").mode, 0750u);
  EXPECT_EQ(EntryOf(*out.commit, "sym").target, "dir/file");
  TreeEntry link = EntryOf(*out.commit, "zlink");
  EXPECT_EQ(link.kind, EntryKind::kHardlink);
  EXPECT_EQ(link.target, "dir/file");
  EXPECT_EQ(EntryOf(*out.commit, "fifo").kind, EntryKind::kFifo);

  EXPECT_EQ(ws->Counters().changed_paths, 0u) << "committed changes are no longer changes";
  EXPECT_EQ(ws->Info().base, out.commit);
  EXPECT_EQ(ws->Info().branch, "main");
  EXPECT_FALSE(CommitOk(*ws, "again").commit) << "nothing to commit";
  // Opened again, it is based on the commit and reads the same, now from the store.
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ws->Info().base, out.commit);
  auto listed = Workspace::List(*store_);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ((*listed)[0].base, out.commit);
  EXPECT_EQ((*listed)[0].changed_inodes, 0u);
  std::string buf(11, '\0');
  ASSERT_EQ(*ws->Read(f.ino, 0, 11, buf.data()), 11u);
  EXPECT_EQ(buf, "hello world");
}

TEST_F(CommitTest, ASecondCommitWritesOnlyTheChangedDirectories) {
  auto ws = Open(std::nullopt, "ws", "main");
  Attr a = *ws->MakeDirectory(kRootInode, "a", 0755, kWho);
  Attr b = *ws->MakeDirectory(kRootInode, "b", 0755, kWho);
  Attr deep = *ws->MakeDirectory(b.ino, "deep", 0755, kWho);
  for (int i = 0; i < 50; i++) {
    Mk(*ws, a.ino, "a" + std::to_string(i), "data a " + std::to_string(i));
    Mk(*ws, deep.ino, "b" + std::to_string(i), "data b " + std::to_string(i));
  }
  Hash first = *CommitOk(*ws, "first").commit;
  Attr target = L(*ws, a.ino, "a7");
  ASSERT_TRUE(ws->Write(target.ino, 0, "DATA").ok());
  CommitOutcome out = CommitOk(*ws, "second");
  ASSERT_TRUE(out.commit);
  EXPECT_EQ(out.stats.directories_written, 2u) << "the root and a; b is reused by id";
  EXPECT_EQ(out.stats.files_captured, 1u);
  EXPECT_EQ(out.stats.changed_inodes, 1u);
  EXPECT_EQ(store_->GetCommit(*out.commit)->parents, std::vector<Hash>{first});
  EXPECT_EQ(EntryOf(*out.commit, "b").subtree, EntryOf(first, "b").subtree);
  EXPECT_EQ(FileOf(*out.commit, "a/a7"), "DATA a 7");
  EXPECT_EQ(FileOf(*out.commit, "a/a8"), "data a 8");

  // Removing and renaming are changes of the directories that hold the names.
  ASSERT_TRUE(ws->Unlink(a.ino, "a1").ok());
  ASSERT_TRUE(ws->Rename(deep.ino, "b3", a.ino, "moved", 0).ok());
  CommitOutcome third = CommitOk(*ws, "third");
  ASSERT_TRUE(third.commit);
  EXPECT_FALSE(LookupPath(*store_, store_->GetCommit(*third.commit)->root, "a/a1").ok());
  EXPECT_EQ(FileOf(*third.commit, "a/moved"), "data b 3");
  EXPECT_FALSE(LookupPath(*store_, store_->GetCommit(*third.commit)->root, "b/deep/b3").ok());
}

TEST_F(CommitTest, CommittedFilesCountAsLogicalBytesOfTheStore) {
  auto ws = Open(std::nullopt, "ws", "main");
  const std::string big = testing::RandomBytes(3 << 20, 5);
  Attr f = Mk(*ws, kRootInode, "big", big);
  Mk(*ws, kRootInode, "small", "seven b");
  ASSERT_TRUE(CommitOk(*ws, "first").commit);
  auto stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->logical_bytes, big.size() + 7) << "every byte given to the store counts";
  // A small edit: the file is given again whole, though little is new.
  ASSERT_TRUE(ws->Write(f.ino, 1 << 20, "edit").ok());
  ASSERT_TRUE(CommitOk(*ws, "edit").commit);
  stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->logical_bytes, 2 * big.size() + 7);
  EXPECT_LT(stats->chunk_raw_bytes, 2 * big.size()) << "the unchanged chunks are shared: a dedup ratio above 1";
}

TEST_F(CommitTest, ASmallChangeInALargeFileHashesAFewChunks) {
  auto ws = Open(std::nullopt, "ws", "main");
  const std::string big = testing::RandomBytes(24 << 20, 9);
  Attr f = Mk(*ws, kRootInode, "big", big);
  CommitOutcome first = CommitOk(*ws, "big file");
  EXPECT_EQ(first.stats.bytes_hashed, big.size());
  ASSERT_TRUE(ws->Write(f.ino, 12 << 20, "a small change").ok());
  CommitOutcome second = CommitOk(*ws, "small change");
  ASSERT_TRUE(second.commit);
  EXPECT_LE(second.stats.bytes_hashed, 3u * (2u << 20)) << "only the chunks around the change";
  std::string expect = big;
  expect.replace(12 << 20, 14, "a small change");
  EXPECT_EQ(FileOf(*second.commit, "big"), expect);
  // Growing it appends chunks; truncating it re-chunks the new tail only.
  SetAttrRequest cut;
  cut.size = 5 << 20;
  ASSERT_TRUE(ws->SetAttr(f.ino, cut).ok());
  CommitOutcome third = CommitOk(*ws, "cut");
  EXPECT_LE(third.stats.bytes_hashed, 2u * (2u << 20));
  EXPECT_EQ(FileOf(*third.commit, "big"), expect.substr(0, 5 << 20));
}

// The yardstick: one changed file in a workspace of 100 000 files is
// committed without visiting the others, both in the workspace that made them
// and in a new workspace on their commit whose directories were never loaded.
//
// The sanitizer builds run it on 10 000 files: creating 100 000 takes them
// about 7 minutes, and what is checked does not depend on the count.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kScaleDirs = 100;
#else
constexpr int kScaleDirs = 1000;
#endif

TEST_F(CommitTest, OneChangedFileAmongAHundredThousandVisitsNothingElse) {
  constexpr int kDirs = kScaleDirs, kFilesPerDir = 100;
  auto ws = Open(std::nullopt, "ws", "main");
  std::vector<InodeId> dirs;
  for (int d = 0; d < kDirs; d++) {
    dirs.push_back(ws->MakeDirectory(kRootInode, "d" + std::to_string(d), 0755, kWho)->ino);
    for (int f = 0; f < kFilesPerDir; f++) Mk(*ws, dirs.back(), "f" + std::to_string(f), "file " + std::to_string(f));
  }
  CommitOutcome all = CommitOk(*ws, "all");
  ASSERT_TRUE(all.commit);
  EXPECT_EQ(all.stats.files_captured, static_cast<uint64_t>(kDirs * kFilesPerDir));

  Attr target = L(*ws, dirs[17], "f42");
  ASSERT_TRUE(ws->Write(target.ino, 0, "FILE").ok());
  const StoreReadCounters read_before = ws->Counters().read_path.store;
  CommitOutcome one = CommitOk(*ws, "one");
  ASSERT_TRUE(one.commit);
  EXPECT_EQ(one.stats.changed_inodes, 1u);
  EXPECT_EQ(one.stats.files_captured, 1u);
  EXPECT_EQ(one.stats.bytes_hashed, std::string("FILE 42").size()) << "only the changed file is hashed";
  EXPECT_EQ(one.stats.directories_written, 2u) << "the root and d17; every other directory reused by id";
  EXPECT_LE(one.stats.objects_written, 4u) << "a chunk, two trees, the commit";
  // What it read from the store: commit objects (the base, to see whether the
  // tree changed), no tree and no file.
  const StoreReadCounters read_after = ws->Counters().read_path.store;
  EXPECT_LE(read_after.objects - read_before.objects, 2u);
  EXPECT_LE(read_after.bytes_verified - read_before.bytes_verified, 1024u) << "no tree of 100 or 1 000 entries";
  EXPECT_EQ(FileOf(*one.commit, "d17/f42"), "FILE 42");
  EXPECT_EQ(EntryOf(*one.commit, "d16").subtree, EntryOf(*all.commit, "d16").subtree);

  // A workspace on that commit loads only the directories on the changed path.
  auto fresh = Open(*one.commit, "fresh", "main");
  Attr d9 = L(*fresh, kRootInode, "d9");
  Attr f9 = L(*fresh, d9.ino, "f9");
  ASSERT_TRUE(fresh->Write(f9.ino, 0, "F").ok());
  CommitOutcome again = CommitOk(*fresh, "fresh one");
  ASSERT_TRUE(again.commit);
  EXPECT_EQ(again.stats.files_captured, 1u);
  EXPECT_EQ(again.stats.directories_written, 2u);
  EXPECT_LE(fresh->Counters().directories_loaded, 2u) << "the root and d9 only";
  EXPECT_EQ(FileOf(*again.commit, "d9/f9"), "File 9");
}

// A 1 MiB change inside a 4 GiB sparse file hashes a few MiB, not 4 GiB: the
// chunks around the change are re-chunked, all the others are reused unread.
TEST_F(CommitTest, AOneMiBChangeInAFourGiBSparseFileHashesAFewMiB) {
  constexpr uint64_t kSize = 4ull << 30;
  auto ws = Open(std::nullopt, "ws", "main");
  Attr f = Mk(*ws, kRootInode, "sparse", "");
  SetAttrRequest grow;
  grow.size = kSize;
  ASSERT_TRUE(ws->SetAttr(f.ino, grow).ok());
  ASSERT_TRUE(ws->Write(f.ino, 0, "head").ok());
  CommitOutcome first = CommitOk(*ws, "sparse");
  ASSERT_TRUE(first.commit);

  const std::string mib = testing::RandomBytes(1 << 20, 44);
  const uint64_t at = (kSize / 2) + 12345;
  ASSERT_TRUE(ws->Write(f.ino, at, mib).ok());
  CommitOutcome second = CommitOk(*ws, "1 MiB inside");
  ASSERT_TRUE(second.commit);
  EXPECT_GE(second.stats.bytes_hashed, mib.size());
  EXPECT_LE(second.stats.bytes_hashed, 8ull << 20) << "the changed MiB and the chunks around it, not 4 GiB";
  TreeEntry e = EntryOf(*second.commit, "sparse");
  EXPECT_EQ(e.size, kSize);
  // The changed range reads back from the commit's chunks.
  uint64_t offset = 0;
  std::string around;
  for (const ChunkRef& ref : e.chunks) {
    if (offset + ref.length > at && offset < at + mib.size()) {
      std::string data = *store_->Get(ref.id, ObjectType::kChunk);
      const uint64_t from = std::max(offset, at), to = std::min(offset + ref.length, at + mib.size());
      around += data.substr(from - offset, to - from);
    }
    offset += ref.length;
  }
  EXPECT_EQ(offset, kSize);
  EXPECT_EQ(around, mib);
}

// A commit holds no descriptor per file: more changed files than the process
// may open at once still commit.
// A disk image written at scattered offsets is cut at fixed offsets: each
// commit hashes about what was written, and reads after it, served from the
// new chunk list, return the new bytes.
TEST_F(CommitTest, AnImageWrittenAtScatteredOffsetsCommitsWhatChanged) {
  constexpr uint64_t kSize = 32ull << 20, kBlock = ScatteredImage::kBlock;
  auto ws = Open(std::nullopt, "ws", "main");
  ScatteredImage image = NewImage(*ws, kSize);
  image.Scatter(*ws, 200, 1);
  CommitOutcome first = CommitOk(*ws, "scattered");
  ASSERT_TRUE(first.commit);
  EXPECT_LE(first.stats.bytes_hashed, 2 * 200 * kBlock + 8192) << "the touched 8 KiB chunks and the zero chunk";
  TreeEntry e = EntryOf(*first.commit, "disk.img");
  ASSERT_EQ(e.chunks.size(), kSize / 8192);
  for (const ChunkRef& c : e.chunks) ASSERT_EQ(c.length, 8192u) << "cut at fixed offsets";
  image.ReadsBack(*ws, {kSize - kBlock});

  // Blocks read before are written again: the next reads must not use the old list.
  image.blocks.clear();
  image.Scatter(*ws, 100, 2);
  image.Scatter(*ws, 50, 1);
  CommitOutcome second = CommitOk(*ws, "scattered again");
  ASSERT_TRUE(second.commit);
  EXPECT_GT(second.stats.bytes_hashed, 0u);
  EXPECT_LE(second.stats.bytes_hashed, 4 * 150 * kBlock) << "kept fixed: at most 4x what was written";
  image.ReadsBack(*ws, {kSize - kBlock});
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  image.ReadsBack(*ws, {kSize - kBlock});
}

// A list of many chunks (here 20 480 fixed ones) stays in the commit's tree:
// the workspace names that tree instead of writing the list into its database
// again, reads the list back from the tree once it no longer has it decoded,
// and reports the tree among what gc must keep.
TEST_F(CommitTest, ALongChunkListIsKeptInTheCommitsTreeNotWrittenAgain) {
  constexpr uint64_t kSize = 160ull << 20, kBlock = ScatteredImage::kBlock;
  auto ws = Open(std::nullopt, "ws", "main");
  ScatteredImage image = NewImage(*ws, kSize);
  auto reopen = [&]() {
    ws.reset();
    ws = std::move(Workspace::Open(*store_, "ws")).value();
  };
  const auto zeros = {uint64_t{0}, kSize / 2 + kBlock, kSize - kBlock};
  image.Scatter(*ws, 300, 3);
  CommitOutcome first = CommitOk(*ws, "one");
  ASSERT_TRUE(first.commit);
  ASSERT_EQ(EntryOf(*first.commit, "disk.img").chunks.size(), kSize / 8192);
  image.ReadsBack(*ws, zeros);
  ws.reset();
  {
    // Not in the database: without the store's tree the list cannot be had.
    auto db = workspace_internal::NamespaceDb::Open(Workspace::StateDir(*store_, "ws") + "/workspace.db", false);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->GetBaseChunks(image.ino).status().code(), Status::Code::kUnsupported);
  }
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  image.ReadsBack(*ws, zeros);  // the list read from the tree

  // A new name changes the directory, whose tree id goes: the reference alone keeps the tree.
  Mk(*ws, kRootInode, "other", "x");
  ws.reset();
  auto refs = Workspace::References(*store_, "ws");
  ASSERT_TRUE(refs.ok()) << refs.status().ToString();
  const Hash root = store_->GetCommit(*first.commit)->root;
  EXPECT_NE(std::find(refs->trees.begin(), refs->trees.end(), root), refs->trees.end());
  ws = std::move(Workspace::Open(*store_, "ws")).value();

  image.Scatter(*ws, 200, 4);
  image.Scatter(*ws, 50, 3);  // blocks written before, again
  CommitOutcome second = CommitOk(*ws, "two");
  ASSERT_TRUE(second.commit);
  EXPECT_LE(second.stats.bytes_hashed, 4 * 250 * kBlock) << "at most 4x what was written";
  image.ReadsBack(*ws, zeros);
  reopen();
  image.ReadsBack(*ws, zeros);
}

TEST_F(CommitTest, MoreChangedFilesThanOpenDescriptors) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 400;  // the workspace itself keeps up to 256 data files open
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto ws = Open(std::nullopt, "ws", "main");
  for (int i = 0; i < 1000; i++) Mk(*ws, kRootInode, "f" + std::to_string(i), "data " + std::to_string(i));
  auto out = ws->Commit(CommitRequest{"many", "tester", ""});
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stats.files_captured, 1000u);
  EXPECT_EQ(FileOf(*out->commit, "f999"), "data 999");
}

// A commit's captured data files are deleted a little after it returns
// (FileData::RemoveLater). A file written again meanwhile gets a new data
// file: none of the old one's bytes shows through where it was grown.
TEST_F(CommitTest, AFileWrittenRightAfterItsCommitReadsNoneOfItsOldBytes) {
  auto ws = Open(std::nullopt, "ws", "main");
  std::vector<InodeId> inos;
  for (int i = 0; i < 2000; i++)
    inos.push_back(Mk(*ws, kRootInode, "f" + std::to_string(i), "old contents " + std::to_string(i)).ino);
  CommitOk(*ws, "first");
  // The last ones: the thread that deletes them has most likely not got there yet.
  for (int i = 1999; i >= 1950; i--) {
    SetAttrRequest empty;
    empty.size = 0;
    ASSERT_TRUE(ws->SetAttr(inos[i], empty).ok());
    ASSERT_TRUE(ws->Write(inos[i], 0, "new").ok());
    SetAttrRequest grow;
    grow.size = 20;
    ASSERT_TRUE(ws->SetAttr(inos[i], grow).ok());
    std::string buf(20, '?');
    auto read = ws->Read(inos[i], 0, 20, buf.data());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(buf, "new" + std::string(17, '\0')) << "f" << i;
  }
  const CommitOutcome second = CommitOk(*ws, "second");
  ASSERT_TRUE(second.commit);
  EXPECT_EQ(FileOf(*second.commit, "f1999"), "new" + std::string(17, '\0'));
  EXPECT_EQ(FileOf(*second.commit, "f0"), "old contents 0");
}

TEST_F(CommitTest, TwoWorkspacesOnOneBranchTheSecondIsToldHeadMoved) {
  auto one = Open(std::nullopt, "one", "main");
  Mk(*one, kRootInode, "f", "base");
  Hash base = *CommitOk(*one, "base").commit;
  auto two = Open(base, "two", "main");
  Mk(*one, kRootInode, "from-one", "1");
  Mk(*two, kRootInode, "from-two", "2");
  ASSERT_TRUE(CommitOk(*one, "one wins").commit);
  auto lost = two->Commit(CommitRequest{"two loses", "tester", ""});
  ASSERT_FALSE(lost.ok());
  EXPECT_TRUE(lost.status().IsConflict()) << lost.status().ToString();
  EXPECT_NE(lost.status().message().find("head moved"), std::string::npos);
  EXPECT_EQ(two->Info().base, base) << "a refused commit changes nothing";
  EXPECT_GT(two->Counters().changed_paths, 0u);
  EXPECT_TRUE(two->Lookup(kRootInode, "from-two").ok());
  // A commit to another branch than the one tracked is refused as well.
  EXPECT_FALSE(two->Commit(CommitRequest{"x", "tester", "other"}).ok());
}

TEST_F(CommitTest, WritesDuringACommitLandInTheNextOne) {
  auto ws = Open(std::nullopt, "ws", "main");
  const std::string big = testing::RandomBytes(16 << 20, 3);
  Attr f = Mk(*ws, kRootInode, "big", big);
  Attr log = Mk(*ws, kRootInode, "log", "");
  // A writer appends numbered records while commits are taken.
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; !stop; i++) {
      std::string rec = "record " + std::to_string(i) + "\n";
      auto size = ws->GetAttr(log.ino)->size;
      if (!ws->Write(log.ino, size, rec).ok()) break;
      written = i + 1;
    }
  });
  std::vector<Hash> commits;
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(ws->Write(f.ino, static_cast<uint64_t>(i) << 20, "change").ok());
    auto out = CommitOk(*ws, "c" + std::to_string(i));
    if (out.commit) commits.push_back(*out.commit);
  }
  stop = true;
  writer.join();
  ASSERT_FALSE(commits.empty());
  EXPECT_GT(written.load(), 0) << "the writer ran during the commits";
  for (const Hash& c : commits) {
    // Every commit holds an exact prefix of the records: whole lines, in order.
    std::string data = FileOf(c, "log");
    size_t n = 0, pos = 0;
    while (pos < data.size()) {
      std::string want = "record " + std::to_string(n) + "\n";
      ASSERT_EQ(data.compare(pos, want.size(), want), 0) << "at record " << n;
      pos += want.size();
      n++;
    }
  }
  CommitOutcome last = CommitOk(*ws, "rest");
  std::string expect;
  for (int i = 0; i < written; i++) expect += "record " + std::to_string(i) + "\n";
  EXPECT_EQ(FileOf(last.commit ? *last.commit : commits.back(), "log"), expect);
}

// The FUSE layer answers writes on its dispatcher thread unless the workspace
// says a write may wait: that must be true while a commit holds its cut (a
// writer to a file not captured yet waits for it), and false otherwise.
TEST_F(CommitTest, WritesMayWaitOnlyWhileACommitHoldsItsCut) {
  auto ws = Open(std::nullopt, "ws", "main");
  Mk(*ws, kRootInode, "big", testing::RandomBytes(32 << 20, 5));
  EXPECT_FALSE(ws->WritesMayWait());
  std::atomic<bool> done{false};
  std::atomic<int> seen_true{0};
  std::thread watcher([&] {
    while (!done) {
      if (ws->WritesMayWait()) seen_true++;
    }
  });
  CommitOutcome out = CommitOk(*ws, "c");
  done = true;
  watcher.join();
  ASSERT_TRUE(out.commit.has_value());
  EXPECT_GT(seen_true.load(), 0) << "never true while 32 MiB were captured";
  EXPECT_FALSE(ws->WritesMayWait()) << "still true after the commit";
}

// Punched and zeroed ranges commit as the zeros they read; a file copied with
// CopyRange from offset 0 into an empty one shares the source's chunks, so
// committing it hashes only around its own changes.
TEST_F(CommitTest, PunchedRangesAndSharedCopiesCommitAsTheyRead) {
  auto ws = Open(std::nullopt, "ws", "main");
  const std::string big = testing::RandomBytes(24 << 20, 21);
  Attr f = Mk(*ws, kRootInode, "big", big);
  CommitOk(*ws, "big file");
  std::string expect = big;
  ASSERT_TRUE(ws->Allocate(f.ino, kAllocPunchHole | kAllocKeepSize, 1 << 20, 100000).ok());
  expect.replace(1 << 20, 100000, 100000, '\0');
  Attr c = Mk(*ws, kRootInode, "copy", "");
  auto n = ws->CopyRange(f.ino, 0, c.ino, 0, big.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, big.size());
  std::string copy = expect;
  ASSERT_TRUE(ws->Write(c.ino, 5 << 20, "patched").ok());
  copy.replace(5 << 20, 7, "patched");
  ASSERT_TRUE(ws->Allocate(c.ino, kAllocZeroRange | kAllocKeepSize, 9 << 20, 5000).ok());
  copy.replace(9 << 20, 5000, 5000, '\0');
  ASSERT_TRUE(ws->Allocate(c.ino, kAllocPunchHole | kAllocKeepSize, 20 << 20, 8 << 20).ok());  // the tail
  copy.replace(20 << 20, copy.size() - (20 << 20), copy.size() - (20 << 20), '\0');
  CommitOutcome out = CommitOk(*ws, "holes and a copy");
  ASSERT_TRUE(out.commit);
  EXPECT_TRUE(FileOf(*out.commit, "big") == expect) << "punched file differs in the commit";
  EXPECT_TRUE(FileOf(*out.commit, "copy") == copy) << "copied file differs in the commit";
  EXPECT_LT(out.stats.bytes_hashed, big.size()) << "the copy was hashed whole instead of sharing chunks";
}

}  // namespace
}  // namespace strata
