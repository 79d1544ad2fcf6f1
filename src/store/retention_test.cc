// Retention policies on synthetic histories with known dates: the kept set
// is exactly what the policy names, with restic's meaning (retention.h).
#include "store/retention.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <set>

namespace strata {
namespace {

int64_t UtcNs(const char* when) {  // "2023-12-31 12:00:00"
  std::tm tm{};
  const char* end = ::strptime(when, "%Y-%m-%d %H:%M:%S", &tm);
  EXPECT_TRUE(end && *end == '\0') << when;
  return static_cast<int64_t>(::timegm(&tm)) * 1'000'000'000;
}

Hash IdOf(size_t i) {
  const std::string s = "commit " + std::to_string(i);
  return Sha256::Of(s.data(), s.size());
}

// A line from its head: times newest first, commit i has IdOf(i).
std::vector<RetentionCandidate> Line(const std::vector<int64_t>& times) {
  std::vector<RetentionCandidate> line;
  for (size_t i = 0; i < times.size(); i++) line.push_back({IdOf(i), times[i]});
  return line;
}

// One commit a day at noon UTC, from `last` back for `days` days.
std::vector<int64_t> Daily(const char* last, int days) {
  std::vector<int64_t> t;
  for (int i = 0; i < days; i++) t.push_back(UtcNs(last) - int64_t{i} * 86400 * 1'000'000'000);
  return t;
}

RetentionPolicy Utc() {
  RetentionPolicy p;
  p.utc = true;
  return p;
}

// The positions in the line that the policy keeps.
std::set<size_t> Kept(const std::vector<RetentionCandidate>& line, const RetentionPolicy& policy) {
  auto out = ApplyRetention(line, policy);
  EXPECT_TRUE(out.ok()) << out.status().message();
  std::set<size_t> kept;
  if (!out.ok()) return kept;
  EXPECT_EQ(out->size(), line.size());
  for (size_t i = 0; i < out->size(); i++) {
    EXPECT_EQ((*out)[i].id, line[i].id) << "the result keeps the line's order";
    if ((*out)[i].kept()) kept.insert(i);
  }
  return kept;
}

std::vector<std::string> Reasons(const std::vector<RetentionCandidate>& line, const RetentionPolicy& policy,
                                 size_t i) {
  auto out = ApplyRetention(line, policy);
  EXPECT_TRUE(out.ok());
  return out.ok() ? (*out)[i].reasons : std::vector<std::string>{};
}

TEST(RetentionTest, EmptyPolicyIsRefused) {
  auto out = ApplyRetention(Line(Daily("2024-01-10 12:00:00", 3)), Utc());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("no retention rule"), std::string::npos);
}

TEST(RetentionTest, EmptyLineGivesNoDecisions) {
  RetentionPolicy p = Utc();
  p.last = 3;
  auto out = ApplyRetention({}, p);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->empty());
}

TEST(RetentionTest, KeepLast) {
  auto line = Line(Daily("2024-01-10 12:00:00", 5));
  RetentionPolicy p = Utc();
  p.last = 3;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1, 2}));
  EXPECT_EQ(Reasons(line, p, 0), (std::vector<std::string>{"last"}));
  p.last = 50;  // more than the history holds: all of it, and nothing else happens
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1, 2, 3, 4}));
}

TEST(RetentionTest, KeepDailyTakesTheNewestOfEachDayWithCommits) {
  // Three commits on Jan 10, two on Jan 7 (no commits on Jan 8-9), one on Jan 1.
  auto line = Line({UtcNs("2024-01-10 23:00:00"), UtcNs("2024-01-10 12:00:00"), UtcNs("2024-01-10 00:00:00"),
                    UtcNs("2024-01-07 18:00:00"), UtcNs("2024-01-07 06:00:00"), UtcNs("2024-01-01 12:00:00")});
  RetentionPolicy p = Utc();
  p.daily = 2;  // days without commits are not counted: Jan 10 and Jan 7
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 3}));
  EXPECT_EQ(Reasons(line, p, 3), (std::vector<std::string>{"daily"}));
  p.daily = 3;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 3, 5}));
}

