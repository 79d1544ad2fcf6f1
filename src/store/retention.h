// Retention policies: which commits of a branch's line `strata forget` keeps.
//
// The meaning is restic's (`restic forget --keep-*`), applied to a line of
// commits instead of a list of snapshots:
//   --keep-last N      the N newest commits;
//   --keep-hourly N    (and daily, weekly, monthly, yearly) the newest commit of
//                      each of the N newest hours (days, ISO weeks, months,
//                      years) that hold a commit; periods without a commit are
//                      not counted. When the line runs out before N periods
//                      were found, the oldest commit is kept as well ("oldest
//                      daily"), so that the policy keeps as much history as it
//                      asked for;
//   --keep-within D    every commit newer than the newest commit's time minus
//                      D (e.g. 2y5m7d3h: years, months, days, hours; calendar
//                      arithmetic, so 1m before March 31 is March 3 or 2).
// A commit kept by several rules lists every reason. Periods are taken in the
// local time zone (TZ), as restic does, unless `utc` is set.
//
// Thread-safety: pure functions (local time reads the process's TZ setting).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/hash.h"
#include "util/status.h"

namespace strata {

struct RetentionDuration {
  int years = 0, months = 0, days = 0, hours = 0;
  bool zero() const { return years == 0 && months == 0 && days == 0 && hours == 0; }
  std::string ToString() const;  // "2y5m7d3h", zero parts left out
};
// "2y5m7d3h": each part optional, in any order, at most once; at least one
// part, none negative. InvalidArgument with the reason otherwise.
Result<RetentionDuration> ParseRetentionDuration(std::string_view text);

struct RetentionPolicy {
  uint32_t last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0;
  std::optional<RetentionDuration> within;
  bool utc = false;  // periods in UTC instead of the local time zone
  bool empty() const;
  std::string ToString() const;  // "--keep-daily 7 --keep-weekly 4"
};

struct RetentionCandidate {
  Hash id;
  int64_t time_ns = 0;  // the commit's time
};

struct RetentionDecision {
  Hash id;
  int64_t time_ns = 0;
  std::vector<std::string> reasons;  // empty: forgotten
  bool kept() const { return !reasons.empty(); }
};

// Decides each candidate; `line` is newest first (a branch's line from its
// head). Commits are ranked by time, newest first; of equal times the one
// nearer the head counts as newer. The result is in the order of `line`.
// InvalidArgument for an empty policy: forgetting everything is never meant.
Result<std::vector<RetentionDecision>> ApplyRetention(const std::vector<RetentionCandidate>& line,
                                                      const RetentionPolicy& policy);

}  // namespace strata
