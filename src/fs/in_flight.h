// InFlight: which requests are being served, by when they started, so that
// the control thread can wait for every request that began before a moment.
//
// What it is for: a reply computed from the namespace before a content swap
// (reset --hard, rebase) may reach the kernel after the swap's invalidations
// and be cached there as if current. Once every request that started before
// the swap has answered, a second round of invalidations clears what such a
// reply left (FuseServer::Control).
//
// Two counters, one for each parity of an epoch number; a request counts in
// the counter of the epoch it saw when it started. WaitForEarlier() moves to
// the next epoch and waits for the previous one's counter to drain: requests
// starting meanwhile count in the other one. Waits are serialised, so the
// counter new requests use is always empty when its turn to drain comes.
//
// Thread-safety: Enter/Leave from any thread; WaitForEarlier from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "util/mutex.h"

namespace strata::fs {

class InFlight {
 public:
  // Returns the token to give to Leave().
  unsigned Enter() {
    for (;;) {
      const uint64_t epoch = epoch_.load();
      const unsigned slot = static_cast<unsigned>(epoch & 1);
      count_[slot].fetch_add(1);
      // Counted under the epoch it saw: if the epoch moved meanwhile, a
      // waiter may have found this counter empty already; count again.
      if (epoch_.load() == epoch) return slot;
      count_[slot].fetch_sub(1);
    }
  }
  void Leave(unsigned slot) { count_[slot].fetch_sub(1); }

  // Waits until every request that entered before this call has left, for at
  // most `limit`; false when some had not by then.
  bool WaitForEarlier(std::chrono::milliseconds limit);

 private:
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int64_t> count_[2] = {0, 0};
  Mutex wait_mu_;  // one waiter at a time
};

// Enter() and Leave() around a scope.
class InFlightScope {
 public:
  explicit InFlightScope(InFlight* in_flight) : in_flight_(in_flight), slot_(in_flight ? in_flight->Enter() : 0) {}
  ~InFlightScope() {
    if (in_flight_ != nullptr) in_flight_->Leave(slot_);
  }
  InFlightScope(const InFlightScope&) = delete;
  InFlightScope& operator=(const InFlightScope&) = delete;

 private:
  InFlight* const in_flight_;
  const unsigned slot_;
};

}  // namespace strata::fs
