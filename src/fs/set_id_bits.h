// Clearing set-user-ID and set-group-ID bits when a file changes, as a local
// filesystem does (ext4 through the kernel's setattr_should_drop_suidgid).
//
// Who clears them depends on what INIT agreed (Context::kill_privs):
//  - without FUSE_HANDLE_KILLPRIV_V2 the kernel sends a SETATTR of its own
//    before a write or truncation by a caller without CAP_FSETID, and asks
//    with a GETXATTR of security.capability before nearly every write;
//  - with it the kernel leaves the set-id bits to the daemon and marks the
//    requests that must clear them (FUSE_WRITE_KILL_SUIDGID,
//    FATTR_KILL_SUIDGID, FUSE_OPEN_KILL_SUIDGID), and marks the inode as
//    having nothing to drop after the first check (S_NOSEC), so that later
//    writes send no GETXATTR. security.capability is still removed by the
//    kernel's VFS (it asks for it where S_NOSEC is not set, and a SETXATTR
//    of it clears S_NOSEC again), so the daemon clears only the mode bits.
//
// Root stands for "has CAP_FSETID" where the kernel does not say (the
// libfuse transport, fallocate, and the caller-outside-the-group rule).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "fs/call.h"
#include "workspace/workspace.h"

namespace strata::fs {

enum class SetIdChange {
  kData,   // a write, truncation or fallocate by a caller without CAP_FSETID
  kOwner,  // a chown of a non-directory, by anyone
};

// The permission bits left on a file of mode `mode` and group `gid` after
// `change` by the caller, or nullopt when they stay as they are:
//  - kData: setuid goes; setgid goes when group-exec is set or the caller is
//    outside the file's group;
//  - kOwner: setuid goes; setgid goes when group-exec is set, or the caller
//    is outside the group and not root.
std::optional<uint32_t> ModeAfter(Call& call, SetIdChange change, uint32_t mode, gid_t gid);

// Clears what ModeAfter says on inode ino after a change that went through
// (a write, a fallocate), then drops the kernel's cached attributes so the
// next stat or exec sees the new mode. A failure is logged, not returned:
// the change itself succeeded and is answered so.
void ClearSetIdAfter(Call& call, SetIdChange change, InodeId ino);

}  // namespace strata::fs
