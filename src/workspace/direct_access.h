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
// From the moment the cut of a commit or a rebase is asked for until its
// capture ends, OpenDirect(write) fails with EBUSY: writes then reach
// Workspace::Write and wait for the capture as usual. Direct writers already
// open cannot be taken back from the kernel: the cut has the DirectWriteHold
// (set by the transport) hold their writes off until the files are captured,
// and waits, for at most kDirectWriterWait, only for those it could not hold
// (then it fails with EBUSY naming how many). Without a hold it waits for
// every direct writer to close.
//
// A writer opened with synced_writes (O_SYNC, O_DSYNC: each write durable
// when it returns, though the kernel never tells the daemon of it) is noted
// durably in the workspace first, until the file's last direct writer
// closes: a workspace opened after a crash (Recover) takes such a file's
// size and mtime from its data file, so the synced writes stay. Writers
// without it lose, in a crash, what they wrote since the file's last fsync
// or operation, as unsynced writes may.
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
#include <string>
#include <vector>

#include "util/status.h"
#include "workspace/workspace.h"

namespace strata {

// Holds the kernel's writes to files open for direct access off, while a cut
// is taken and the files are captured (the transport's: fs/passthrough_hold.h).
class DirectWriteHold {
 public:
  struct File {
    InodeId ino = 0;
    std::string path;  // one of its names, from the workspace's root
  };
  virtual ~DirectWriteHold() = default;
  // Holds writes to these files off until Release; returns those it holds,
  // not the others it could not (too many at once, renamed meanwhile, another
  // cut holding). When it returns some, the caller calls Release once; when
  // none, there is nothing to release. Blocks for at most about
  // kDirectWriterWait. REQUIRES: no workspace lock held (the kernel's
  // requests on these files reach the workspace meanwhile).
  virtual std::vector<InodeId> Hold(const std::vector<File>& files) = 0;
  // Lets the writes go on. Same REQUIRES.
  virtual void Release() = 0;
};

// What one cut holds: released when it ends, unless released before.
class HeldDirectWrites {
 public:
  HeldDirectWrites() = default;
  HeldDirectWrites(const HeldDirectWrites&) = delete;
  HeldDirectWrites& operator=(const HeldDirectWrites&) = delete;
  ~HeldDirectWrites() { Release(); }
  void Set(DirectWriteHold* hold) { hold_ = hold; }
  void Release() {
    if (hold_ != nullptr) hold_->Release();
    hold_ = nullptr;
  }

 private:
  DirectWriteHold* hold_ = nullptr;
};

class DirectAccess {
 public:
  static constexpr std::chrono::seconds kDirectWriterWait{5};
  virtual ~DirectAccess() = default;
  virtual Result<int> OpenDirect(InodeId ino, bool write, bool synced_writes) = 0;
  Result<int> OpenDirect(InodeId ino, bool write) { return OpenDirect(ino, write, false); }
  virtual void CloseDirect(InodeId ino, bool write) = 0;
  // The hold cuts use from now on (null: none); it must outlive its use.
  virtual void SetWriteHold(DirectWriteHold* hold) = 0;
  virtual void FollowDataFileAtime() = 0;
};

// The direct access a workspace offers, or null when it offers none.
inline DirectAccess* DirectAccessOf(Workspace& ws) { return dynamic_cast<DirectAccess*>(&ws); }

}  // namespace strata
