#include "fs/in_flight.h"

#include <thread>

namespace strata::fs {

bool InFlight::WaitForEarlier(std::chrono::milliseconds limit) {
  MutexLock lock(&wait_mu_);
  const uint64_t before = epoch_.fetch_add(1);
  const unsigned slot = static_cast<unsigned>(before & 1);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // Requests are short (a namespace operation, or a read waiting on a chunk):
  // polling costs less than making every request signal a waiter.
  while (count_[slot].load() != 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace strata::fs
