// What a kill of the daemon may lose: at most the operations of the last
// moments before it (the group commit's window, docs/format/workspace.md),
// never those acknowledged longer ago, although nobody called Sync(). The
// kernel does not pass syncfs(2) or sync(2) to a FUSE daemon, so this window
// is all that `sync` followed by a crash can count on.
#include <sys/wait.h>
#include <unistd.h>

#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

// Past the window the guarantee states once operations pause (10 ms), with
// room for a loaded machine; still well inside the longest window (50 ms
// after a batch opens, while operations keep coming), so a committer that
// only waits for that fails here.
constexpr useconds_t kWaitUs = 25 * 1000;

TEST_F(WorkspaceTest, AKillLongerThanTheWindowAfterTheLastOperationLosesNothing) {
  ASSERT_TRUE(Workspace::Create(*store_, "ws", std::nullopt, "").ok());
  const std::string store_path = dir_.path() + "/s";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = Store::Open(store_path);
    if (!store.ok()) ::_exit(10);
    auto opened = Workspace::Open(**store, "ws");
    if (!opened.ok()) ::_exit(11);
    Workspace& ws = **opened;
    // Idle first, as a mount is before a user starts: the committer must
    // still see the batch the next operations open.
    ::usleep(200 * 1000);
    auto dir = ws.MakeDirectory(kRootInode, "d", 0755, kWho);
    if (!dir.ok()) ::_exit(12);
    for (int i = 0; i < 5; i++) {
      auto f = ws.MakeNode(dir->ino, "f" + std::to_string(i), S_IFREG | 0644, 0, kWho);
      if (!f.ok() || !ws.Write(f->ino, 0, "bytes of f" + std::to_string(i)).ok()) ::_exit(13);
    }
    if (!ws.Rename(dir->ino, "f0", kRootInode, "moved", 0).ok() || !ws.Unlink(dir->ino, "f1").ok()) ::_exit(14);
    ::usleep(kWaitUs);
    // One more, just before the kill: it may be lost, the others may not.
    (void)ws.MakeNode(kRootInode, "last", S_IFREG | 0644, 0, kWho);
    ::_exit(0);  // no destructors, no Sync: as if killed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  auto ws = std::move(Workspace::Open(*store_, "ws")).value();
  auto d = ws->Lookup(kRootInode, "d");
  ASSERT_TRUE(d.ok()) << "a directory made " << kWaitUs / 1000 << " ms before the kill is gone";
  EXPECT_EQ(Names(*ws, d->ino), (std::set<std::string>{"f2", "f3", "f4"}));
  auto moved = ws->Lookup(kRootInode, "moved");
  ASSERT_TRUE(moved.ok()) << "a rename done " << kWaitUs / 1000 << " ms before the kill is undone";
  EXPECT_EQ(ReadAll(*ws, moved->ino), "bytes of f0");
  for (int i = 2; i < 5; i++)
    EXPECT_EQ(ReadAll(*ws, L(*ws, d->ino, "f" + std::to_string(i)).ino), "bytes of f" + std::to_string(i));
}

}  // namespace
}  // namespace strata::workspace_testing
