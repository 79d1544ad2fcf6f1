#include "cli/workspace_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "cli/commit_watch.h"
#include "control/socket.h"
#include "daemon/mount_record.h"

namespace strata::cli {

bool IsReadOnlyMount(const std::string& name) { return daemon::IsReadOnlyName(name); }

bool WorkspaceExists(Store& store, const std::string& name) {
  return IsValidRefName(name) && ::access((Workspace::StateDir(store, name) + "/workspace.db").c_str(), F_OK) == 0;
}

namespace {

// The errors of a FUSE mount whose daemon is gone: ENOTCONN once the kernel
// has aborted the connection, ECONNABORTED for a request it aborted.
bool DaemonGoneErrno(int err) { return err == ENOTCONN || err == ECONNABORTED; }

}  // namespace

Status SyncMount(const std::string& mountpoint) {
  int fd = ::open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int err = errno;
  if (fd < 0 && DaemonGoneErrno(err))
    return Status::Unavailable("the daemon serving " + mountpoint + " has stopped");
  if (fd < 0) return Status::IOError("opening " + mountpoint, err);
  int rc = ::syncfs(fd);
  err = errno;
  ::close(fd);
  if (rc != 0 && DaemonGoneErrno(err))
    return Status::Unavailable("the daemon serving " + mountpoint + " has stopped");
  if (rc != 0) return Status::IOError("syncfs " + mountpoint, err);
  return Status::Ok();
}

Result<control::DaemonReply> AskDaemonAny(Store& store, const WorkspaceTarget& target,
                                          const control::DaemonRequest& request, bool sync) {
  const Status stopped_before = Status::Unavailable("the daemon serving " + target.mounted->mountpoint +
                                                    " (workspace '" + target.name + "') has stopped");
  if (sync) {
    Status s = SyncMount(target.mounted->mountpoint);
    if (s.code() == Status::Code::kUnavailable) return stopped_before;
    STRATA_RETURN_IF_ERROR(s);
  }
  auto reply = control::ControlRequest(ControlSocketPath(store, target), request);
  if (!reply.ok() && reply.status().code() == Status::Code::kUnavailable && !DaemonStoppedDuringRequest(reply.status()))
    return stopped_before;
  return reply;
}

bool DaemonStoppedDuringRequest(const Status& status) {
  return status.code() == Status::Code::kUnavailable && status.message() == control::kDaemonStoppedMessage;
}

Result<WorkspaceInfo> StateAfterDaemonStopped(Store& store, const WorkspaceTarget& target) {
  // The workspace is locked until the process has closed its files; its pid
  // file descriptor turns readable once it has exited, which is after that.
  if (target.mounted && !WaitForProcessExit(target.mounted->pid, 30'000))
    return Status::IOErrorWithMessage("its process " + std::to_string(target.mounted->pid) + " did not exit within 30 s",
                                      EBUSY);
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  return ws->Info();
}

std::string RemountHint(const WorkspaceTarget& target) {
  return "mount it again: strata mount --workspace " + target.name +
         (target.mounted ? " " + target.mounted->mountpoint : " MOUNTPOINT");
}

Result<std::string> WorkspaceArgument(const std::string& arg) {
  if (arg.empty()) {
    if (auto enclosing = EnclosingStrataMount(".")) return enclosing->mountpoint;
    return Status::NotFound(
        "not inside a strata mount: run this in a mounted workspace, or name one (a mountpoint or a workspace's "
        "name)");
  }
  // A ':' makes it REV:PATH or ws:NAME for the commands that take those.
  const bool is_path = (arg == "." || arg == ".." || arg.find('/') != std::string::npos) &&
                       arg.find(':') == std::string::npos;
  if (!is_path) return arg;
  if (auto enclosing = EnclosingStrataMount(arg)) return enclosing->mountpoint;
  return arg;
}

std::function<void()> OnWorkspaceArgument(std::string* target, int* exit_code, std::function<int()> run) {
  return [target, exit_code, run = std::move(run)] {
    auto resolved = WorkspaceArgument(*target);
    if (!resolved.ok()) {
      *exit_code = Fail(resolved.status());
      return;
    }
    *target = *resolved;
    *exit_code = run();
  };
}

Result<WorkspaceTarget> ResolveWorkspace(Store& store, const std::string& mountpoint_or_name) {
  if (auto mounted = FindMountedWorkspace(store, mountpoint_or_name))
    return WorkspaceTarget{mounted->name, mounted};
  // A strata mount no daemon serves any more: its source still names the
  // workspace, which is as the daemon left it.
  if (auto source = MountSourceOf(mountpoint_or_name)) {
    if (IsReadOnlyMount(source->workspace))
      return Status::Unavailable("the daemon serving the read-only mount " + mountpoint_or_name + " has stopped");
    return Status::Unavailable("the daemon serving " + mountpoint_or_name + " (workspace '" + source->workspace +
                               "') has stopped; nothing was done; the workspace holds what the daemon had "
                               "acknowledged; mount it again: strata mount --workspace " + source->workspace + " " +
                               mountpoint_or_name);
  }
  if (!IsValidRefName(mountpoint_or_name))
    return Status::NotFound("'" + mountpoint_or_name + "' is neither a strata mount nor a workspace name");
  return WorkspaceTarget{mountpoint_or_name, std::nullopt};
}

Result<std::optional<WorkspaceTarget>> FindWorkspaceSide(Store& store, const std::string& spec) {
  if (spec.starts_with("ws:")) {
    const std::string name = spec.substr(3);
    if (!IsValidRefName(name)) return Status::InvalidArgument("invalid workspace name '" + name + "'");
    STRATA_ASSIGN_OR_RETURN(WorkspaceTarget t, ResolveWorkspace(store, name));
    return std::optional<WorkspaceTarget>(std::move(t));
  }
  // Only something written as a path may be a mountpoint: a branch name that
  // happens to be a directory here stays a branch.
  if (spec != "." && spec.find('/') == std::string::npos) return std::optional<WorkspaceTarget>();
  if (spec.find(':') != std::string::npos) return std::optional<WorkspaceTarget>();  // REV:PATH
  std::error_code ec;
  const std::string path = std::filesystem::canonical(spec, ec).string();
  if (ec) return std::optional<WorkspaceTarget>();
  if (auto mounted = FindMountedWorkspace(store, path); mounted && mounted->mountpoint == path)
    return std::optional<WorkspaceTarget>(WorkspaceTarget{mounted->name, mounted});
  return std::optional<WorkspaceTarget>();
}

std::string ControlSocketPath(Store& store, const WorkspaceTarget& target) {
  return Workspace::StateDir(store, target.name) + "/control.sock";
}

std::optional<CommitProgressView> DaemonCommitProgress(Store& store, const WorkspaceTarget& target) {
  if (!target.mounted) return std::nullopt;
  auto view = control::Ask(ControlSocketPath(store, target), control::ProgressRequest{});
  if (!view.ok()) return std::nullopt;
  return *view;
}

bool CommitIsRunning(CommitPhase phase) { return phase != CommitPhase::kIdle && phase != CommitPhase::kDone; }

Result<WorkspaceSnapshot> SnapshotWorkspace(Store& store, const WorkspaceTarget& target) {
  if (target.mounted) {
    return AskDaemon(store, target, control::SnapshotRequest{}, /*sync=*/true);
  }
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  return ws->Snapshot();
}

Result<control::CommitReply> CommitWorkspace(Store& store, const std::string& mountpoint_or_name,
                                             const CommitRequest& request, Progress* progress) {
  STRATA_ASSIGN_OR_RETURN(WorkspaceTarget target, ResolveWorkspace(store, mountpoint_or_name));
  if (target.mounted) {
    if (IsReadOnlyMount(target.name))
      return Status::InvalidArgument(target.mounted->mountpoint + " is a read-only mount: there is nothing to commit");
    std::optional<CommitWatch> watch;
    if (progress != nullptr) {
      // The daemon answers a progress request while it serves the commit.
      // Unanswered, it draws nothing: the commit's own reply says what went wrong.
      watch.emplace(*progress, [&store, &target] { return DaemonCommitProgress(store, target); });
    }
    auto reply = AskDaemon(store, target, request, /*sync=*/true);
    if (watch) watch->Stop();
    if (!reply.ok() && reply.status().code() == Status::Code::kUnavailable) {
      // Killed while it served the commit, the daemon may have published it
      // or not; the store is sound either way (a commit is whole or absent).
      if (DaemonStoppedDuringRequest(reply.status()))
        return Status::Unavailable("the daemon stopped during the commit; it may or may not have landed: see strata log; " +
                                   RemountHint(target));
      return Status::Unavailable(reply.status().message() + "; nothing was committed; " + RemountHint(target));
    }
    return reply;
  }
  if (IsReadOnlyMount(target.name)) return Status::InvalidArgument("'" + mountpoint_or_name + "' serves a read-only mount");
  auto ws = Workspace::Open(store, target.name);
  if (!ws.ok()) return ws.status();
  CommitProgress counted;
  std::optional<CommitWatch> watch;
  if (progress != nullptr) watch.emplace(*progress, [&counted] { return std::optional(counted.Read()); });
  auto outcome = (*ws)->Commit(request, &counted);
  if (watch) watch->Stop();
  return outcome;
}

}  // namespace strata::cli
