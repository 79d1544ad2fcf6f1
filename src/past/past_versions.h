// Past versions as plain files: the hidden, read-only `.strata/` directory at
// the root of every mount (README.md, "strata mount"; docs/guarantees.md).
//
//   .strata/commits/<id>/     any commit of the store, by its full id or a
//                             unique hex prefix of at least 4 digits
//   .strata/branches/<name>   a branch at its head: a symlink to
//                             ../commits/<head>, read when the name is
//                             looked up (a name holding '/' is a path of
//                             directories: branches/feature/x ->
//                             ../../commits/<head>)
//
// WithPastVersions wraps the workspace a mount serves in one that adds the
// directory, so that the FUSE adapter (src/fs/) and the workspace know
// nothing of it. Like ZFS's .zfs/snapshot with snapdir=hidden, the name
// answers a lookup but no listing of the root shows it: `ls -a`, find, a
// commit or a snapshot of the workspace never see it. Listing commits/ shows
// nothing (a store may hold millions of commits; `strata log` lists them);
// listing branches/ shows every branch, as a symlink, without opening any
// past version.
//
// Each past version is served by a workspace of its own on its commit, as a
// read-only mount's is, created the first time its name is looked up: it
// loads its directories one at a time as they are looked into, so looking
// into any commit costs constant time whatever its size. Those workspaces
// are hidden (their names are the caller's, see below) and removed when the
// wrapper is destroyed. Every change to a past version fails with EROFS;
// linking or copying a file out of one into the workspace gives EXDEV (cp
// and the kernel then copy the bytes).
//
// A workspace that holds a real `.strata` at its root (taken from a commit or
// an import) keeps it: the real entry wins and the view is off for that
// mount's root. While the view is shown, `.strata` cannot be created,
// removed or renamed over at the root (EROFS).
//
// Thread-safety: as Workspace. Calls for the wrapped workspace's own inodes
// take no lock of the wrapper.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "store/store.h"
#include "workspace/workspace.h"

namespace strata {

inline constexpr const char* kPastVersionsName = ".strata";

struct PastVersionsOptions {
  // The names of the workspaces that serve past versions: n = 1, 2, ... for
  // the n-th one this wrapper opens. They must be names `workspace list`
  // hides and a killed daemon's leftovers are cleaned up by (daemon/mount_record.h).
  std::function<std::string(uint64_t n)> workspace_name;
  // How many past versions may be open at once; past that a lookup of
  // another fails with ENFILE (each holds a database connection and its
  // files until the mount ends).
  uint32_t max_views = 256;
};

// The workspace with `.strata/` added.
class PastVersions : public Workspace {
 public:
  // What the kernel may have cached of branch `name` under .strata/branches/
  // (its entry, positive or negative): for the mount to invalidate when a
  // commit through it moved or created the branch, so that the next lookup
  // reads the new head instead of waiting out the entry cache time.
  virtual StaleCaches CachedBranch(const std::string& name) = 0;
};

// The workspace `inner` with `.strata/` added. REQUIRES: inner and store
// outlive the result.
std::unique_ptr<PastVersions> WithPastVersions(Workspace& inner, Store& store, PastVersionsOptions options);

}  // namespace strata
