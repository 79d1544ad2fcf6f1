// The control socket's two threads: while a commit is being served, a stats
// or progress request is answered at once (that is how `strata commit` draws
// the daemon's progress and `strata stats` works during a long commit), and
// the requests that change the workspace still wait their turn.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "control/socket.h"
#include "testing/store_test_util.h"
#include "util/mutex.h"
#include "workspace/commit_progress.h"

namespace strata::control {
namespace {

// A commit handler that stops half-way (one file of three captured) until
// released, as a commit of many large files is for a long while.
class HeldCommit {
 public:
  Result<DaemonReply> Serve(const DaemonRequest& request) {
    {
      MutexLock lock(&mu_);
      served_.push_back(request.index());
    }
    if (std::holds_alternative<ProgressRequest>(request)) return DaemonReply(progress_.Read());
    if (std::holds_alternative<StatsRequest>(request)) {
      StatsReply stats;
      stats.workspace.changed_paths = 3;
      return DaemonReply(stats);
    }
    if (std::holds_alternative<SnapshotRequest>(request)) return DaemonReply(SnapshotReply{});
    progress_.Begin();
    progress_.SetTotals(3, 300);
    progress_.Enter(CommitPhase::kCapture);
    progress_.FileCaptured(100);
    {
      MutexLock lock(&mu_);
      running_ = true;
      cv_.NotifyAll();
      while (!released_) cv_.Wait(&mu_);
    }
    progress_.FileCaptured(200);
    progress_.Enter(CommitPhase::kDone);
    return DaemonReply(CommitReply{std::nullopt, "main", {}});
  }
  void WaitUntilRunning() {
    MutexLock lock(&mu_);
    while (!running_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.NotifyAll();
  }
  std::vector<size_t> Served() {
    MutexLock lock(&mu_);
    return served_;
  }

 private:
  CommitProgress progress_;
  Mutex mu_;
  CondVar cv_;
  bool running_ GUARDED_BY(mu_) = false;
  bool released_ GUARDED_BY(mu_) = false;
  std::vector<size_t> served_ GUARDED_BY(mu_);
};

// The reply to `request` asked on a thread of its own while the commit is
// held; nullopt when none came in a minute: the request was queued behind
// the commit, which is then released so that the test fails instead of
// hanging.
template <typename Request>
std::optional<Result<ReplyTo<Request>>> AskBeside(const std::string& path, const Request& request, HeldCommit& held) {
  auto reply = std::async(std::launch::async, [&path, request] { return Ask(path, request); });
  if (reply.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
    held.Release();
    return std::nullopt;
  }
  return reply.get();
}

TEST(ControlSocketTest, StatsAndProgressAreAnsweredWhileACommitIsServed) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  HeldCommit held;
  ControlSocket socket(path, [&held](const DaemonRequest& request) { return held.Serve(request); });
  ASSERT_TRUE(socket.Start().ok());

  auto commit = std::async(std::launch::async, [&path] { return Ask(path, CommitRequest{"m", "a", "main"}); });
  held.WaitUntilRunning();
  auto snapshot = std::async(std::launch::async, [&path] { return Ask(path, SnapshotRequest{}); });

  auto progress = AskBeside(path, ProgressRequest{}, held);
  auto stats = AskBeside(path, StatsRequest{}, held);
  const std::vector<size_t> served_while_held = held.Served();
  held.Release();
  ASSERT_TRUE(progress) << "a progress request waited for the commit";
  ASSERT_TRUE(stats) << "a stats request waited for the commit";
  ASSERT_TRUE(progress->ok()) << progress->status().message();
  EXPECT_EQ((*progress)->phase, CommitPhase::kCapture);
  EXPECT_EQ((*progress)->files_done, 1u);
  EXPECT_EQ((*progress)->files_total, 3u);
  EXPECT_EQ((*progress)->bytes_done, 100u);
  EXPECT_EQ((*progress)->bytes_total, 300u);
  ASSERT_TRUE(stats->ok()) << stats->status().message();
  EXPECT_EQ((*stats)->workspace.changed_paths, 3u);

  auto committed = commit.get();
  ASSERT_TRUE(committed.ok()) << committed.status().message();
  EXPECT_EQ(committed->branch, "main");
  ASSERT_TRUE(snapshot.get().ok());
  // While the commit was held: it, the progress and the stats request (their
  // indices in DaemonRequest). The snapshot, which changes what the
  // workspace holds, waited for the commit.
  EXPECT_EQ(served_while_held, (std::vector<size_t>{1, 5, 0}));
  EXPECT_EQ(held.Served(), (std::vector<size_t>{1, 5, 0, 2}));

  auto after = Ask(path, ProgressRequest{});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->phase, CommitPhase::kDone);
  EXPECT_EQ(after->files_done, 2u);
  EXPECT_EQ(after->bytes_done, 300u);
  socket.Stop();
}

}  // namespace
}  // namespace strata::control
