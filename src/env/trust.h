// Which store directories strata trusts, as git's safe.directory does.
//
// Whoever can write a store can make the process that uses it read and write
// files (a planted link, a forged index), and a daemon often runs as root.
// So strata uses a store, or a workspace in it, only when its directory is
// owned by the user strata runs as and is not writable by group or others —
// unless that user said the directory is trusted:
//   - STRATA_TRUSTED_DIRS: directories separated by ':'; "*" trusts every one;
//   - ~/.config/strata/trusted (of the user strata runs as; $XDG_CONFIG_HOME
//     if set): one directory per line, '#' starts a comment, "*" trusts all.
//     A file not owned by that user, or writable by others, is ignored.
// Entries are compared with the store's canonical path. A workspace is
// trusted when its store is. README.md ("Stores owned by someone else") is
// the user's documentation of this.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace strata {

// Checks the directory open at `fd` (shown as `shown`; `what` is "store" or
// "workspace") before it is used. `trust_root` is the canonical path of the
// store it belongs to, looked up in the trust lists. PermissionDenied-style
// IOError (EPERM) with a message that says how to trust it.
Status CheckTrustedDir(int fd, const std::string& shown, std::string_view what, const std::string& trust_root);

// The same for the directory root/rel (a workspace in the store at root,
// canonical), reached from root without following any link (beneath.h):
// a link on the way is refused too.
Status CheckTrustedDirInside(const std::string& root, const std::string& rel, std::string_view what);

// Refuses root/rel if it, or any directory on the way from root, is a link;
// a missing file is fine. For files that others open by path (SQLite).
Status CheckNoLinkInside(const std::string& root, const std::string& rel);

// Whether the user listed `canonical_path` (or "*") as trusted.
bool IsTrustedByUser(const std::string& canonical_path);

}  // namespace strata
