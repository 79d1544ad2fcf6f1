// Tree merge: a three-way merge of directories of the store.
//
// Given a common base and two sides ("ours" and "theirs") that both started
// from it, the merge keeps every change either side made, as long as no path
// was changed by both sides in different ways. It is what `strata rebase`
// uses to replay a workspace's changes on a branch head that moved.
//
// Rules, per path (an entry is compared whole: kind, content, mode, owner,
// mtime, xattrs; a directory's content is its subtree):
//   - the same on both sides (unchanged, or changed the same way): kept;
//   - changed on one side only (added, deleted, modified, type changed):
//     that side's entry, with everything below it;
//   - changed on both sides, differently:
//       both directories: their own metadata is merged field by field (mode,
//         owner, xattrs: the side that changed it; a field changed on both
//         sides differently is a conflict), except the mtime, which takes
//         the later of the two (adding a name to a directory changes its
//         mtime, so two sides adding different names would otherwise always
//         conflict); then their entries are merged by these same rules;
//       anything else (both modified a file, one deleted what the other
//         changed, a file on one side and a directory on the other, both
//         added different entries under one name): a conflict.
// A subtree whose id is equal on two of the three sides is decided by that
// id without being read, so a merge costs what the two sides changed, not
// the size of the trees.
//
// Hard links. A kHardlink entry names the first path of its inode from the
// top directory (tree.h). Each side's tree is valid on its own, but a merge
// could keep a link one side made while taking the other side's deletion
// (or replacement) of the path it names. So every hard-link entry either
// side added or changed is looked up in the merged tree: when the path it
// names is missing there, or is a directory or itself a hard link, the link
// is reported as a conflict. (Finding those entries means reading what each
// side changed below directories the other side left alone: still a cost
// proportional to the changes.) A link to a path whose data only the other
// side changed is kept: it then names the changed data, as if the link had
// been made after that change.
//
// Choices. A conflicting path may be settled by a choice the caller names
// for it (`strata rebase --ours/--theirs/--both`), keyed by the path as the
// conflict names it. A choice settles that one path, never more:
//   kOurs, kTheirs: that side's entry (or its absence), with everything below;
//     at a directory whose metadata conflicts, that side's mode, owner and
//     xattrs (its entries are still merged name by name);
//   kBoth: ours stays at the path and theirs' entry is written beside it
//     under the name + kTheirsSuffix, so that nothing of either is lost and a
//     person can merge the two by hand. Theirs deleted: ours alone. Refused
//     (left a conflict, the reason saying why) for a directory on theirs'
//     side (its hard links name paths under the old name), for a directory's
//     metadata, and when the name beside is taken in the merged directory.
// A hard-link conflict cannot be settled by a choice: the link has to be
// made again or removed on the side that holds it. A choice naming a path
// that is not in conflict is reported (`unused_choices`), so that a typo
// never passes for a settled conflict.
//
// Thread-safety: reads the store and writes the merged trees to it (Put),
// from the caller's thread. Objects written are not flushed; a caller that
// publishes them flushes the store. A caller that keeps the merged tree
// unreferenced by any ref holds a write session against garbage collection.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "store/tree.h"

namespace strata {

struct MergeConflict {
  std::string path;    // from the merged top directory, '/'-separated; "" is the
                       // top directory itself
  std::string reason;  // for people, e.g. "changed on both sides"
  bool operator==(const MergeConflict&) const = default;
};

enum class ConflictChoice { kOurs, kTheirs, kBoth };
using ConflictChoices = std::map<std::string, ConflictChoice>;
// What kBoth appends to a name for theirs' version.
inline constexpr std::string_view kTheirsSuffix = ".theirs";

struct TreeMergeStats {
  uint64_t trees_read = 0;
  uint64_t subtrees_skipped = 0;  // decided by id, not read
  uint64_t trees_written = 0;     // merged directories stored
};

struct TreeMergeResult {
  // Empty when the merge succeeded. Otherwise every conflicting path found,
  // in depth-first name order (hard-link conflicts last), and `merged` means
  // nothing: no tree was written for it.
  std::vector<MergeConflict> conflicts;
  // The merged top directory: a kDirectory entry whose metadata is the merged
  // metadata and whose subtree is the merged tree (in the store).
  TreeEntry merged;
  // The choices whose path was not in conflict, in path order; the merge
  // went on as if they had not been given.
  std::vector<std::string> unused_choices;
  TreeMergeStats stats;
};

// Merges three top directories, given as directory entries (RootEntry of a
// commit, tree_diff.h, or one built from a workspace's snapshot). `base` may
// be nullptr: an empty base, so everything either side holds is an addition.
// `choices` settle conflicting paths (above). A non-ok Status only for store
// failures (unreadable or damaged trees).
Result<TreeMergeResult> MergeTopDirectories(Store& store, const TreeEntry* base, const TreeEntry& ours,
                                            const TreeEntry& theirs, const ConflictChoices& choices = {});

}  // namespace strata
