#include "sandbox/limits.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace strata::sandbox {
namespace {

// The number at the front of text and what follows it; false when there is
// no number or it is negative, infinite or not a number.
bool SplitNumber(const std::string& text, double* value, std::string* unit) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(*value) || *value < 0) return false;
  *unit = std::string(end);
  return true;
}

}  // namespace

Result<uint64_t> ParseSize(const std::string& text) {
  double v;
  std::string unit;
  const Status bad = Status::InvalidArgument("'" + text + "' is not a size (e.g. 512M, 1G, 65536)");
  if (!SplitNumber(text, &v, &unit)) return bad;
  double mult = 1;
  if (unit == "" || unit == "B" || unit == "b") mult = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB") mult = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "t" || unit == "TiB") mult = 1024.0 * 1024 * 1024 * 1024;
  else return bad;
  double bytes = v * mult;
  if (bytes < 1 || bytes > 1e18) return Status::InvalidArgument("size '" + text + "' is out of range");
  return static_cast<uint64_t>(bytes);
}

Result<uint64_t> ParseDurationMs(const std::string& text) {
  double v;
  std::string unit;
  const Status bad = Status::InvalidArgument("'" + text + "' is not a duration (e.g. 60s, 500ms, 2m)");
  if (!SplitNumber(text, &v, &unit)) return bad;
  double ms;
  if (unit == "ms") ms = v;
  else if (unit == "" || unit == "s") ms = v * 1000;
  else if (unit == "m" || unit == "min") ms = v * 60'000;
  else if (unit == "h") ms = v * 3'600'000;
  else return bad;
  if (ms < 1 || ms > 1e12) return Status::InvalidArgument("duration '" + text + "' is out of range");
  return static_cast<uint64_t>(ms);
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    u++;
  }
  return std::to_string(bytes) + kUnits[u];
}

}  // namespace strata::sandbox
