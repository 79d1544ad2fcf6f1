// StartDaemon's guard: it never forks while this process holds a SQLite
// connection (a store or workspace open), and forks as before otherwise.
#include "daemon/daemon.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>

#include "testing/store_test_util.h"
#include "util/sqlite_connection.h"
#include "workspace/workspace.h"

namespace strata::daemon {
namespace {

class StartDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok()); }
  std::unique_ptr<Store> OpenStore() {
    auto store = Store::Open(dir_.path() + "/s");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  // A daemon that leaves a mark in the directory and says it is ready.
  Result<pid_t> Start() {
    const std::string mark = dir_.path() + "/forked";
    return StartDaemon([] { return std::string(); },
                       [mark](ReadyPipe& ready) {
                         std::FILE* f = std::fopen(mark.c_str(), "w");
                         if (f) std::fclose(f);
                         ready.Ready();
                         return 0;
                       });
  }
  bool Forked() { return std::filesystem::exists(dir_.path() + "/forked"); }
  testing::TempDir dir_;
};

TEST_F(StartDaemonTest, AStoreOpenCountsItsConnectionsUntilItCloses) {
  const int before = OpenSqliteConnections();
  auto store = OpenStore();
  ASSERT_TRUE(store);
  EXPECT_GT(OpenSqliteConnections(), before);
  ASSERT_TRUE(Workspace::Create(*store, "ws", std::nullopt, "main").ok());
  auto ws = Workspace::Open(*store, "ws");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  const int with_store = OpenSqliteConnections();
  ws->reset();
  EXPECT_LT(OpenSqliteConnections(), with_store) << "the workspace's database was not counted";
  store.reset();
  EXPECT_EQ(OpenSqliteConnections(), before);
}

TEST_F(StartDaemonTest, RefusesToForkWhileAStoreIsOpen) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  Status s = Start().status();
  ASSERT_FALSE(s.ok()) << "a daemon was forked beside an open store";
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("SQLite connection"), std::string::npos) << s.message();
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child process exists";
  EXPECT_EQ(errno, ECHILD);
  EXPECT_FALSE(Forked());
}

TEST_F(StartDaemonTest, ForksOnceEveryStoreIsClosed) {
  OpenStore().reset();
  ASSERT_EQ(OpenSqliteConnections(), 0);
  Result<pid_t> pid = Start();
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  // The pid is the daemon's: it exits right after saying it is ready.
  EXPECT_EQ(::waitpid(*pid, nullptr, 0), *pid);
  EXPECT_TRUE(Forked());
}

TEST_F(StartDaemonTest, ADaemonsErrorReachesTheCaller) {
  Status s = StartDaemon([] { return std::string(); },
                         [](ReadyPipe& ready) {
                           ready.Failed(Status::InvalidArgument("no such workspace"));
                           return 1;
                         }).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no such workspace"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata::daemon
