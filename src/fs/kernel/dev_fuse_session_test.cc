// Mounts a tiny file system (one directory holding one file) through the
// classic /dev/fuse loop, with no libfuse anywhere, and reads it with
// ordinary tools: ls, cat, stat, and a write that must be refused. Then the
// same over FUSE over io_uring, with the kernel's enable_uring switched on
// for the test and back to what it was afterwards.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fs/kernel/dev_fuse_session.h"
#include "fs/kernel/dirent_buffer.h"
#include "util/unique_fd.h"

namespace strata::fs::kernel {
namespace {

constexpr uint64_t kRoot = FUSE_ROOT_ID;
constexpr uint64_t kFile = 2;
constexpr uint64_t kSlow = 3;  // a file whose reads wait until interrupted
const std::string kContent = "bytes served by strata's own FUSE codec\n";

class TinyFs : public RequestHandler {
 public:
  std::atomic<int> lookups{0};
  std::atomic<int> forgotten{0};
  std::atomic<int> reads{0};
  // Passthrough: OPEN of the file answers with this backing file, registered
  // with the session at the first open.
  DevFuseSession* session = nullptr;
  int backing_fd = -1;
  int32_t backing_id = -1;

  Message Handle(const Request& r, const InterruptTracker& interrupts) override {
    uint64_t u = r.header.unique;
    switch (r.header.opcode) {
      case FUSE_LOOKUP: {
        if (r.header.nodeid != kRoot) return ErrorReply(u, ENOENT);
        std::string_view name = std::get<NameArgs>(r.args).name;
        if (name != "hello.txt" && name != "slow") return ErrorReply(u, ENOENT);
        lookups++;
        return EntryReply(u, Entry(name == "slow" ? kSlow : kFile));
      }
      case FUSE_FORGET: forgotten++; return {};
      case FUSE_BATCH_FORGET: forgotten++; return {};
      case FUSE_GETATTR: return AttrReply(u, Attr(r.header.nodeid), std::chrono::seconds(1));
      case FUSE_OPENDIR:
      case FUSE_OPEN: {
        if (r.header.opcode == FUSE_OPEN && (std::get<OpenArgs>(r.args).in.flags & O_ACCMODE) != O_RDONLY)
          return ErrorReply(u, EROFS);
        if (r.header.opcode == FUSE_OPEN && backing_fd >= 0) {
          if (backing_id < 0) {
            auto id = session->OpenBacking(backing_fd);
            if (!id.ok()) return ErrorReply(u, id.status().errno_value());
            backing_id = *id;
          }
          return OpenReply(u, OpenParams{7, kOpenPassthrough, backing_id});
        }
        return OpenReply(u, OpenParams{7, 0, 0});
      }
      case FUSE_READDIR:
      case FUSE_READDIRPLUS: return Readdir(r);
      case FUSE_READ: {
        reads++;
        if (r.header.nodeid == kSlow) return ReadUntilInterrupted(u, interrupts);
        const auto& in = std::get<ReadArgs>(r.args).in;
        if (in.offset >= kContent.size()) return DataReply(u, std::string_view());
        return DataReply(u, std::string_view(kContent).substr(in.offset, in.size));
      }
      case FUSE_RELEASE:
      case FUSE_RELEASEDIR:
      case FUSE_FLUSH: return EmptyReply(u);
      case FUSE_STATFS: {
        struct statvfs st {};
        st.f_bsize = 4096;
        st.f_namemax = 255;
        st.f_blocks = 1;
        return StatfsReply(u, st);
      }
      default: return ErrorReply(u, ENOSYS);
    }
  }

  std::atomic<int> interrupted_reads{0};
  std::atomic<int> slow_reads_given_up{0};
  // How long a read of the slow file waits for its INTERRUPT.
  std::chrono::milliseconds slow_read_limit{20000};

 private:
  // Waits (at most 20 s) for the kernel's INTERRUPT of this read, then
  // answers EINTR, as a handler stuck on a slow source would.
  Message ReadUntilInterrupted(uint64_t unique, const InterruptTracker& interrupts) {
    const auto give_up = std::chrono::steady_clock::now() + slow_read_limit;
    while (!interrupts.IsInterrupted(unique) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!interrupts.IsInterrupted(unique)) {
      slow_reads_given_up++;
      return ErrorReply(unique, EIO);
    }
    interrupted_reads++;
    return ErrorReply(unique, EINTR);
  }

