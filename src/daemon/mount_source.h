// The source of a strata mount, as /proc/mounts shows it, and what the
// kernel says of strata's mounts: which one sits at a path, whether its
// daemon is gone (a killed daemon leaves its mount behind, answering ENOTCONN
// or ECONNABORTED to everything), and detaching one.
//
// A command given only a mountpoint (umount, stats, commit, reset, rebase,
// workspace end, diff) has to find the store that holds the mounted
// workspace, whatever --store or STRATA_STORE say in the shell it runs in. The
// mount's source names it: "strata:NAME:STORE", or "strata+REMOTE:NAME:STORE"
// for a workspace of a remote store (STORE being the local store that caches
// it). NAME cannot hold ':' (it is a ref name); STORE is an absolute path and
// may, so it comes last. Mounts made before the store was recorded show
// "strata:NAME" (no store); they parse with an empty store.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace strata::daemon {

struct MountSource {
  std::string remote;     // empty: a local store
  std::string workspace;  // the workspace's name
  std::string store;      // absolute path of the local store; empty if not recorded
};

std::string FormatMountSource(const MountSource& source);

// nullopt when text is not a strata mount's source.
std::optional<MountSource> ParseMountSource(std::string_view text);

// A field of /proc/mounts with its octal escapes (\040 for a space, \134 for a
// backslash...) decoded.
std::string UnescapeMountField(std::string_view field);


// The source /proc/mounts shows for the strata mount on top at path (path
// exactly as the kernel shows it: absolute, canonical); nullopt when there is none.
std::optional<std::string> StrataMountSource(const std::string& path);
// The parsed source of the strata mount at path (any path naming it, also one
// whose daemon stopped); nullopt when path is no strata mountpoint.
std::optional<MountSource> MountSourceOf(const std::string& path);
// The strata mount a path lies in, as git finds the repository of a
// directory: the mount whose mountpoint is the longest prefix of the path
// (canonical; as written when it cannot be resolved, e.g. in a mount whose
// daemon stopped). nullopt when that mount is no strata mount (a path in
// another filesystem mounted inside a strata mount is not in the workspace).
struct EnclosingMount {
  std::string mountpoint;  // absolute, canonical
  MountSource source;
};
std::optional<EnclosingMount> EnclosingStrataMount(const std::string& path);
// The same, for a canonical path, from a mount table in /proc/mounts' format.
std::optional<EnclosingMount> EnclosingMountIn(std::istream& mount_table, const std::string& canonical_path);
// Whether /proc/mounts shows a strata FUSE mount at path (which may belong to
// a daemon that died: then the path answers ENOTCONN to everything).
inline bool IsStrataMountpoint(const std::string& path) { return StrataMountSource(path).has_value(); }

// Whether the FUSE mount at path has lost its daemon (see mount_source.cc).
bool IsDeadMount(const std::string& path);

// Unmounts the FUSE mount at mountpoint; lazy detaches it even while busy
// (for a mount whose daemon is gone). Root calls umount2(2) itself, which
// saves forking and executing fusermount3 on every unmount (strata exec
// unmounts once per run); anyone else, and root without the privilege over
// this mount (inside a user namespace), runs fusermount3 -u [-z]. IOError
// saying why (EBUSY: busy) when the mount stays.
Status UnmountFuse(const std::string& mountpoint, bool lazy);
// Detaches a mount whose daemon is gone. A failure is dropped: the callers
// report what they found either way, and a later umount retries.
inline void DetachMount(const std::string& mountpoint) {
  UnmountFuse(mountpoint, /*lazy=*/true).IgnoreError();
}

}  // namespace strata::daemon
