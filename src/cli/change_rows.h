// One changed path as the commands that list changes show it (diff, show,
// status), and what a workspace's next commit would change against its base.
// The changes themselves come from store/tree_diff.h, the one walker of
// changes; this is only their shape for printing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/workspace_target.h"
#include "store/tree_diff.h"

namespace strata::cli {

// What the listing needs of one change; TreeChange keeps whole entries.
struct ChangeRow {
  char letter = 'M';  // A added, D deleted, M modified, T type changed
  std::string path;   // as displayed: "." for the top directory, a directory ends in '/'
  EntryKind old_kind = EntryKind::kFile, new_kind = EntryKind::kFile;
  uint64_t old_size = 0, new_size = 0;  // 0 for what is absent or not a file
  unsigned fields = 0;                  // kModified: ChangedField bits
};

ChangeRow ToRow(const TreeChange& c);
// {"status", "path", "kind", ["old_kind", "new_kind"] | ["changed"], "old_size", "new_size"}
nlohmann::ordered_json RowJson(const ChangeRow& r);

// What the target's next commit would change against its base (everything,
// for a workspace never committed), as `strata diff WORKSPACE` lists it; the
// snapshot taken goes to *snap. The caller holds a store write session from
// before this call to its end (the snapshot's trees are reachable from no ref).
Result<std::vector<ChangeRow>> WorkspaceChanges(Store& store, const WorkspaceTarget& target, WorkspaceSnapshot* snap);

// How many rows WorkspaceChanges lists for the target, for the commands that
// only show a count (workspace list, stats, workspace end). nullopt when it
// cannot be told: the base's trees cannot be read (its packs vanished), the
// daemon stopped, the workspace is busy, its daemon is making a commit (the
// count would wait for it: a snapshot is served after the commit). A count is never worth failing a
// command, nor asking the daemon for more than the snapshot `status` takes.
// Takes its own store write session: the caller must hold none.
std::optional<uint64_t> WorkspaceChangeCount(Store& store, const WorkspaceTarget& target);
// The count as the text output shows it: "?" when unknown.
std::string CountText(const std::optional<uint64_t>& n);
// The count as --json shows it: null when unknown.
nlohmann::ordered_json CountJson(const std::optional<uint64_t>& n);

// How many paths `commit` changed against its first parent (everything, for a
// first commit): the rows `diff` and `status` listed for the workspace just
// before it was committed. Reads only the trees that differ.
Result<uint64_t> CommitChangeCount(Store& store, const Hash& commit);

}  // namespace strata::cli
