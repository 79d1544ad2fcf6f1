// DirectAccess: the kernel reads and writes a workspace file's data file
// itself (FUSE passthrough, docs/passthrough.md), without a request per read
// or write, when every byte of the file is in it: a regular file with no
// bytes from the base commit.
//
// OpenDirect makes the data file hold exactly the file (its length the
// file's size, zeros wherever no write landed) and returns a descriptor of
// it, valid until the matching CloseDirect; the caller must not close it.
// While direct writers exist the workspace takes the file's size and mtime
// from the data file and counts all of it as written (the writes never reach
// Workspace::Write), and at the last CloseDirect(write) records them for good.
//
// The cut of a commit or a rebase waits until no direct writer is left, for at most
// kDirectWriterWait (then it fails with EBUSY naming how many), and from the
// moment it starts waiting until its capture ends, OpenDirect(write) fails
// with EBUSY: writes then reach Workspace::Write and wait for the capture as
// usual.
//
// Errors: Unsupported when the file is not eligible (base bytes, not a
// regular file), EBUSY as above.
//
// Access times: the kernel's reads of a data file never reach the daemon;
// they move the data file's atime, by the rule of the filesystem holding it.
// With FollowDataFileAtime (a relatime or strictatime mount) a data file
// handed out is given the inode's atime when they differ, and the inode
// takes the data file's atime whenever a read moved it, so that stat shows
// passthrough reads. Without it (noatime) reads leave the inode's atime alone.
//
// Thread-safety: as Workspace.
#pragma once

#include <chrono>

#include "util/status.h"
#include "workspace/workspace.h"

namespace strata {

class DirectAccess {
 public:
  static constexpr std::chrono::seconds kDirectWriterWait{5};
  virtual ~DirectAccess() = default;
  virtual Result<int> OpenDirect(InodeId ino, bool write) = 0;
  virtual void CloseDirect(InodeId ino, bool write) = 0;
  virtual void FollowDataFileAtime() = 0;
};

// The direct access a workspace offers, or null when it offers none.
inline DirectAccess* DirectAccessOf(Workspace& ws) { return dynamic_cast<DirectAccess*>(&ws); }

}  // namespace strata
