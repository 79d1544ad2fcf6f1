#include "remote/transfer.h"

#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "remote/remote_gc.h"
#include "remote/s3_backend.h"
#include "store/index.h"
#include "store/store_cipher.h"
#include "util/thread_pool.h"
#include "util/time_ns.h"

namespace strata {
namespace {

struct ObjectBytes {
  Hash id;
  std::string data;
};

// The first error of many workers.
class FirstError {
 public:
  void Set(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = s;
  }
  bool failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !status_.ok();
  }
  Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  Status status_;
};

// Parents before children: a depth-first post-order over the missing commits.
std::vector<const ObjectBytes*> OldestFirst(const std::vector<ObjectBytes>& commits,
                                             const std::unordered_map<Hash, std::vector<Hash>>& parents) {
  std::unordered_map<Hash, const ObjectBytes*> by_id;
  for (const ObjectBytes& c : commits) by_id[c.id] = &c;
  std::vector<const ObjectBytes*> order;
  std::unordered_set<Hash> done;
  for (const ObjectBytes& c : commits) {
    std::vector<std::pair<Hash, size_t>> stack{{c.id, 0}};  // commit, next parent to visit
    if (!done.insert(c.id).second) continue;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const std::vector<Hash>& ps = parents.at(id);
      if (next < ps.size()) {
        const Hash& p = ps[next++];
        if (by_id.count(p) && done.insert(p).second) stack.push_back({p, 0});
        continue;
      }
      order.push_back(by_id.at(id));
      stack.pop_back();
    }
  }
  return order;
}

// An object the source's own history names but the source lacks is damage
// of the source (exit 3), not a missing argument: the copy cannot be made
// whole from there.
Status SourceDamage(const Status& s, const Store& from) {
  if (!s.IsNotFound()) return s;
  return Status::Corruption("the store at " + from.path() + " is damaged: " + s.message() +
                            ", although a branch or its history refers to it");
}

// Records commits forgotten at the source as forgotten at the destination,
// before any of them is stored there: a store may hold a commit without its
// tree only while it counts that commit as forgotten. A remote destination
// records them in its bucket, as forget --remote does.
Status RecordForgottenAt(Store& to, const std::vector<Hash>& commits) {
  if (commits.empty()) return Status::Ok();
  if (dynamic_cast<S3Backend*>(to.backend())) return RecordRemoteForgotten(to, commits);
  return to.index()->AddForgotten(commits, NowNs());
}

// For a remote source: reads its forgotten set from the bucket again, and
// whether it grew since the store was opened (a forget ran meanwhile, so a
// gc may have deleted trees this copy went to read).
Result<bool> SourceForgotMore(Store& from) {
  if (!dynamic_cast<S3Backend*>(from.backend())) return false;
  STRATA_ASSIGN_OR_RETURN(auto now, RemoteForgottenCommits(from));
  STRATA_ASSIGN_OR_RETURN(auto known, from.index()->ListForgotten());
  std::vector<Hash> added;
  for (const Hash& id : now)
    if (!known.count(id)) added.push_back(id);
  if (added.empty()) return false;
  STRATA_RETURN_IF_ERROR(from.index()->AddForgotten(added, NowNs()));
  return true;
}

// Objects are copied as they are stored: sealed ones only between stores
// under one master key (their ids are keyed by it too), plain ones only
// between plain stores. Anything else would need re-encrypting, which strata
// does not do; refused before anything is read or written.
Status CheckSameKey(const Store& from, const Store& to) {
  const StoreCipher* a = from.cipher();
  const StoreCipher* b = to.cipher();
  if (a == nullptr && b == nullptr) return Status::Ok();
  if (a != nullptr && b != nullptr && a->SameMasterKey(*b)) return Status::Ok();
  const std::string why = (a == nullptr || b == nullptr)
                              ? std::string("one of them is encrypted and the other is not")
                              : std::string("they are encrypted under different master keys");
  return Status::InvalidArgument("cannot copy between the stores at " + from.path() + " and " + to.path() + ": " +
                                 why + " (strata does not re-encrypt); nothing was written");
}

