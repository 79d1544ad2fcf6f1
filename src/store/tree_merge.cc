#include "store/tree_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "store/tree_diff.h"

namespace strata {

namespace {

// As in tree_diff.cc: a path of PATH_MAX bytes holds at most 2048 names.
constexpr int kMaxDepth = 4096;

bool Same(const TreeEntry* a, const TreeEntry* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

bool IsDir(const TreeEntry* e) { return e != nullptr && e->kind == EntryKind::kDirectory; }

// The three-way choice for one field: the side that changed it; nullopt when
// both changed it differently. `base` nullptr: no base (both sides added).
template <typename T>
std::optional<T> MergeField(const T* base, const T& ours, const T& theirs) {
  if (ours == theirs) return ours;
  if (base != nullptr && *base == ours) return theirs;
  if (base != nullptr && *base == theirs) return ours;
  return std::nullopt;
}

class Merger {
 public:
  Merger(Store& store, const ConflictChoices& choices) : store_(store), choices_(choices) {}

  // The merged entry at path (nullopt: absent), from the entries of the three
  // sides there (nullptr: absent on that side). Conflicts are recorded.
  // `beside` (nullptr at the top) receives theirs' entry when a kBoth choice
  // writes it beside ours.
  Result<std::optional<TreeEntry>> Entries(const TreeEntry* b, const TreeEntry* o, const TreeEntry* t,
                                           const std::string& path, int depth, std::optional<TreeEntry>* beside) {
    if (Same(o, t)) {
      if (!Same(b, o)) STRATA_RETURN_IF_ERROR(CollectLinks(b, o, path));
      return Keep(o);
    }
    if (Same(b, o)) {
      STRATA_RETURN_IF_ERROR(CollectLinks(b, t, path));
      return Keep(t);
    }
    if (Same(b, t)) {
      STRATA_RETURN_IF_ERROR(CollectLinks(b, o, path));
      return Keep(o);
    }
    if (IsDir(o) && IsDir(t)) return Directories(IsDir(b) ? b : nullptr, *o, *t, path, depth);
    return Settle(b, o, t, path, beside);
  }

  // Whether every hard link a side added or changed still names a linkable
  // entry of the merged tree (see tree_merge.h); the others are conflicts.
  Status CheckLinks(const Hash& merged_root) {
    for (const auto& [link, target] : links_) {
      STRATA_ASSIGN_OR_RETURN(std::optional<TreeEntry> e, Find(merged_root, target));
      if (!e || e->kind == EntryKind::kDirectory || e->kind == EntryKind::kHardlink) {
        const bool chosen = choices_.count(link) != 0;
        if (chosen) used_.insert(link);  // not unused: it met a conflict it cannot settle
        Conflict(link, "a hard link to '" + target + "', which the other side deleted or replaced" +
                           (chosen ? "; no choice settles a hard link: remove it or link it again, then rebase" : ""));
      }
    }
    return Status::Ok();
  }

  // The choices given for paths that were not in conflict.
  std::vector<std::string> UnusedChoices() const {
    std::vector<std::string> unused;
    for (const auto& [path, choice] : choices_)
      if (!used_.count(path)) unused.push_back(path);
    return unused;
  }

  std::vector<MergeConflict> conflicts;
  TreeMergeStats stats;

 private:
  // Both sides changed a directory at path: its metadata, then its entries.
  Result<std::optional<TreeEntry>> Directories(const TreeEntry* b, const TreeEntry& o, const TreeEntry& t,
                                               const std::string& path, int depth) {
    TreeEntry m = o;
    auto mode = MergeField(b ? &b->mode : nullptr, o.mode, t.mode);
    using Owner = std::pair<uint32_t, uint32_t>;
    const Owner bo = b ? Owner{b->uid, b->gid} : Owner{};
    auto owner = MergeField(b ? &bo : nullptr, Owner{o.uid, o.gid}, Owner{t.uid, t.gid});
    auto xattrs = MergeField(b ? &b->xattrs : nullptr, o.xattrs, t.xattrs);
    const std::optional<ConflictChoice> choice = (!mode || !owner || !xattrs) ? Chosen(path) : std::nullopt;
    if (choice == ConflictChoice::kOurs || choice == ConflictChoice::kTheirs) {
      const TreeEntry& side = choice == ConflictChoice::kOurs ? o : t;
      m.mode = side.mode;
      m.uid = side.uid;
      m.gid = side.gid;
      m.xattrs = side.xattrs;
    } else if (!mode || !owner || !xattrs) {
      Conflict(path, std::string("the directory's ") +
                         (!mode    ? "mode"
                          : !owner ? "owner"
                                   : "xattrs") +
                         " changed on both sides" +
                         (choice ? "; --both cannot keep two sets of a directory's metadata: take ours or theirs"
                                 : ""));
    } else {
      m.mode = *mode;
      std::tie(m.uid, m.gid) = *owner;
      m.xattrs = std::move(*xattrs);
    }
    if (std::pair(t.mtime_sec, t.mtime_nsec) > std::pair(o.mtime_sec, o.mtime_nsec)) {
      m.mtime_sec = t.mtime_sec;
      m.mtime_nsec = t.mtime_nsec;
    }
    STRATA_ASSIGN_OR_RETURN(m.subtree, Trees(b ? &b->subtree : nullptr, o.subtree, t.subtree, path, depth + 1));
    return std::optional<TreeEntry>(std::move(m));
  }

  // The merged tree of three trees (b nullptr: empty) whose entries are at
  // "path/NAME". Two equal ids decide without reading.
  Result<Hash> Trees(const Hash* b, const Hash& o, const Hash& t, const std::string& path, int depth) {
    if (o == t || (b != nullptr && (*b == o || *b == t))) {
      stats.subtrees_skipped++;
      const Hash& changed = b != nullptr && *b == o ? t : o;
      if (b == nullptr || *b != changed) STRATA_RETURN_IF_ERROR(CollectTreeLinks(b, changed, path));
      return changed;
    }
    if (depth > kMaxDepth)
      return Status::Corruption("trees nested deeper than " + std::to_string(kMaxDepth) + " levels at '" + path + "'");
    Tree tb, to, tt;
    if (b != nullptr) STRATA_RETURN_IF_ERROR(Read(*b, &tb));
    STRATA_RETURN_IF_ERROR(Read(o, &to));
    STRATA_RETURN_IF_ERROR(Read(t, &tt));
    const std::string prefix = path.empty() ? "" : path + "/";
    Tree merged;
    std::vector<TreeEntry> besides;  // theirs' entries that kBoth choices write beside ours
    auto ib = tb.entries.begin(), io = to.entries.begin(), it = tt.entries.begin();
    for (;;) {
      // The smallest name any side has next (names sort bytewise).
      const std::string* next = nullptr;
      for (auto [cur, end] :
           {std::pair(ib, tb.entries.end()), std::pair(io, to.entries.end()), std::pair(it, tt.entries.end())})
        if (cur != end && (next == nullptr || cur->name < *next)) next = &cur->name;
      if (next == nullptr) break;
      const std::string name = *next;
      auto take = [&](std::vector<TreeEntry>::iterator& cur, const Tree& tree) -> const TreeEntry* {
        if (cur == tree.entries.end() || cur->name != name) return nullptr;
        return &*cur++;
      };
      const TreeEntry* eb = take(ib, tb);
      const TreeEntry* eo = take(io, to);
      const TreeEntry* et = take(it, tt);
      std::optional<TreeEntry> beside;
      STRATA_ASSIGN_OR_RETURN(std::optional<TreeEntry> m, Entries(eb, eo, et, prefix + name, depth, &beside));
      if (m) merged.entries.push_back(std::move(*m));
      if (beside) besides.push_back(std::move(*beside));
    }
    for (TreeEntry& e : besides) PlaceBeside(std::move(e), prefix, &merged);
    if (!conflicts.empty()) return Hash();  // nothing will use it: write nothing
    STRATA_ASSIGN_OR_RETURN(PutResult put, store_.Put(ObjectType::kTree, EncodeTree(merged)));
    stats.trees_written++;
    written_.emplace(put.id, std::move(merged));
    return put.id;
  }

  static std::optional<TreeEntry> Copy(const TreeEntry* e) { return e ? std::optional<TreeEntry>(*e) : std::nullopt; }

  std::optional<TreeEntry> Keep(const TreeEntry* e) {
    if (IsDir(e)) stats.subtrees_skipped++;  // decided by its id
    return Copy(e);
  }

  // The choice given for path, marked as used; nullopt when none was.
  std::optional<ConflictChoice> Chosen(const std::string& path) {
    auto c = choices_.find(path);
    if (c == choices_.end()) return std::nullopt;
    used_.insert(path);
    return c->second;
  }

  // Both sides changed the entry at path differently and it is not two
  // directories: a conflict, unless a choice settles it (tree_merge.h).
  Result<std::optional<TreeEntry>> Settle(const TreeEntry* b, const TreeEntry* o, const TreeEntry* t,
                                          const std::string& path, std::optional<TreeEntry>* beside) {
    const std::optional<ConflictChoice> choice = Chosen(path);
    if (!choice) {
      Conflict(path, Reason(b, o, t));
      return std::optional<TreeEntry>();
    }
    if (*choice == ConflictChoice::kTheirs) {
      STRATA_RETURN_IF_ERROR(CollectLinks(b, t, path));
      return Keep(t);
    }
    if (*choice == ConflictChoice::kBoth && t != nullptr) {
      if (IsDir(t) || beside == nullptr) {
        Conflict(path, Reason(b, o, t) + "; --both cannot write theirs' directory beside it: take ours or theirs");
        return std::optional<TreeEntry>();
      }
      TreeEntry theirs = *t;
      theirs.name += kTheirsSuffix;
      STRATA_RETURN_IF_ERROR(CollectLinks(nullptr, &theirs, path + std::string(kTheirsSuffix)));
      *beside = std::move(theirs);
    }
    STRATA_RETURN_IF_ERROR(CollectLinks(b, o, path));
    return Keep(o);
  }

  // Adds theirs' entry that a kBoth choice writes beside ours to the merged
  // directory, in name order; a conflict when the name is taken.
  void PlaceBeside(TreeEntry e, const std::string& prefix, Tree* merged) {
    auto at = std::lower_bound(merged->entries.begin(), merged->entries.end(), e.name,
                               [](const TreeEntry& x, const std::string& name) { return x.name < name; });
    if (at != merged->entries.end() && at->name == e.name) {
      Conflict(prefix + e.name, "--both would write theirs' version here, but the name is taken: move it away");
      return;
    }
    merged->entries.insert(at, std::move(e));
  }

  // Remembers the hard links that one side's entry `side` (against the base
  // entry `b`) adds or changes, at path and below.
  Status CollectLinks(const TreeEntry* b, const TreeEntry* side, const std::string& path) {
    if (side == nullptr) return Status::Ok();
    if (side->kind == EntryKind::kHardlink) {
      links_.emplace_back(path, side->target);
      return Status::Ok();
    }
    if (side->kind != EntryKind::kDirectory) return Status::Ok();
    return CollectTreeLinks(IsDir(b) ? &b->subtree : nullptr, side->subtree, path);
  }

  Status CollectTreeLinks(const Hash* b, const Hash& side, const std::string& path) {
    if (b != nullptr && *b == side) return Status::Ok();
    TreeDiffStats diff_stats;
    Status s = DiffTrees(
        store_, b ? std::optional<Hash>(*b) : std::nullopt, side,
        [&](const TreeChange& c) {
          if (c.new_entry && c.new_entry->kind == EntryKind::kHardlink)
            links_.emplace_back(path.empty() ? c.path : path + "/" + c.path, c.new_entry->target);
          return Status::Ok();
        },
        &diff_stats);
    stats.trees_read += diff_stats.trees_read;
    return s;
  }

  // The entry at `path` (from the top) of the merged tree `root`.
  Result<std::optional<TreeEntry>> Find(const Hash& root, const std::string& path) {
    Hash dir = root;
    size_t start = 0;
    for (;;) {
      const size_t slash = path.find('/', start);
      const std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      const Tree* tree;
      Tree read;
      if (auto w = written_.find(dir); w != written_.end()) {
        tree = &w->second;
      } else {
        STRATA_RETURN_IF_ERROR(Read(dir, &read));
        tree = &read;
      }
      const TreeEntry* e = tree->Find(name);
      if (e == nullptr) return std::optional<TreeEntry>();
      if (slash == std::string::npos) return std::optional<TreeEntry>(*e);
      if (e->kind != EntryKind::kDirectory) return std::optional<TreeEntry>();
      dir = e->subtree;
      start = slash + 1;
    }
  }

  Status Read(const Hash& id, Tree* out) {
    auto tree = store_.GetTree(id);
    if (!tree.ok()) return tree.status();
    stats.trees_read++;
    *out = std::move(tree).value();
    return Status::Ok();
  }

  static std::string Reason(const TreeEntry* b, const TreeEntry* o, const TreeEntry* t) {
    if (o == nullptr || t == nullptr) return "deleted on one side, changed on the other";
    if (b == nullptr) return "added on both sides, differently";
    if (o->kind != t->kind)
      return std::string("changed on both sides: a ") + EntryKindName(o->kind) + " on one, a " +
             EntryKindName(t->kind) + " on the other";
    return "changed on both sides";
  }

  void Conflict(const std::string& path, std::string reason) { conflicts.push_back({path, std::move(reason)}); }

  Store& store_;
  const ConflictChoices& choices_;
  std::set<std::string> used_;  // paths of choices that settled (or met) a conflict
  std::vector<std::pair<std::string, std::string>> links_;  // (link path, the path it names)
  std::map<Hash, Tree> written_;                            // merged trees, to look links up without a flush
};

}  // namespace

Result<TreeMergeResult> MergeTopDirectories(Store& store, const TreeEntry* base, const TreeEntry& ours,
                                            const TreeEntry& theirs, const ConflictChoices& choices) {
  TreeMergeResult result;
  // One side changed nothing: the other side is the merge, valid as it is
  // (hard links included), and nothing needs reading.
  if (Same(base, &ours) || Same(base, &theirs) || ours == theirs) {
    result.merged = Same(base, &ours) ? theirs : ours;
    result.stats.subtrees_skipped = 1;
    for (const auto& [path, choice] : choices) result.unused_choices.push_back(path);
    return result;
  }
  Merger m(store, choices);
  STRATA_ASSIGN_OR_RETURN(std::optional<TreeEntry> merged,
                          m.Entries(base, &ours, &theirs, "", 0, /*beside=*/nullptr));
  if (m.conflicts.empty()) {
    // Both sides are directories: the merge of two directories is one.
    result.merged = std::move(*merged);
    STRATA_RETURN_IF_ERROR(m.CheckLinks(result.merged.subtree));
  }
  result.conflicts = std::move(m.conflicts);
  result.unused_choices = m.UnusedChoices();
  result.stats = m.stats;
  return result;
}

}  // namespace strata
