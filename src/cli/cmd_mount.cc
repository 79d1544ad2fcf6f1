// mount, umount, workspace list|end: workspaces and the daemons that serve them.
//
// `strata mount` chooses or creates the workspace and starts its daemon
// (daemon/daemon.h), which returns only when the mount is ready. The daemon
// records its pid and mountpoint (daemon/mount_record.h) so that `umount`,
// `workspace list` and a second `mount` can find it; its log is
// STORE/workspaces/NAME/daemon.log.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli/change_rows.h"
#include "cli/cli.h"
#include "daemon/daemon.h"
#include "daemon/mount_record.h"
#include "daemon/mount_source.h"
#include "fs/fuse_server.h"
#include "metrics/listen_address.h"
#include "remote/remote.h"
#include "sandbox/limits.h"
#include "store/revision.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

using daemon::DetachMount;
using daemon::IsDeadMount;
using daemon::IsReadOnlyName;
using daemon::IsStrataMountpoint;
using daemon::kReadOnlyPrefix;
using daemon::MountRecord;
using daemon::ReadMountRecord;

struct MountArgs {
  bool create_new = false, foreground = false, writeback_cache = false;
  bool suid = false, dev = false;  // root only
  bool nonempty = false;           // mount over a directory that holds files
  bool no_past_versions = false;   // no .strata/ directory of past versions
  std::string atime = "noatime";   // noatime | relatime | strictatime
  std::string verify_reads = "fast";  // fast | full
  std::string branch, workspace, name, mountpoint;
  std::string read_only;  // --read-only REV
  bool follow = false;    // --follow: REV is a branch whose new heads the mount moves to
  std::string poll_interval = "5s";
  uint64_t chunk_cache_mib = 0;  // 0: the default size
  uint32_t readahead_kib = MountOptions().readahead_kib;
  uint32_t poll_us = MountOptions().poll_us;
  std::string transport;  // --transport, else $STRATA_FUSE_TRANSPORT, else libfuse
  std::string passthrough;  // --passthrough on|off, else $STRATA_FUSE_PASSTHROUGH, else on (strata transport)
  bool quiet = false;  // no "mounted ..." line (exec: stdout is the program's)
  int owner_pid = 0;   // > 0: unmounted when this process is gone (ServeSpec)
  std::optional<std::string> metrics;  // --metrics HOST:PORT: serve Prometheus metrics there
};

std::string StateDir(const Store& store, const std::string& name) { return Workspace::StateDir(store, name); }

// The transport a mount asks for: --transport, else $STRATA_FUSE_TRANSPORT
// (so that a whole test suite can run on either), else libfuse. Empty when
// the name is none of them.
std::string TransportName(const MountArgs& a) {
  if (!a.transport.empty()) return a.transport;
  const char* env = std::getenv("STRATA_FUSE_TRANSPORT");
  return env != nullptr && *env != '\0' ? env : "libfuse";
}

// Whether passthrough is asked for: --passthrough, else $STRATA_FUSE_PASSTHROUGH
// (for a whole suite or benchmark), else on. Empty when neither on nor off.
std::string PassthroughOf(const MountArgs& a) {
  std::string v = a.passthrough;
  if (v.empty()) {
    const char* env = std::getenv("STRATA_FUSE_PASSTHROUGH");
    v = env != nullptr && *env != '\0' ? env : "on";
  }
  return v == "on" || v == "off" ? v : "";
}

