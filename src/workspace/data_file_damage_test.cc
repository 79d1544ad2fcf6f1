// A workspace's data files (data/<ino>) that are damaged or replaced: short,
// missing, a symlink or a hard link to a file elsewhere. Damage is an error
// naming the file, never zeros taken for the file's bytes, and never a read or
// write of a file outside the workspace (file_data.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "workspace/sqlite_workspace.h"
#include "workspace/workspace_fsck.h"
#include "testing/fault_env.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

class DataFileDamageTest : public WorkspaceTest {
 protected:
  // The store is opened again through a FaultEnv, which can say that the
  // machine restarted (SetBootId).
  void SetUp() override {
    WorkspaceTest::SetUp();
    store_.reset();
    auto store = Store::Open(dir_.path() + "/s", &env_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void TearDown() override { store_.reset(); }  // before env_ goes

  // A workspace with file "f" of 100 000 written (and synced) bytes, closed.
  InodeId MakeWrittenFile() {
    auto ws = CreateAndOpen(std::nullopt);
    EXPECT_TRUE(ws);
    if (!ws) return 0;
    Attr f = Mk(*ws, kRootInode, "f");
    W(*ws, f.ino, 0, Bytes());
    EXPECT_TRUE(ws->Sync(f.ino).ok());
    return f.ino;
  }
  static std::string Bytes() { return testing::RandomBytes(100000, 3); }
  FaultEnv env_{Env::Default()};
  std::string DataPath(InodeId ino) { return WsDir() + "/data/" + std::to_string(ino); }
  std::unique_ptr<Workspace> Reopen() {
    auto ws = Workspace::Open(*store_, "ws");
    EXPECT_TRUE(ws.ok()) << ws.status().ToString();
    return ws.ok() ? std::move(ws).value() : nullptr;
  }
  std::vector<std::string> Fsck() {
    auto problems = CheckWorkspaceDataFiles(*store_, "ws");
    EXPECT_TRUE(problems.ok()) << problems.status().ToString();
    return problems.ok() ? *problems : std::vector<std::string>{"(fsck failed)"};
  }
};

// A data file no extent names is garbage (left by a crash before a commit's
// released files were deleted): it goes when the workspace opens, so a file
// grown by truncation reads zeros there, not the old bytes.
TEST_F(DataFileDamageTest, ADataFileNoExtentNamesIsRemovedAtOpen) {
  InodeId ino = 0;
  {
    auto ws = CreateAndOpen(std::nullopt);
    ASSERT_TRUE(ws);
    ino = Mk(*ws, kRootInode, "g").ino;
  }
  std::ofstream(DataPath(ino)) << std::string(100, 'x');
  auto ws = Reopen();
  ASSERT_TRUE(ws);
  EXPECT_FALSE(std::filesystem::exists(DataPath(ino)));
  SetAttrRequest grow;
  grow.size = 50;
  auto grown = ws->SetAttr(ino, grow);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  std::string buf(50, '?');
  auto read = ws->Read(ino, 0, 50, buf.data());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(buf, std::string(50, '\0'));
}

// The bug: a data file cut to 50 000 bytes read as 50 000 good bytes and then
// zeros, and a commit recorded the zeros for good.
TEST_F(DataFileDamageTest, ATruncatedDataFileIsAnErrorForReadsCommitsAndFsck) {
  const InodeId ino = MakeWrittenFile();
  ASSERT_EQ(::truncate(DataPath(ino).c_str(), 50000), 0);
  auto ws = Reopen();
  ASSERT_TRUE(ws);
  std::string buf(100000, '\0');
  auto head = ws->Read(ino, 0, 50000, buf.data());
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(buf.substr(0, 50000), Bytes().substr(0, 50000)) << "the bytes still there must read as written";
  auto tail = ws->Read(ino, 40000, 20000, buf.data());
  ASSERT_FALSE(tail.ok()) << "bytes missing from the data file were served";
  EXPECT_TRUE(tail.status().IsCorruption()) << tail.status().ToString();
  EXPECT_NE(tail.status().message().find(DataPath(ino)), std::string::npos) << tail.status().message();

  auto commit = ws->Commit(CommitRequest{"m", "t", ""});
  ASSERT_FALSE(commit.ok()) << "a commit recorded a damaged file";
  EXPECT_NE(commit.status().message().find("'f'"), std::string::npos) << commit.status().message();
  EXPECT_NE(commit.status().message().find(DataPath(ino)), std::string::npos) << commit.status().message();

  auto problems = Fsck();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(DataPath(ino)), std::string::npos) << problems[0];
}

TEST_F(DataFileDamageTest, AMissingDataFileIsAnErrorForReadsCommitsAndFsck) {
  const InodeId ino = MakeWrittenFile();
  ASSERT_EQ(::unlink(DataPath(ino).c_str()), 0);
  auto ws = Reopen();
  ASSERT_TRUE(ws);
  std::string buf(10, '\0');
  auto r = ws->Read(ino, 0, 10, buf.data());
  ASSERT_FALSE(r.ok()) << "a file whose data file is gone read as zeros";
  EXPECT_NE(r.status().message().find("missing"), std::string::npos) << r.status().message();
  EXPECT_FALSE(ws->Commit(CommitRequest{"m", "t", ""}).ok());
  ws.reset();
  EXPECT_EQ(Fsck().size(), 1u);
}

// After the machine restarted, a short data file is what a power cut leaves
// of bytes nobody synced: the workspace opens, fills them in with zeros (as
// a local filesystem may show unsynced bytes) and fsck has nothing to say.
TEST_F(DataFileDamageTest, AfterARestartAShortDataFileIsRepairedWithZeros) {
  const InodeId ino = MakeWrittenFile();
  ASSERT_EQ(::truncate(DataPath(ino).c_str(), 50000), 0);
  env_.SetBootId("another-boot");
  EXPECT_TRUE(Fsck().empty()) << "right after a restart the next open repairs it";
  auto ws = Reopen();
  ASSERT_TRUE(ws);
  std::string want = Bytes().substr(0, 50000) + std::string(50000, '\0');
  EXPECT_EQ(ReadAll(*ws, ino), want);
  ws.reset();
  EXPECT_TRUE(Fsck().empty());
}

// A punched range of a base file is an extent over zeros: its data file is
// made that long, so the rule "as long as the extents" holds and nothing
// legitimate looks damaged.
TEST_F(DataFileDamageTest, APunchedBaseRangeIsNotTakenForDamage) {
  const std::string base_bytes = testing::RandomBytes(200000, 9);
  auto ws = CreateAndOpen(PutCommit({File("b", base_bytes)}));
  ASSERT_TRUE(ws);
  Attr b = L(*ws, kRootInode, "b");
  ASSERT_TRUE(ws->Allocate(b.ino, kAllocPunchHole | kAllocKeepSize, 1000, 5000).ok());
  ASSERT_TRUE(ws->Sync(b.ino).ok());
  ws.reset();
  EXPECT_TRUE(Fsck().empty());
  ws = Reopen();
  ASSERT_TRUE(ws);
  std::string want = base_bytes;
  std::fill(want.begin() + 1000, want.begin() + 6000, '\0');
  EXPECT_EQ(ReadAll(*ws, b.ino), want);
}

// The bug: data/<ino> replaced by a symlink made the daemon (root) read and
// write the file it points at.
TEST_F(DataFileDamageTest, ADataFileReplacedByASymlinkOrAHardLinkIsRefused) {
  const InodeId ino = MakeWrittenFile();
  const std::string outside = dir_.path() + "/outside";
  std::ofstream(outside) << "secret of someone else";
  for (bool hard : {false, true}) {
    SCOPED_TRACE(hard ? "hard link" : "symlink");
    ASSERT_EQ(::unlink(DataPath(ino).c_str()), 0);
    ASSERT_EQ(hard ? ::link(outside.c_str(), DataPath(ino).c_str()) : ::symlink(outside.c_str(), DataPath(ino).c_str()),
              0);
    auto ws = Reopen();
    ASSERT_TRUE(ws);
    std::string buf(100, '\0');
    auto r = ws->Read(ino, 0, 100, buf.data());
    ASSERT_FALSE(r.ok()) << "read the file the link points at";
    EXPECT_EQ(r.status().errno_value(), EIO);
    EXPECT_EQ(Errno(ws->Write(ino, 0, "overwritten")), EIO);
    EXPECT_FALSE(ws->Commit(CommitRequest{"m", "t", ""}).ok());
    ws.reset();
    std::ifstream in(outside);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(content, "secret of someone else");
    EXPECT_EQ(Fsck().size(), 1u);
  }
}

// data/released/ replaced by a symlink to a directory elsewhere: opening the
// workspace deletes what an earlier run left in its own folder only.
TEST_F(DataFileDamageTest, AReleasedFolderReplacedByASymlinkDeletesNothingOutside) {
  MakeWrittenFile();
  const std::string victim = dir_.path() + "/victim";
  ASSERT_EQ(::mkdir(victim.c_str(), 0700), 0);
  std::ofstream(victim + "/precious") << "keep me";
  std::filesystem::remove_all(WsDir() + "/data/released");
  ASSERT_EQ(::symlink(victim.c_str(), (WsDir() + "/data/released").c_str()), 0);
  auto ws = Reopen();
  ASSERT_TRUE(ws);
  Attr g = Mk(*ws, kRootInode, "g");
  W(*ws, g.ino, 0, "g");
  ASSERT_TRUE(ws->Unlink(kRootInode, "g").ok());
  ASSERT_TRUE(ws->Sync(kRootInode).ok());
  ws.reset();
  EXPECT_EQ(::access((victim + "/precious").c_str(), F_OK), 0) << "a file outside the workspace was deleted";
}

TEST_F(DataFileDamageTest, ADataDirectoryReplacedByASymlinkIsRefusedAtOpen) {
  MakeWrittenFile();
  const std::string elsewhere = dir_.path() + "/elsewhere";
  std::filesystem::rename(WsDir() + "/data", elsewhere);
  ASSERT_EQ(::symlink(elsewhere.c_str(), (WsDir() + "/data").c_str()), 0);
  auto ws = Workspace::Open(*store_, "ws");
  ASSERT_FALSE(ws.ok()) << "a workspace whose data/ is a link elsewhere opened";
  // Refused by the check of the state directory (Workspace::CheckStateDir)
  // before the data directory is opened; either way the message names the link.
  const std::string& why = ws.status().message();
  EXPECT_TRUE(why.find("symbolic link") != std::string::npos || why.find("not a link") != std::string::npos) << why;
  EXPECT_NE(why.find("/data"), std::string::npos) << why;
}

}  // namespace
}  // namespace strata::workspace_testing
