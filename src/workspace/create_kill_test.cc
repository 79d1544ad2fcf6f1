// A process killed (SIGKILL) at any moment of Workspace::Create leaves the
// workspace whole or absent: never a directory under its name that fails to
// open or list. The kills land from before the first file is made to after
// the rename; what one leaves under a temporary name is nobody's.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "store/store.h"
#include "testing/store_test_util.h"
#include "util/sqlite_connection.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

// Forks a process that opens the store, waits for the word and creates
// workspace `name`; kills it delay_us after the word. True when Create
// returned before the kill.
bool CreateKilledAfter(const std::string& store_path, const std::string& name, useconds_t delay_us) {
  int ready[2], go[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    auto store = Store::Open(store_path);
    char c = 1;
    (void)!::write(ready[1], &c, 1);
    (void)!::read(go[0], &c, 1);
    if (!store.ok()) ::_exit(2);
    ::_exit(Workspace::Create(**store, name, std::nullopt, "main").ok() ? 0 : 1);
  }
  char c = 0;
  (void)!::read(ready[0], &c, 1);
  (void)!::write(go[1], &c, 1);
  if (delay_us > 0) ::usleep(delay_us);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(CreateKillTest, AKillAtAnyMomentOfCreateLeavesTheWorkspaceWholeOrAbsent) {
  strata::testing::TempDir dir;
  const std::string path = dir.path() + "/s";
  ASSERT_TRUE(Store::Init(path, StoreConfig()).ok());
  std::set<std::string> created;
  // An SQLite connection must not cross a fork: none is open in this process.
  ASSERT_EQ(OpenSqliteConnections(), 0);
  for (int i = 0; i < 60; i++) {
    const std::string name = "w" + std::to_string(i);
    // From at once to 12 ms, in steps: before, during and after the rename.
    if (CreateKilledAfter(path, name, static_cast<useconds_t>(i * 200))) created.insert(name);
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::printf("%zu of 60 Creates returned before their kill\n", created.size());
  auto list = Workspace::List(**store);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::set<std::string> listed;
  for (const WorkspaceInfo& w : *list) {
    listed.insert(w.name);
    EXPECT_EQ(w.branch, "main") << w.name;
    auto ws = Workspace::Open(**store, w.name);
    ASSERT_TRUE(ws.ok()) << w.name << ": " << ws.status().ToString();
    EXPECT_TRUE((*ws)->ReadDirectory(kRootInode, 0, 1).ok()) << w.name;
  }
  for (const std::string& name : created) EXPECT_TRUE(listed.count(name)) << name << " was created but is not listed";
  // Every directory under a workspace's own name is one that lists.
  for (const auto& e : std::filesystem::directory_iterator(path + "/workspaces")) {
    const std::string n = e.path().filename().string();
    if (n.starts_with(".")) continue;  // a temporary of a killed Create, or a removal's
    EXPECT_TRUE(listed.count(n)) << n << " is under a workspace's name but is no workspace";
  }
  // Names a killed Create left free can be created again.
  for (int i = 0; i < 60; i++) {
    const std::string name = "w" + std::to_string(i);
    if (listed.count(name)) continue;
    EXPECT_TRUE(Workspace::Create(**store, name, std::nullopt, "main").ok()) << name;
  }
}

}  // namespace
}  // namespace strata
