// The record a daemon keeps of its mount, and the names of the workspaces
// that read-only mounts serve.
//
// A daemon writes its pid and mountpoint to STORE/workspaces/NAME/mounted
// ("PID\nMOUNTPOINT\n") once its mount is ready and removes the file when it
// ends; `umount`, `workspace list`, `stats` and a second `mount` find it
// there. A killed daemon leaves the file behind: a record whose process is
// gone (or a zombie) counts as none.
//
// A read-only mount serves a workspace of its own on the commit, named
// kReadOnlyPrefix + the pid of the command that created it; the daemon removes
// it when the mount ends. So are the workspaces a daemon opens for the past
// versions under .strata/ (past/past_versions.h): kReadOnlyPrefix + the
// daemon's pid + "-past-N". Such names are reserved, and `workspace list`
// does not show them.
// Thread-safety: no state of its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "store/store.h"

namespace strata::daemon {

struct MountRecord {
  int pid = 0;
  std::string mountpoint;
};

// The record a live daemon left for workspace name; nullopt when there is
// none or its process is gone.
std::optional<MountRecord> ReadMountRecord(const Store& store, const std::string& name);
// The workspace whose live daemon recorded mountpoint (absolute, canonical),
// and its record; nullopt when there is none.
std::optional<std::pair<std::string, MountRecord>> FindMountAt(Store& store, const std::string& mountpoint);
// Records this process as serving mountpoint (best effort: a record that
// cannot be written only hides the mount from the commands). Never writes
// through a link planted as the record.
void WriteMountRecord(const std::string& state_dir, const std::string& mountpoint);
void RemoveMountRecord(const std::string& state_dir);

// Whether a process holds the workspace open (Workspace::Open keeps an
// exclusive flock on its lock file while it is open).
bool WorkspaceLocked(const Store& store, const std::string& name);

inline constexpr std::string_view kReadOnlyPrefix = "read-only/";
inline bool IsReadOnlyName(std::string_view name) { return name.starts_with(kReadOnlyPrefix); }
// The name of the workspace a read-only mount made by this process serves.
std::string ReadOnlyWorkspaceName();

// Removes the workspaces of read-only mounts and past versions whose daemon
// was killed: the process that created one is gone (a zombie not reaped yet
// counts as gone), no daemon serves it, and nothing holds it open (Remove
// refuses one that is open).
void RemoveStaleReadOnly(Store& store);

}  // namespace strata::daemon