TEST(RetentionTest, TheOldestIsKeptWhilePeriodsAreStillWanted) {
  // Two days of commits, seven days asked for: the newest of each day, and
  // the oldest commit too (restic's "oldest" rule).
  auto line = Line({UtcNs("2024-01-10 20:00:00"), UtcNs("2024-01-10 08:00:00"), UtcNs("2024-01-09 20:00:00"),
                    UtcNs("2024-01-09 08:00:00")});
  RetentionPolicy p = Utc();
  p.daily = 7;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2, 3}));
  EXPECT_EQ(Reasons(line, p, 3), (std::vector<std::string>{"oldest daily"}));
  p.daily = 2;  // both days found: the oldest is not kept
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2}));
}

TEST(RetentionTest, KeepHourly) {
  auto line = Line({UtcNs("2024-01-10 10:59:59"), UtcNs("2024-01-10 10:00:00"), UtcNs("2024-01-10 09:59:59"),
                    UtcNs("2024-01-10 07:30:00"), UtcNs("2024-01-09 10:30:00")});
  RetentionPolicy p = Utc();
  p.hourly = 3;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2, 3}));
}

TEST(RetentionTest, KeepWeeklyUsesIsoWeeks) {
  // 2025-01-01 (Wednesday) and 2024-12-30 (Monday) are both in ISO week
  // 2025-W01; 2024-12-29 (Sunday) is in 2024-W52; 2024-12-23 (Monday) too.
  auto line = Line({UtcNs("2025-01-01 12:00:00"), UtcNs("2024-12-30 12:00:00"), UtcNs("2024-12-29 12:00:00"),
                    UtcNs("2024-12-23 12:00:00"), UtcNs("2024-12-22 12:00:00")});
  RetentionPolicy p = Utc();
  p.weekly = 2;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2}));
  p.weekly = 3;  // W01, W52, W51 (Dec 22 is a Sunday)
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2, 4}));
}

TEST(RetentionTest, KeepMonthlyAndYearly) {
  auto line = Line({UtcNs("2024-03-01 00:00:00"), UtcNs("2024-02-29 23:59:59"), UtcNs("2024-02-01 00:00:00"),
                    UtcNs("2023-12-31 23:59:59"), UtcNs("2023-06-15 12:00:00"), UtcNs("2021-01-01 00:00:00")});
  RetentionPolicy p = Utc();
  p.monthly = 3;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1, 3}));
  RetentionPolicy y = Utc();
  y.yearly = 3;  // 2024, 2023, 2021 (no commit in 2022: not counted)
  EXPECT_EQ(Kept(line, y), (std::set<size_t>{0, 3, 5}));
}

TEST(RetentionTest, KeepWithinIsCalendarArithmeticFromTheNewest) {
  // One month before 2024-03-31 12:00 is "Feb 31", which is Mar 2 in a leap
  // year: commits strictly after it are kept.
  auto line = Line({UtcNs("2024-03-31 12:00:00"), UtcNs("2024-03-02 12:00:01"), UtcNs("2024-03-02 12:00:00"),
                    UtcNs("2024-01-01 00:00:00")});
  RetentionPolicy p = Utc();
  p.within = RetentionDuration{0, 1, 0, 0};
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1}));
  EXPECT_EQ(Reasons(line, p, 1), (std::vector<std::string>{"within 1m"}));
  p.within = RetentionDuration{0, 0, 29, 1};  // Mar 2 11:00
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1, 2}));
  p.within = RetentionDuration{1, 0, 0, 0};
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1, 2, 3}));
}

TEST(RetentionTest, EqualTimesRankTheCommitNearerTheHeadNewer) {
  const int64_t t = UtcNs("2024-01-10 12:00:00");
  auto line = Line({t, t, t});
  RetentionPolicy p = Utc();
  p.daily = 1;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0}));
  p.daily = 0;
  p.last = 2;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1}));
}

