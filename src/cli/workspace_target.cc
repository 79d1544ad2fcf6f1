#include "cli/workspace_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "fs/control.h"

namespace strata::cli {

bool IsReadOnlyMount(const std::string& name) { return name.starts_with("read-only/"); }

bool WorkspaceExists(Store& store, const std::string& name) {
  return IsValidRefName(name) && ::access((Workspace::StateDir(store, name) + "/workspace.db").c_str(), F_OK) == 0;
}

Status SyncMount(const std::string& mountpoint) {
  int fd = ::open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening " + mountpoint, errno);
  int rc = ::syncfs(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::IOError("syncfs " + mountpoint, err);
  return Status::Ok();
}

Result<WorkspaceTarget> ResolveWorkspace(Store& store, const std::string& mountpoint_or_name) {
  if (auto mounted = FindMountedWorkspace(store, mountpoint_or_name))
    return WorkspaceTarget{mounted->name, mounted};
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

Result<WorkspaceSnapshot> SnapshotWorkspace(Store& store, const WorkspaceTarget& target) {
  if (target.mounted) {
    STRATA_RETURN_IF_ERROR(SyncMount(target.mounted->mountpoint));
    STRATA_ASSIGN_OR_RETURN(auto reply, fs::ControlRequest(ControlSocketPath(store, target),
                                                         fs::DaemonRequest{.op = fs::DaemonRequest::Op::kSnapshot}));
    return fs::SnapshotFromJson(reply);
  }
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  return ws->Snapshot();
}

}  // namespace strata::cli
