#include "daemon/branch_follower.h"

#include <cstdio>

namespace strata::daemon {

void BranchFollower::Start() {
  thread_ = std::thread([this] { Run(); });
}

void BranchFollower::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BranchFollower::Run() {
  std::string last_error;  // logged when it changes, not on every poll
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    Status s = Poll();
    lock.lock();
    if (s.ok()) {
      if (!last_error.empty()) std::fprintf(stderr, "strata: following branch '%s' again\n", branch_.c_str());
      last_error.clear();
    } else if (s.message() != last_error) {
      last_error = s.message();
      std::fprintf(stderr, "strata: branch '%s' not followed, the mount keeps its commit: %s\n", branch_.c_str(),
                   last_error.c_str());
    }
  }
}

Status BranchFollower::Poll() {
  STRATA_ASSIGN_OR_RETURN(std::optional<Hash> head, store_.GetRef(branch_));
  if (!head) return Status::NotFound("the branch is gone");
  const WorkspaceInfo info = ws_.Info();
  if (info.base == *head) return Status::Ok();
  ResetRequest request;
  request.commit = *head;
  request.hard = true;  // nothing is written here (the mount is read-only): the content is the commit's tree
  STRATA_ASSIGN_OR_RETURN(ResetOutcome outcome, ws_.Reset(request));
  server_.InvalidateAfterSwap(outcome.stale);
  std::fprintf(stderr, "strata: following branch '%s': now showing commit %s\n", branch_.c_str(),
               head->ToHex().c_str());
  return Status::Ok();
}

}  // namespace strata::daemon
