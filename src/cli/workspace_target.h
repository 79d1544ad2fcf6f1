// Naming a workspace on the command line, and asking it for what it holds.
//
// A workspace is named by its name or by the mountpoint of its mount. While
// it is mounted only its daemon may open it, so requests go through the
// daemon's control socket (control/protocol.h), after a syncfs of the mount that
// pushes the kernel's dirty pages to it; otherwise the workspace is opened in
// this process.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "control/protocol.h"
#include "util/progress.h"
#include "workspace/workspace.h"

namespace strata::cli {

struct WorkspaceTarget {
  std::string name;
  std::optional<MountedWorkspace> mounted;  // nullopt: not mounted, open it here
};

// What a command given `arg` for its workspace means, as git finds the
// repository of a directory: no argument is the strata mount the current
// directory lies in (NotFound, saying how to name one, when it lies in none);
// a path (containing a '/', or "." or "..") inside a mount is that mount's
// mountpoint; anything else (a name, a mountpoint) is returned as it is.
Result<std::string> WorkspaceArgument(const std::string& arg);
// The callback of a subcommand whose workspace argument is *target: makes
// *target its WorkspaceArgument, then stores run()'s exit code in *exit_code
// (or the failure's, without running).
std::function<void()> OnWorkspaceArgument(std::string* target, int* exit_code, std::function<int()> run);

// For commands whose argument is always a workspace (commit, reset, rebase):
// a mountpoint or a name. NotFound when it is neither; Unavailable, saying
// so, when it is a strata mount whose daemon has stopped.
Result<WorkspaceTarget> ResolveWorkspace(Store& store, const std::string& mountpoint_or_name);

// For commands that also take revisions (diff): "ws:NAME", or the mountpoint
// of a mounted workspace given as a path (containing a '/', or "."). nullopt
// when spec is neither, i.e. a revision. The "ws:" prefix always means a
// workspace; a branch named "ws" is still reached as "ws~0:PATH".
Result<std::optional<WorkspaceTarget>> FindWorkspaceSide(Store& store, const std::string& spec);

// Whether a workspace of that name exists (mounted or not).
bool WorkspaceExists(Store& store, const std::string& name);

// Workspaces of read-only mounts (cmd_mount.cc) hold no changes of anyone's.
bool IsReadOnlyMount(const std::string& name);

// syncfs on the mount: dirty pages (shared mappings, write-back cache) reach
// the daemon. Unavailable when the mount's daemon has stopped.
Status SyncMount(const std::string& mountpoint);

// The daemon serving a mounted target answers request (after SyncMount when
// sync), with the reply of its type (control::ReplyTo). Unavailable when it
// has stopped: with kDaemonStoppedMessage when it stopped while serving the
// request (which may then have happened or not), with another message when it
// had stopped before (nothing happened).
Result<control::DaemonReply> AskDaemonAny(Store& store, const WorkspaceTarget& target,
                                          const control::DaemonRequest& request, bool sync);
template <typename Request>
Result<control::ReplyTo<Request>> AskDaemon(Store& store, const WorkspaceTarget& target, const Request& request,
                                            bool sync) {
  STRATA_ASSIGN_OR_RETURN(control::DaemonReply reply, AskDaemonAny(store, target, request, sync));
  return std::get<control::ReplyTo<Request>>(std::move(reply));  // the decoder gives no other alternative
}
// Whether status says the daemon stopped while it served the request.
bool DaemonStoppedDuringRequest(const Status& status);

// After the daemon serving target stopped: waits (a bounded time) for its
// process to be gone, then opens the workspace as the next mount would
// (recovery included) and returns what it holds.
Result<WorkspaceInfo> StateAfterDaemonStopped(Store& store, const WorkspaceTarget& target);
// "mount it again: strata mount --workspace NAME MOUNTPOINT".
std::string RemountHint(const WorkspaceTarget& target);

// The path of a mounted workspace's control socket.
std::string ControlSocketPath(Store& store, const WorkspaceTarget& target);
// How far the commit the daemon of a mounted target serves is (or the last
// one), asked beside it: never waits for the commit. nullopt for a target
// that is not mounted or a daemon that does not answer.
std::optional<CommitProgressView> DaemonCommitProgress(Store& store, const WorkspaceTarget& target);
// Whether a commit in that phase is running (not idle, not done).
bool CommitIsRunning(CommitPhase phase);

// Workspace::Snapshot of the target, through its daemon when mounted. The
// trees are reachable from no ref: the caller holds a store write session
// from before this call until it has read them.
Result<WorkspaceSnapshot> SnapshotWorkspace(Store& store, const WorkspaceTarget& target);

// Commits the workspace (through its daemon when mounted). Unavailable,
// saying whether it may have landed, when the daemon stopped. With progress,
// draws how far the commit is on it while it runs (commit_watch.h), and its
// final counts.
Result<control::CommitReply> CommitWorkspace(Store& store, const std::string& mountpoint_or_name,
                                            const CommitRequest& request, Progress* progress = nullptr);

// `strata reset` (cmd_reset.cc); registered with the commit family.
void RegisterResetCommands(CLI::App& app, Globals& g, int* exit_code);
// `strata rebase` (cmd_rebase.cc); registered with the commit family.
void RegisterRebaseCommands(CLI::App& app, Globals& g, int* exit_code);

}  // namespace strata::cli
