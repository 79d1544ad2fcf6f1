// The capture of a commit on several threads (commit_capture.cc): the same
// trees as on one thread, and one file that cannot be captured fails the
// commit cleanly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/revision.h"
#include "testing/store_test_util.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

constexpr Credentials kWho{1000, 1000};

class CommitCaptureTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> NewStore(const std::string& name) {
    EXPECT_TRUE(Store::Init(dir_.path() + "/" + name, StoreConfig()).ok());
    auto store = Store::Open(dir_.path() + "/" + name);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  static std::unique_ptr<Workspace> OpenWorkspace(Store& store) {
    EXPECT_TRUE(Workspace::Create(store, "ws", std::nullopt, "main").ok());
    auto ws = Workspace::Open(store, "ws");
    EXPECT_TRUE(ws.ok()) << ws.status().ToString();
    return ws.ok() ? std::move(ws).value() : nullptr;
  }
  // Directories of small files, a few files of many chunks, an empty file
  // and a sparse one: the same tree every time it is called (every mtime
  // set to one moment, since trees record them).
  static std::vector<InodeId> MakeTree(Workspace& ws) {
    std::vector<InodeId> files, dirs{kRootInode};
    auto file = [&](InodeId dir, const std::string& name, const std::string& data) {
      auto a = ws.MakeNode(dir, name, S_IFREG | 0644, 0, kWho);
      EXPECT_TRUE(a.ok()) << a.status().ToString();
      if (!a.ok()) return;
      if (!data.empty()) {
        EXPECT_TRUE(ws.Write(a->ino, 0, data).ok());
      }
      files.push_back(a->ino);
    };
    for (int d = 0; d < 6; d++) {
      auto dir = ws.MakeDirectory(kRootInode, "d" + std::to_string(d), 0755, kWho);
      EXPECT_TRUE(dir.ok());
      if (!dir.ok()) return files;
      dirs.push_back(dir->ino);
      for (int f = 0; f < 50; f++) file(dir->ino, "f" + std::to_string(f), "small file " + std::to_string(d * 50 + f));
      file(dir->ino, "big", testing::RandomBytes((3 << 20) + d * 1000, 10 + d));
    }
    file(kRootInode, "empty", "");
    file(kRootInode, "sparse", "");
    EXPECT_TRUE(ws.Write(files.back(), 20 << 20, "end").ok());
    SetAttrRequest then;
    then.mtime_ns = int64_t{1700000000} * 1000000000;
    for (const auto& inodes : {files, dirs})
      for (InodeId ino : inodes) EXPECT_TRUE(ws.SetAttr(ino, then).ok());
    return files;
  }

  testing::TempDir dir_;
};

TEST_F(CommitCaptureTest, ManyThreadsCommitTheSameTreesAsOne) {
  auto one_store = NewStore("one");
  auto many_store = NewStore("many");
  ASSERT_TRUE(one_store && many_store);
  auto one = OpenWorkspace(*one_store);
  auto many = OpenWorkspace(*many_store);
  ASSERT_TRUE(one && many);
  MakeTree(*one);
  MakeTree(*many);
  one->SetCaptureThreads(1);
  many->SetCaptureThreads(4);
  auto by_one = one->Commit(CommitRequest{"tree", "tester", ""});
  auto by_many = many->Commit(CommitRequest{"tree", "tester", ""});
  ASSERT_TRUE(by_one.ok()) << by_one.status().ToString();
  ASSERT_TRUE(by_many.ok()) << by_many.status().ToString();
  ASSERT_TRUE(by_one->commit && by_many->commit);

  // A commit's id covers its time too; what it names must be the same.
  auto commit_one = one_store->GetCommit(*by_one->commit);
  auto commit_many = many_store->GetCommit(*by_many->commit);
  ASSERT_TRUE(commit_one.ok() && commit_many.ok());
  EXPECT_EQ(commit_one->root.ToHex(), commit_many->root.ToHex());
  EXPECT_EQ(by_many->stats.files_captured, 308u);
  EXPECT_EQ(by_many->stats.files_captured, by_one->stats.files_captured);
  EXPECT_EQ(by_many->stats.bytes_hashed, by_one->stats.bytes_hashed);
  EXPECT_EQ(by_many->stats.objects_written, by_one->stats.objects_written);

  // Every chunk the many threads named is in their store, with its bytes.
  auto big = LookupPath(*many_store, commit_many->root, "d5/big");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  std::string bytes;
  for (const ChunkRef& ref : big->chunks) bytes += *many_store->Get(ref.id, ObjectType::kChunk);
  EXPECT_EQ(bytes, testing::RandomBytes((3 << 20) + 5000, 15));
  auto small = LookupPath(*many_store, commit_many->root, "d3/f7");
  ASSERT_TRUE(small.ok() && small->chunks.size() == 1);
  EXPECT_EQ(*many_store->Get(small->chunks[0].id, ObjectType::kChunk), "small file 157");
}

TEST_F(CommitCaptureTest, OneFileThatCannotBeCapturedFailsTheCommitCleanly) {
  auto store = NewStore("s");
  ASSERT_TRUE(store);
  auto ws = OpenWorkspace(*store);
  ASSERT_TRUE(ws);
  const std::vector<InodeId> files = MakeTree(*ws);
  const InodeId damaged = files[120];  // d2/f18
  // Its data file loses the bytes its extents name: its capture fails.
  const std::string data = Workspace::StateDir(*store, "ws") + "/data/" + std::to_string(damaged);
  ASSERT_EQ(::truncate(data.c_str(), 5), 0);

  ws->SetCaptureThreads(4);
  const CommitRequest request{"tree", "tester", ""};
  auto failed = ws->Commit(request);
  ASSERT_FALSE(failed.ok()) << "a commit recorded a file it could not read";
  EXPECT_NE(failed.status().message().find("'d2/f18'"), std::string::npos) << failed.status().message();
  auto head = store->GetRef("main");
  ASSERT_TRUE(head.ok());
  EXPECT_FALSE(*head) << "the branch moved to a commit that failed";

  // No writer is left waiting for a capture, and once the file is whole
  // again the next commit takes everything.
  for (InodeId ino : {files[0], files[200], damaged}) {
    auto wrote = ws->Write(ino, 0, "written again, longer than before");
    EXPECT_TRUE(wrote.ok()) << wrote.status().ToString();
  }
  auto next = ws->Commit(request);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->commit);
  EXPECT_EQ(next->stats.files_captured, 308u);
  auto root = store->GetCommit(*next->commit)->root;
  auto fixed = LookupPath(*store, root, "d2/f18");
  ASSERT_TRUE(fixed.ok() && fixed->chunks.size() == 1);
  EXPECT_EQ(*store->Get(fixed->chunks[0].id, ObjectType::kChunk), "written again, longer than before");
}

}  // namespace
}  // namespace strata
