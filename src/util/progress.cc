#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

namespace strata {

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    unit++;
  }
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[unit]);
  return buf;
}

bool Progress::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, uint64_t total_units, uint64_t total_bytes)
    : label_(std::move(label)),
      enabled_(StderrIsTerminal()),
      total_units_(total_units),
      total_bytes_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { Finish(); }

void Progress::SetTotals(uint64_t total_units, uint64_t total_bytes) {
  total_units_ = total_units;
  total_bytes_ = total_bytes;
}

void Progress::Add(uint64_t units, uint64_t bytes) {
  units_ += units;
  bytes_ += bytes;
  if (enabled_) Draw(false);
}

void Progress::Set(uint64_t units, uint64_t bytes) {
  units_ = units;
  bytes_ = bytes;
  if (enabled_) Draw(false);
}

void Progress::SetStage(std::string stage) {
  MutexLock lock(&draw_mu_);
  stage_ = std::move(stage);
}

void Progress::Show() {
  if (enabled_) Draw(false, /*at_once=*/true);
}

void Progress::Finish() {
  if (enabled_) Draw(true);
}

void Progress::Draw(bool final, bool at_once) {
  MutexLock lock(&draw_mu_);
  if (finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (!final && !at_once && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  if (final) {
    finished_ = true;
    std::fprintf(stderr, "\r\033[K");  // erase the bar; the caller prints a summary
    std::fflush(stderr);
    return;
  }
  const uint64_t units = units_, bytes = bytes_, tu = total_units_, tb = total_bytes_;
  const std::string label = stage_.empty() ? label_ : label_ + " (" + stage_ + ")";
  double secs = std::chrono::duration<double>(now - start_).count();
  if (tu == 0 && tb == 0 && units == 0 && bytes == 0) {  // nothing reported yet: the time taken
    std::fprintf(stderr, "\r\033[K%s  %.1f s", label.c_str(), secs);
    std::fflush(stderr);
    return;
  }
  if (tu == 0 && tb == 0) {  // nothing to measure a bar against
    std::fprintf(stderr, "\r\033[K%s  %llu done  %s  %.1f s", label.c_str(), static_cast<unsigned long long>(units),
                 HumanBytes(bytes).c_str(), secs);
    std::fflush(stderr);
    return;
  }
  double fraction = tb > 0 ? static_cast<double>(bytes) / tb : (tu > 0 ? static_cast<double>(units) / tu : 0);
  if (fraction > 1) fraction = 1;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::string rate = secs > 0 ? HumanBytes(static_cast<uint64_t>(bytes / secs)) + "/s" : "";
  std::fprintf(stderr, "\r\033[K%s [%s] %3d%%  %llu/%llu  %s  %s", label.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100), static_cast<unsigned long long>(units),
               static_cast<unsigned long long>(tu), HumanBytes(bytes).c_str(), rate.c_str());
  std::fflush(stderr);
}

}  // namespace strata
