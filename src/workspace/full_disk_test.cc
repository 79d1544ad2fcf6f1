// A full disk under a workspace, without a mount and without a small
// filesystem: a fake disk that the workspace's database writes through (an
// SQLite VFS over the default one that fails writes growing a file with
// SQLITE_FULL when the fake disk has no room) and whose free space the space
// reserve measures (the store and its workspace are opened on a FaultEnv whose
// FreeSpace answers for the fake disk, testing/fault_env.h). The reserve file is on
// the fake disk too: while it exists it takes SpaceReserve::kBytes of it, so
// deleting it gives the database its room, as on a real disk.
#include <sqlite3.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <mutex>

#include "testing/fault_env.h"
#include "testing/sqlite_test_vfs.h"
#include "workspace/space_reserve.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

using workspace_internal::SpaceReserve;

// The disk the files under one directory live on.
class FakeDisk {
 public:
  explicit FakeDisk(std::string dir) : dir_(std::move(dir)) {}

  bool Covers(const char* path) const { return path != nullptr && std::strncmp(path, dir_.c_str(), dir_.size()) == 0; }

  // Fills the disk: nothing is left but what the reserve file holds.
  void Fill() {
    std::lock_guard lock(mu_);
    free_ = grown_ + (ReserveExists() ? static_cast<int64_t>(SpaceReserve::kBytes) : 0);
  }
  // Fills the disk so that deleting the reserve gives no room either (someone
  // else takes it at once).
  void FillForGood() {
    std::lock_guard lock(mu_);
    free_ = grown_ - (ReserveExists() ? 0 : static_cast<int64_t>(SpaceReserve::kBytes));
    hard_ = true;
  }
  void MakeRoom(int64_t bytes) {
    std::lock_guard lock(mu_);
    if (hard_) free_ = grown_ + (ReserveExists() ? static_cast<int64_t>(SpaceReserve::kBytes) : 0);
    hard_ = false;
    free_ += bytes;
  }
  uint64_t Available() {
    std::lock_guard lock(mu_);
    return AvailableLocked();
  }
  // A database file grows by `bytes`: false when the disk has no room.
  bool Grow(int64_t bytes) {
    std::lock_guard lock(mu_);
    if (static_cast<int64_t>(AvailableLocked()) < bytes) return false;
    grown_ += bytes;
    return true;
  }
  void Shrink(int64_t bytes) {
    std::lock_guard lock(mu_);
    grown_ -= bytes;
  }

 private:
  bool ReserveExists() const { return ::access((dir_ + "/reserve").c_str(), F_OK) == 0; }
  uint64_t AvailableLocked() const {
    int64_t a = free_ - grown_ - (ReserveExists() ? static_cast<int64_t>(SpaceReserve::kBytes) : 0);
    if (hard_) a = std::min<int64_t>(a, 0);
    return a < 0 ? 0 : static_cast<uint64_t>(a);
  }

  const std::string dir_;
  std::mutex mu_;
  int64_t free_ = INT64_MAX / 4;  // free bytes, the reserve file's included
  int64_t grown_ = 0;             // what the database files grew by since
  bool hard_ = false;
};

// ---- an SQLite VFS over the default one, writing through the fake disk

class FakeDiskVfs : public strata::testing::SqliteVfsShim {
 public:
  explicit FakeDiskVfs(FakeDisk& disk) : SqliteVfsShim("strata-full-disk-test"), disk_(disk) {}

  int Write(File& f, const void* p, int n, sqlite3_int64 off) override {
    if (disk_.Covers(f.path->c_str())) {
      sqlite3_int64 size = 0;
      if (int rc = RealFileSize(f, &size); rc != SQLITE_OK) return rc;
      if (off + n > size && !disk_.Grow(off + n - size)) return SQLITE_FULL;
    }
    return RealWrite(f, p, n, off);
  }
  int Truncate(File& f, sqlite3_int64 to) override {
    if (disk_.Covers(f.path->c_str())) {
      sqlite3_int64 size = 0;
      if (RealFileSize(f, &size) == SQLITE_OK && to < size) disk_.Shrink(size - to);
    }
    return RealTruncate(f, to);
  }

 private:
  FakeDisk& disk_;
};

class FullDiskTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    store_.reset();
    env_.SetFreeSpace([this](const std::string&) { return disk_->Available(); });
    auto store = Store::Open(dir_.path() + "/s", &env_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    disk_ = std::make_unique<FakeDisk>(WsDir());
    vfs_ = std::make_unique<FakeDiskVfs>(*disk_);
  }
  void TearDown() override {
    ws_.reset();  // closes its database connections before the VFS goes
    store_.reset();  // before env_
    vfs_.reset();
  }

  void Reopen() {
    ws_.reset();
    auto ws = Workspace::Open(*store_, "ws");
    ASSERT_TRUE(ws.ok()) << ws.status().ToString();
    ws_ = std::move(ws).value();
  }
  // The first Sync once the disk has room: the committer thread may have
  // lost one more batch meanwhile, which one Sync reports (once).
  Status SyncOnceThereIsRoom() {
    Status s = ws_->Sync(kRootInode);
    return s.ok() ? s : ws_->Sync(kRootInode);
  }
  bool DataFileExists(InodeId ino) { return ::access((WsDir() + "/data/" + std::to_string(ino)).c_str(), F_OK) == 0; }
  bool ReserveExists() { return ::access((WsDir() + "/reserve").c_str(), F_OK) == 0; }

  FaultEnv env_{Env::Default()};
  std::unique_ptr<FakeDisk> disk_;
  std::unique_ptr<FakeDiskVfs> vfs_;
  std::unique_ptr<Workspace> ws_;
};

// The bug: on a full disk the COMMIT of the batch holding an unlink failed,
// SQLite rolled the batch back, and the deleted file's space never came back.
TEST_F(FullDiskTest, DeletingAFileOnAFullDiskCommitsAndFreesItsData) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  EXPECT_TRUE(ReserveExists());
  Attr big = Mk(*ws_, kRootInode, "big");
  W(*ws_, big.ino, 0, std::string(1 << 20, 'b'));
  ASSERT_TRUE(ws_->Sync(big.ino).ok());
  disk_->Fill();
  ASSERT_EQ(disk_->Available(), 0u);

  ASSERT_TRUE(ws_->Unlink(kRootInode, "big").ok());
  Status s = ws_->Sync(kRootInode);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(DataFileExists(big.ino)) << "the deleted file's data is still on the disk";
  EXPECT_FALSE(ReserveExists()) << "the reserve was not used for the commit";
  Reopen();
  EXPECT_EQ(Errno(ws_->Lookup(kRootInode, "big")), ENOENT) << "the deletion did not land";
}

// Without the reserve file, the room it held is kept free: data writes that
// would take it fail with ENOSPC, while the database still commits deletions.
// Once there is room again, the reserve is taken again.
TEST_F(FullDiskTest, WithoutTheReserveDataWritesLeaveTheDatabaseItsRoom) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  Attr a = Mk(*ws_, kRootInode, "a");
  Attr b = Mk(*ws_, kRootInode, "b");
  W(*ws_, b.ino, 0, "keep");
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
  disk_->Fill();
  W(*ws_, a.ino, 0, "x");  // the reserve is held: the write itself finds room on the (fake) disk
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
  ASSERT_FALSE(ReserveExists());

  EXPECT_EQ(Errno(ws_->Write(a.ino, 0, std::string(8192, 'y'))), ENOSPC);
  EXPECT_EQ(Errno(ws_->Allocate(a.ino, 0, 0, 1 << 20)), ENOSPC);
  EXPECT_EQ(Errno(ws_->CopyRange(b.ino, 0, a.ino, 100, 4)), ENOSPC);
  // Metadata still changes, and deletions commit.
  Mk(*ws_, kRootInode, "c");
  ASSERT_TRUE(ws_->Unlink(kRootInode, "c").ok());
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
  EXPECT_EQ(ReadAll(*ws_, a.ino), "x");

  disk_->MakeRoom(64 << 20);
  W(*ws_, a.ino, 0, std::string(8192, 'y'));
  EXPECT_TRUE(ReserveExists()) << "the reserve was not taken again once there was room";
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
}

// The second bug: a file created in a batch that SQLite then rolled back (no
// room even without the reserve) was gone, and a write to it through its open
// descriptor failed with ENOENT. The kernel still holds it: ENOSPC, and its
// inode number is never handed out again.
TEST_F(FullDiskTest, AFileLostWithARolledBackBatchIsNoSpaceNotNoEntry) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  disk_->FillForGood();
  Attr f = Mk(*ws_, kRootInode, "f");
  ws_->Ref(f.ino);  // the kernel: the lookup of the create
  ws_->Ref(f.ino);  // the kernel: the open file
  W(*ws_, f.ino, 0, "data");
  EXPECT_EQ(Errno(ws_->Sync(f.ino)), ENOSPC);
  EXPECT_EQ(Errno(ws_->Write(f.ino, 4, "more")), ENOSPC);
  EXPECT_EQ(Errno(ws_->GetAttr(f.ino)), ENOSPC);
  EXPECT_EQ(Errno(ws_->Lookup(kRootInode, "f")), ENOENT);  // never committed: as after a crash

  disk_->MakeRoom(64 << 20);
  Attr g = Mk(*ws_, kRootInode, "g");
  EXPECT_NE(g.ino, f.ino) << "an inode number the kernel holds was handed out again";
  ASSERT_TRUE(SyncOnceThereIsRoom().ok());
  ws_->Unref(f.ino, 2);
}

