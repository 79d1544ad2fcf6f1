// Direct access (Workspace::OpenDirect): writes the workspace never sees,
// made through the data file's descriptor as the kernel makes them under
// FUSE passthrough, are what a commit captures, and a cut holds them off (or,
// with no hold, waits for them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "store/revision.h"
#include "testing/store_test_util.h"
#include "workspace/direct_access.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

constexpr Credentials kWho{1000, 1000};

class DirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
    ASSERT_TRUE(Workspace::Create(*store_, "ws", std::nullopt, "main").ok());
    ws_ = std::move(Workspace::Open(*store_, "ws")).value();
    direct_ = DirectAccessOf(*ws_);
    ASSERT_NE(direct_, nullptr);
  }

  Attr Make(const std::string& name, const std::string& data) {
    auto a = ws_->MakeNode(kRootInode, name, S_IFREG | 0644, 0, kWho);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    if (!data.empty()) {
      EXPECT_TRUE(ws_->Write(a->ino, 0, data).ok());
    }
    return *a;
  }

  static void WriteAt(int fd, uint64_t offset, const std::string& data) {
    ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)), static_cast<ssize_t>(data.size()));
  }

  std::string FileOf(const Hash& commit, const std::string& path) {
    auto e = LookupPath(*store_, store_->GetCommit(commit)->root, path);
    EXPECT_TRUE(e.ok()) << path;
    if (!e.ok()) return "<missing>";
    std::string out;
    for (const ChunkRef& ref : e->chunks) out += *store_->Get(ref.id, ObjectType::kChunk);
    return out;
  }

  std::string Contents(InodeId ino) {
    std::string out(1 << 16, '\0');
    auto n = ws_->Read(ino, 0, out.size(), out.data());
    EXPECT_TRUE(n.ok());
    out.resize(n.ok() ? *n : 0);
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Workspace> ws_;
  DirectAccess* direct_ = nullptr;
};

TEST_F(DirectTest, WritesThroughTheDescriptorAreWhatTheFileHoldsAndWhatACommitCaptures) {
  Attr a = Make("a", "hello");
  auto fd = direct_->OpenDirect(a.ino, true);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  WriteAt(*fd, 3, "XYZ123");
  struct stat st {};
  ASSERT_EQ(::fstat(*fd, &st), 0);
  // While the writer is open, the inode's size and mtime are the data file's.
  auto open_attr = ws_->GetAttr(a.ino);
  ASSERT_TRUE(open_attr.ok());
  EXPECT_EQ(open_attr->size, 9u);
  EXPECT_EQ(open_attr->mtime_ns, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec);
  EXPECT_EQ(Contents(a.ino), "helXYZ123");
  WriteAt(*fd, 20, "end");  // leaves a hole: zeros in the file
  direct_->CloseDirect(a.ino, true);
  const std::string expected = std::string("helXYZ123") + std::string(11, '\0') + "end";
  EXPECT_EQ(Contents(a.ino), expected);
  auto out = ws_->Commit(CommitRequest{"direct", "tester", ""});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->commit);
  EXPECT_EQ(FileOf(*out->commit, "a"), expected);
}

TEST_F(DirectTest, AFileWithBaseBytesIsNotHandedOut) {
  Attr a = Make("a", "committed");
  ASSERT_TRUE(ws_->Commit(CommitRequest{"base", "tester", ""}).ok());
  // Its bytes are now the base commit's chunks, not in a data file.
  auto fd = direct_->OpenDirect(a.ino, false);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), Status::Code::kUnsupported) << fd.status().ToString();
  // Truncated to nothing, every byte it has from then on is local.
  SetAttrRequest empty;
  empty.size = 0;
  ASSERT_TRUE(ws_->SetAttr(a.ino, empty).ok());
  auto again = direct_->OpenDirect(a.ino, false);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  direct_->CloseDirect(a.ino, false);
}

TEST_F(DirectTest, TheDataFileKeepsTheLengthOfTheFileWhileOpen) {
  Attr a = Make("a", "0123456789");
  auto fd = direct_->OpenDirect(a.ino, false);
  ASSERT_TRUE(fd.ok());
  struct stat st {};
  SetAttrRequest r;
  r.size = 4;
  ASSERT_TRUE(ws_->SetAttr(a.ino, r).ok());
  ASSERT_EQ(::fstat(*fd, &st), 0);
  EXPECT_EQ(st.st_size, 4);  // at once: the kernel reads the data file to its end
  r.size = 100;
  ASSERT_TRUE(ws_->SetAttr(a.ino, r).ok());
  ASSERT_EQ(::fstat(*fd, &st), 0);
  EXPECT_EQ(st.st_size, 100);
  direct_->CloseDirect(a.ino, false);
  EXPECT_EQ(Contents(a.ino), std::string("0123") + std::string(96, '\0'));
}

