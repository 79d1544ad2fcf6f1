#include "workspace/commit_progress.h"

namespace strata {

const char* CommitPhaseName(CommitPhase phase) {
  switch (phase) {
    case CommitPhase::kIdle: return "idle";
    case CommitPhase::kCut: return "cut";
    case CommitPhase::kCapture: return "capture";
    case CommitPhase::kTrees: return "trees";
    case CommitPhase::kPublish: return "publish";
    case CommitPhase::kRebase: return "rebase";
    case CommitPhase::kDone: return "done";
  }
  return "idle";
}

void CommitProgress::Begin() {
  files_done_ = 0;
  bytes_done_ = 0;
  files_total_ = 0;
  bytes_total_ = 0;
  phase_ = CommitPhase::kCut;
}

void CommitProgress::SetTotals(uint64_t files, uint64_t bytes) {
  files_total_ = files;
  bytes_total_ = bytes;
}

void CommitProgress::FileCaptured(uint64_t bytes) {
  files_done_.fetch_add(1, std::memory_order_relaxed);
  bytes_done_.fetch_add(bytes, std::memory_order_relaxed);
}

CommitProgressView CommitProgress::Read() const {
  CommitProgressView v;
  v.phase = phase_;
  v.files_done = files_done_;
  v.files_total = files_total_;
  v.bytes_done = bytes_done_;
  v.bytes_total = bytes_total_;
  return v;
}

}  // namespace strata
