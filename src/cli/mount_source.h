// The source of a strata mount, as /proc/mounts shows it.
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

#include <optional>
#include <string>
#include <string_view>

namespace strata::cli {

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

}  // namespace strata::cli
