#include "daemon/mount_record.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/unique_fd.h"
#include "workspace/workspace.h"

namespace strata::daemon {

namespace {
std::string RecordPath(const std::string& state_dir) { return state_dir + "/mounted"; }

// Whether process pid still runs. A killed daemon may linger as a zombie
// until it is reaped: that is gone too.
bool ProcessRuns(int pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  return !(stat >> pid_field >> comm >> state && state == "Z");
}
}  // namespace

std::optional<MountRecord> ReadMountRecord(const Store& store, const std::string& name) {
  std::ifstream in(RecordPath(Workspace::StateDir(store, name)));
  MountRecord r;
  if (!(in >> r.pid) || !std::getline(in >> std::ws, r.mountpoint)) return std::nullopt;
  if (!ProcessRuns(r.pid)) return std::nullopt;
  return r;
}

std::optional<std::pair<std::string, MountRecord>> FindMountAt(Store& store, const std::string& mountpoint) {
  auto list = Workspace::List(store);
  if (!list.ok()) return std::nullopt;
  for (const WorkspaceInfo& w : *list)
    if (auto r = ReadMountRecord(store, w.name); r && r->mountpoint == mountpoint) return std::make_pair(w.name, *r);
  return std::nullopt;
}

void WriteMountRecord(const std::string& state_dir, const std::string& mountpoint) {
  // O_NOFOLLOW: a link planted as the record must not be written through.
  UniqueFd out(::open(RecordPath(state_dir).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (out.valid()) ::dprintf(out.get(), "%d\n%s\n", static_cast<int>(::getpid()), mountpoint.c_str());
}

void RemoveMountRecord(const std::string& state_dir) { std::filesystem::remove(RecordPath(state_dir)); }

bool WorkspaceLocked(const Store& store, const std::string& name) {
  int fd = ::open((Workspace::StateDir(store, name) + "/lock").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock at once
  return locked;
}

std::string ReadOnlyWorkspaceName() { return std::string(kReadOnlyPrefix) + std::to_string(::getpid()); }

void RemoveStaleReadOnly(Store& store) {
  auto list = Workspace::List(store);
  if (!list.ok()) return;
  for (const WorkspaceInfo& w : *list) {
    if (!IsReadOnlyName(w.name)) continue;
    int creator = std::atoi(w.name.c_str() + kReadOnlyPrefix.size());
    if (creator > 0 && creator != ::getpid() && ProcessRuns(creator)) continue;
    if (ReadMountRecord(store, w.name)) continue;
    (void)Workspace::Remove(store, w.name);
  }
}

}  // namespace strata::daemon
