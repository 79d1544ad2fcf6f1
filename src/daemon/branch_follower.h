// A read-only mount that follows a branch (`strata mount --read-only B
// --follow`): a thread polls the branch's head and, when it moved, swaps the
// mount's content to the new commit.
//
// The swap is a hard Reset of the mount's hidden workspace (workspace.h),
// then the kernel is told what the old namespace made stale
// (FuseServer::InvalidateAfterSwap). So a lookup or open after the swap sees
// the new commit, while an inode the kernel still holds (an open file, a
// shell's current directory) lives on unnamed with its old data, and its
// number is never given to another file. A failed poll (a branch deleted, a
// remote that cannot be reached) keeps the commit shown and is logged once
// per kind of failure, so that a long outage does not fill the log.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "fs/fuse_server.h"
#include "store/store.h"
#include "workspace/workspace.h"

namespace strata::daemon {

class BranchFollower {
 public:
  BranchFollower(Store& store, Workspace& ws, FuseServer& server, std::string branch, std::chrono::milliseconds interval)
      : store_(store), ws_(ws), server_(server), branch_(std::move(branch)), interval_(interval) {}
  ~BranchFollower() { Stop(); }
  BranchFollower(const BranchFollower&) = delete;
  BranchFollower& operator=(const BranchFollower&) = delete;

  void Start();
  void Stop();  // waits for a swap in progress

 private:
  void Run();
  // One poll: moves to the branch's head if it moved.
  Status Poll();

  Store& store_;
  Workspace& ws_;
  FuseServer& server_;
  const std::string branch_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::daemon
