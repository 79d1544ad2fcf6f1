#include "fs/op_stats.h"

#include "fs/fs_context.h"

namespace strata::fs {

namespace {
// Set by ReplyErr, read by the OpScope of the same thread: each request is
// handled on one thread from start to reply.
thread_local bool current_failed = false;
}  // namespace

const char* OpName(Op op) {
  static const char* kNames[] = {
      "lookup", "forget", "getattr", "setattr", "readlink", "mknod", "mkdir", "unlink", "rmdir", "symlink",
      "rename", "link", "open", "create", "read", "write", "release", "fsync", "opendir", "readdir",
      "readdirplus", "releasedir", "fsyncdir", "statfs", "setxattr", "getxattr", "listxattr", "removexattr",
      "fallocate", "lseek", "copy_file_range"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Op::kCount));
  return kNames[static_cast<int>(op)];
}

void OpStats::Record(Op op, std::chrono::nanoseconds latency, bool failed) {
  PerOp& p = ops_[static_cast<int>(op)];
  p.count.fetch_add(1, std::memory_order_relaxed);
  if (failed) p.errors.fetch_add(1, std::memory_order_relaxed);
  p.latency_ns_total.fetch_add(static_cast<uint64_t>(latency.count()), std::memory_order_relaxed);
  uint64_t us = static_cast<uint64_t>(latency.count() / 1000);
  int bucket = 0;
  while (bucket + 1 < kBuckets && (1ull << bucket) <= us) bucket++;
  p.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
}

std::vector<ServedCounters::Operation> OpStats::Counts() const {
  std::vector<ServedCounters::Operation> out;
  for (int i = 0; i < static_cast<int>(Op::kCount); i++) {
    const PerOp& p = ops_[i];
    const uint64_t count = p.count.load(std::memory_order_relaxed);
    if (count == 0) continue;
    ServedCounters::Operation op{OpName(static_cast<Op>(i)), count, p.errors.load(std::memory_order_relaxed), {},
                                 p.latency_ns_total.load(std::memory_order_relaxed)};
    for (int b = 0; b < kBuckets; b++)
      if (uint64_t n = p.buckets[b].load(std::memory_order_relaxed); n > 0) op.latency_us.emplace_back(1ull << b, n);
    out.push_back(std::move(op));
  }
  return out;
}

OpScope::OpScope(Call& call, Op op)
    : stats_(call.ctx().stats), op_(op), start_(std::chrono::steady_clock::now()) {
  current_failed = false;
}

OpScope::~OpScope() {
  if (stats_ != nullptr) stats_->Record(op_, std::chrono::steady_clock::now() - start_, current_failed);
}

int ReplyErr(Call& call, int err) {
  if (err != 0) current_failed = true;
  return call.SendError(err);
}

}  // namespace strata::fs
