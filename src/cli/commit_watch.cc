#include "cli/commit_watch.h"

#include <chrono>

namespace strata::cli {

CommitWatch::CommitWatch(Progress& progress, Reader read) : progress_(progress), read_(std::move(read)) {
  if (!progress_.enabled()) return;
  thread_ = std::thread([this] {
    MutexLock lock(&mu_);
    while (!stop_) {
      lock.Unlock();
      if (auto view = read_()) Draw(*view, /*at_once=*/false);
      lock.Lock();
      if (!stop_) cv_.WaitFor(&mu_, std::chrono::milliseconds(200));
    }
  });
}

void CommitWatch::Stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
  // The commit has returned: what is read now is its end.
  seen_running_ = true;
  if (auto view = read_()) Draw(*view, /*at_once=*/true);
}

void CommitWatch::Draw(const CommitProgressView& view, bool at_once) {
  // Until the commit asked for has begun, the daemon still shows the one
  // before (done) or none (idle): those counts are not this commit's.
  if (view.phase == CommitPhase::kIdle) return;
  if (view.phase == CommitPhase::kDone && !seen_running_) return;
  seen_running_ = true;
  progress_.SetStage(CommitPhaseName(view.phase));
  progress_.SetTotals(view.files_total, view.bytes_total);
  progress_.Set(view.files_done, view.bytes_done);
  if (at_once) progress_.Show();
}

}  // namespace strata::cli
