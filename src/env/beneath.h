// Opening files below a directory without ever following a symbolic link.
//
// A store (and each workspace in it) is a directory tree that strata, often
// running as root, reads and writes. Whoever can write into that tree must
// not be able to make strata touch a file outside it: a `packs` directory
// that is a link to /etc, an `index.db` that is a link to a root-only file.
// So every file inside a store is reached from a descriptor of the store's
// root, one name at a time, refusing links on every component.
//
// Where the kernel has openat2(2) (Linux 5.6 and later) the whole relative
// path is resolved in one call with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS. Elsewhere (ENOSYS) the same is done by hand: each
// directory component is opened with openat(O_NOFOLLOW | O_DIRECTORY) from
// the one before, and the last one with O_NOFOLLOW. Both refuse a link with
// ELOOP (or ENOTDIR for a link where a directory is expected), which
// LinkRefused() turns into a message that names the link.
//
// Relative paths must be plain: no empty, "." or ".." components and no
// leading '/'; anything else is InvalidArgument before a call is made.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <string>
#include <string_view>

#include "util/status.h"
#include "util/unique_fd.h"

namespace strata {

// Whether rel is a plain relative path (see above).
bool IsPlainRelativePath(std::string_view rel);

// Opens rel below the directory root_fd with `flags` (O_CLOEXEC and
// O_NOFOLLOW are added). `shown` is the path used in messages.
Result<UniqueFd> OpenBeneath(int root_fd, std::string_view rel, int flags, mode_t mode, const std::string& shown);

// The directory that holds rel's last component, opened (O_PATH) below
// root_fd without links, and that last component's name: for mkdirat,
// unlinkat, renameat and fstatat, which never follow a link in the last name.
struct ParentDir {
  UniqueFd fd;
  std::string name;
};
Result<ParentDir> OpenParentBeneath(int root_fd, std::string_view rel, const std::string& shown);

// The status for a failed open/stat of `shown` with errno err: a link where
// none is allowed gets a message that says so.
Status OpenError(const std::string& what, const std::string& shown, int err);

// Whether openat2 is used (false: the kernel lacks it, the by-hand walk runs).
bool HaveOpenat2();
// For tests: false makes every call take the by-hand walk, as on a kernel
// without openat2; true goes back to asking the kernel.
void UseOpenat2ForTesting(bool use);

}  // namespace strata
