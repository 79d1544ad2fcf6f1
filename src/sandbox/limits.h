// What a sandbox may use: memory, CPU, processes, wall time, and the
// command-line forms of those amounts ("512M", "1.5", "60s").
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace strata::sandbox {

struct Limits {
  uint64_t memory_bytes = 0;  // 0: no limit
  double cpus = 0;            // CPU time per wall second; 0: no limit
  uint64_t pids = 0;          // processes and threads at once; 0: no limit
  uint64_t timeout_ms = 0;    // wall time; 0: none
  bool any_cgroup() const { return memory_bytes || cpus > 0 || pids; }
};

// "64M", "512m", "1G", "100K", "4096" (bytes). InvalidArgument otherwise.
Result<uint64_t> ParseSize(const std::string& text);
// "60s", "500ms", "2m", "1h", "10" (seconds). InvalidArgument otherwise.
Result<uint64_t> ParseDurationMs(const std::string& text);
// The size as the user would write it: "64M", "1G", "1536K", "100".
std::string FormatSize(uint64_t bytes);

}  // namespace strata::sandbox
