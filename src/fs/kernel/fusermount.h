// Mounting through fusermount3, the set-uid helper that lets a user without
// CAP_SYS_ADMIN mount a FUSE file system: it opens /dev/fuse, mounts it, and
// passes the open device back over a socket (its _FUSE_COMMFD protocol).
//
// Thread-safety: functions of their arguments; they spawn a process.
#pragma once

#include <string>

#include "util/status.h"
#include "util/unique_fd.h"

namespace strata::fs::kernel {

// Mounts at mountpoint with fusermount3's -o options (fsname=, subtype=,
// default_permissions, allow_other; fusermount3 adds rootmode, user_id and
// group_id itself) and returns the /dev/fuse fd of the new mount.
Result<UniqueFd> FusermountMount(const std::string& mountpoint, const std::string& options);

// Lazily unmounts (fusermount3 -u -z).
Status FusermountUnmount(const std::string& mountpoint);

}  // namespace strata::fs::kernel
