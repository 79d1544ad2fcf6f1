// The progress line of a running commit: a thread that reads how far the
// commit is every 200 ms (from the mount's daemon, or from the commit running
// in this process) and draws it, until stopped.
// Thread-safety: started and stopped by one thread; the reader runs on the
// watch's own thread.
#pragma once

#include <functional>
#include <optional>
#include <thread>

#include "util/mutex.h"
#include "util/progress.h"
#include "workspace/commit_progress.h"

namespace strata::cli {

class CommitWatch {
 public:
  // read: the commit's counts now, or nullopt when they cannot be had.
  using Reader = std::function<std::optional<CommitProgressView>()>;
  // Draws on progress, which outlives the watch. Nothing runs when progress
  // is not drawn (stderr no terminal).
  CommitWatch(Progress& progress, Reader read);
  ~CommitWatch() { Stop(); }
  CommitWatch(const CommitWatch&) = delete;
  CommitWatch& operator=(const CommitWatch&) = delete;

  // Once the commit returned: stops reading, and draws its final counts.
  void Stop();

 private:
  // Draws view, unless it is a commit before this one's (see the .cc).
  void Draw(const CommitProgressView& view, bool at_once);

  Progress& progress_;
  Reader read_;
  bool seen_running_ = false;  // only the watch's thread uses it until joined
  std::thread thread_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
};

}  // namespace strata::cli
