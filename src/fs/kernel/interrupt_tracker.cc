// The bookkeeping of running requests and interrupts (interrupt_tracker.h).
#include "fs/kernel/interrupt_tracker.h"

namespace strata::fs::kernel {

bool InterruptTracker::Begin(uint64_t unique) {
  MutexLock lock(&mu_);
  return running_.emplace(unique, false).second;
}

void InterruptTracker::Finish(uint64_t unique) {
  MutexLock lock(&mu_);
  if (running_.erase(unique) == 0) return;
  if (answered_.insert(unique).second) answered_order_.push_back(unique);
  if (answered_order_.size() > kAnsweredMemory) {
    answered_.erase(answered_order_.front());
    answered_order_.pop_front();
  }
}

bool InterruptTracker::IsInterrupted(uint64_t unique) const {
  MutexLock lock(&mu_);
  auto it = running_.find(unique);
  return it != running_.end() && it->second;
}

InterruptTracker::Target InterruptTracker::Interrupt(uint64_t target) {
  MutexLock lock(&mu_);
  if (auto it = running_.find(target); it != running_.end()) {
    it->second = true;
    return Target::kRunning;
  }
  return answered_.count(target) ? Target::kAnswered : Target::kNotSeen;
}

size_t InterruptTracker::running() const {
  MutexLock lock(&mu_);
  return running_.size();
}

}  // namespace strata::fs::kernel
