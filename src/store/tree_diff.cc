#include "store/tree_diff.h"

namespace strata {

namespace {

// Trees deeper than this are refused rather than recursed into: a path of
// PATH_MAX bytes holds at most 2048 names.
constexpr int kMaxDepth = 4096;

class Differ {
 public:
  Differ(Store& store, const ChangeVisitor& visit, TreeDiffStats* stats)
      : store_(store), visit_(visit), stats_(stats) {}

  // Two entries at path (nullptr: absent on that side), then what is below.
  Status Entries(const TreeEntry* a, const TreeEntry* b, const std::string& path, int depth) {
    if (a == nullptr && b == nullptr) return Status::Ok();
    if (a == nullptr) {
      STRATA_RETURN_IF_ERROR(Emit(ChangeType::kAdded, path, nullptr, b, 0));
      return Below(nullptr, b, path, depth);
    }
    if (b == nullptr) {
      STRATA_RETURN_IF_ERROR(Emit(ChangeType::kDeleted, path, a, nullptr, 0));
      return Below(a, nullptr, path, depth);
    }
    if (a->kind != b->kind) {
      STRATA_RETURN_IF_ERROR(Emit(ChangeType::kTypeChanged, path, a, b, 0));
      STRATA_RETURN_IF_ERROR(Below(a, nullptr, path, depth));
      return Below(nullptr, b, path, depth);
    }
    if (unsigned fields = CompareEntries(*a, *b); fields != 0)
      STRATA_RETURN_IF_ERROR(Emit(ChangeType::kModified, path, a, b, fields));
    return Below(a, b, path, depth);
  }

  // Two trees (nullptr: empty) whose entries are at "path/NAME" ("NAME" when
  // path is ""). Equal ids are skipped without reading either tree.
  Status Trees(const Hash* a, const Hash* b, const std::string& path, int depth) {
    if (a != nullptr && b != nullptr && *a == *b) {
      if (stats_ != nullptr) stats_->subtrees_skipped++;
      return Status::Ok();
    }
    if (depth > kMaxDepth)
      return Status::Corruption("trees nested deeper than " + std::to_string(kMaxDepth) + " levels at '" + path + "'");
    Tree ta, tb;
    if (a != nullptr) STRATA_RETURN_IF_ERROR(Read(*a, &ta));
    if (b != nullptr) STRATA_RETURN_IF_ERROR(Read(*b, &tb));
    const std::string prefix = path.empty() ? "" : path + "/";
    auto ia = ta.entries.begin(), ib = tb.entries.begin();
    while (ia != ta.entries.end() || ib != tb.entries.end()) {
      // Names are sorted bytewise; std::string compares as unsigned bytes.
      int order = ia == ta.entries.end()   ? 1
                  : ib == tb.entries.end() ? -1
                                           : ia->name.compare(ib->name);
      if (order < 0) {
        STRATA_RETURN_IF_ERROR(Entries(&*ia, nullptr, prefix + ia->name, depth));
        ++ia;
      } else if (order > 0) {
        STRATA_RETURN_IF_ERROR(Entries(nullptr, &*ib, prefix + ib->name, depth));
        ++ib;
      } else {
        STRATA_RETURN_IF_ERROR(Entries(&*ia, &*ib, prefix + ia->name, depth));
        ++ia;
        ++ib;
      }
    }
    return Status::Ok();
  }

 private:
  // What differs below two entries at path, where they are directories.
  Status Below(const TreeEntry* a, const TreeEntry* b, const std::string& path, int depth) {
    const Hash* ta = a != nullptr && a->kind == EntryKind::kDirectory ? &a->subtree : nullptr;
    const Hash* tb = b != nullptr && b->kind == EntryKind::kDirectory ? &b->subtree : nullptr;
    if (ta == nullptr && tb == nullptr) return Status::Ok();
    return Trees(ta, tb, path, depth + 1);
  }

