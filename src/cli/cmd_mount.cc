// mount, umount, workspace list|end: workspaces and the daemons that serve them.
//
// `strata mount` returns only when the mount is ready: it forks a daemon that
// opens the workspace and mounts it, and waits on a pipe for "ready" or for the
// daemon's error message. The daemon records its pid and mountpoint in
// STORE/workspaces/NAME/mounted so that `umount`, `workspace list` and a second
// `mount` can find it; its log is STORE/workspaces/NAME/daemon.log.
#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/cli.h"
#include "cli/mount_source.h"
#include "fs/control.h"
#include "fs/fuse_server.h"
#include "remote/remote.h"
#include "store/revision.h"
#include "util/progress.h"
#include "util/unique_fd.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

struct MountArgs {
  bool create_new = false, foreground = false, writeback_cache = false;
  bool suid = false, dev = false;  // root only
  std::string atime = "noatime";   // noatime | relatime | strictatime
  std::string branch, workspace, name, mountpoint;
  std::string read_only;  // --read-only REV
  uint64_t chunk_cache_mib = 0;  // 0: the default size
  uint32_t readahead_kib = MountOptions().readahead_kib;
  uint32_t poll_us = MountOptions().poll_us;
};

std::string StateDir(const Store& store, const std::string& name) { return Workspace::StateDir(store, name); }

struct MountRecord {
  int pid = 0;
  std::string mountpoint;
};

// The record a live daemon left; nullopt when there is none or its process is gone.
std::optional<MountRecord> ReadMountRecord(const Store& store, const std::string& name) {
  std::ifstream in(StateDir(store, name) + "/mounted");
  MountRecord r;
  if (!(in >> r.pid) || !std::getline(in >> std::ws, r.mountpoint)) return std::nullopt;
  if (r.pid <= 0 || (::kill(r.pid, 0) != 0 && errno != EPERM)) return std::nullopt;
  // A killed daemon may linger as a zombie until it is reaped: that is gone too.
  std::ifstream stat("/proc/" + std::to_string(r.pid) + "/stat");
  std::string pid_field, comm, state;
  if (stat >> pid_field >> comm >> state && state == "Z") return std::nullopt;
  return r;
}

void DetachMount(const std::string& mountpoint);
Result<nlohmann::ordered_json> DaemonCounters(const Store& store, const std::string& name);

// Whether /proc/mounts shows a strata FUSE mount at path (which may belong to
// a daemon that died: then the path answers ENOTCONN to everything).
bool IsStrataMountpoint(const std::string& path) { return StrataMountSource(path).has_value(); }

// A FUSE mount whose daemon is gone. statfs is never served from a cache,
// unlike stat: it reaches the daemon, or the kernel answers ENOTCONN once
// the daemon's connection is aborted. A daemon that was killed and whose
// process is still exiting answers nothing, so the statfs waits until the
// process has closed its /dev/fuse, and then fails with ECONNABORTED: the
// answer is "dead" or "alive", never "not yet" (a check of ENOTCONN alone
// took a daemon killed an instant before for a live one).
bool IsDeadMount(const std::string& path) {
  struct statfs st;
  int rc;
  while ((rc = ::statfs(path.c_str(), &st)) != 0 && errno == EINTR) {
  }
  return rc != 0 && (errno == ENOTCONN || errno == ECONNABORTED);
}

