// Reachability: every object a set of commits refers to, transitively
// (a commit: its parents and its root tree; a tree: its subtrees and the
// chunks of its files).
//
// gc marks with it what must be kept; fsck checks with it that everything
// referred to is stored. A forgotten commit (forget.h) reached through a
// parent link has its parents walked but not its tree; reached as a root
// (AddCommit's `start`), its tree is walked like any other. Each commit and tree is read once however many roots
// share it, so adding a root whose history is already marked costs only what
// is new in it. Trees of one depth are read in parallel.
//
// Thread-safety: none; one walk is used by one thread (it runs its own workers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"

namespace strata {

// What one root keeps alive: a commit (and its history), and trees and chunks
// named directly (a workspace's rows). `name` says whose it is ("branch main",
// "workspace w") in problem reports.
struct RootSet {
  std::string name;
  std::optional<Hash> commit;
  std::vector<Hash> trees;
  std::vector<Hash> chunks;
};

// An object the walk could not read, or (with `stored`) a chunk not stored.
struct ReachabilityProblem {
  std::string object;   // hex id
  std::string where;    // "commit 1a2b3c4d5e6f (branch main): src/lib" — how it was reached
  std::string message;  // why it is a problem
};

class Reachability {
 public:
  // stored: when given, every chunk reference is looked up in it (fsck);
  // without it chunks are only marked (gc).
  // progress: counts trees read, when given.
  // forgotten: commits whose trees are not walked unless they are roots
  // (ForgottenCommits); none when null. Must outlive the walk.
  explicit Reachability(Store& store, const std::unordered_set<Hash>* stored = nullptr, Progress* progress = nullptr,
                        const std::unordered_set<Hash>* forgotten = nullptr)
      : store_(store), stored_(stored), progress_(progress), forgotten_(forgotten) {}

  // Marks everything reachable from `commit` that is not marked yet; `root`
  // says where the commit came from ("branch main"), for problem reports.
  // Unreadable objects become problems; the walk goes on with the rest.
  void AddCommit(const Hash& commit, const std::string& root);
  // Marks everything a root set reaches.
  void Add(const RootSet& roots);

  bool Marked(const Hash& id) const { return marked_.count(id) > 0; }
  size_t marked_count() const { return marked_.size(); }
  uint64_t trees_read() const { return trees_read_; }
  const std::vector<ReachabilityProblem>& problems() const { return problems_; }

 private:
  struct PendingTree {
    Hash id;
    std::string where;
  };
  void WalkTrees(std::vector<PendingTree> level);
  void Problem(const Hash& id, const std::string& where, const std::string& message) {
    problems_.push_back({id.ToHex(), where, message});
  }

  Store& store_;
  const std::unordered_set<Hash>* const stored_;
  Progress* const progress_;
  const std::unordered_set<Hash>* const forgotten_;
  std::unordered_set<Hash> marked_;
  // Forgotten commits marked through a parent link, whose trees were not
  // walked: commit -> its root tree, walked should the commit become a root.
  std::unordered_map<Hash, Hash> tree_skipped_;
  uint64_t trees_read_ = 0;
  std::vector<ReachabilityProblem> problems_;
};

}  // namespace strata
