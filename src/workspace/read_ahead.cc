#include "workspace/read_ahead.h"

#include <algorithm>

namespace strata::workspace_internal {

SequentialDetector::Range SequentialDetector::OnRead(uint64_t key, uint64_t offset, uint64_t length) {
  const uint64_t read_end = offset + length;
  MutexLock lock(&mu_);
  clock_++;
  Stream* match = nullptr;
  for (Stream& s : streams_) {
    if (s.key != key) continue;
    const uint64_t low = s.end > params_.slack ? s.end - params_.slack : 0;
    if (offset >= low && offset <= s.end + params_.slack) {
      match = &s;
      break;
    }
  }
  if (match == nullptr) {
    Stream fresh{key, offset, read_end, length, 0, clock_};
    if (streams_.size() < params_.max_streams) {
      streams_.push_back(fresh);
    } else {
      *std::min_element(streams_.begin(), streams_.end(),
                        [](const Stream& a, const Stream& b) { return a.last_use < b.last_use; }) = fresh;
    }
    return {};
  }
  // Only a read that moves the stream forward counts as one more step of it;
  // one that fills a gap behind (a reordered request) adds its bytes.
  if (read_end > match->end) match->run++;
  match->start = std::min(match->start, offset);
  match->end = std::max(match->end, read_end);
  match->bytes += length;
  match->last_use = clock_;
  if (match->run < params_.trigger || match->bytes * 2 < match->end - match->start) return {};
  // The window doubles with each sequential read: a short sequential burst
  // costs little, a long one soon keeps max_window in flight.
  const unsigned doublings = std::min(match->run - params_.trigger, 16u);
  const uint64_t window = std::min(params_.max_window, params_.min_window << doublings);
  return {read_end, read_end + window};
}

}  // namespace strata::workspace_internal
