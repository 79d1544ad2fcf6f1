// Times as nanoseconds since the epoch, and their split into seconds and
// nanoseconds.
//
// The workspace keeps every time as one signed 64-bit count of nanoseconds;
// trees, commits and struct stat keep seconds plus a nanosecond field that must
// lie in [0, 1e9). Before 1970 the two differ in how they round: C++'s / and %
// round toward zero, which for -0.5 s gives 0 s and -500000000 ns, a field no
// format accepts. SplitNs rounds down (-0.5 s is -1 s + 500000000 ns), so every
// conversion goes through it and none is written out by hand.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <ctime>

namespace strata {

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

// Whole seconds rounded down, and the nanoseconds past them: 0 <= nsec < 1e9.
struct SplitTime {
  int64_t sec = 0;
  uint32_t nsec = 0;
  bool operator==(const SplitTime&) const = default;
};

constexpr SplitTime SplitNs(int64_t ns) {
  int64_t sec = ns / kNanosPerSecond;
  int64_t rem = ns % kNanosPerSecond;
  if (rem < 0) {  // toward zero went up before 1970: step back to the second below
    sec -= 1;
    rem += kNanosPerSecond;
  }
  return {sec, static_cast<uint32_t>(rem)};
}

// The inverse of SplitNs for nsec < 1e9 (a value the formats check on reading).
constexpr int64_t JoinNs(int64_t sec, int64_t nsec) { return sec * kNanosPerSecond + nsec; }

// The same split as a timespec (struct stat's fields), tv_nsec never negative.
inline timespec ToTimespec(int64_t ns) {
  const SplitTime t = SplitNs(ns);
  return {static_cast<time_t>(t.sec), static_cast<long>(t.nsec)};
}

// The current time (CLOCK_REALTIME) in nanoseconds since the epoch.
int64_t NowNs();

}  // namespace strata
