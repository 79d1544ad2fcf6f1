// The client side of the control socket when the daemon stops mid-request:
// a reply cut short (a daemon killed while it served the request) or a socket
// nobody listens on any more is "the daemon stopped", never damaged data.
#include "control/socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "testing/store_test_util.h"

namespace strata::control {
namespace {

const char kCommitReply[] =
    R"({"commit":null,"branch":"main","stats":{"changed_inodes":0,"directories_written":0,"files_captured":0,)"
    R"("bytes_hashed":0,"objects_written":0,"cut_ms":0,"capture_ms":0,"trees_ms":0,"publish_ms":0,"rebase_ms":0}})";

TEST(ControlReplyTest, AReplyWithoutItsNewlineIsADaemonThatStopped) {
  for (std::string cut : {std::string(), std::string(kCommitReply).substr(0, 20), std::string(kCommitReply)}) {
    auto r = DecodeReplyOrStop(CommitRequest{}, cut);
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << cut;
    EXPECT_EQ(r.status().message(), kDaemonStoppedMessage);
  }
}

TEST(ControlReplyTest, ACompleteReplyIsDecodedAndAnUnreadableOneIsStillRefused) {
  auto ok = DecodeReplyOrStop(CommitRequest{}, std::string(kCommitReply) + "\n");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(std::get<CommitReply>(*ok).branch, "main");
  auto bad = DecodeReplyOrStop(CommitRequest{}, "{\"commit\": 5}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsCorruption());
}

// A listener that takes one request and closes without answering, as a
// daemon killed while serving it does.
class SilentDaemon {
 public:
  explicit SilentDaemon(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    thread_ = std::thread([this] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)!::read(c, buf, sizeof(buf));
      ::close(c);
    });
  }
  ~SilentDaemon() {
    thread_.join();
    ::close(fd_);
  }

 private:
  int fd_ = -1;
  std::thread thread_;
};

TEST(ControlRequestTest, ADaemonThatClosesWithoutAnsweringHasStopped) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  const DaemonRequest commit = CommitRequest{"m", "a", "main"};
  {
    SilentDaemon daemon(path);
    auto r = ControlRequest(path, commit);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().message();
  }
  // The socket file is left, as a killed daemon leaves it; nobody listens.
  auto r = ControlRequest(path, commit);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable) << r.status().message();
}

}  // namespace
}  // namespace strata::control
