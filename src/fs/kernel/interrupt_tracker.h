// Which requests are running, so that an INTERRUPT can find its target.
//
// The kernel sends INTERRUPT (its own id: the target's with the low bit set)
// when the process waiting on a request gets a signal. Three cases:
//  - the target is running: it is marked, and its handler may stop early and
//    answer EINTR (or finish normally; either is a valid answer). The
//    INTERRUPT itself gets no reply.
//  - the target was answered already: nothing to do, no reply.
//  - the target has not been seen yet (another reader thread read it but has
//    not called Begin): reply EAGAIN to the INTERRUPT, and the kernel queues
//    it again.
// Telling the last two apart needs memory of answered ids; the tracker keeps
// the most recent kAnsweredMemory of them. An id answered longer ago reads as
// not seen: the EAGAIN reply then names a request the kernel has finished,
// which it refuses (ENOENT on that write) and forgets; no harm done.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace strata::fs::kernel {

class InterruptTracker {
 public:
  static constexpr size_t kAnsweredMemory = 4096;

  enum class Target {
    kRunning,   // marked interrupted; no reply to the INTERRUPT
    kAnswered,  // already answered; no reply to the INTERRUPT
    kNotSeen,   // reply EAGAIN to the INTERRUPT
  };

  InterruptTracker() = default;
  InterruptTracker(const InterruptTracker&) = delete;
  InterruptTracker& operator=(const InterruptTracker&) = delete;

  // A request was read and is about to run. False if the id is already
  // running (the kernel never reuses a live id: a protocol error).
  bool Begin(uint64_t unique);
  // Its reply was written (or it needed none).
  void Finish(uint64_t unique);
  // Whether an INTERRUPT named this running request.
  bool IsInterrupted(uint64_t unique) const;
  // The kernel asked to interrupt `target`.
  Target Interrupt(uint64_t target);

  size_t running() const;

 private:
  mutable Mutex mu_;
  std::unordered_map<uint64_t, bool> running_ GUARDED_BY(mu_);  // id -> interrupted
  std::deque<uint64_t> answered_order_ GUARDED_BY(mu_);         // oldest first
  std::unordered_set<uint64_t> answered_ GUARDED_BY(mu_);
};

}  // namespace strata::fs::kernel