std::optional<FuseTransport> TransportOf(const MountArgs& a) {
  const std::string name = TransportName(a);
  for (FuseTransport t : {FuseTransport::kLibfuse, FuseTransport::kStrata, FuseTransport::kStrataUring})
    if (name == FuseTransportName(t)) return t;
  return std::nullopt;
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
  if (!daemon::WorkspaceLocked(store, name)) return false;  // the pid is another process's now
  if (!WaitForProcessExit(record.pid, 30'000))
    return Status::IOErrorWithMessage("the daemon (pid " + std::to_string(record.pid) + ") of workspace '" + name +
                                          "' no longer serves " + record.mountpoint + " but has not exited",
                                      EBUSY);
  return false;
}

// Runs in the daemon: opens the store and serves the workspace (ServeMount).
int Serve(const Globals& g, const MountArgs& a, const std::string& name, const std::string& mountpoint,
          daemon::ReadyPipe& ready) {
  auto fail = [&](const Status& s) {
    ready.Failed(s);
    return Fail(s);
  };
  daemon::TuneAllocatorForDaemon();
  auto store = OpenStore(g);
  if (!store.ok()) return fail(store.status());
  if (a.verify_reads == "full") (*store)->SetReadCheck(ReadCheck::kFull);
  daemon::ServeSpec spec;
  spec.name = name;
  spec.mountpoint = mountpoint;
  spec.chunk_cache_mib = a.chunk_cache_mib;
  spec.owner_pid = a.owner_pid;
  if (a.metrics) {
    auto address = metrics::ParseListenAddress(*a.metrics);
    if (!address.ok()) return fail(address.status());  // MountIn checked it: not reached
    spec.metrics = *address;
  }
  spec.past_versions = !a.no_past_versions;
  if (a.follow) {
    auto ms = sandbox::ParseDurationMs(a.poll_interval);
    if (!ms.ok()) return fail(ms.status());  // MountIn checked it: not reached
    spec.follow_branch = a.read_only;
    spec.follow_interval = std::chrono::milliseconds(*ms);
  }
  MountOptions& options = spec.options;
  // The source names the store (and the remote), so commands given only the
  // mountpoint find the workspace (OpenStoreFor).
  std::error_code ec;
  std::string store_path = std::filesystem::canonical(StorePath(g), ec).string();
  if (ec) return fail(Status::IOError("cannot resolve the store path " + StorePath(g), ec.value()));
  options.fsname = FormatMountSource(MountSource{g.remote, name, store_path});
  options.allow_other = ::geteuid() == 0;
  options.writeback_cache = a.writeback_cache;
  options.read_only = !a.read_only.empty();
  options.readahead_kib = a.readahead_kib;
  options.poll_us = a.poll_us;
  options.transport = TransportOf(a).value_or(FuseTransport::kLibfuse);  // MountIn checked it
  options.suid = a.suid;
  options.dev = a.dev;
  options.passthrough = PassthroughOf(a) == "on";  // MountIn checked it
  options.atime = a.atime == "strictatime" ? AtimeMode::kStrictatime
                  : a.atime == "relatime"  ? AtimeMode::kRelatime
                                           : AtimeMode::kNoatime;
  Status s = daemon::ServeMount(**store, spec, ready);
  if (!s.ok()) return Fail(s);
  return kExitOk;
}

// *daemon_pid (when given) receives the pid of the daemon started.
int MountIn(Globals& g, const MountArgs& a, int* daemon_pid = nullptr) {
  // Usage first: options that do not go together are wrong wherever one mounts.
  int modes = a.create_new + !a.branch.empty() + !a.workspace.empty() + !a.read_only.empty();
  if (modes != 1)
    return UsageError("give exactly one of --new, --branch B, --workspace NAME, --read-only REV");
  if (!a.read_only.empty() && !a.name.empty())
    return UsageError("--name does not apply to --read-only (its workspace is hidden)");
  if (a.follow && a.read_only.empty()) return UsageError("--follow needs --read-only BRANCH");
  if (a.follow) {
    auto ms = sandbox::ParseDurationMs(a.poll_interval);
    if (!ms.ok()) return UsageError(ms.status().message());
    if (*ms == 0) return UsageError("--poll-interval must be longer than 0");
  }
  if (!TransportOf(a))
    return UsageError("--transport (or $STRATA_FUSE_TRANSPORT) must be libfuse, strata or strata-uring, not '" + TransportName(a) + "'");
  if (PassthroughOf(a).empty()) return UsageError("--passthrough (or $STRATA_FUSE_PASSTHROUGH) must be on or off");
  if (a.metrics) {  // "" too: an address that was given is checked
    if (auto address = metrics::ParseListenAddress(*a.metrics); !address.ok())
      return UsageError(address.status().message());
  }
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
  if (!std::filesystem::exists(std::filesystem::symlink_status(mountpoint, ec)))
    return Fail(Status::NotFound("mountpoint " + a.mountpoint + " does not exist (create the directory first: mkdir -p " +
                                 a.mountpoint + ")"));
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
  // A mount hides what the directory holds until it is unmounted, which
  // looks like lost files: only when asked.
  if (!a.nonempty && !std::filesystem::is_empty(mountpoint, ec))
    return Fail(Status::InvalidArgument("mountpoint " + mountpoint +
                                        " is not empty: a mount would hide its files until unmounted "
                                        "(use --nonempty to mount over them anyway)"));
  // Setuid programs and device nodes in a workspace are as strong as root's
  // own: only root may let the kernel honour them.
  if ((a.suid || a.dev) && ::geteuid() != 0)
    return Fail(Status::InvalidArgument(std::string(a.suid ? "--suid" : "--dev") + " needs root"));
  if (IsReadOnlyName(a.name) || IsReadOnlyName(a.workspace))
    return Fail(Status::InvalidArgument("workspace names starting with '" + std::string(kReadOnlyPrefix) +
                                        "' are reserved for read-only mounts"));

  std::string name, log;
  bool created = false;  // by this command: removed again if it cannot be mounted
  {
    auto store = OpenStore(g);
    if (!store.ok()) return Fail(store.status());
    daemon::RemoveStaleReadOnly(**store);
    if (!a.workspace.empty()) {
      name = a.workspace;
    } else if (!a.read_only.empty()) {
      auto commit = ResolveContentRevision(**store, a.read_only);
      if (!commit.ok()) return Fail(commit.status());
      if (a.follow) {  // a branch, not any revision: only a branch moves
        auto head = (*store)->GetRef(a.read_only);
        if (!head.ok()) return Fail(head.status());
        if (!*head) return Fail(Status::NotFound("--follow needs a branch, and there is no branch '" + a.read_only + "'"));
        commit = **head;
      }
      name = daemon::ReadOnlyWorkspaceName();
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
      if (s.code() == Status::Code::kAlreadyExists)
        return Fail(Status::AlreadyExists("a workspace named '" + name + "' exists already: mount it with --workspace " +
                                          name + ", or give the new one another name with --name"));
      if (!s.ok()) return Fail(s.WithContext("creating workspace '" + name + "'"));
      created = true;
    }
    if (auto r = ReadMountRecord(**store, name)) {
      auto serves = RecordedDaemonServes(**store, name, *r);
      if (!serves.ok()) return Fail(serves.status());
      if (*serves)
        return Fail(Status::InvalidArgument("workspace '" + name + "' is already mounted at " + r->mountpoint));
    }
    // The daemon's log, found with the store open here rather than by opening
    // it once more after the fork; not into a state directory that is a link
    // or someone else's.
    if (Workspace::CheckStateDir(**store, name).ok()) log = StateDir(**store, name) + "/daemon.log";
  }
  // A workspace this command created and could not mount holds nothing yet:
  // it goes again, so that a failed mount leaves no trace.
  auto forget_created = [&] {
    if (!created) return;
    if (auto store = OpenStore(g); store.ok()) (void)Workspace::Remove(**store, name);
  };
  if (a.foreground) {
    daemon::ReadyPipe ready(-1);
    int rc = Serve(g, a, name, mountpoint, ready);
    if (!ready.ready()) forget_created();
    return rc;
  }
  auto log_path = [&log] { return log; };
  auto serve = [&](daemon::ReadyPipe& ready) { return Serve(g, a, name, mountpoint, ready); };
  Result<pid_t> started = daemon::StartDaemon(log_path, serve);
  if (!started.ok()) {
    forget_created();
    return Fail(started.status());
  }
  if (daemon_pid != nullptr) *daemon_pid = *started;
  if (a.quiet) return kExitOk;
  if (a.follow)
    fmt::print("mounted {} read-only at {}, following the branch (polled every {})\n", a.read_only, mountpoint,
               a.poll_interval);
  else if (!a.read_only.empty())
    fmt::print("mounted {} read-only at {}\n", a.read_only, mountpoint);
  else
    fmt::print("mounted workspace '{}' at {}\n", name, mountpoint);
  return kExitOk;
}

}  // namespace

// Unmounts and waits for the daemon to exit.
Status Unmount(const std::string& mountpoint, int daemon_pid) {
  STRATA_RETURN_IF_ERROR(daemon::UnmountFuse(mountpoint, /*lazy=*/false));
  // A pid file descriptor, not kill(pid, 0): the daemon may be the caller's
  // own child (strata exec), which stays a zombie until reaped.
  (void)WaitForProcessExit(daemon_pid, 10'000);
  return Status::Ok();
}

namespace {

int RunUmount(Globals& g, const std::string& mp_arg) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::absolute(mp_arg, ec).lexically_normal().string();
  if (mountpoint.size() > 1 && mountpoint.back() == '/') mountpoint.pop_back();
  // A remote's workspace is found in the remote's local side: unmounting
  // needs neither credentials nor the network.
  std::optional<MountSource> source = MountSourceOf(mountpoint);
  auto open_remote_side = [&]() -> Result<std::unique_ptr<Store>> {
    Globals local = g;
    if (!source->store.empty()) local.store = source->store;
    // A remote of an encrypted store opens with that store's key.
    STRATA_ASSIGN_OR_RETURN(std::optional<crypto::Key256> master, LocalStoreKey(local));
    return OpenRemoteStoreOffline(StorePath(local), source->remote, master ? &*master : nullptr);
  };
  auto store = source && !source->remote.empty() ? open_remote_side() : OpenStoreFor(g, mountpoint);
  if (!store.ok()) return Fail(store.status());
  auto found = daemon::FindMountAt(**store, mountpoint);
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

// The workspace `name`, through its daemon when its mount record says it is mounted.
WorkspaceTarget TargetOf(const std::string& name, const std::optional<daemon::MountRecord>& record) {
  if (!record) return WorkspaceTarget{name, std::nullopt};
  return WorkspaceTarget{name, MountedWorkspace{name, record->pid, record->mountpoint}};
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
    // Counted as status and diff count them (null when it cannot be told).
    const auto changed = WorkspaceChangeCount(**store, TargetOf(w.name, r));
    j.push_back({{"name", w.name},
                 {"base", w.base ? w.base->ToHex() : ""},
                 {"branch", w.branch},
                 {"mounted_at", r ? r->mountpoint : ""},
                 {"changed_paths", CountJson(changed)}});
  }
  if (g.json) {
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("{:<20} {:<12} {:<16} {:>8}  {}\n", "NAME", "BASE", "BRANCH", "CHANGED", "MOUNTED AT");
  for (const auto& w : j)
    fmt::print("{:<20} {:<12} {:<16} {:>8}  {}\n", w["name"].get<std::string>(),
               w["base"].get<std::string>().substr(0, 12), w["branch"].get<std::string>(),
               w["changed_paths"].is_null() ? "?" : w["changed_paths"].dump(), w["mounted_at"].get<std::string>());
  return kExitOk;
}

int RunWorkspaceEnd(Globals& g, const std::string& target, bool discard) {
  auto store = OpenStoreFor(g, target);
  if (!store.ok()) return Fail(store.status());
  std::string name = target;
  std::error_code ec;
  std::string as_path = std::filesystem::canonical(target, ec).string();
  if (!ec) {
    if (auto found = daemon::FindMountAt(**store, as_path)) name = found->first;
  }
  auto list = Workspace::List(**store);
  if (!list.ok()) return Fail(list.status());
  auto it = std::find_if(list->begin(), list->end(), [&](const WorkspaceInfo& w) { return w.name == name; });
  if (it == list->end()) return Fail(Status::NotFound("no workspace '" + target + "'"));
  // The paths status and diff would list; a mounted workspace's snapshot
  // comes from its daemon, which may hold operations its database lacks.
  auto mounted = ReadMountRecord(**store, name);
  const auto changed = discard ? std::optional<uint64_t>(0) : WorkspaceChangeCount(**store, TargetOf(name, mounted));
  if (!changed)
    return Fail(Status::Unavailable("cannot tell whether workspace '" + name +
                                    "' has uncommitted changes (its base cannot be read, or its daemon stopped); "
                                    "use --discard to end it anyway"));
  if (*changed > 0)
    return Fail(Status::InvalidArgument("workspace '" + name + "' has uncommitted changes (" +
                                        std::to_string(*changed) + " changed " + (*changed == 1 ? "path" : "paths") +
                                        "); use --discard to drop them"));
  if (mounted) {
    if (Status s = Unmount(mounted->mountpoint, mounted->pid); !s.ok()) return Fail(s);
  }
  if (Status s = Workspace::Remove(**store, name); !s.ok()) return Fail(s);
  fmt::print("ended workspace '{}'\n", name);
  return kExitOk;
}

}  // namespace

int MountWorkspaceQuietly(Globals& g, const std::string& name, const std::string& mountpoint, int owner_pid,
                          int* daemon_pid) {
  MountArgs a;
  a.workspace = name;
  a.mountpoint = mountpoint;
  a.quiet = true;
  a.owner_pid = owner_pid;
  return MountIn(g, a, daemon_pid);
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
  mount->add_flag("--follow", m.follow,
                  "with --read-only [REMOTE/]BRANCH: move to each new head of the branch as it lands (new opens see "
                  "it; files already open keep reading the version they opened)");
  mount->add_option("--poll-interval", m.poll_interval,
                    "with --follow: how often the branch's head is read, as 5s, 500ms, 2m (default 5s)");
  mount->add_option("--name", m.name, "name of the new workspace (default: the mountpoint's name)");
  mount->add_flag("--foreground", m.foreground, "serve in this process instead of a background daemon");
  mount->add_flag("--nonempty", m.nonempty,
                  "mount over a directory that is not empty (its files are hidden until the unmount)");
  mount->add_flag("--no-past-versions", m.no_past_versions,
                  "no hidden read-only .strata/ directory of past versions (commits/ID/, branches/NAME) at the mount's root");
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
  mount->add_option("--transport", m.transport,
                    "how the kernel's requests reach the daemon: libfuse (default; libfuse 3.14), strata "
                    "(strata's own codec of the FUSE protocol on /dev/fuse) or strata-uring (the same over FUSE over "
                    "io_uring when the kernel offers it, else as strata); default $STRATA_FUSE_TRANSPORT if set")
      ->check(CLI::IsMember({"libfuse", "strata", "strata-uring"}));
  mount->add_option("--passthrough", m.passthrough,
                    "with --transport strata or strata-uring: on (default) lets the kernel read and write files whose bytes are all "
                    "local straight from the workspace's data files (FUSE passthrough; needs root, not with "
                    "--writeback-cache); off sends every read and write to the daemon; default $STRATA_FUSE_PASSTHROUGH if set")
      ->check(CLI::IsMember({"on", "off"}));
  mount->add_option("--atime", m.atime,
                    "what reads do to atime: noatime (default: nothing), relatime (moved when older than "
                    "mtime/ctime or a day), strictatime (every read that reaches the daemon)")
      ->check(CLI::IsMember({"noatime", "relatime", "strictatime"}));
  mount->add_option("--verify-reads", m.verify_reads,
                    "how data read from the store's own packs is checked: fast (default: the XXH3 checksum of each "
                    "stored frame) or full (SHA-256 of each object against its id as well; a remote's objects "
                    "always are)")
      ->check(CLI::IsMember({"fast", "full"}));
  mount->add_option("--metrics", m.metrics,
                    "serve Prometheus metrics over HTTP at HOST:PORT (GET /metrics; loopback addresses only, such "
                    "as 127.0.0.1:9567)");
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
  auto* list = ws->add_subcommand("list",
                                  "name, base, branch, where mounted, and changed paths against the base as status "
                                  "and diff count them (? when the base cannot be read)");
  list->add_flag("--json", g.json, "machine-readable output");
  list->callback([&g, exit_code] { *exit_code = RunWorkspaceList(g); });
  static std::string end_target;
  static bool end_discard = false;
  auto* end = ws->add_subcommand("end", "unmount if mounted and delete a workspace");
  end->add_option("NAME|MOUNTPOINT", end_target)->required();
  end->add_flag("--discard", end_discard, "drop uncommitted changes");
  end->callback([&g, exit_code] { *exit_code = RunWorkspaceEnd(g, end_target, end_discard); });
}

std::optional<MountedWorkspace> FindMountedWorkspace(Store& store, const std::string& mountpoint_or_name) {
  std::error_code ec;
  std::string as_path = std::filesystem::canonical(mountpoint_or_name, ec).string();
  if (!ec) {
    if (auto found = daemon::FindMountAt(store, as_path)) return MountedWorkspace{found->first, found->second.pid, as_path};
  }
  if (!IsValidRefName(mountpoint_or_name)) return std::nullopt;
  if (auto r = ReadMountRecord(store, mountpoint_or_name)) return MountedWorkspace{mountpoint_or_name, r->pid, r->mountpoint};
  return std::nullopt;
}

}  // namespace strata::cli
