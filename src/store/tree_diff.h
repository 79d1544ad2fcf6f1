// Tree diff: what changed between two trees of the store.
//
// The two trees are walked together, entries in name order. A subtree whose
// id is the same on both sides is skipped by its id without being read, so the
// cost is proportional to the difference, not to the size of the trees: two
// commits of a million files that differ in one file cost the trees on the
// path to that file.
//
// What is reported, for each path present on either side:
//   added         only the new side has it
//   deleted       only the old side has it
//   type changed  both have it, of different kinds (file, directory, symlink,
//                 hard link, fifo, socket, character or block device)
//   modified      both have it, of the same kind, and any of these differ:
//                   content  file: the size or the list of chunks (so the
//                            bytes); symlink: the target; hard link: the path
//                            it names; device: the device number
//                   mode     the permission bits (incl. setuid/setgid/sticky)
//                   owner    uid or gid
//                   mtime    seconds or nanoseconds
//                   xattrs   any name or value
// atime and ctime are not recorded in trees and never count. A directory is
// modified only when its own metadata changed; what changed inside it is
// reported on the paths below it. Below an added or deleted directory every
// entry is reported as added or deleted; a type change to or from a directory
// is followed by the entries below it, deleted or added.
//
// Files are compared by their chunk lists: equal bytes are equal chunks as
// long as the store's chunking settings did not change between the two
// commits. A hard link entry (tree.h) is compared by the path it names, so a
// change of the linked data is reported on the inode's first path only.
//
// Order: depth first, the entries of a directory in byte order of their
// names, a directory before the entries below it.
//
// Thread-safety: the functions only read the store; the visitor is called on
// the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/commit.h"
#include "store/store.h"
#include "store/tree.h"

namespace strata {

enum class ChangeType : uint8_t { kAdded, kDeleted, kModified, kTypeChanged };

// 'A', 'D', 'M' or 'T', as in `strata diff --name-status`.
char ChangeLetter(ChangeType t);

// What differs in a modified entry: a bit set.
enum ChangedField : unsigned {
  kChangedContent = 1u << 0,
  kChangedMode = 1u << 1,
  kChangedOwner = 1u << 2,
  kChangedMtime = 1u << 3,
  kChangedXattrs = 1u << 4,
};
// "content", "mode", "owner", "mtime", "xattrs" for the bits that are set.
std::vector<std::string> ChangedFieldNames(unsigned fields);

struct TreeChange {
  ChangeType type = ChangeType::kModified;
  // Relative to the compared trees, '/'-separated; "" is the compared
  // directory itself (only from DiffEntries and root metadata).
  std::string path;
  std::optional<TreeEntry> old_entry;  // absent when added
  std::optional<TreeEntry> new_entry;  // absent when deleted
  unsigned fields = 0;                 // kModified: ChangedField bits
};

// Called once per change, in the order above. A non-ok Status stops the walk
// and is returned by the Diff function.
using ChangeVisitor = std::function<Status(const TreeChange&)>;

// Counters, to show that unchanged subtrees were skipped.
struct TreeDiffStats {
  uint64_t trees_read = 0;
  uint64_t subtrees_skipped = 0;  // directories on both sides with the same subtree id
};

// Compares tree `old_tree` with tree `new_tree`; nullopt stands for an empty
// tree (everything on the other side is added or deleted).
Status DiffTrees(Store& store, const std::optional<Hash>& old_tree, const std::optional<Hash>& new_tree,
                 const ChangeVisitor& visit, TreeDiffStats* stats = nullptr);

// Compares two entries found at `path` (nullptr: absent on that side): the
// entry itself when it differs, then, for directories, what differs below it
// (paths prefixed with "path/"; no prefix when path is "").
Status DiffEntries(Store& store, const TreeEntry* old_entry, const TreeEntry* new_entry, const std::string& path,
                   const ChangeVisitor& visit, TreeDiffStats* stats = nullptr);

// ChangedField bits that differ between two entries of the same kind (the
// name and, for directories, the subtree id are not compared).
unsigned CompareEntries(const TreeEntry& a, const TreeEntry& b);

// A commit's top directory as the entry it would be (a directory with an
// empty name, the commit's root metadata and root tree). DiffEntries on the
// RootEntry of two commits at path "" compares them in full, the top
// directory's own metadata included.
TreeEntry RootEntry(const Commit& commit);
// The other way: the root metadata a commit of this top directory records.
RootMeta RootMetaOf(const TreeEntry& top);

}  // namespace strata