  static struct stat Attr(uint64_t ino) {
    struct stat st {};
    st.st_ino = ino;
    st.st_nlink = ino == kRoot ? 2 : 1;
    st.st_mode = ino == kRoot ? (S_IFDIR | 0755) : (S_IFREG | 0444);
    st.st_size = ino == kRoot ? 0 : static_cast<off_t>(kContent.size());
    if (ino == kSlow) st.st_size = 4096;
    st.st_blksize = 4096;
    st.st_mtim = {1700000000, 0};
    return st;
  }
  static EntryParams Entry(uint64_t ino) {
    EntryParams e;
    e.nodeid = ino;
    e.entry_timeout = std::chrono::seconds(1);
    e.attr_timeout = std::chrono::seconds(1);
    e.attr = Attr(ino);
    return e;
  }
  Message Readdir(const Request& r) {
    const auto& in = std::get<ReadArgs>(r.args).in;
    DirentBuffer buf(in.size);
    struct Row {
      uint64_t ino;
      uint32_t type;
      const char* name;
    };
    const Row rows[] = {{kRoot, DT_DIR, "."}, {kRoot, DT_DIR, ".."}, {kFile, DT_REG, "hello.txt"}};
    for (uint64_t i = in.offset; i < 3; i++) {
      bool added;
      if (r.header.opcode == FUSE_READDIRPLUS && rows[i].ino == kFile) {
        added = buf.AddPlus(Entry(kFile), i + 1, rows[i].type, rows[i].name);
        if (added) lookups++;  // a READDIRPLUS entry counts as a lookup
      } else if (r.header.opcode == FUSE_READDIRPLUS) {
        EntryParams none;  // nodeid 0: the kernel makes no dentry of "." and ".."
        none.attr.st_ino = rows[i].ino;
        added = buf.AddPlus(none, i + 1, rows[i].type, rows[i].name);
      } else {
        added = buf.Add(rows[i].ino, i + 1, rows[i].type, rows[i].name);
      }
      if (!added) break;
    }
    return DataReply(r.header.unique, buf.bytes());
  }
};

std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  if (rc != 0) out += "[exit " + std::to_string(rc) + "]";
  return out;
}

class DevFuseSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting without libfuse needs root";
    if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
    char tmpl[] = "/tmp/strata-devfuse-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (session_) {
      EXPECT_TRUE(session_->Unmount().ok());
      if (loop_.joinable()) loop_.join();
      if (second_.joinable()) second_.join();
      EXPECT_TRUE(second_status_.ok()) << second_status_.ToString();
      for (std::thread& t : uring_threads_) t.join();
      for (const Status& s : uring_status_) EXPECT_TRUE(s.ok()) << s.ToString();
    }
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }
  void Start(SessionOptions options = {}) {
    auto s = DevFuseSession::Mount(dir_, options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
    loop_ = std::thread([this] { loop_status_ = session_->Run(fs_); });
  }
  // The mount is listed as fuse.strata; after Unmount it is gone and the
  // loop has ended cleanly.
  void ExpectMountedThenUnmount() {
    EXPECT_EQ(Shell("grep -c ' " + dir_ + " fuse.strata ' /proc/mounts"), "1\n");
    EXPECT_TRUE(session_->Unmount().ok());
    loop_.join();
    EXPECT_TRUE(loop_status_.ok()) << loop_status_.ToString();
    EXPECT_EQ(Shell("grep -c ' " + dir_ + " ' /proc/mounts"), "0\n[exit 256]");
  }
  // A second reader, so that one request may wait while others are answered.
  void StartSecondReader() {
    second_ = std::thread([this] { second_status_ = session_->Run(fs_); });
  }

  // Mounts with io_uring wanted, and starts a thread for each entry made.
  void StartWithUringWanted() {
    SessionOptions options;
    options.wants.io_uring = true;
    Start(options);
    StartUringEntries();
  }
  void StartUringEntries() {
    uring_status_.resize(session_->uring_entries());
    for (size_t i = 0; i < session_->uring_entries(); i++)
      uring_threads_.emplace_back([this, i] { uring_status_[i] = session_->RunUring(fs_, i); });
  }

  std::string dir_;
  TinyFs fs_;
  std::vector<std::thread> uring_threads_;
  std::vector<Status> uring_status_;
  std::unique_ptr<DevFuseSession> session_;
  std::thread loop_;
  Status loop_status_;
  std::thread second_;
  Status second_status_;
};

TEST_F(DevFuseSessionTest, OrdinaryToolsReadTheTinyFileSystem) {
  Start();
  EXPECT_EQ(Shell("ls -a " + dir_), ".\n..\nhello.txt\n");
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  EXPECT_EQ(Shell("stat -c '%s %A %h' " + dir_ + "/hello.txt"), std::to_string(kContent.size()) + " -r--r--r-- 1\n");
  EXPECT_EQ(Shell("grep -c codec " + dir_ + "/hello.txt"), "1\n");
  EXPECT_NE(Shell("cat " + dir_ + "/missing 2>&1").find("No such file"), std::string::npos);
  EXPECT_NE(Shell("stat -f -c %T " + dir_).find("fuse"), std::string::npos);
  std::ofstream out(dir_ + "/hello.txt");
  EXPECT_FALSE(out.is_open()) << "a write open must be refused";
  ASSERT_TRUE(session_->settings().has_value());
  EXPECT_GE(session_->settings()->minor, kOldestMinor);
  EXPECT_GT(fs_.lookups.load(), 0);
  ExpectMountedThenUnmount();
}