// The cut waits for the direct writer: what it writes before it closes is in
// the commit, however late after the commit was asked for; no new direct
// writer gets in meanwhile.
TEST_F(DirectTest, ACutWaitsForDirectWritersAndLetsNoNewOneIn) {
  Attr a = Make("a", "");
  Attr other = Make("other", "");
  auto fd = direct_->OpenDirect(a.ino, true);
  ASSERT_TRUE(fd.ok());
  WriteAt(*fd, 0, "before ");
  Result<CommitOutcome> out = Status::Internal("not run");
  std::thread commit([&] { out = ws_->Commit(CommitRequest{"cut", "tester", ""}); });
  // Once the commit waits, a new direct writer is refused (EBUSY).
  for (;;) {
    auto probe = direct_->OpenDirect(other.ino, true);
    if (!probe.ok()) {
      EXPECT_EQ(probe.status().errno_value(), EBUSY) << probe.status().ToString();
      break;
    }
    direct_->CloseDirect(other.ino, true);
    std::this_thread::yield();
  }
  WriteAt(*fd, 7, "closing");
  direct_->CloseDirect(a.ino, true);
  commit.join();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->commit);
  EXPECT_EQ(FileOf(*out->commit, "a"), "before closing");
  // Over with the commit: direct writers are let in again.
  auto after = direct_->OpenDirect(other.ino, true);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  direct_->CloseDirect(other.ino, true);
}

TEST_F(DirectTest, AWriterThatStaysOpenFailsTheCommitWithEbusyAndChangesNothing) {
  Attr a = Make("a", "x");
  auto fd = direct_->OpenDirect(a.ino, true);
  ASSERT_TRUE(fd.ok());
  WriteAt(*fd, 0, "y");
  auto out = ws_->Commit(CommitRequest{"busy", "tester", ""});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().errno_value(), EBUSY) << out.status().ToString();
  direct_->CloseDirect(a.ino, true);
  auto later = ws_->Commit(CommitRequest{"later", "tester", ""});
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_TRUE(later->commit);
  EXPECT_EQ(FileOf(*later->commit, "a"), "y");
}

// A hold as the transport's (fs/passthrough_hold.h) would be, without a
// kernel: it says which files it was asked for, and whether a new direct
// writer got in while it held them.
class RecordingHold final : public DirectWriteHold {
 public:
  explicit RecordingHold(DirectAccess& direct, InodeId probe) : direct_(direct), probe_(probe) {}
  std::vector<InodeId> Hold(const std::vector<File>& files) override {
    asked = files;
    // Called with no workspace lock held: the workspace serves meanwhile,
    // and refuses new direct writers.
    auto fd = direct_.OpenDirect(probe_, true);
    probe_refused = !fd.ok() && fd.status().errno_value() == EBUSY;
    if (fd.ok()) direct_.CloseDirect(probe_, true);
    std::vector<InodeId> held;
    for (const File& f : files) held.push_back(f.ino);
    return held;
  }
  void Release() override { releases++; }

  std::vector<File> asked;
  bool probe_refused = false;
  int releases = 0;

 private:
  DirectAccess& direct_;
  const InodeId probe_;
};

// With a hold, a direct writer that stays open does not stop the commit: it
// holds the bytes written before the cut, the hold is let go once, and what
// the writer writes afterwards is in the next commit.
TEST_F(DirectTest, AHeldDirectWriterStaysOpenAcrossTheCommit) {
  auto dir = ws_->MakeDirectory(kRootInode, "d", 0755, kWho);
  ASSERT_TRUE(dir.ok());
  auto a = ws_->MakeNode(dir->ino, "a", S_IFREG | 0644, 0, kWho);
  ASSERT_TRUE(a.ok());
  Attr other = Make("other", "");
  RecordingHold hold(*direct_, other.ino);
  direct_->SetWriteHold(&hold);
  auto fd = direct_->OpenDirect(a->ino, true);
  ASSERT_TRUE(fd.ok());
  WriteAt(*fd, 0, "before");
  auto out = ws_->Commit(CommitRequest{"held", "tester", ""});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->commit);
  EXPECT_EQ(FileOf(*out->commit, "d/a"), "before");
  ASSERT_EQ(hold.asked.size(), 1u);
  EXPECT_EQ(hold.asked[0].ino, a->ino);
  EXPECT_EQ(hold.asked[0].path, "d/a");
  EXPECT_TRUE(hold.probe_refused);
  EXPECT_EQ(hold.releases, 1);
  WriteAt(*fd, 6, " after");
  auto next = ws_->Commit(CommitRequest{"next", "tester", ""});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->commit);
  EXPECT_EQ(FileOf(*next->commit, "d/a"), "before after");
  direct_->CloseDirect(a->ino, true);
  direct_->SetWriteHold(nullptr);
}

// The kernel's held writes go on as soon as the files are captured, before a
// rebase installs its merged tree: the rebase must see them as changes made
// after its cut (and start over) rather than install a tree without them.
class WriteOnReleaseHold final : public DirectWriteHold {
 public:
  WriteOnReleaseHold(int fd, std::string data) : fd_(fd), data_(std::move(data)) {}
  std::vector<InodeId> Hold(const std::vector<File>& files) override {
    std::vector<InodeId> held;
    for (const File& f : files) held.push_back(f.ino);
    return held;
  }
  void Release() override {
    if (written_) return;
    written_ = true;
    ASSERT_EQ(::pwrite(fd_, data_.data(), data_.size(), 6), static_cast<ssize_t>(data_.size()));
  }

