#include "store/forget.h"

#include <set>

#include "store/index.h"
#include "util/time_ns.h"

namespace strata {
namespace {

// The first-parent line of every branch, each commit read once.
class Lines {
 public:
  Lines(Store& store, Progress* progress) : store_(store), progress_(progress) {}

  Result<std::vector<RetentionCandidate>> Line(const Hash& head) {
    std::vector<RetentionCandidate> line;
    std::set<Hash> seen;  // ids are content hashes, so a cycle cannot be; a damaged store must not loop
    std::optional<Hash> id = head;
    while (id && seen.insert(*id).second) {
      auto it = known_.find(*id);
      if (it == known_.end()) {
        auto c = store_.GetCommit(*id);
        if (!c.ok()) return c.status().WithContext("reading the history of " + head.ToHex().substr(0, 12));
        Step step{c->time_ns, c->parents.empty() ? std::nullopt : std::optional<Hash>(c->parents.front())};
        it = known_.emplace(*id, step).first;
        if (progress_) progress_->Add(1, 0);
      }
      line.push_back({*id, it->second.time_ns});
      id = it->second.first_parent;
    }
    return line;
  }

 private:
  struct Step {
    int64_t time_ns;
    std::optional<Hash> first_parent;
  };
  Store& store_;
  Progress* const progress_;
  std::map<Hash, Step> known_;
};

void AddReason(ForgetPlan& plan, const Hash& id, const std::string& reason) {
  for (ForgetBranchPlan& b : plan.branches)
    for (RetentionDecision& d : b.line)
      if (d.id == id) d.reasons.push_back(reason);
}

}  // namespace

uint64_t ForgetBranchPlan::kept() const {
  uint64_t n = 0;
  for (const RetentionDecision& d : line) n += d.kept();
  return n;
}

Result<std::unordered_set<Hash>> ForgottenCommits(Store& store) { return store.index()->ListForgotten(); }

Status CheckNotForgotten(Store& store, const Hash& commit) {
  STRATA_ASSIGN_OR_RETURN(bool forgotten, store.index()->IsForgotten(commit));
  if (!forgotten) return Status::Ok();
  return Status::NotFound("commit " + commit.ToHex().substr(0, 12) +
                          " was forgotten by strata forget: its files are no longer kept (its place in the "
                          "history stays, see 'strata log')");
}

Result<ForgetPlan> PlanForget(Store& store, const std::vector<std::string>& branches, const RetentionPolicy& policy,
                              const ProtectedCommits& protect, Progress* progress) {
  if (policy.empty()) STRATA_RETURN_IF_ERROR(ApplyRetention({}, policy).status());
  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  std::set<std::string> selected(branches.begin(), branches.end());
  for (const std::string& b : selected)
    if (!refs.count(b)) return Status::NotFound("no branch '" + b + "'");
  if (selected.empty())
    for (const auto& [name, head] : refs) selected.insert(name);
  STRATA_ASSIGN_OR_RETURN(auto forgotten, ForgottenCommits(store));

  Lines lines(store, progress);
  ForgetPlan plan;
  std::map<Hash, std::string> other_branch;  // a commit on the line of a branch not evaluated
  for (const auto& [name, head] : refs) {
    STRATA_ASSIGN_OR_RETURN(auto line, lines.Line(head));
    if (!selected.count(name)) {
      for (const RetentionCandidate& c : line) other_branch.emplace(c.id, name);
      continue;
    }
    ForgetBranchPlan b;
    b.branch = name;
    b.head = head;
    std::vector<RetentionCandidate> candidates;
    for (const RetentionCandidate& c : line) {
      if (forgotten.count(c.id)) b.already_forgotten++;
      else candidates.push_back(c);
    }
    STRATA_ASSIGN_OR_RETURN(b.line, ApplyRetention(candidates, policy));
    plan.branches.push_back(std::move(b));
  }

  // What must stay whatever the policy said, then what another evaluated
  // branch's policy keeps.
  std::map<Hash, std::string> kept_by;  // commit -> the first branch whose policy keeps it
  for (ForgetBranchPlan& b : plan.branches) {
    for (RetentionDecision& d : b.line) {
      if (d.id == b.head) d.reasons.insert(d.reasons.begin(), "head");
      if (auto it = protect.find(d.id); it != protect.end()) d.reasons.push_back(it->second);
      if (auto it = other_branch.find(d.id); it != other_branch.end()) d.reasons.push_back("on branch " + it->second);
      if (d.kept()) kept_by.emplace(d.id, b.branch);
    }
  }
  std::set<Hash> listed;
  for (ForgetBranchPlan& b : plan.branches) {
    for (RetentionDecision& d : b.line) {
      if (d.kept()) continue;
      if (auto it = kept_by.find(d.id); it != kept_by.end()) {
        d.reasons.push_back("kept for branch " + it->second);
        continue;
      }
      if (listed.insert(d.id).second) plan.forget.push_back(d.id);
    }
  }
  return plan;
}

Result<uint64_t> RecordForget(Store& store, ForgetPlan& plan,
                              const std::function<Result<ProtectedCommits>()>& protect_now,
                              const std::function<Status(const std::vector<Hash>&)>& record_elsewhere) {
  if (plan.forget.empty()) return uint64_t{0};
  // Workspaces are created, and refs checked and moved, inside write
  // sessions: with none open, the heads and bases read here stay true until
  // the set is recorded, and a later creation sees the commit forgotten.
  STRATA_ASSIGN_OR_RETURN(auto lock, store.env()->LockFile(store.GcLockPath(), LockMode::kExclusive, /*wait=*/true));
  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  ProtectedCommits protect;
  if (protect_now) {
    STRATA_ASSIGN_OR_RETURN(protect, protect_now());
  }
  std::map<Hash, std::string> heads;
  for (const auto& [name, head] : refs) heads.emplace(head, "head of branch " + name);
  std::vector<Hash> record;
  for (const Hash& id : plan.forget) {
    if (auto it = heads.find(id); it != heads.end()) AddReason(plan, id, it->second);
    else if (auto p = protect.find(id); p != protect.end()) AddReason(plan, id, p->second);
    else record.push_back(id);
  }
  if (record_elsewhere) STRATA_RETURN_IF_ERROR(record_elsewhere(record));
  else STRATA_RETURN_IF_ERROR(store.index()->AddForgotten(record, NowNs()));
  plan.forget = record;
  return static_cast<uint64_t>(record.size());
}

}  // namespace strata
