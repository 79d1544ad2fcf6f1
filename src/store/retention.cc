#include "store/retention.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <functional>
#include <numeric>

#include "util/time_ns.h"

namespace strata {
namespace {

std::tm Calendar(int64_t sec, bool utc) {
  std::tm tm{};
  const time_t t = static_cast<time_t>(sec);
  if (utc) ::gmtime_r(&t, &tm);
  else ::localtime_r(&t, &tm);
  return tm;
}

int64_t IsoWeek(const std::tm& tm) {
  char buf[16];
  // %G: the ISO 8601 week-based year, %V: its week (01-53).
  std::strftime(buf, sizeof buf, "%G%V", &tm);
  return std::stoll(buf);
}

// A period of one kind: commits with equal values fall in one period.
struct Bucket {
  const char* reason;
  uint32_t count;
  std::function<int64_t(const std::tm&)> period;
  std::optional<int64_t> last = std::nullopt;  // the period kept most recently
};

// The newest time minus d, in calendar terms (as Go's AddDate, which restic uses).
int64_t WithinCutoffNs(int64_t newest_ns, const RetentionDuration& d, bool utc) {
  const SplitTime t = SplitNs(newest_ns);
  std::tm tm = Calendar(t.sec, utc);
  tm.tm_year -= d.years;
  tm.tm_mon -= d.months;
  tm.tm_mday -= d.days;
  tm.tm_isdst = -1;
  const int64_t sec = static_cast<int64_t>(utc ? ::timegm(&tm) : ::mktime(&tm)) - int64_t{3600} * d.hours;
  return sec * 1'000'000'000 + t.nsec;
}

}  // namespace

std::string RetentionDuration::ToString() const {
  std::string s;
  if (years) s += std::to_string(years) + "y";
  if (months) s += std::to_string(months) + "m";
  if (days) s += std::to_string(days) + "d";
  if (hours) s += std::to_string(hours) + "h";
  return s.empty() ? "0h" : s;
}

Result<RetentionDuration> ParseRetentionDuration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("invalid duration '" + std::string(text) + "': " + why +
                                   " (expected e.g. 2y5m7d3h: years, months, days, hours)");
  };
  if (text.empty()) return bad("empty");
  RetentionDuration d;
  std::string seen;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) i++;
    if (i == start) return bad("a number must come before each unit");
    if (i - start > 6) return bad("number too large");
    if (i == text.size()) return bad("a unit (y, m, d or h) must follow " + std::string(text.substr(start)));
    const int n = std::stoi(std::string(text.substr(start, i - start)));
    const char unit = text[i++];
    if (seen.find(unit) != std::string::npos) return bad(std::string("unit '") + unit + "' given twice");
    seen += unit;
    switch (unit) {
      case 'y': d.years = n; break;
      case 'm': d.months = n; break;
      case 'd': d.days = n; break;
      case 'h': d.hours = n; break;
      default: return bad(std::string("unknown unit '") + unit + "'");
    }
  }
  if (d.zero()) return bad("it is zero");
  return d;
}

bool RetentionPolicy::empty() const {
  return last == 0 && hourly == 0 && daily == 0 && weekly == 0 && monthly == 0 && yearly == 0 && !within;
}

std::string RetentionPolicy::ToString() const {
  std::string s;
  auto add = [&](const char* name, uint32_t n) {
    if (n) s += std::string(s.empty() ? "" : " ") + "--keep-" + name + " " + std::to_string(n);
  };
  add("last", last);
  add("hourly", hourly);
  add("daily", daily);
  add("weekly", weekly);
  add("monthly", monthly);
  add("yearly", yearly);
  if (within) s += std::string(s.empty() ? "" : " ") + "--keep-within " + within->ToString();
  return s;
}

Result<std::vector<RetentionDecision>> ApplyRetention(const std::vector<RetentionCandidate>& line,
                                                      const RetentionPolicy& policy) {
  if (policy.empty())
    return Status::InvalidArgument(
        "no retention rule given: name at least one of --keep-last, --keep-hourly, --keep-daily, --keep-weekly, "
        "--keep-monthly, --keep-yearly, --keep-within");
  std::vector<RetentionDecision> out(line.size());
  for (size_t i = 0; i < line.size(); i++) out[i] = {line[i].id, line[i].time_ns, {}};
  if (line.empty()) return out;

  // Ranked newest first; a stable sort keeps the line's order among equal times.
  std::vector<size_t> rank(line.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(),
                   [&](size_t a, size_t b) { return line[a].time_ns > line[b].time_ns; });

  const bool utc = policy.utc;
  std::vector<Bucket> buckets = {
      {"hourly", policy.hourly,
       [](const std::tm& t) {
         return (t.tm_year + 1900) * 1'000'000LL + (t.tm_mon + 1) * 10'000 + t.tm_mday * 100 + t.tm_hour;
       }},
      {"daily", policy.daily,
       [](const std::tm& t) { return (t.tm_year + 1900) * 10'000LL + (t.tm_mon + 1) * 100 + t.tm_mday; }},
      {"weekly", policy.weekly, IsoWeek},
      {"monthly", policy.monthly, [](const std::tm& t) { return (t.tm_year + 1900) * 100LL + t.tm_mon + 1; }},
      {"yearly", policy.yearly, [](const std::tm& t) { return int64_t{t.tm_year} + 1900; }},
  };
  std::optional<int64_t> cutoff_ns;
  if (policy.within) cutoff_ns = WithinCutoffNs(line[rank.front()].time_ns, *policy.within, utc);

  for (size_t r = 0; r < rank.size(); r++) {
    RetentionDecision& d = out[rank[r]];
    const bool oldest = r + 1 == rank.size();
    if (r < policy.last) d.reasons.push_back("last");
    const std::tm tm = Calendar(SplitNs(d.time_ns).sec, utc);
    for (Bucket& b : buckets) {
      if (b.count == 0) continue;
      const int64_t period = b.period(tm);
      // The newest commit of a new period is kept; the oldest commit is kept
      // too while periods are still wanted (restic's "oldest" rule).
      if (b.last == period && !oldest) continue;
      d.reasons.push_back(b.last == period ? std::string("oldest ") + b.reason : std::string(b.reason));
      b.last = period;
      b.count--;
    }
    if (cutoff_ns && d.time_ns > *cutoff_ns) d.reasons.push_back("within " + policy.within->ToString());
  }
  return out;
}

}  // namespace strata