TEST(RetentionTest, OutOfOrderTimesAreRankedByTime) {
  // A clock that went back: the line's second commit is the newest in time.
  auto line = Line({UtcNs("2024-01-09 12:00:00"), UtcNs("2024-01-10 12:00:00"), UtcNs("2024-01-08 12:00:00")});
  RetentionPolicy p = Utc();
  p.last = 1;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{1}));
}

TEST(RetentionTest, AllRulesCombinedOnAYearOfDailyCommits) {
  auto line = Line(Daily("2023-12-31 12:00:00", 365));  // Dec 31 (a Sunday) back to Jan 1
  RetentionPolicy p = Utc();
  p.last = 2;
  p.daily = 7;
  p.weekly = 4;
  p.monthly = 6;
  p.yearly = 2;
  p.within = RetentionDuration{0, 0, 10, 0};
  // Position i is Dec 31 minus i days.
  std::set<size_t> want;
  for (size_t i = 0; i < 10; i++) want.insert(i);  // within 10d: Dec 22..31; covers last 2 and daily 7
  want.insert(7);    // weekly: Dec 24 (W51)
  want.insert(14);   // weekly: Dec 17 (W50)
  want.insert(21);   // weekly: Dec 10 (W49)
  want.insert(31);   // monthly: Nov 30
  want.insert(61);   // Oct 31
  want.insert(92);   // Sep 30
  want.insert(122);  // Aug 31
  want.insert(153);  // Jul 31
  want.insert(364);  // oldest yearly: Jan 1 (only one year, two wanted)
  EXPECT_EQ(Kept(line, p), want);
  EXPECT_EQ(Reasons(line, p, 0),
            (std::vector<std::string>{"last", "daily", "weekly", "monthly", "yearly", "within 10d"}));
  EXPECT_EQ(Reasons(line, p, 364), (std::vector<std::string>{"oldest yearly"}));
  EXPECT_EQ(Reasons(line, p, 8), (std::vector<std::string>{"within 10d"}));
}

TEST(RetentionTest, PeriodsAreLocalTimeUnlessUtc) {
  const char* old = std::getenv("TZ");
  const std::string saved = old ? old : "";
  ::setenv("TZ", "XYZ-10", 1);  // POSIX: ten hours east of UTC
  ::tzset();
  // Local days: Jan 2 01:00, Jan 1 23:00, Jan 1 20:00; all on Jan 1 in UTC.
  auto line = Line({UtcNs("2024-01-01 15:00:00"), UtcNs("2024-01-01 13:00:00"), UtcNs("2024-01-01 10:00:00")});
  RetentionPolicy p;
  p.daily = 2;
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 1}));
  p.utc = true;  // one day: its newest, and the oldest as a day is still wanted
  EXPECT_EQ(Kept(line, p), (std::set<size_t>{0, 2}));
  if (old) ::setenv("TZ", saved.c_str(), 1);
  else ::unsetenv("TZ");
  ::tzset();
}

TEST(RetentionTest, ParsesDurations) {
  auto d = ParseRetentionDuration("2y5m7d3h");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->years, 2);
  EXPECT_EQ(d->months, 5);
  EXPECT_EQ(d->days, 7);
  EXPECT_EQ(d->hours, 3);
  EXPECT_EQ(d->ToString(), "2y5m7d3h");
  ASSERT_TRUE(ParseRetentionDuration("36h").ok());
  EXPECT_EQ(ParseRetentionDuration("36h")->hours, 36);
  for (const char* bad : {"", "y", "3", "3w", "1d1d", "0d", "-1d", "1.5d", "9999999d"})
    EXPECT_FALSE(ParseRetentionDuration(bad).ok()) << bad;
}

TEST(RetentionTest, PolicyDescribesItself) {
  RetentionPolicy p;
  p.daily = 7;
  p.weekly = 4;
  p.within = RetentionDuration{0, 0, 3, 0};
  EXPECT_EQ(p.ToString(), "--keep-daily 7 --keep-weekly 4 --keep-within 3d");
}

}  // namespace
}  // namespace strata
