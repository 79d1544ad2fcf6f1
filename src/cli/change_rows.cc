#include "cli/change_rows.h"

namespace strata::cli {

ChangeRow ToRow(const TreeChange& c) {
  ChangeRow r;
  r.letter = ChangeLetter(c.type);
  const TreeEntry& shown = c.new_entry ? *c.new_entry : *c.old_entry;
  r.path = c.path.empty() ? "." : c.path;
  if (shown.kind == EntryKind::kDirectory && !c.path.empty()) r.path += '/';
  if (c.old_entry) {
    r.old_kind = c.old_entry->kind;
    r.old_size = c.old_entry->kind == EntryKind::kFile ? c.old_entry->size : 0;
  }
  if (c.new_entry) {
    r.new_kind = c.new_entry->kind;
    r.new_size = c.new_entry->kind == EntryKind::kFile ? c.new_entry->size : 0;
  }
  if (!c.old_entry) r.old_kind = r.new_kind;
  if (!c.new_entry) r.new_kind = r.old_kind;
  r.fields = c.fields;
  return r;
}

nlohmann::ordered_json RowJson(const ChangeRow& r) {
  nlohmann::ordered_json j{{"status", std::string(1, r.letter)}, {"path", r.path}, {"kind", EntryKindName(r.new_kind)}};
  if (r.letter == 'T') {
    j["old_kind"] = EntryKindName(r.old_kind);
    j["new_kind"] = EntryKindName(r.new_kind);
  }
  if (r.letter == 'M') j["changed"] = ChangedFieldNames(r.fields);
  j["old_size"] = r.old_size;
  j["new_size"] = r.new_size;
  return j;
}

Result<std::vector<ChangeRow>> WorkspaceChanges(Store& store, const WorkspaceTarget& target, WorkspaceSnapshot* snap) {
  STRATA_ASSIGN_OR_RETURN(*snap, SnapshotWorkspace(store, target));
  std::vector<ChangeRow> rows;
  auto collect = [&rows](const TreeChange& c) {
    rows.push_back(ToRow(c));
    return Status::Ok();
  };
  if (!snap->base) {
    // Never committed: everything in it is new, listed as `show` lists a
    // first commit.
    STRATA_RETURN_IF_ERROR(DiffTrees(store, std::nullopt, snap->root, collect));
    return rows;
  }
  STRATA_ASSIGN_OR_RETURN(Commit base, store.GetCommit(*snap->base));
  Commit next;
  next.root = snap->root;
  next.root_meta = snap->root_meta;
  const TreeEntry before = RootEntry(base), after = RootEntry(next);
  STRATA_RETURN_IF_ERROR(DiffEntries(store, &before, &after, "", collect));
  return rows;
}

std::optional<uint64_t> WorkspaceChangeCount(Store& store, const WorkspaceTarget& target) {
  // The daemon takes the snapshot the count needs in its turn, after the
  // commit it serves: during a commit the count is unknown, not a wait for it.
  if (auto commit = DaemonCommitProgress(store, target); commit && CommitIsRunning(commit->phase))
    return std::nullopt;
  auto session = store.BeginWrite();  // the snapshot's trees are reachable from no ref
  if (!session.ok()) return std::nullopt;
  WorkspaceSnapshot snap;
  auto rows = WorkspaceChanges(store, target, &snap);
  if (!rows.ok()) return std::nullopt;
  return rows->size();
}

std::string CountText(const std::optional<uint64_t>& n) { return n ? std::to_string(*n) : "?"; }

nlohmann::ordered_json CountJson(const std::optional<uint64_t>& n) {
  return n ? nlohmann::ordered_json(*n) : nlohmann::ordered_json();
}

Result<uint64_t> CommitChangeCount(Store& store, const Hash& commit) {
  STRATA_ASSIGN_OR_RETURN(Commit c, store.GetCommit(commit));
  uint64_t n = 0;
  auto count = [&n](const TreeChange&) {
    n++;
    return Status::Ok();
  };
  if (c.parents.empty()) {
    STRATA_RETURN_IF_ERROR(DiffTrees(store, std::nullopt, c.root, count));
    return n;
  }
  STRATA_ASSIGN_OR_RETURN(Commit parent, store.GetCommit(c.parents[0]));
  const TreeEntry before = RootEntry(parent), after = RootEntry(c);
  STRATA_RETURN_IF_ERROR(DiffEntries(store, &before, &after, "", count));
  return n;
}

}  // namespace strata::cli
