// The bubblewrap command line of a sandbox: which namespaces it gets, what it
// sees of the host and where its working tree (a mounted workspace) goes.
//
// Two layouts. kAt: the host's file tree read-only, the working tree bound
// writable at a directory of it, and the paths in `hide` covered by empty
// tmpfs (the store, whose other workspaces the sandbox has no business
// reading). kRoot: the working tree is the sandbox's whole file tree, with a
// fresh /proc, a minimal /dev and a tmpfs /tmp; nothing of the host shows.
// Both unshare every namespace bwrap knows (user, mount, PID, IPC, UTS,
// cgroup and, unless `net`, network) and make the sandbox die with the
// process that started bwrap.
// Thread-safety: pure functions.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace strata::sandbox {

struct SandboxSpec {
  enum class Layout { kAt, kRoot };
  Layout layout = Layout::kAt;
  std::string tree;     // the mounted working tree on the host (absolute)
  std::string at;       // kAt: where the tree appears inside (absolute)
  std::vector<std::string> hide;  // kAt: host paths covered by an empty tmpfs
  bool net = false;               // share the host's network namespace
  std::optional<uid_t> uid;       // the uid (and gid) inside; default the caller's
  std::vector<std::string> command;  // CMD ARGS..., looked up in the sandbox's PATH
};

// The argv of bwrap (argv[0] is "bwrap") for spec. InvalidArgument for a
// spec that cannot be run: no command, a relative path, a tree or hidden
// path that would cover the working tree.
Result<std::vector<std::string>> BwrapArgs(const SandboxSpec& spec);

// Whether `inner` is `outer` or lies below it (both normalised, absolute).
bool IsWithin(const std::string& inner, const std::string& outer);

}  // namespace strata::sandbox
