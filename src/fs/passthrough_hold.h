// PassthroughHold: holds the kernel's writes through FUSE passthrough to a
// few files off while a cut is taken and the files are captured
// (DirectWriteHold, workspace/direct_access.h; docs/passthrough.md).
//
// A backing file cannot be taken back from an open file, and the kernel
// writes it without asking the daemon. But it writes under the FUSE inode's
// lock (i_rwsem), and it holds that same lock while an fsync of the inode
// waits for its FSYNC answer. So for each file, a thread of the hold opens it
// through the mount (by the name the workspace gives, checked by inode
// number) and fsyncs it; the request thread that receives that FSYNC
// (Intercept) keeps it unanswered until Release. Meanwhile every write and
// close of the file waits in the kernel, reads go on.
//
// A held FSYNC read from /dev/fuse (the classic loop) is handed over: the
// request thread goes back to serving, and Release answers it from the cut's
// thread (any thread may write an answer to /dev/fuse). One that came over an
// io_uring entry can be answered only through that entry, so it keeps the
// entry waiting until Release. Either way the hold takes at most
// limit_per_cpu files per CPU queue: its threads are each bound to one CPU,
// in turn, because the kernel puts a request on the ring queue of the CPU
// its caller runs on.
//
// Thread-safety: Hold and Release from one thread at a time (a cut);
// Intercept from any request thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/mutex.h"
#include "workspace/direct_access.h"

namespace strata::fs {

class PassthroughHold final : public DirectWriteHold {
 public:
  // Answers a handed-over FSYNC (its unique) once the hold is released.
  using AnswerLater = std::function<void(uint64_t unique)>;

  // mountpoint: where the files are reached; limit_per_cpu: how many files it
  // may hold per CPU it can run on (0: none).
  PassthroughHold(std::string mountpoint, unsigned limit_per_cpu, AnswerLater answer_later);
  ~PassthroughHold() override { Release(); }
  PassthroughHold(const PassthroughHold&) = delete;
  PassthroughHold& operator=(const PassthroughHold&) = delete;

  std::vector<InodeId> Hold(const std::vector<File>& files) override;
  void Release() override;

  enum class Intercepted {
    kNotHeld,     // not one of the hold's requests: serve it
    kReleased,    // held until Release: the caller answers it now
    kHandedOver,  // Release will answer it: the caller sends nothing
  };
  // From a request thread, before it serves a request: whether it is one of
  // the hold's own FSYNCs (from thread `pid` on node `nodeid`). Such an FSYNC
  // is answered with no error and nothing synced: the fsync was only a way
  // to hold the lock. can_hand_over: whether its answer may come from
  // another thread, later (a request read from /dev/fuse); otherwise the
  // call returns only after Release.
  Intercepted Intercept(uint32_t opcode, uint32_t pid, uint64_t nodeid, uint64_t unique, bool can_hand_over);

 private:
  enum class State { kOpening, kWaiting, kHeld, kFailed };
  struct Slot {
    InodeId ino = 0;
    std::string path;
    int cpu = -1;
    pid_t tid = 0;  // the thread's, once it is about to fsync
    std::optional<uint64_t> handed_over;  // its FSYNC's unique, for Release to answer
    State state = State::kOpening;
    std::thread thread;
  };
  void RunSlot(Slot* slot);

  const std::string mountpoint_;
  const unsigned limit_per_cpu_;
  const AnswerLater answer_later_;
  std::vector<int> cpus_;  // those this process may run on
  Mutex mu_;
  CondVar changed_;  // a slot's state moved, or released_
  bool released_ GUARDED_BY(mu_) = true;
  std::vector<std::unique_ptr<Slot>> slots_ GUARDED_BY(mu_);
};

}  // namespace strata::fs
