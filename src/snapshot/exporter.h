// Exporter: writes a tree from the store back into a plain directory.
//
// The result is byte-identical to what was imported, with modes, owners (when
// run as root), nanosecond mtimes, xattrs, symlinks, hard links, fifos, sockets
// and device nodes (when root).
//
// Safety: export never writes outside the destination. Every path is walked
// with *at() calls relative to directory file descriptors opened with
// O_NOFOLLOW, so a symlink (from the store, or planted by someone else during the
// export) is never followed. Names are re-checked (IsValidEntryName), hard-link
// targets must be plain relative paths to files this export already wrote, and
// anything else is refused with an error naming the entry.
#pragma once

#include <cstdint>
#include <string>

#include "store/store.h"
#include "util/progress.h"

namespace strata {

struct ExportOptions {
  // Restore uid/gid and create device nodes. Defaults to "running as root";
  // without it files belong to the caller and device nodes are skipped
  // (counted in ExportStats::skipped).
  bool privileged = false;
};

struct ExportStats {
  uint64_t files = 0, directories = 0, symlinks = 0, hardlinks = 0, specials = 0;
  uint64_t bytes = 0;
  uint64_t skipped = 0;  // entries that need privileges the caller lacks
};

// Writes the tree `root` into dest, which must not exist or be an empty
// directory. All or nothing: when it fails, what it wrote is removed again
// (and dest too, if it created it), and the error says so.
Result<ExportStats> ExportTree(Store& store, const Hash& root, const std::string& dest,
                               const ExportOptions& options, Progress* progress);

}  // namespace strata

namespace strata {

// After a failed export into dest: removes everything in dest (and dest itself
// when remove_dest), never following a symlink, and returns `failure` saying
// that nothing was left, or what could not be removed.
Status RemovePartialExport(const std::string& dest, bool remove_dest, const Status& failure);

// The message for an xattr the export's target refused (errno err): which
// attribute, its size, which file, and why a file system refuses that.
std::string XattrRefusal(const std::string& dest, const std::string& name, size_t size, const std::string& path,
                         int err);

// Exports a whole commit: its tree, then the metadata of the top directory
// (mode, owner when privileged, xattrs, mtime) onto dest itself. All or
// nothing, as ExportTree.
Result<ExportStats> ExportCommit(Store& store, const Commit& commit, const std::string& dest,
                                 const ExportOptions& options, Progress* progress);

}  // namespace strata
