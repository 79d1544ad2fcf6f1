// A progress bar for long operations, drawn on stderr only when it is a terminal.
//
// Workers call Add() from any thread; a redraw happens at most every 100 ms so
// the bar costs nothing measurable. When stderr is not a terminal (scripts, CI,
// pipes) nothing is printed at all. With no totals known, the line shows what
// was done so far and the time taken instead of a bar. An operation another
// process counts (a commit, which the mount's daemon makes) is drawn with Set
// from what a thread of the caller's reads of it (cli/commit_watch.h), and
// SetStage says which part of it runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "util/mutex.h"

namespace strata {

class Progress {
 public:
  // label: what is being done ("import"); total_units/total_bytes may be 0 when unknown.
  Progress(std::string label, uint64_t total_units, uint64_t total_bytes);
  ~Progress();  // clears the bar
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void SetTotals(uint64_t total_units, uint64_t total_bytes);
  void Add(uint64_t units, uint64_t bytes);
  // The counts so far, for an operation another process counts (a commit
  // its mount's daemon makes).
  void Set(uint64_t units, uint64_t bytes);
  // Shown after the label ("commit (capture)"); "" for none.
  void SetStage(std::string stage);
  // Draws the counts now, however recently they were drawn: the final
  // counts before Finish erases the line.
  void Show();
  bool enabled() const { return enabled_; }
  // Erases the line; nothing is drawn after it. Called by the destructor too.
  void Finish();
  static bool StderrIsTerminal();

 private:
  void Draw(bool final, bool at_once = false);

  const std::string label_;
  const bool enabled_;
  std::atomic<uint64_t> total_units_, total_bytes_;
  std::atomic<uint64_t> units_{0}, bytes_{0};
  Mutex draw_mu_;
  std::chrono::steady_clock::time_point start_ GUARDED_BY(draw_mu_);
  std::chrono::steady_clock::time_point last_draw_ GUARDED_BY(draw_mu_);
  bool finished_ GUARDED_BY(draw_mu_) = false;
  std::string stage_ GUARDED_BY(draw_mu_);
};

// "1.5 MiB", "830 B": sizes for people.
std::string HumanBytes(uint64_t bytes);

}  // namespace strata
