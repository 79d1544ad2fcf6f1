// What a daemon's commits did since it started, for its metrics: how many
// ended which way, the time spent in each phase, and what they wrote.
// Thread-safety: Record* from the control socket's thread, Totals from the
// metrics endpoint's; a mutex keeps one commit's numbers together.
#pragma once

#include <cstdint>

#include "util/mutex.h"
#include "workspace/workspace.h"

namespace strata::metrics {

struct CommitTotals {
  uint64_t commits = 0;  // made a commit
  uint64_t empty = 0;    // nothing to commit
  uint64_t failed = 0;   // ended with an error
  // Seconds in each phase of those that ran (workspace.h, CommitStats).
  double cut_seconds = 0, capture_seconds = 0, trees_seconds = 0, publish_seconds = 0, rebase_seconds = 0;
  uint64_t changed_inodes = 0, directories_written = 0, files_captured = 0, bytes_hashed = 0, objects_written = 0;
};

class CommitTally {
 public:
  void Record(const CommitOutcome& outcome);
  void RecordFailure();
  CommitTotals Totals() const;

 private:
  mutable Mutex mu_;
  CommitTotals totals_ GUARDED_BY(mu_);
};

}  // namespace strata::metrics
