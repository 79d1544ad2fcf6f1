// Counters per FUSE operation: how many, how many failed, and a latency
// histogram (power-of-two buckets of microseconds). Handlers open an OpScope;
// errors are noted by ReplyErr. Lock-free: every field is an atomic.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fs/fuse_server.h"

namespace strata::fs {

class Call;

enum class Op : int {
  kLookup, kForget, kGetattr, kSetattr, kReadlink, kMknod, kMkdir, kUnlink, kRmdir, kSymlink, kRename, kLink,
  kOpen, kCreate, kRead, kWrite, kRelease, kFsync, kOpendir, kReaddir, kReaddirplus, kReleasedir,
  kFsyncdir, kStatfs, kSetxattr, kGetxattr, kListxattr, kRemovexattr, kFallocate, kLseek, kCopyFileRange, kCount
};

const char* OpName(Op op);

class OpStats {
 public:
  static constexpr int kBuckets = ServedCounters::kLatencyBuckets;

  void Record(Op op, std::chrono::nanoseconds latency, bool failed);
  // The operations served at least once, in the order of Op, each with the
  // buckets that hold any: bucket b holds latencies below 2^b µs (and at
  // least 2^(b-1)).
  std::vector<ServedCounters::Operation> Counts() const;

 private:
  struct PerOp {
    std::atomic<uint64_t> count{0}, errors{0};
    std::atomic<uint64_t> latency_ns_total{0};  // the sum a Prometheus histogram carries beside its buckets
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};
  };
  std::array<PerOp, static_cast<int>(Op::kCount)> ops_;
};

// Times one request from construction to destruction.
class OpScope {
 public:
  OpScope(Call& call, Op op);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  OpStats* stats_;
  Op op_;
  std::chrono::steady_clock::time_point start_;
};

// Call::SendError that also marks the current operation as failed (err != 0).
int ReplyErr(Call& call, int err);

}  // namespace strata::fs