TEST_F(DevFuseSessionTest, ReaddirplusWhenAgreedAndNotifications) {
  SessionOptions options;
  options.wants.flags = FUSE_DO_READDIRPLUS;
  Start(options);
  EXPECT_EQ(Shell("ls -a " + dir_), ".\n..\nhello.txt\n");
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  ASSERT_TRUE(session_->settings().has_value());
  EXPECT_TRUE(session_->settings()->flags & FUSE_DO_READDIRPLUS);
  // The kernel takes both invalidations; then the file is looked up afresh.
  int before = fs_.lookups.load();
  EXPECT_TRUE(session_->Notify(NotifyInvalInode(kFile, 0, 0)).ok());
  auto entry = NotifyInvalEntry(kRoot, "hello.txt", 0);
  ASSERT_TRUE(entry.ok());
  EXPECT_TRUE(session_->Notify(*entry).ok());
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  EXPECT_GT(fs_.lookups.load(), before);
}

// With passthrough agreed, an OPEN answered with a backing file sends reads
// straight to it: cat shows the backing file's bytes and no READ reaches us.
TEST_F(DevFuseSessionTest, PassthroughReadsGoToTheBackingFile) {
  SessionOptions options;
  options.wants.passthrough = true;
  Start(options);
  EXPECT_EQ(Shell("ls " + dir_), "hello.txt\n");  // the first request waits for INIT
  auto settings = session_->settings();
  ASSERT_TRUE(settings.has_value());
  if (!(settings->offered & kInitPassthrough)) GTEST_SKIP() << "this kernel offers no passthrough";
  ASSERT_TRUE(settings->passthrough);
  EXPECT_FALSE(settings->may_skip_open);

  std::string backing_path = dir_ + ".backing";
  const std::string kBacking = "these bytes come from the backing file\n";
  std::ofstream(backing_path) << kBacking;
  UniqueFd backing(::open(backing_path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(backing.get(), 0);
  fs_.session = session_.get();
  fs_.backing_fd = backing.get();
  EXPECT_EQ(Shell("head -c " + std::to_string(kBacking.size()) + " " + dir_ + "/hello.txt"), kBacking);
  EXPECT_EQ(Shell("head -c " + std::to_string(kBacking.size()) + " " + dir_ + "/hello.txt"), kBacking);
  EXPECT_EQ(fs_.reads.load(), 0) << "reads of a passthrough open must not reach the daemon";
  ASSERT_GE(fs_.backing_id, 0);
  // The id can go once the opens have it; a second release of it is refused.
  EXPECT_TRUE(session_->CloseBacking(fs_.backing_id).ok());
  EXPECT_FALSE(session_->CloseBacking(fs_.backing_id).ok());
  ::unlink(backing_path.c_str());
}

// A signal to a process waiting on a read makes the kernel send INTERRUPT,
// which reaches the running handler through the tracker; the handler's EINTR
// ends the read, and the other reader keeps serving meanwhile.
TEST_F(DevFuseSessionTest, AnInterruptReachesTheRunningRequest) {
  Start();
  StartSecondReader();
  std::string out = Shell("timeout -s USR1 1 cat " + dir_ + "/slow; echo status $?");
  EXPECT_NE(out.find("status 124"), std::string::npos) << out;  // timeout's "the command timed out"
  EXPECT_EQ(fs_.interrupted_reads.load(), 1);
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
}

// The same file system mounted through fusermount3, as a user without root
// would mount it: the device comes back over a socket and serves the same.
TEST_F(DevFuseSessionTest, FusermountMountsTheSame) {
  SessionOptions options;
  options.use_fusermount = true;
  Start(options);
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  EXPECT_EQ(Shell("ls " + dir_), "hello.txt\n");
  ExpectMountedThenUnmount();
}

// The kernel's switch for FUSE over io_uring, set for one test and put back
// as it was when the test ends, whatever happens in it.
class EnableUring {
 public:
  static constexpr const char* kPath = "/sys/module/fuse/parameters/enable_uring";
  explicit EnableUring(bool on) {
    std::ifstream in(kPath);
    if (!(in >> before_)) return;
    std::ofstream out(kPath);
    out << (on ? "Y" : "N");
    out.flush();
    set_ = out.good();
  }
  ~EnableUring() {
    if (!set_) return;
    std::ofstream(kPath) << before_;
  }
  bool set() const { return set_; }

 private:
  std::string before_;
  bool set_ = false;
};

// With enable_uring on, INIT agrees io_uring and the ring entries serve the
// requests: ls, cat and stat work, READs arrive over the ring, and an
// INTERRUPT (which still comes on /dev/fuse) reaches a read running on a
// ring entry.
TEST_F(DevFuseSessionTest, IoUringEntriesServeTheRequests) {
  EnableUring uring(true);
  if (!uring.set()) GTEST_SKIP() << "this kernel has no FUSE over io_uring (" << EnableUring::kPath << ")";
  StartWithUringWanted();
  ASSERT_GT(session_->uring_entries(), 0u) << "no io_uring entries could be made";
  EXPECT_EQ(Shell("ls -a " + dir_), ".\n..\nhello.txt\n");
  auto settings = session_->settings();
  ASSERT_TRUE(settings.has_value());
  if (!(settings->offered & kInitOverIoUring)) GTEST_SKIP() << "the kernel did not offer FUSE over io_uring";
  EXPECT_TRUE(settings->io_uring);
  EXPECT_TRUE(session_->serving_over_uring());
  const uint64_t before = session_->requests_over_uring();
  EXPECT_GT(before, 0u) << "the listing did not come over the ring";
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  EXPECT_EQ(Shell("stat -c '%s %A' " + dir_ + "/hello.txt"), std::to_string(kContent.size()) + " -r--r--r--\n");
  EXPECT_GT(fs_.reads.load(), 0);
  EXPECT_GT(session_->requests_over_uring(), before);
  // The kernel (6.18) sends the READ again after the interrupted one
  // answers EINTR, for the dying cat; that one's INTERRUPT is lost, because
  // the ring hands a request over without checking whether it was
  // interrupted meanwhile (the /dev/fuse read does check). So it waits out
  // its limit: the first must still have been interrupted.
  fs_.slow_read_limit = std::chrono::milliseconds(1500);
  std::string out = Shell("timeout -s USR1 1 cat " + dir_ + "/slow; echo status $?");
  EXPECT_NE(out.find("status 124"), std::string::npos) << out;
  EXPECT_EQ(fs_.interrupted_reads.load(), 1);
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
}

// With enable_uring off the kernel offers no io_uring: the entries stay
// unused, their threads return at once, and the classic loop serves.
TEST_F(DevFuseSessionTest, WithoutTheKernelsOfferTheClassicLoopServes) {
  EnableUring uring(false);
  if (!uring.set()) GTEST_SKIP() << "this kernel has no FUSE over io_uring (" << EnableUring::kPath << ")";
  StartWithUringWanted();
  EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
  ASSERT_TRUE(session_->settings().has_value());
  EXPECT_FALSE(session_->settings()->io_uring);
  EXPECT_FALSE(session_->serving_over_uring());
  EXPECT_EQ(session_->requests_over_uring(), 0u);
  ExpectMountedThenUnmount();
}

TEST(DevFuseSessionMount, RefusesTypesThatWouldSplitTheOptions) {
  SessionOptions options;
  options.subtype = "a,allow_other";
  auto s = DevFuseSession::Mount("/tmp", options);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  options.subtype = "";
  EXPECT_FALSE(DevFuseSession::Mount("/tmp", options).ok());
  options.subtype = "strata";
  options.fs_name = "";
  EXPECT_FALSE(DevFuseSession::Mount("/tmp", options).ok());
}

// A source name with commas (a store path may have them) cannot add mount
// options, through mount(2) or fusermount3: it is the source, nothing more.
TEST_F(DevFuseSessionTest, ACommaInTheSourceNameAddsNoOption) {
  for (bool fusermount : {false, true}) {
    SessionOptions options;
    options.fs_name = "a,allow_other";
    options.use_fusermount = fusermount;
    Start(options);
    EXPECT_EQ(Shell("cat " + dir_ + "/hello.txt"), kContent);
    EXPECT_EQ(Shell("grep -c '^a,allow_other " + dir_ + " fuse.strata ' /proc/mounts"), "1\n") << fusermount;
    EXPECT_EQ(Shell("awk '$2 == \"" + dir_ + "\" {print $4}' /proc/mounts | grep -c allow_other"), "0\n[exit 256]")
        << fusermount;
    ExpectMountedThenUnmount();
    session_.reset();
  }
}

TEST(DevFuseSessionMount, RefusesWhatIsNotADirectory) {
  auto s = DevFuseSession::Mount("/proc/self/status", SessionOptions{});
  ASSERT_FALSE(s.ok());
  auto missing = DevFuseSession::Mount("/nonexistent/strata-mountpoint", SessionOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/strata-mountpoint"), std::string::npos);
}

}  // namespace
}  // namespace strata::fs::kernel