  Status Read(const Hash& id, Tree* out) {
    auto tree = store_.GetTree(id);
    if (!tree.ok()) return tree.status();
    if (stats_ != nullptr) stats_->trees_read++;
    *out = std::move(tree).value();
    return Status::Ok();
  }

  Status Emit(ChangeType type, const std::string& path, const TreeEntry* a, const TreeEntry* b, unsigned fields) {
    TreeChange c;
    c.type = type;
    c.path = path;
    if (a != nullptr) c.old_entry = *a;
    if (b != nullptr) c.new_entry = *b;
    c.fields = fields;
    return visit_(c);
  }

  Store& store_;
  const ChangeVisitor& visit_;
  TreeDiffStats* stats_;
};

}  // namespace

char ChangeLetter(ChangeType t) {
  switch (t) {
    case ChangeType::kAdded: return 'A';
    case ChangeType::kDeleted: return 'D';
    case ChangeType::kModified: return 'M';
    case ChangeType::kTypeChanged: return 'T';
  }
  return '?';
}

std::vector<std::string> ChangedFieldNames(unsigned fields) {
  static const std::pair<unsigned, const char*> kNames[] = {{kChangedContent, "content"},
                                                            {kChangedMode, "mode"},
                                                            {kChangedOwner, "owner"},
                                                            {kChangedMtime, "mtime"},
                                                            {kChangedXattrs, "xattrs"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames)
    if (fields & bit) out.push_back(name);
  return out;
}

unsigned CompareEntries(const TreeEntry& a, const TreeEntry& b) {
  unsigned fields = 0;
  switch (a.kind) {
    case EntryKind::kFile:
      if (a.size != b.size || a.chunks != b.chunks) fields |= kChangedContent;
      break;
    case EntryKind::kSymlink:
    case EntryKind::kHardlink:
      if (a.target != b.target) fields |= kChangedContent;
      break;
    case EntryKind::kCharDevice:
    case EntryKind::kBlockDevice:
      if (a.rdev != b.rdev) fields |= kChangedContent;
      break;
    case EntryKind::kDirectory:  // what is inside is compared entry by entry
    case EntryKind::kFifo:
    case EntryKind::kSocket:
      break;
  }
  if (a.mode != b.mode) fields |= kChangedMode;
  if (a.uid != b.uid || a.gid != b.gid) fields |= kChangedOwner;
  if (a.mtime_sec != b.mtime_sec || a.mtime_nsec != b.mtime_nsec) fields |= kChangedMtime;
  if (a.xattrs != b.xattrs) fields |= kChangedXattrs;
  return fields;
}

TreeEntry RootEntry(const Commit& commit) {
  TreeEntry e;
  e.kind = EntryKind::kDirectory;
  e.mode = commit.root_meta.mode;
  e.uid = commit.root_meta.uid;
  e.gid = commit.root_meta.gid;
  e.mtime_sec = commit.root_meta.mtime_sec;
  e.mtime_nsec = commit.root_meta.mtime_nsec;
  e.xattrs = commit.root_meta.xattrs;
  e.subtree = commit.root;
  return e;
}

RootMeta RootMetaOf(const TreeEntry& top) {
  RootMeta m;
  m.mode = top.mode;
  m.uid = top.uid;
  m.gid = top.gid;
  m.mtime_sec = top.mtime_sec;
  m.mtime_nsec = top.mtime_nsec;
  m.xattrs = top.xattrs;
  return m;
}

Status DiffTrees(Store& store, const std::optional<Hash>& old_tree, const std::optional<Hash>& new_tree,
                 const ChangeVisitor& visit, TreeDiffStats* stats) {
  Differ d(store, visit, stats);
  return d.Trees(old_tree ? &*old_tree : nullptr, new_tree ? &*new_tree : nullptr, "", 0);
}

Status DiffEntries(Store& store, const TreeEntry* old_entry, const TreeEntry* new_entry, const std::string& path,
                   const ChangeVisitor& visit, TreeDiffStats* stats) {
  Differ d(store, visit, stats);
  return d.Entries(old_entry, new_entry, path, 0);
}

}  // namespace strata
