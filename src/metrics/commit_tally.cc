#include "metrics/commit_tally.h"

namespace strata::metrics {

void CommitTally::Record(const CommitOutcome& outcome) {
  const CommitStats& s = outcome.stats;
  MutexLock lock(&mu_);
  (outcome.commit ? totals_.commits : totals_.empty)++;
  totals_.cut_seconds += s.cut_ms / 1000;
  totals_.capture_seconds += s.capture_ms / 1000;
  totals_.trees_seconds += s.trees_ms / 1000;
  totals_.publish_seconds += s.publish_ms / 1000;
  totals_.rebase_seconds += s.rebase_ms / 1000;
  totals_.changed_inodes += s.changed_inodes;
  totals_.directories_written += s.directories_written;
  totals_.files_captured += s.files_captured;
  totals_.bytes_hashed += s.bytes_hashed;
  totals_.objects_written += s.objects_written;
}

void CommitTally::RecordFailure() {
  MutexLock lock(&mu_);
  totals_.failed++;
}

CommitTotals CommitTally::Totals() const {
  MutexLock lock(&mu_);
  return totals_;
}

}  // namespace strata::metrics
