// Forgetting commits: what `strata forget` does to a store.
//
// A branch is a line of commits (its head, the head's first parent, and so
// on). Forgetting a commit in the middle of the line does not rewrite any
// parent: every id stays what mounts, workspaces and other stores know. The
// commit object stays (a few hundred bytes: `log` still shows the line and
// fast-forward checks still work); it is added to the store's set of
// forgotten commits (the `forgotten` table of index.db). gc walks a forgotten
// commit's parents but not its tree, so the trees and chunks only it reached
// go, while everything a kept commit, a workspace or a branch head reaches
// stays. A commit that gc reaches as a root (a branch head, a workspace's
// base) keeps its tree even when forgotten. Reading a forgotten commit's
// files is refused with "commit X was forgotten by strata forget".
// docs/format/store.md has the argument.
//
// Never forgotten: a branch head, a workspace's base, a commit on the line of
// a branch that is not being evaluated, and a commit that the policy of any
// evaluated branch whose line holds it keeps.
//
// Thread-safety: the functions may be called from any thread; RecordForget
// takes the store's gc lock exclusively (it must not be called while the
// calling process holds a write session).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "store/retention.h"
#include "store/store.h"
#include "util/progress.h"

namespace strata {

// Commits that must be kept whatever the policy says, with the reason
// ("workspace w" for a workspace's base).
using ProtectedCommits = std::map<Hash, std::string>;

struct ForgetBranchPlan {
  std::string branch;
  Hash head;
  // The line from the head, newest first, without commits already forgotten.
  std::vector<RetentionDecision> line;
  uint64_t already_forgotten = 0;  // commits of the line forgotten before
  uint64_t kept() const;
};

struct ForgetPlan {
  std::vector<ForgetBranchPlan> branches;
  std::vector<Hash> forget;  // each commit once, in the order first met
};

// Every commit forgotten so far.
Result<std::unordered_set<Hash>> ForgottenCommits(Store& store);
// Ok unless `commit` was forgotten; then NotFound "commit X was forgotten by
// strata forget". For every path that reads a commit's files.
Status CheckNotForgotten(Store& store, const Hash& commit);

// Decides, for each branch in `branches` (every branch when empty), what the
// policy keeps and forgets. Nothing is changed. NotFound for an unknown
// branch; InvalidArgument for an empty policy. progress (may be null) counts
// the commits read.
Result<ForgetPlan> PlanForget(Store& store, const std::vector<std::string>& branches, const RetentionPolicy& policy,
                              const ProtectedCommits& protect, Progress* progress = nullptr);

// Records plan.forget, in one transaction, while holding the gc lock
// exclusively: no workspace is being created and no ref is being moved
// meanwhile. Under the lock it reads the branch heads and `protect_now` again
// and leaves out any commit that became a head or a protected commit since
// the plan; those are moved from plan.forget into the matching branch's kept
// set (reason "head" or the protection's). Returns how many were recorded.
// `record`, when given, stores the set instead of the index (a remote
// store's lives in its bucket).
Result<uint64_t> RecordForget(Store& store, ForgetPlan& plan,
                              const std::function<Result<ProtectedCommits>()>& protect_now,
                              const std::function<Status(const std::vector<Hash>&)>& record = nullptr);

}  // namespace strata
