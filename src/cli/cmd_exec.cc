// strata exec: run a program in a sandbox whose working tree is a workspace.
//
// The workspace is mounted if it is not (as `strata mount --workspace` would,
// under its state directory, owned by this process: its daemon unmounts it
// as soon as this process is gone, however it ended), the program runs under
// bubblewrap (sandbox/), and what it leaves is committed or thrown away as
// asked. The mount ends with the command unless --keep-mounted, or unless it
// was there before. The program's exit status is the command's; strata's own
// failures are 125 (kExecFailed), as with env(1) and docker run.
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/author.h"
#include "cli/cli.h"
#include "cli/exec_runs.h"
#include "cli/workspace_target.h"
#include "daemon/mount_record.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/command_lookup.h"
#include "sandbox/cgroup.h"
#include "sandbox/run.h"
#include "store/revision.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

using sandbox::RunOutcome;

struct ExecArgs {
  std::string workspace, branch, from, name, at;
  bool root = false, net = false, keep_mounted = false, commit = false, discard = false, json = false, detach = false;
  std::string message;
  int64_t uid = -1;
  std::string memory, timeout;
  double cpus = 0;
  uint64_t pids = 0;
  std::vector<std::string> command;
};

int ExecFail(const Status& s) {
  (void)Fail(s);
  return kExecFailed;
}

