#include "store/reachability.h"

#include <memory>

#include "util/thread_pool.h"

namespace strata {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.ends_with(": ") ? dir + name : dir + "/" + name;
}

}  // namespace

void Reachability::AddCommit(const Hash& start, const std::string& root) {
  // Commits along every parent line, each read once; their root trees are
  // walked afterwards, a level at a time.
  std::vector<PendingTree> roots;
  std::vector<Hash> todo;
  auto where_of = [&](const Hash& id) { return "commit " + id.ToHex().substr(0, 12) + " (" + root + ")"; };
  if (marked_.insert(start).second) {
    todo.push_back(start);
  } else if (auto skipped = tree_skipped_.find(start); skipped != tree_skipped_.end()) {
    // Met before as a forgotten parent; as a root its tree is kept.
    if (marked_.insert(skipped->second).second) roots.push_back({skipped->second, where_of(start) + ": "});
    tree_skipped_.erase(skipped);
  }
  while (!todo.empty()) {
    Hash id = todo.back();
    todo.pop_back();
    std::string where = where_of(id);
    auto commit = store_.GetCommit(id);
    if (!commit.ok()) {
      Problem(id, where, commit.status().message());
      continue;
    }
    if (id != start && forgotten_ && forgotten_->count(id)) {
      tree_skipped_.emplace(id, commit->root);
    } else if (marked_.insert(commit->root).second) {
      roots.push_back({commit->root, where + ": "});
    }
    for (const Hash& parent : commit->parents)
      if (marked_.insert(parent).second) todo.push_back(parent);
  }
  WalkTrees(std::move(roots));
}

void Reachability::Add(const RootSet& roots) {
  if (roots.commit) AddCommit(*roots.commit, roots.name);
  std::vector<PendingTree> trees;
  for (const Hash& id : roots.trees)
    if (marked_.insert(id).second) trees.push_back({id, roots.name + ": tree " + id.ToHex().substr(0, 12) + ": "});
  WalkTrees(std::move(trees));
  for (const Hash& id : roots.chunks) {
    if (!marked_.insert(id).second) continue;
    if (stored_ && !stored_->count(id)) Problem(id, roots.name, "chunk of a file is missing from the store");
  }
}

void Reachability::WalkTrees(std::vector<PendingTree> level) {
  ThreadPool pool(0, 1024);
  while (!level.empty()) {
    std::vector<std::unique_ptr<Result<Tree>>> read(level.size());
    for (size_t i = 0; i < level.size(); i++)
      pool.Submit([&, i] { read[i] = std::make_unique<Result<Tree>>(store_.GetTree(level[i].id)); });
    pool.Wait();
    trees_read_ += level.size();
    if (progress_) progress_->Add(level.size(), 0);

    std::vector<PendingTree> next;
    for (size_t i = 0; i < level.size(); i++) {
      const PendingTree& dir = level[i];
      Result<Tree>& tree = *read[i];
      if (!tree.ok()) {
        Problem(dir.id, dir.where.ends_with(": ") ? dir.where + "/" : dir.where, tree.status().message());
        continue;
      }
      for (const TreeEntry& e : tree->entries) {
        if (e.kind == EntryKind::kDirectory) {
          if (marked_.insert(e.subtree).second) next.push_back({e.subtree, Join(dir.where, e.name)});
          continue;
        }
        for (const ChunkRef& c : e.chunks) {
          if (!marked_.insert(c.id).second) continue;
          if (stored_ && !stored_->count(c.id))
            Problem(c.id, Join(dir.where, e.name), "chunk of this file is missing from the store");
        }
      }
    }
    level = std::move(next);
  }
}

}  // namespace strata