// Whether a process holds the workspace open (Workspace::Open keeps an
// exclusive flock on its lock file while it is open).
bool WorkspaceLocked(const Store& store, const std::string& name) {
  int fd = ::open((StateDir(store, name) + "/lock").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock at once
  return locked;
}

// Whether the daemon that left `record` for workspace `name` still serves a
// mount. Its process may outlive its mount by a moment (a killed daemon that
// is still exiting, or one unmounted a moment ago): then it is waited for, so
// that its lock on the workspace is free when this returns false.
Result<bool> RecordedDaemonServes(const Store& store, const std::string& name, const MountRecord& record) {
  std::optional<MountSource> source = MountSourceOf(record.mountpoint);
  if (source && source->workspace == name) {
    if (!IsDeadMount(record.mountpoint)) return true;
    std::fprintf(stderr, "strata: %s was left by a daemon that stopped; detaching it\n", record.mountpoint.c_str());
    DetachMount(record.mountpoint);
  }
  if (!WorkspaceLocked(store, name)) return false;  // the pid is another process's now
  if (!WaitForProcessExit(record.pid, 30'000))
    return Status::IOErrorWithMessage("the daemon (pid " + std::to_string(record.pid) + ") of workspace '" + name +
                                          "' no longer serves " + record.mountpoint + " but has not exited",
                                      EBUSY);
  return false;
}

// Runs in the daemon: opens, mounts, reports readiness on ready_fd, serves.
// *ready tells whether the mount came up (a failure before it changed nothing).
int Serve(const Globals& g, const MountArgs& a, const std::string& name, const std::string& mountpoint, int ready_fd,
          bool* ready) {
  // Best effort: if the parent is gone, nobody is waiting for the answer.
  auto report = [ready_fd](const std::string& msg) {
    if (ready_fd >= 0) (void)!::write(ready_fd, msg.data(), msg.size());
  };
  auto fail = [&](const Status& s) {
    report("error: " + s.message());
    return Fail(s);
  };
  // The read path allocates and frees buffers of a chunk's size (up to 2 MiB)
  // all the time, and a page touched for the first time is expensive (a
  // fault and a zero-fill; about 30 us on a virtual machine). So freed
  // buffers stay in the heap for reuse instead of being unmapped, and the
  // threads share two heaps rather than one each, which keeps the daemon's
  // memory near the chunk cache plus what is in flight. Measured on a cold
  // 512 MiB read: 38 000 page faults without these settings, 26 000 with.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_ARENA_MAX, 2);
  auto store = OpenStore(g);
  if (!store.ok()) return fail(store.status());
  if (a.chunk_cache_mib > 0) SetChunkCacheCapacity(a.chunk_cache_mib << 20);
  auto ws = Workspace::Open(**store, name);
  if (!ws.ok()) return fail(ws.status());
  // The top directory must be readable before the mount is offered: one whose
  // tree is missing or damaged (a remote that lost it) would mount and then
  // answer EIO to everything. Listing its first entry loads it from the store:
  // one tree, whatever the size of the commit.
  if (auto top = (*ws)->ReadDirectory(kRootInode, 0, 1); !top.ok())
    return fail(top.status().WithContext("the top directory of workspace '" + name + "' cannot be read"));
  MountOptions options;
  // The source names the store (and the remote), so commands given only the
  // mountpoint find the workspace (OpenStoreFor).
  std::error_code ec;
  std::string store_path = std::filesystem::canonical(StorePath(g), ec).string();
  if (ec) return fail(Status::IOError("cannot resolve the store path " + StorePath(g), ec.value()));
  options.fsname = FormatMountSource(MountSource{g.remote, name, store_path});
  options.allow_other = ::geteuid() == 0;
  options.state_dir = StateDir(**store, name);
  options.writeback_cache = a.writeback_cache;
  options.read_only = !a.read_only.empty();
  options.readahead_kib = a.readahead_kib;
  options.poll_us = a.poll_us;
  options.suid = a.suid;
  options.dev = a.dev;
  options.atime = a.atime == "strictatime" ? AtimeMode::kStrictatime
                  : a.atime == "relatime"  ? AtimeMode::kRelatime
                                           : AtimeMode::kNoatime;
  auto server = FuseServer::Mount(ws->get(), mountpoint, options);
  if (!server.ok()) return fail(server.status());
  const std::string record = options.state_dir + "/mounted";
  {
    // O_NOFOLLOW: a link planted as the record must not be written through.
    UniqueFd out(::open(record.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (out.valid()) ::dprintf(out.get(), "%d\n%s\n", static_cast<int>(::getpid()), mountpoint.c_str());
  }
  report("ready");
  *ready = true;
  if (ready_fd >= 0) ::close(ready_fd);
  Status s = (*server)->Run();
  server->reset();
  std::filesystem::remove(record);
  if (options.read_only) {  // its workspace served this mount only
    ws->reset();
    if (Status r = Workspace::Remove(**store, name); !r.ok()) Fail(r.WithContext("removing the read-only workspace"));
  }
  if (!s.ok()) return Fail(s);
  return kExitOk;
}

// A read-only mount serves a workspace of its own on the commit, named
// kReadOnlyPrefix + the pid of the command that created it; the kernel mount
// is 'ro', and the daemon removes the workspace when the mount ends. Such
// names are reserved, and `workspace list` does not show them.
constexpr std::string_view kReadOnlyPrefix = "read-only/";
bool IsReadOnlyName(const std::string& name) { return name.starts_with(kReadOnlyPrefix); }

// Removes the workspaces of read-only mounts whose daemon was killed: the
// command that created one is gone, no daemon serves it, and nothing holds it
// open (Remove refuses one that is open).
void RemoveStaleReadOnly(Store& store) {
  auto list = Workspace::List(store);
  if (!list.ok()) return;
  for (const WorkspaceInfo& w : *list) {
    if (!IsReadOnlyName(w.name)) continue;
    int creator = std::atoi(w.name.c_str() + kReadOnlyPrefix.size());
    if (creator > 0 && creator != ::getpid() && (::kill(creator, 0) == 0 || errno == EPERM)) continue;
    if (ReadMountRecord(store, w.name)) continue;
    (void)Workspace::Remove(store, w.name);
  }
}

int MountIn(Globals& g, const MountArgs& a) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::absolute(a.mountpoint, ec).lexically_normal().string();
  if (mountpoint.size() > 1 && mountpoint.back() == '/') mountpoint.pop_back();
  // A daemon that was killed leaves its mount behind, answering ENOTCONN:
  // detach it so that the workspace can be mounted again.
  // stat() is no test of that: the kernel may answer it from its attribute
  // cache, and a new mount would then go on top of the dead one (the crash
  // campaign stacked dozens). statfs always asks the daemon. Detach until
  // no dead mount is left.
  for (int i = 0; i < 1000 && IsStrataMountpoint(mountpoint) && IsDeadMount(mountpoint); i++) {
    if (i == 0) std::fprintf(stderr, "strata: %s was left by a daemon that stopped; detaching it\n", mountpoint.c_str());
    DetachMount(mountpoint);
  }
  if (!std::filesystem::is_directory(mountpoint, ec))
    return Fail(Status::InvalidArgument("mountpoint " + a.mountpoint + " is not a directory"));
  mountpoint = std::filesystem::canonical(mountpoint, ec).string();
  // A second mount would hide the first, whose daemon would then serve a
  // workspace nobody can reach or unmount by name.
  if (auto top = StrataMountSource(mountpoint)) {
    auto source = ParseMountSource(*top);
    std::string what = !source                            ? *top
                       : IsReadOnlyName(source->workspace) ? "a commit mounted read-only"
                                                           : "workspace '" + source->workspace + "'";
    return Fail(Status::AlreadyExists(mountpoint + " is already a strata mount (" + what + "); unmount it first"));
  }
  // Setuid programs and device nodes in a workspace are as strong as root's
  // own: only root may let the kernel honour them.
  if ((a.suid || a.dev) && ::geteuid() != 0)
    return Fail(Status::InvalidArgument(std::string(a.suid ? "--suid" : "--dev") + " needs root"));
  int modes = a.create_new + !a.branch.empty() + !a.workspace.empty() + !a.read_only.empty();
  if (modes != 1)
    return Fail(Status::InvalidArgument("give exactly one of --new, --branch B, --workspace NAME, --read-only REV"));
  if (!a.read_only.empty() && !a.name.empty())
    return Fail(Status::InvalidArgument("--name does not apply to --read-only (its workspace is hidden)"));
  if (IsReadOnlyName(a.name) || IsReadOnlyName(a.workspace))
    return Fail(Status::InvalidArgument("workspace names starting with '" + std::string(kReadOnlyPrefix) +
                                        "' are reserved for read-only mounts"));

  std::string name;
  bool created = false;  // by this command: removed again if it cannot be mounted
  {
    auto store = OpenStore(g);
    if (!store.ok()) return Fail(store.status());
    RemoveStaleReadOnly(**store);
    if (!a.workspace.empty()) {
      name = a.workspace;
    } else if (!a.read_only.empty()) {
      auto commit = ResolveRevision(**store, a.read_only);
      if (!commit.ok()) return Fail(commit.status());
      name = std::string(kReadOnlyPrefix) + std::to_string(::getpid());
      if (Status s = Workspace::Create(**store, name, *commit, ""); !s.ok()) return Fail(s);
      created = true;
    } else {
      name = a.name.empty() ? std::filesystem::path(mountpoint).filename().string() : a.name;
      if (!IsValidRefName(name))
        return Fail(Status::InvalidArgument("'" + name + "' is not a valid workspace name; choose one with --name"));
      std::optional<Hash> base;
      if (!a.branch.empty()) {
        auto head = (*store)->GetRef(a.branch);
        if (!head.ok()) return Fail(head.status());
        if (!*head) return Fail(Status::NotFound("no branch '" + a.branch + "'"));
        base = **head;
      }
      Status s = Workspace::Create(**store, name, base, a.branch);
      if (!s.ok()) return Fail(s.WithContext("workspace '" + name + "' (choose another with --name)"));
      created = true;
    }
    if (auto r = ReadMountRecord(**store, name)) {
      auto serves = RecordedDaemonServes(**store, name, *r);
      if (!serves.ok()) return Fail(serves.status());
      if (*serves)
        return Fail(Status::InvalidArgument("workspace '" + name + "' is already mounted at " + r->mountpoint));
    }
  }
  // A workspace this command created and could not mount holds nothing yet:
  // it goes again, so that a failed mount leaves no trace.
  auto forget_created = [&] {
    if (!created) return;
    if (auto store = OpenStore(g); store.ok()) (void)Workspace::Remove(**store, name);
  };
  if (a.foreground) {
    bool ready = false;
    int rc = Serve(g, a, name, mountpoint, -1, &ready);
    if (!ready) forget_created();
    return rc;
  }

  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Fail(Status::IOError("pipe", errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Fail(Status::IOError("fork", errno));
  if (pid == 0) {
    ::close(pipefd[0]);
    ::setsid();
    std::string log = "/dev/null";
    {
      auto store = OpenStore(g);  // closed again: Serve opens the store the daemon keeps
      // Not into a state directory that is a link or someone else's.
      if (store.ok() && Workspace::CheckStateDir(**store, name).ok()) log = StateDir(**store, name) + "/daemon.log";
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    int logfd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (logfd >= 0) {
      ::dup2(logfd, STDOUT_FILENO);
      ::dup2(logfd, STDERR_FILENO);
    }
    bool ready = false;
    ::_exit(Serve(g, a, name, mountpoint, pipefd[1], &ready));
  }
  ::close(pipefd[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0) {
    msg.append(buf, static_cast<size_t>(n));
    if (msg == "ready") break;
  }
  ::close(pipefd[0]);
  if (msg != "ready") {
    int status = 0;
    ::waitpid(pid, &status, 0);  // the daemon is gone, and with it its lock on the workspace
    forget_created();
    if (msg.empty()) return Fail(Status::IOError("the daemon exited before the mount was ready", EIO));
    return Fail(Status::IOErrorWithMessage(msg.substr(7), EIO));
  }
  if (!a.read_only.empty())
    fmt::print("mounted {} read-only at {}\n", a.read_only, mountpoint);
  else
    fmt::print("mounted workspace '{}' at {}\n", name, mountpoint);
  return kExitOk;
}

// Runs fusermount3 -u (with -z: lazily, for a mount whose daemon is gone).
bool RunFusermount(const std::string& mountpoint, bool lazy) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (lazy)
      ::execlp("fusermount3", "fusermount3", "-u", "-z", "-q", mountpoint.c_str(), static_cast<char*>(nullptr));
    else
      ::execlp("fusermount3", "fusermount3", "-u", "-q", mountpoint.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void DetachMount(const std::string& mountpoint) { RunFusermount(mountpoint, /*lazy=*/true); }

// Unmounts and waits for the daemon to exit.
Status Unmount(const std::string& mountpoint, int daemon_pid) {
  if (!RunFusermount(mountpoint, /*lazy=*/false))
    return Status::IOError("cannot unmount " + mountpoint + " (busy? see fusermount3)", EBUSY);
  for (int i = 0; daemon_pid > 0 && i < 200 && ::kill(daemon_pid, 0) == 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return Status::Ok();
}

// The workspace mounted at mountpoint, if any.
std::optional<std::pair<std::string, MountRecord>> FindMounted(Store& store, const std::string& mountpoint) {
  auto list = Workspace::List(store);
  if (!list.ok()) return std::nullopt;
  for (const WorkspaceInfo& w : *list)
    if (auto r = ReadMountRecord(store, w.name); r && r->mountpoint == mountpoint) return std::make_pair(w.name, *r);
  return std::nullopt;
}

int RunUmount(Globals& g, const std::string& mp_arg) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::absolute(mp_arg, ec).lexically_normal().string();
  if (mountpoint.size() > 1 && mountpoint.back() == '/') mountpoint.pop_back();
  // A remote's workspace is found in the remote's local side: unmounting
  // needs neither credentials nor the network.
  std::optional<MountSource> source = MountSourceOf(mountpoint);
  auto store = source && !source->remote.empty()
                   ? OpenRemoteStoreOffline(source->store.empty() ? StorePath(g) : source->store, source->remote)
                   : OpenStoreFor(g, mountpoint);
  if (!store.ok()) return Fail(store.status());
  auto found = FindMounted(**store, mountpoint);
  if (!found) {
    if (IsStrataMountpoint(mountpoint)) {  // its daemon died: detach what it left
      DetachMount(mountpoint);
      fmt::print("detached {} (its daemon had stopped)\n", mountpoint);
      return kExitOk;
    }
    return Fail(Status::NotFound("no strata workspace is mounted at " + mountpoint));
  }
  if (Status s = Unmount(mountpoint, found->second.pid); !s.ok()) return Fail(s);
  fmt::print("unmounted workspace '{}' from {}\n", found->first, mountpoint);
  return kExitOk;
}

int RunWorkspaceList(Globals& g) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto list = Workspace::List(**store);
  if (!list.ok()) return Fail(list.status());
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const WorkspaceInfo& w : *list) {
    if (IsReadOnlyName(w.name)) continue;  // a read-only mount's own
    auto r = ReadMountRecord(**store, w.name);
    j.push_back({{"name", w.name},
                 {"base", w.base ? w.base->ToHex() : ""},
                 {"branch", w.branch},
                 {"mounted_at", r ? r->mountpoint : ""},
                 {"changed_paths", w.changed_inodes}});
  }
  if (g.json) {
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("{:<20} {:<12} {:<16} {:>8}  {}\n", "NAME", "BASE", "BRANCH", "CHANGED", "MOUNTED AT");
  for (const auto& w : j)
    fmt::print("{:<20} {:<12} {:<16} {:>8}  {}\n", w["name"].get<std::string>(),
               w["base"].get<std::string>().substr(0, 12), w["branch"].get<std::string>(),
               w["changed_paths"].get<uint64_t>(), w["mounted_at"].get<std::string>());
  return kExitOk;
}

int RunWorkspaceEnd(Globals& g, const std::string& target, bool discard) {
  auto store = OpenStoreFor(g, target);
  if (!store.ok()) return Fail(store.status());
  std::string name = target;
  std::error_code ec;
  std::string as_path = std::filesystem::canonical(target, ec).string();
  if (!ec) {
    if (auto found = FindMounted(**store, as_path)) name = found->first;
  }
  auto list = Workspace::List(**store);
  if (!list.ok()) return Fail(list.status());
  auto it = std::find_if(list->begin(), list->end(), [&](const WorkspaceInfo& w) { return w.name == name; });
  if (it == list->end()) return Fail(Status::NotFound("no workspace '" + target + "'"));
  // A daemon may hold operations it has not committed to the database yet:
  // its own count is the one that is up to date.
  uint64_t changed = it->changed_inodes;
  auto mounted = ReadMountRecord(**store, name);
  if (mounted) {
    auto counters = DaemonCounters(**store, name);
    if (!counters.ok()) return Fail(counters.status().WithContext("cannot tell what workspace '" + name + "' holds"));
    changed = (*counters)["workspace"]["changed_paths"].get<uint64_t>();
  }
  if (changed > 0 && !discard)
    return Fail(Status::InvalidArgument("workspace '" + name + "' has uncommitted changes (" +
                                        std::to_string(changed) +
                                        " changed paths); use --discard to drop them"));
  if (mounted) {
    if (Status s = Unmount(mounted->mountpoint, mounted->pid); !s.ok()) return Fail(s);
  }
  if (Status s = Workspace::Remove(**store, name); !s.ok()) return Fail(s);
  fmt::print("ended workspace '{}'\n", name);
  return kExitOk;
}

// The counters of the daemon serving workspace `name`, from its control socket.
Result<nlohmann::ordered_json> DaemonCounters(const Store& store, const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(auto j, fs::ControlRequest(StateDir(store, name) + "/control.sock", fs::DaemonRequest{}));
  if (!j.contains("operations") || !j.contains("workspace"))
    return Status::Corruption("the daemon's counters are not what this strata reads");
  return j;
}

// The bucket holding the median of a latency histogram {"<N": count, ...}.
std::string MedianBucket(const nlohmann::ordered_json& op) {
  uint64_t count = op["count"].get<uint64_t>(), seen = 0;
  for (auto& [bucket, n] : op["latency_us"].items()) {
    seen += n.get<uint64_t>();
    if (seen * 2 >= count) return bucket + " us";
  }
  return "?";
}

// The read path of base data: chunk demands and loads, read-ahead, the store's reads.
void PrintReadPath(const nlohmann::ordered_json& r) {
  auto n = [&](const char* key) { return r[key].get<uint64_t>(); };
  const auto& s = r["store"];
  auto ms = [&](const char* key) { return s[key].get<double>() / 1000; };
  fmt::print("read path   {} chunk demands, {} fetches ({} errors, at most {} at once); cache {} of {}\n",
             n("demands"), n("fetches"), n("fetch_errors"), n("fetches_in_flight_max"), HumanBytes(n("cache_bytes")),
             HumanBytes(n("cache_capacity")));
  fmt::print("read-ahead  {} issued, {} used, {} wasted, {} skipped at a bound\n", n("readahead_issued"),
             n("readahead_used"), n("readahead_wasted"), n("readahead_skipped"));
  fmt::print("store reads {} objects, {} read, {} verified; {:.1f} ms index, {:.1f} ms pread, {:.1f} ms decode; "
             "at most {} at once\n",
             s["objects"].get<uint64_t>(), HumanBytes(s["bytes_stored"].get<uint64_t>()),
             HumanBytes(s["bytes_verified"].get<uint64_t>()), ms("lookup_us"), ms("pread_us"), ms("decode_us"),
             s["max_in_flight"].get<uint64_t>());
  if (s.contains("backend") && s["backend"].contains("cache_misses")) {
    const auto& b = s["backend"];
    auto v = [&](const char* key) { return b[key].get<uint64_t>(); };
    fmt::print("remote      {} blocks fetched ({}), {} from the cache, {} waits on a fetch; cache {} ({} evicted)\n",
               v("cache_misses"), HumanBytes(v("fetched_bytes")), v("cache_hits"), v("cache_waits"),
               HumanBytes(v("cached_bytes")), v("cache_evictions"));
  }
}

}  // namespace

int RunMountStats(Globals& g, const std::string& mp_arg) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::canonical(mp_arg, ec).string();
  if (ec) return Fail(Status::NotFound(mp_arg + " does not exist"));
  auto store = OpenStoreFor(g, mountpoint);
  if (!store.ok()) return Fail(store.status());
  auto found = FindMounted(**store, mountpoint);
  if (!found) return Fail(Status::NotFound("no strata workspace is mounted at " + mountpoint));
  auto counters = DaemonCounters(**store, found->first);
  if (!counters.ok()) return Fail(counters.status());
  const auto& ops = (*counters)["operations"];
  const auto& ws = (*counters)["workspace"];
  const uint64_t changed = ws["changed_paths"].get<uint64_t>();
  if (g.json) {
    nlohmann::ordered_json j{{"workspace", found->first}, {"mountpoint", mountpoint}, {"daemon_pid", found->second.pid},
                             {"changed_paths", changed}, {"operations", ops}, {"workspace_counters", ws}};
    if (counters->contains("request_loop")) j["request_loop"] = (*counters)["request_loop"];  // absent from older daemons
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("workspace {} at {} (daemon {}), {} changed paths\n", found->first, mountpoint, found->second.pid,
             changed);
  fmt::print("{:<12} {:>10} {:>8}  {}\n", "OPERATION", "COUNT", "ERRORS", "MEDIAN LATENCY");
  for (auto& [op, v] : ops.items())
    fmt::print("{:<12} {:>10} {:>8}  {}\n", op, v["count"].get<uint64_t>(), v["errors"].get<uint64_t>(), MedianBucket(v));
  const uint64_t batches = ws["batches_committed"].get<uint64_t>();
  fmt::print("\ncommits     {} batches holding {} operations, {:.1f} ms mean, {:.1f} ms max; {} syncs\n", batches,
             ws["operations_committed"].get<uint64_t>(),
             batches ? ws["commit_us_total"].get<double>() / batches / 1000 : 0.0,
             ws["commit_us_max"].get<double>() / 1000, ws["syncs"].get<uint64_t>());
  fmt::print("data        {} written, {} read", HumanBytes(ws["bytes_written"].get<uint64_t>()),
             HumanBytes(ws["bytes_read"].get<uint64_t>()));
  // Absent from a daemon older than this command.
  if (ws.contains("data_files_to_delete") && ws["data_files_to_delete"].is_number_unsigned())
    fmt::print("; {} removed files still being deleted", ws["data_files_to_delete"].get<uint64_t>());
  fmt::print("\n");
  const auto& cache = ws["chunk_cache"];
  fmt::print("base        {} directories loaded; chunk cache {} hits, {} misses, {} waits\n",
             ws["directories_loaded"].get<uint64_t>(), cache["hits"].get<uint64_t>(),
             cache["misses"].get<uint64_t>(), cache["waits"].get<uint64_t>());
  if (ws.contains("read_path")) PrintReadPath(ws["read_path"]);
  if (counters->contains("request_loop")) {
    const auto& loop = (*counters)["request_loop"];
    fmt::print("requests    {} answered by the dispatcher, {} by workers; {} caught while polling, {} sleeps\n",
               loop["inline_requests"].get<uint64_t>(), loop["worker_requests"].get<uint64_t>(),
               loop["caught_polling"].get<uint64_t>(), loop["sleeps"].get<uint64_t>());
  }
  return kExitOk;
}

// --read-only and --branch also take REMOTE/BRANCH: the workspace then lives
// in that remote's store, and the daemon reads it from there lazily.
int RunMount(Globals& g, const MountArgs& args) {
  MountArgs a = args;
  Globals remote_globals = g;
  for (std::string* rev : {&a.read_only, &a.branch}) {
    if (rev->empty() || !g.remote.empty()) continue;
    if (auto split = SplitRemoteBranch(StorePath(g), *rev)) {
      remote_globals.remote = split->remote;
      *rev = split->branch;
    }
  }
  return MountIn(remote_globals, a);
}

void RegisterMountCommands(CLI::App& app, Globals& g, int* exit_code) {
  static MountArgs m;  // option storage must outlive parsing: the app lives for the process
  auto* mount = app.add_subcommand("mount", "mount a workspace (new, on a branch, or an existing one)");
  mount->add_flag("--new", m.create_new, "a new, empty workspace");
  mount->add_option("--branch", m.branch, "a new workspace on the head of this branch");
  mount->add_option("--workspace", m.workspace, "mount an existing workspace again");
  mount->add_option("--read-only", m.read_only, "mount this commit (REV) read-only: every write fails with EROFS");
  mount->add_option("--name", m.name, "name of the new workspace (default: the mountpoint's name)");
  mount->add_flag("--foreground", m.foreground, "serve in this process instead of a background daemon");
  mount->add_flag("--writeback-cache", m.writeback_cache,
                  "let the kernel buffer writes (faster small writes; a daemon crash loses what was not fsynced)");
  mount->add_option("--chunk-cache-mib", m.chunk_cache_mib,
                    "memory for decoded file data read from the store (default 32; read-ahead uses at most half)")
      ->check(CLI::Range(uint64_t{4}, uint64_t{1} << 20));
  mount->add_option("--readahead-kib", m.readahead_kib, "how far ahead of a sequential reader the kernel reads")
      ->check(CLI::Range(uint32_t{128}, uint32_t{1} << 20));
  mount->add_option("--poll-us", m.poll_us,
                    "how long the daemon keeps watching for the next request after an answer before it sleeps "
                    "(default 50; 0: never, which saves CPU and costs latency)")
      ->check(CLI::Range(uint32_t{0}, uint32_t{1000}));
  mount->add_option("--atime", m.atime,
                    "what reads do to atime: noatime (default: nothing), relatime (moved when older than "
                    "mtime/ctime or a day), strictatime (every read that reaches the daemon)")
      ->check(CLI::IsMember({"noatime", "relatime", "strictatime"}));
  mount->add_flag("--suid", m.suid, "honour setuid and setgid bits of the workspace's programs (root only)");
  mount->add_flag("--dev", m.dev, "let device nodes in the workspace be opened (root only)");
  mount->add_option("MOUNTPOINT", m.mountpoint, "an existing directory")->required();
  mount->callback([&g, exit_code] { *exit_code = RunMount(g, m); });

  static std::string umount_path;
  auto* umount = app.add_subcommand("umount", "unmount a workspace (it stays in the store)");
  umount->add_option("MOUNTPOINT", umount_path)->required();
  umount->callback([&g, exit_code] { *exit_code = RunUmount(g, umount_path); });

  auto* ws = app.add_subcommand("workspace", "list or end workspaces");
  ws->require_subcommand(1);
  auto* list = ws->add_subcommand("list", "name, base, branch, where mounted, changed paths");
  list->add_flag("--json", g.json, "machine-readable output");
  list->callback([&g, exit_code] { *exit_code = RunWorkspaceList(g); });
  static std::string end_target;
  static bool end_discard = false;
  auto* end = ws->add_subcommand("end", "unmount if mounted and delete a workspace");
  end->add_option("NAME|MOUNTPOINT", end_target)->required();
  end->add_flag("--discard", end_discard, "drop uncommitted changes");
  end->callback([&g, exit_code] { *exit_code = RunWorkspaceEnd(g, end_target, end_discard); });
}

std::optional<std::string> StrataMountSource(const std::string& path) {
  std::ifstream in("/proc/mounts");
  std::string fsname, dir, type, rest;
  std::optional<std::string> found;
  // The last mount listed at path is the one on top, the one path reaches.
  while (in >> fsname >> dir >> type && std::getline(in, rest)) {
    if (type == "fuse.strata" && UnescapeMountField(dir) == path) found = UnescapeMountField(fsname);
  }
  return found;
}

std::optional<MountedWorkspace> FindMountedWorkspace(Store& store, const std::string& mountpoint_or_name) {
  std::error_code ec;
  std::string as_path = std::filesystem::canonical(mountpoint_or_name, ec).string();
  if (!ec) {
    if (auto found = FindMounted(store, as_path)) return MountedWorkspace{found->first, found->second.pid, as_path};
  }
  if (!IsValidRefName(mountpoint_or_name)) return std::nullopt;
  if (auto r = ReadMountRecord(store, mountpoint_or_name)) return MountedWorkspace{mountpoint_or_name, r->pid, r->mountpoint};
  return std::nullopt;
}

}  // namespace strata::cli