// An unlink in a batch SQLite rolled back did not happen: the file's data
// file must outlive the next commit that succeeds.
TEST_F(FullDiskTest, AnUnlinkLostWithARolledBackBatchKeepsTheFilesData) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  Attr k = Mk(*ws_, kRootInode, "keep");
  W(*ws_, k.ino, 0, "precious");
  ASSERT_TRUE(ws_->Sync(k.ino).ok());
  disk_->FillForGood();
  ASSERT_TRUE(ws_->Unlink(kRootInode, "keep").ok());
  EXPECT_EQ(Errno(ws_->Sync(kRootInode)), ENOSPC);
  disk_->MakeRoom(64 << 20);
  Mk(*ws_, kRootInode, "other");
  ASSERT_TRUE(SyncOnceThereIsRoom().ok());
  EXPECT_TRUE(DataFileExists(k.ino));
  Reopen();
  Attr again = L(*ws_, kRootInode, "keep");
  EXPECT_EQ(again.ino, k.ino);
  EXPECT_EQ(ReadAll(*ws_, k.ino), "precious");
}

// The kernel forgot an unlinked file in a batch SQLite then rolled back: the
// file is deleted again, so its space comes back with the next commit that
// succeeds rather than at the next Open.
TEST_F(FullDiskTest, AFileForgottenInARolledBackBatchIsDeletedAgain) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  Attr f = Mk(*ws_, kRootInode, "f");
  ws_->Ref(f.ino);
  W(*ws_, f.ino, 0, std::string(100000, 'f'));
  ASSERT_TRUE(ws_->Unlink(kRootInode, "f").ok());
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
  disk_->FillForGood();
  ws_->Unref(f.ino, 1);  // FORGET: the inode goes in this batch...
  EXPECT_EQ(Errno(ws_->Sync(kRootInode)), ENOSPC);  // ...which is lost
  EXPECT_TRUE(DataFileExists(f.ino));
  disk_->MakeRoom(64 << 20);
  ASSERT_TRUE(SyncOnceThereIsRoom().ok());
  EXPECT_EQ(Errno(ws_->GetAttr(f.ino)), ENOENT) << "the forgotten file is still there";
  EXPECT_FALSE(DataFileExists(f.ino));
}

// The bug (on a real disk; here the fake one): once the reserve was used, an
// unlink whose batch then found no room answered success, the batch was
// rolled back, and the file came back. Without the reserve every operation
// commits before it answers: one that cannot fails with ENOSPC and changes
// nothing, and one that can is done for good, its data file deleted within
// the committer's delay without any fsync.
TEST_F(FullDiskTest, WithoutTheReserveAnOperationThatCannotCommitFailsInsteadOfVanishing) {
  ws_ = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws_);
  Attr k = Mk(*ws_, kRootInode, "keep");
  W(*ws_, k.ino, 0, "precious");
  ASSERT_TRUE(ws_->Sync(k.ino).ok());
  disk_->Fill();
  Mk(*ws_, kRootInode, "x");
  ASSERT_TRUE(ws_->Sync(kRootInode).ok());
  ASSERT_FALSE(ReserveExists()) << "the reserve should have made room for that commit";

  disk_->FillForGood();
  EXPECT_EQ(Errno(ws_->Unlink(kRootInode, "keep")), ENOSPC) << "an unlink that could not commit answered success";
  EXPECT_EQ(L(*ws_, kRootInode, "keep").ino, k.ino);
  EXPECT_EQ(Errno(ws_->MakeNode(kRootInode, "y", S_IFREG | 0644, 0, kWho)), ENOSPC);
  EXPECT_EQ(Errno(ws_->Lookup(kRootInode, "y")), ENOENT);
  EXPECT_TRUE(ws_->Sync(kRootInode).ok()) << "a refused operation was reported as a lost one";

  disk_->MakeRoom(1 << 20);  // room for the database, not enough to take the reserve again
  ASSERT_TRUE(ws_->Unlink(kRootInode, "keep").ok());
  for (int i = 0; i < 100 && DataFileExists(k.ino); i++) ::usleep(20000);
  EXPECT_FALSE(DataFileExists(k.ino)) << "the deleted file's space did not come back without an fsync";
  Reopen();
  EXPECT_EQ(Errno(ws_->Lookup(kRootInode, "keep")), ENOENT) << "a deletion that answered success was undone";
  EXPECT_EQ(ReadAll(*ws_, L(*ws_, kRootInode, "x").ino), "");
}

}  // namespace
}  // namespace strata::workspace_testing