 private:
  const int fd_;
  const std::string data_;
  bool written_ = false;
};

// The daemon killed after the kernel wrote through a synced (O_SYNC) direct
// writer: its next process keeps the bytes, though no operation recorded
// them. A writer that closed leaves no note behind: bytes its data file has
// past the file's recorded size (as a truncation not yet applied to the
// data file leaves them) are not taken for the file's.
TEST_F(DirectTest, SyncedDirectWritesSurviveAKilledProcess) {
  const Attr kept = Make("kept", "");
  const Attr closed = Make("closed", "");
  {
    auto fd = direct_->OpenDirect(closed.ino, true, true);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    WriteAt(*fd, 0, "whole");
    direct_->CloseDirect(closed.ino, true);
  }
  ws_.reset();
  {
    const std::string data_file = dir_.path() + "/s/workspaces/ws/data/" + std::to_string(closed.ino);
    const int fd = ::open(data_file.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0) << data_file;
    ASSERT_EQ(::write(fd, " and more", 9), 9);
    ::close(fd);
  }
  pid_t child = ::fork();
  if (child == 0) {
    auto ws = Workspace::Open(*store_, "ws");
    if (!ws.ok()) ::_exit(10);
    DirectAccess* direct = DirectAccessOf(**ws);
    auto fd = direct->OpenDirect(kept.ino, true, true);
    if (!fd.ok()) ::_exit(11);
    const std::string bytes = "synced bytes";
    if (::pwrite(*fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) ::_exit(12);
    (void)::fdatasync(*fd);
    ::_exit(0);  // killed: no close, no further operation, no destructor
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto reopened = Workspace::Open(*store_, "ws");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  ws_ = std::move(*reopened);
  EXPECT_EQ(ws_->GetAttr(kept.ino)->size, 12u);
  EXPECT_EQ(Contents(kept.ino), "synced bytes");
  EXPECT_EQ(Contents(closed.ino), "whole");
  auto out = ws_->Commit(CommitRequest{"after the kill", "tester", ""});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->commit);
  EXPECT_EQ(FileOf(*out->commit, "kept"), "synced bytes");
  EXPECT_EQ(FileOf(*out->commit, "closed"), "whole");
}

TEST_F(DirectTest, ARebaseSeesDirectWritesMadeAfterItsCut) {
  Make("x", "base");
  auto base = ws_->Commit(CommitRequest{"base", "tester", ""});
  ASSERT_TRUE(base.ok() && base->commit) << base.status().ToString();
  ASSERT_TRUE(Workspace::Create(*store_, "two", *base->commit, "main").ok());
  auto two = std::move(Workspace::Open(*store_, "two")).value();
  auto y = two->MakeNode(kRootInode, "y", S_IFREG | 0644, 0, kWho);
  ASSERT_TRUE(y.ok() && two->Write(y->ino, 0, "theirs").ok());
  auto theirs = two->Commit(CommitRequest{"theirs", "tester", ""});
  ASSERT_TRUE(theirs.ok() && theirs->commit) << theirs.status().ToString();

  Attr a = Make("a", "");
  auto fd = direct_->OpenDirect(a.ino, true);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  WriteAt(*fd, 0, "before");
  WriteOnReleaseHold hold(*fd, " after");
  direct_->SetWriteHold(&hold);
  auto out = ws_->RebaseOnto(*theirs->commit, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->conflicts.empty());
  direct_->CloseDirect(a.ino, true);
  direct_->SetWriteHold(nullptr);

  auto now = ws_->Lookup(kRootInode, "a");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(Contents(now->ino), "before after");
  auto mine = ws_->Commit(CommitRequest{"mine", "tester", ""});
  ASSERT_TRUE(mine.ok() && mine->commit) << mine.status().ToString();
  EXPECT_EQ(FileOf(*mine->commit, "a"), "before after");
  EXPECT_EQ(FileOf(*mine->commit, "y"), "theirs");
}

// A file the hold could not take is waited for as without one; a writer of a
// file with no name left is in no directory of the commit and not waited for.
TEST_F(DirectTest, OnlyNamedWritersTheHoldDidNotTakeAreWaitedFor) {
  Attr gone = Make("gone", "");
  Attr other = Make("other", "");
  auto fd = direct_->OpenDirect(gone.ino, true);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(ws_->Unlink(kRootInode, "gone").ok());
  WriteAt(*fd, 0, "unseen");
  RecordingHold hold(*direct_, other.ino);
  direct_->SetWriteHold(&hold);
  auto out = ws_->Commit(CommitRequest{"unlinked writer", "tester", ""});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(hold.asked.empty());
  direct_->CloseDirect(gone.ino, true);
  direct_->SetWriteHold(nullptr);
}

}  // namespace
}  // namespace strata