Result<TransferStats> CopyHistoryOnce(Store& from, Store& to, const Hash& head, const TransferOptions& options);

}  // namespace

Result<TransferStats> CopyHistory(Store& from, Store& to, const Hash& head, const TransferOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckSameKey(from, to));
  // Objects vanish from a remote source only through gc, and a gc deletes
  // what a branch reaches only after forget let go of it: when a read fails
  // so, the copy starts again knowing what was forgotten meanwhile.
  for (int attempt = 0;; attempt++) {
    auto copied = CopyHistoryOnce(from, to, head, options);
    if (copied.ok() || !copied.status().IsCorruption() || attempt == 2) return copied;
    STRATA_ASSIGN_OR_RETURN(bool more, SourceForgotMore(from));
    if (!more) return copied;
  }
}

namespace {

Result<TransferStats> CopyHistoryOnce(Store& from, Store& to, const Hash& head, const TransferOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  TransferStats stats;

  // Commits the destination lacks; a commit it has brings its history along.
  std::vector<ObjectBytes> commits;
  std::unordered_map<Hash, std::vector<Hash>> parents;
  std::vector<Hash> level;  // root trees to look at
  std::vector<Hash> forgotten;  // commits copied without their trees
  std::unordered_set<Hash> seen;
  for (std::vector<Hash> todo{head}; !todo.empty();) {
    Hash id = todo.back();
    todo.pop_back();
    if (!seen.insert(id).second) continue;
    STRATA_ASSIGN_OR_RETURN(bool present, to.Contains(id));
    if (present) continue;
    auto got = from.Get(id, ObjectType::kCommit);
    // Every id here comes from a branch or a parent: missing is damage.
    if (!got.ok()) return SourceDamage(got.status(), from);
    std::string data = std::move(got).value();
    auto commit = DecodeCommit(data);
    if (!commit.ok()) return commit.status().WithContext("commit " + id.ToHex());
    // Its tree may be gone by gc: it travels as forgotten, without it.
    STRATA_ASSIGN_OR_RETURN(bool was_forgotten, from.index()->IsForgotten(id));
    if (was_forgotten) forgotten.push_back(id);
    else level.push_back(commit->root);
    parents[id] = commit->parents;
    for (const Hash& p : commit->parents) todo.push_back(p);
    commits.push_back({id, std::move(data)});
  }

  // Trees a level at a time, read in parallel; the chunks their files name.
  std::vector<std::vector<ObjectBytes>> tree_levels;
  std::unordered_map<Hash, uint64_t> chunks;  // id -> length
  std::mutex mu;
  FirstError error;
  ThreadPool pool(static_cast<size_t>(std::max(1, options.threads)));
  while (!level.empty()) {
    std::vector<Hash> wanted;
    for (const Hash& id : level) {
      if (!seen.insert(id).second) continue;
      STRATA_ASSIGN_OR_RETURN(bool present, to.Contains(id));
      if (!present) wanted.push_back(id);
    }
    std::vector<ObjectBytes> read(wanted.size());
    std::vector<Hash> next;
    for (size_t i = 0; i < wanted.size(); i++) {
      pool.Submit([&, i] {
        auto data = from.Get(wanted[i], ObjectType::kTree);
        auto tree = data.ok() ? DecodeTree(*data) : Result<Tree>(SourceDamage(data.status(), from));
        if (!tree.ok()) return error.Set(tree.status().WithContext("tree " + wanted[i].ToHex()));
        read[i] = {wanted[i], std::move(*data)};
        std::lock_guard<std::mutex> lock(mu);
        for (const TreeEntry& e : tree->entries) {
          if (e.kind == EntryKind::kDirectory) next.push_back(e.subtree);
          for (const ChunkRef& c : e.chunks) chunks.emplace(c.id, c.length);
        }
      });
    }
    pool.Wait();
    STRATA_RETURN_IF_ERROR(error.status());
    tree_levels.push_back(std::move(read));
    level = std::move(next);
  }

  // Round 1: chunks, in parallel.
  std::vector<std::pair<Hash, uint64_t>> missing;
  for (const auto& [id, length] : chunks) {
    STRATA_ASSIGN_OR_RETURN(bool present, to.Contains(id));
    if (present) {
      stats.chunks_present++;
    } else {
      missing.emplace_back(id, length);
      stats.chunk_bytes += length;
    }
  }
  if (options.progress) options.progress->SetTotals(missing.size(), stats.chunk_bytes);
  for (const auto& [id, length] : missing) {
    if (error.failed()) break;
    pool.Submit([&, id = id, length = length] {
      if (error.failed()) return;
      // As stored: checked on the way out, not compressed a second time.
      auto object = from.GetStored(id);
      if (!object.ok()) return error.Set(SourceDamage(object.status(), from));
      if (object->type != ObjectType::kChunk)
        return error.Set(Status::Corruption("object " + id.ToHex() + " is named as a chunk but is not one"));
      auto put = to.PutStored(id, *object);
      if (!put.ok()) return error.Set(put.status());
      if (options.progress) options.progress->Add(1, length);
    });
  }
  pool.Wait();
  STRATA_RETURN_IF_ERROR(error.status());
  STRATA_RETURN_IF_ERROR(to.Flush());
  stats.chunks = missing.size();

  // Round 2: trees, deepest level first.
  for (auto it = tree_levels.rbegin(); it != tree_levels.rend(); ++it)
    for (const ObjectBytes& t : *it) {
      STRATA_RETURN_IF_ERROR(to.Put(ObjectType::kTree, t.data).status());
      stats.trees++;
    }
  STRATA_RETURN_IF_ERROR(to.Flush());

  // Round 3: commits, oldest first; the forgotten ones known as such first.
  STRATA_RETURN_IF_ERROR(RecordForgottenAt(to, forgotten));
  for (const ObjectBytes* c : OldestFirst(commits, parents)) {
    STRATA_RETURN_IF_ERROR(to.Put(ObjectType::kCommit, c->data).status());
    stats.commits++;
  }
  STRATA_RETURN_IF_ERROR(to.Flush());
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace

Result<bool> IsAncestor(Store& store, const Hash& ancestor, const Hash& descendant) {
  std::unordered_set<Hash> seen;
  for (std::deque<Hash> todo{descendant}; !todo.empty(); todo.pop_front()) {
    const Hash id = todo.front();
    if (id == ancestor) return true;
    if (!seen.insert(id).second) continue;
    auto commit = store.GetCommit(id);
    if (!commit.ok()) {
      if (commit.status().IsNotFound()) continue;
      return commit.status();
    }
    for (const Hash& p : commit->parents) todo.push_back(p);
  }
  return false;
}

Result<std::vector<Hash>> FirstParentLine(Store& store, const Hash& base, const Hash& descendant) {
  std::vector<Hash> line;
  for (Hash id = descendant; id != base;) {
    line.push_back(id);
    STRATA_ASSIGN_OR_RETURN(Commit commit, store.GetCommit(id));
    if (commit.parents.empty())
      return Status::InvalidArgument("commit " + base.ToHex() + " is not on the first-parent line of " +
                                     descendant.ToHex());
    id = commit.parents[0];
  }
  return std::vector<Hash>(line.rbegin(), line.rend());
}

Result<std::optional<Hash>> MergeBase(Store& store, const Hash& a, const Hash& b) {
  std::unordered_set<Hash> from_a;
  for (std::deque<Hash> todo{a}; !todo.empty(); todo.pop_front()) {
    if (!from_a.insert(todo.front()).second) continue;
    STRATA_ASSIGN_OR_RETURN(Commit commit, store.GetCommit(todo.front()));
    for (const Hash& p : commit.parents) todo.push_back(p);
  }
  std::unordered_set<Hash> seen;
  for (std::deque<Hash> todo{b}; !todo.empty(); todo.pop_front()) {
    const Hash id = todo.front();
    if (from_a.count(id)) return std::optional<Hash>(id);
    if (!seen.insert(id).second) continue;
    STRATA_ASSIGN_OR_RETURN(Commit commit, store.GetCommit(id));
    for (const Hash& p : commit.parents) todo.push_back(p);
  }
  return std::optional<Hash>();
}

}  // namespace strata