// One line of JSON per event on stdout, flushed at once: a driver reads
// them while the program runs.
void Event(const ExecArgs& a, nlohmann::ordered_json j) {
  if (!a.json) return;
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

Result<sandbox::Limits> ParseLimits(const ExecArgs& a) {
  sandbox::Limits l;
  if (!a.memory.empty()) {
    STRATA_ASSIGN_OR_RETURN(l.memory_bytes, sandbox::ParseSize(a.memory));
  }
  if (!a.timeout.empty()) {
    STRATA_ASSIGN_OR_RETURN(l.timeout_ms, sandbox::ParseDurationMs(a.timeout));
  }
  l.cpus = a.cpus;
  l.pids = a.pids;
  return l;
}

Status CheckArgs(const ExecArgs& a) {
  if (a.workspace.empty() == a.branch.empty())
    return Status::InvalidArgument("give exactly one of --workspace NAME, --branch B");
  if (!a.name.empty() && a.branch.empty()) return Status::InvalidArgument("--name applies to --branch only");
  if (!a.from.empty() && a.branch.empty()) return Status::InvalidArgument("--from applies to --branch only");
  if (a.at.empty() == !a.root) return Status::InvalidArgument("give exactly one of --at DIR, --root");
  if (a.commit && a.message.empty()) return Status::InvalidArgument("--commit needs a message (-m MESSAGE)");
  if (!a.commit && !a.message.empty()) return Status::InvalidArgument("-m applies to --commit only");
  if (a.command.empty()) return Status::InvalidArgument("no command: strata exec [OPTIONS] -- CMD [ARGS...]");
  if (daemon::IsReadOnlyName(a.workspace) || daemon::IsReadOnlyName(a.name))
    return Status::InvalidArgument("workspaces of read-only mounts cannot run programs");
  if (!a.at.empty()) {
    std::error_code ec;
    if (a.at.front() != '/' || !std::filesystem::is_directory(a.at, ec))
      return Status::InvalidArgument("--at " + a.at + ": not an absolute path of an existing directory");
  }
  return Status::Ok();
}

// What this command made before the program ran, so that a failure before
// it ran takes them away again.
struct Made {
  bool workspace = false;
  std::optional<Hash> branch_at;  // --from: the new branch, at this commit
};

// --branch B --from REV: creates branch B at REV, as `strata fork B --from
// REV` would, in this command (one store open, one process fewer per fork).
Result<Hash> ForkBranch(Store& store, const std::string& branch, const std::string& rev) {
  if (!IsValidRefName(branch)) return Status::InvalidArgument("'" + branch + "' is not a valid branch name");
  STRATA_ASSIGN_OR_RETURN(auto current, store.GetRef(branch));
  if (current) return Status::AlreadyExists("branch '" + branch + "' exists (--from creates it)");
  STRATA_ASSIGN_OR_RETURN(Hash id, ResolveContentRevision(store, rev));
  Status s = store.CompareAndSwapRef(branch, std::nullopt, id);
  if (s.IsConflict()) return Status::Conflict("branch '" + branch + "' exists (created meanwhile)");
  STRATA_RETURN_IF_ERROR(s);
  return id;
}

// The workspace the sandbox runs on: named, or new on the head of a branch
// (new itself with --from). *made says what this command created.
Result<std::string> ChooseWorkspace(Store& store, const ExecArgs& a, Made* made) {
  if (!a.workspace.empty()) {
    if (!WorkspaceExists(store, a.workspace)) return Status::NotFound("no workspace '" + a.workspace + "'");
    return a.workspace;
  }
  std::string name = a.name.empty() ? "exec/" + std::to_string(::getpid()) : a.name;
  if (!IsValidRefName(name)) return Status::InvalidArgument("'" + name + "' is not a valid workspace name");
  std::optional<Hash> head;
  if (!a.from.empty()) {
    STRATA_ASSIGN_OR_RETURN(head, ForkBranch(store, a.branch, a.from));
    made->branch_at = head;
  } else {
    STRATA_ASSIGN_OR_RETURN(head, store.GetRef(a.branch));
    if (!head) return Status::NotFound("no branch '" + a.branch + "' (--from REV creates it)");
  }
  Status s = Workspace::Create(store, name, *head, a.branch);
  if (!s.ok()) return s.WithContext("workspace '" + name + "' (choose another with --name)");
  made->workspace = true;
  return name;
}

// Takes away what `made` says this command created (best effort: a failure
// is reported already, this only leaves less behind).
void ForgetMade(Store& store, const ExecArgs& a, const std::string& name, const Made& made) {
  if (made.workspace) (void)Workspace::Remove(store, name);
  if (made.branch_at) (void)store.DeleteRef(a.branch, *made.branch_at);
}

// Unmounts what this command mounted and removes its mountpoint.
Status EndOwnMount(const MountedWorkspace& m) {
  STRATA_RETURN_IF_ERROR(Unmount(m.mountpoint, m.pid));
  ::waitpid(m.pid, nullptr, WNOHANG);  // the daemon was forked by this process
  ::rmdir(m.mountpoint.c_str());
  return Status::Ok();
}

// The sandbox's cgroup, or none (rlimits then) when cgroups cannot be used
// here: --cpus alone has no rlimit to fall back on.
Result<std::unique_ptr<sandbox::Cgroup>> MakeCgroup(const sandbox::Limits& limits) {
  if (!limits.any_cgroup()) return std::unique_ptr<sandbox::Cgroup>();
  sandbox::Cgroup::RemoveStale();
  auto cg = sandbox::Cgroup::Create(limits);
  if (cg.ok()) return cg;
  if (limits.cpus > 0) return cg.status().WithContext("--cpus needs a cgroup");
  std::fprintf(stderr, "strata: no cgroup for the sandbox (%s); --memory and --pids become RLIMIT_AS and RLIMIT_NPROC\n",
               cg.status().message().c_str());
  return std::unique_ptr<sandbox::Cgroup>();
}

int RunExec(Globals& g, const ExecArgs& a) {
  if (Status s = CheckArgs(a); !s.ok()) return ExecFail(s);
  auto limits = ParseLimits(a);
  if (!limits.ok()) return ExecFail(limits.status());
  // Known before the program runs: a bad config file must not cost its work.
  std::string author;
  if (a.commit) {
    auto found = CommitAuthor();
    if (!found.ok()) return ExecFail(found.status());
    author = std::move(found).value();
  }
  std::string name, store_path, state_dir;
  Made made;
  std::optional<MountedWorkspace> mounted;
  // The store the run ends with (its commit, the workspace's removal): kept
  // from the start when no daemon is forked, else opened while the program
  // runs (open_store_for_end), so that nothing stands between the mount and the
  // program's start.
  std::unique_ptr<Store> store;
  {
    auto opened = OpenStore(g);
    if (!opened.ok()) return ExecFail(opened.status());
    auto chosen = ChooseWorkspace(**opened, a, &made);
    if (!chosen.ok()) {
      ForgetMade(**opened, a, "", made);  // a branch made before the workspace failed
      return ExecFail(chosen.status());
    }
    name = *chosen;
    mounted = FindMountedWorkspace(**opened, name);
    state_dir = Workspace::StateDir(**opened, name);
    std::error_code ec;
    store_path = std::filesystem::canonical(StorePath(g), ec).string();
    // Closed before a daemon is forked (no SQLite connection may cross a
    // fork); kept when there is none to start.
    if (mounted) store = std::move(opened).value();
  }
  const bool own_mount = !mounted;
  // A workspace made for this run, which failed before its program ran,
  // holds nothing: it goes again, so that a failed exec leaves no trace.
  const bool created = made.workspace;
  auto forget_created = [&] {
    if (!made.workspace && !made.branch_at) return;
    if (auto opened = OpenStore(g); opened.ok()) ForgetMade(**opened, a, name, made);
  };
  if (own_mount) {
    const std::string mp = state_dir + "/sandbox.mnt";
    if (::mkdir(mp.c_str(), 0700) != 0 && errno != EEXIST)
      return ExecFail(Status::IOError("cannot create the mountpoint " + mp, errno));
    // The mount goes where the path leads: never through a planted link.
    struct stat st;
    if (::lstat(mp.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      forget_created();
      return ExecFail(Status::InvalidArgument(mp + " is not a directory (a link?): refusing to mount there"));
    }
    // No store may be open here: the daemon is forked from this process, and
    // an SQLite connection must not cross a fork.
    int daemon_pid = 0;
    if (int rc = MountWorkspaceQuietly(g, name, mp, a.keep_mounted ? 0 : ::getpid(), &daemon_pid); rc != kExitOk) {
      forget_created();
      return kExecFailed;
    }
    // What the mount record says, known without reading it: the daemon is
    // this process's child, and the mount is where MountIn put it.
    std::error_code ec;
    const std::string canonical = std::filesystem::canonical(mp, ec).string();
    mounted = MountedWorkspace{name, daemon_pid, ec ? mp : canonical};
  }
  Result<std::unique_ptr<Store>> store_for_end = Status::Internal("the store was not opened");
  auto open_store_for_end = [&] {
    if (!store) store_for_end = OpenStore(g);
  };

  sandbox::SandboxSpec spec;
  spec.layout = a.root ? sandbox::SandboxSpec::Layout::kRoot : sandbox::SandboxSpec::Layout::kAt;
  spec.tree = mounted->mountpoint;
  spec.at = a.at;
  if (!store_path.empty()) spec.hide.push_back(store_path);
  spec.net = a.net;
  if (a.uid >= 0) spec.uid = static_cast<uid_t>(a.uid);
  spec.command = a.command;
  auto finish_mount = [&]() -> int {
    if (!own_mount || a.keep_mounted) return kExitOk;
    if (Status s = EndOwnMount(*mounted); !s.ok()) return ExecFail(s);
    return kExitOk;
  };
  // Before the program ran: unmounted, and a workspace made for it removed.
  auto undo_before_run = [&] {
    if (own_mount && EndOwnMount(*mounted).ok()) forget_created();
  };
  auto fail_before_run = [&](const Status& s) {
    undo_before_run();
    return ExecFail(s);
  };
  auto argv = sandbox::BwrapArgs(spec);
  if (!argv.ok()) return fail_before_run(argv.status());
  // As a shell says it (bwrap's own report would be exit status 1).
  const char* path_var = std::getenv("PATH");  // unset: execvp's default
  if (auto found = sandbox::LookUpCommand(spec, path_var ? path_var : "/bin:/usr/bin");
      found != sandbox::CommandLookup::kFound) {
    std::fprintf(stderr, "strata exec: %s: %s\n", spec.command.front().c_str(),
                 found == sandbox::CommandLookup::kNotFound ? "not found" : "not executable");
    undo_before_run();
    return sandbox::ExitStatusOf(found);
  }
  auto cgroup = MakeCgroup(*limits);
  if (!cgroup.ok()) return fail_before_run(cgroup.status());
  // strata makes its own files private (main.cc); the program's files get
  // the modes the caller's umask gives them.
  const mode_t own_umask = ::umask(g.caller_umask);
  auto outcome = sandbox::RunToEnd(*argv, *limits, cgroup->get(), [&](pid_t pid) {
    Event(a, {{"event", "started"}, {"workspace", name}, {"tree", mounted->mountpoint}, {"pid", pid}});
    open_store_for_end();  // while the program runs: off the path to its start
  });
  ::umask(own_umask);
  cgroup->reset();  // whatever the program left running goes with its group
  if (!outcome.ok()) {
    finish_mount();
    return ExecFail(outcome.status());
  }
  if (!store) {
    if (!store_for_end.ok()) {
      finish_mount();
      return ExecFail(store_for_end.status().WithContext("the program ran, but the store cannot be opened"));
    }
    store = std::move(store_for_end).value();
  }
  const RunOutcome& o = *outcome;
  static constexpr const char* kEnds[] = {"exited", "signaled", "timeout", "memory_limit"};
  Event(a, {{"event", "exited"},
            {"exit_status", o.exit_status},
            {"end", kEnds[static_cast<int>(o.end)]},
            {"signal", o.signal},
            {"wall_ms", o.wall_ms}});
  if (o.end != RunOutcome::End::kExited)
    std::fprintf(stderr, "strata: %s\n", sandbox::DescribeOutcome(o, *limits).c_str());

  int rc = o.exit_status;
  bool clean = false;  // the workspace holds nothing that is not committed
  if (a.commit && o.exit_status == 0) {
    auto reply = CommitWorkspace(*store, name, CommitRequest{a.message, author, ""});
    if (!reply.ok()) {
      rc = ExecFail(reply.status().WithContext("the program succeeded but its changes were not committed"));
    } else {
      clean = true;
      const auto j = control::ToJson(*reply);
      Event(a, {{"event", "committed"}, {"commit", j["commit"]}, {"branch", j["branch"]}});
      if (!a.json && reply->commit)
        std::fprintf(stderr, "strata: committed %s on branch %s\n", reply->commit->ToHex().c_str(),
                     reply->branch.c_str());
    }
  }
  const bool discard = a.discard && o.exit_status != 0;
  // A workspace made for this run goes once nothing in it is uncommitted.
  const bool end_workspace = discard || (created && clean && !a.keep_mounted);
  if (end_workspace || (own_mount && !a.keep_mounted)) {
    Status s = own_mount ? EndOwnMount(*mounted) : Unmount(mounted->mountpoint, mounted->pid);
    if (!s.ok()) return ExecFail(s);
  }
  if (end_workspace) {
    if (Status s = Workspace::Remove(*store, name); !s.ok()) return ExecFail(s);
    Event(a, {{"event", "ended"}, {"workspace", name}});
  } else if (created) {
    std::fprintf(stderr,
                 "strata: workspace '%s' stays: strata diff ws:%s shows what the program changed, "
                 "strata workspace end --discard %s drops it\n",
                 name.c_str(), name.c_str(), name.c_str());
  }
  return rc;
}

}  // namespace

void RegisterExecCommands(CLI::App& app, Globals& g, int* exit_code) {
  static ExecArgs a;  // option storage must outlive parsing
  auto* exec = app.add_subcommand("exec", "run a program in a sandbox whose working tree is a workspace");
  exec->add_option("--workspace", a.workspace, "run on this existing workspace");
  exec->add_option("--branch", a.branch, "run on a new workspace on the head of this branch");
  exec->add_option("--from", a.from, "with --branch: create that branch at this revision first (as strata fork)");
  exec->add_option("--name", a.name, "name of that new workspace (default: exec/PID)");
  exec->add_option("--at", a.at, "the host read-only, the workspace writable at this existing directory");
  exec->add_flag("--root", a.root, "the workspace is the sandbox's whole file tree (a root file system)");
  exec->add_flag("--net", a.net, "share the host's network (default: none, not even the host's loopback)");
  exec->add_option("--uid", a.uid, "the uid (and gid) the program runs as inside")->check(CLI::Range(0, 65534));
  exec->add_option("--memory", a.memory, "memory limit, e.g. 512M (cgroup; RLIMIT_AS without one)");
  exec->add_option("--cpus", a.cpus, "CPU limit in cores, e.g. 1.5 (cgroup)")->check(FiniteRange(0.01, 1024));
  exec->add_option("--pids", a.pids, "limit of processes and threads (cgroup; RLIMIT_NPROC without one)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 22));
  exec->add_option("--timeout", a.timeout, "wall-time limit, e.g. 60s, 500ms, 2m; then exit status 124");
  exec->add_flag("--commit", a.commit, "commit the workspace when the program exits 0");
  exec->add_option("-m,--message", a.message, "the message of that commit");
  exec->add_flag("--discard", a.discard, "end the workspace, dropping its changes, when the program fails");
  exec->add_flag("--keep-mounted", a.keep_mounted, "leave the workspace mounted afterwards");
  exec->add_flag("--json", a.json, "events as JSON lines on stdout: started, exited, committed, ended");
  exec->add_option("CMD", a.command, "the program and its arguments (after --)")->required();
  exec->add_flag("--detach", a.detach, "run in the background: print a run id at once (see exec-status, output, stop)");
  exec->callback([&g, exit_code] {
    if (!a.detach) {
      *exit_code = RunExec(g, a);
      return;
    }
    // Refused here, not in the background, so that bad input says so at once.
    if (Status s = CheckArgs(a); !s.ok()) {
      *exit_code = ExecFail(s);
      return;
    }
    *exit_code = StartDetachedRun(g, [&g] { return RunExec(g, a); });
  });
  RegisterExecRunCommands(app, g, exit_code);
}

}  // namespace strata::cli
