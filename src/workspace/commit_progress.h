// How far a running commit is: its phase, and the files and bytes captured
// out of those its cut found. The commit writes it (commit_ops.cc) while
// another thread reads it (the daemon's "progress" request, or the command
// committing a workspace that is not mounted), so every field is atomic and
// reading it takes no lock of the workspace.
// Thread-safety: any thread may read and write it; Read() is a consistent
// view of each field, not of all of them together (a file done may show
// before its bytes do).
#pragma once

#include <atomic>
#include <cstdint>

namespace strata {

enum class CommitPhase : uint8_t { kIdle, kCut, kCapture, kTrees, kPublish, kRebase, kDone };
const char* CommitPhaseName(CommitPhase phase);  // "idle", "cut", ...

struct CommitProgressView {
  CommitPhase phase = CommitPhase::kIdle;
  uint64_t files_done = 0, files_total = 0;
  uint64_t bytes_done = 0, bytes_total = 0;  // the sizes of the files to capture
};

class CommitProgress {
 public:
  // A new commit begins: everything counts from zero.
  void Begin();
  // The cut found these files to capture, of these sizes in all.
  void SetTotals(uint64_t files, uint64_t bytes);
  void Enter(CommitPhase phase) { phase_.store(phase, std::memory_order_relaxed); }
  void FileCaptured(uint64_t bytes);
  CommitProgressView Read() const;

 private:
  std::atomic<CommitPhase> phase_{CommitPhase::kIdle};
  std::atomic<uint64_t> files_done_{0}, files_total_{0}, bytes_done_{0}, bytes_total_{0};
};

}  // namespace strata
