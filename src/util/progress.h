// A progress bar for long operations, drawn on stderr only when it is a terminal.
//
// Workers call Add() from any thread; a redraw happens at most every 100 ms so
// the bar costs nothing measurable. When stderr is not a terminal (scripts, CI,
// pipes) nothing is printed at all.
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
  void Finish();
  static bool StderrIsTerminal();

 private:
  void Draw(bool final);

  const std::string label_;
  const bool enabled_;
  std::atomic<uint64_t> total_units_, total_bytes_;
  std::atomic<uint64_t> units_{0}, bytes_{0};
  Mutex draw_mu_;
  std::chrono::steady_clock::time_point start_ GUARDED_BY(draw_mu_);
  std::chrono::steady_clock::time_point last_draw_ GUARDED_BY(draw_mu_);
  bool finished_ GUARDED_BY(draw_mu_) = false;
};

// "1.5 MiB", "830 B": sizes for people.
std::string HumanBytes(uint64_t bytes);

}  // namespace strata
