#include "daemon/daemon.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "control/socket.h"
#include "daemon/branch_follower.h"
#include "daemon/mount_record.h"
#include "daemon/mount_source.h"
#include "metrics/commit_tally.h"
#include "metrics/exposition.h"
#include "metrics/http_endpoint.h"
#include "past/past_versions.h"
#include "util/sqlite_connection.h"
#include "util/unique_fd.h"
#include "workspace/workspace.h"

namespace strata::daemon {

namespace {

// The counters of a mount for the stats reply: the FUSE adapter's and the
// workspace's.
control::StatsReply StatsOf(const FuseServer& server, Workspace& ws) {
  const ServedCounters served = server.Counters();
  control::StatsReply reply;
  for (const ServedCounters::Operation& op : served.operations)
    reply.operations.push_back({op.name, op.count, op.errors, op.latency_us});
  reply.request_loop = {served.inline_requests, served.worker_requests, served.caught_polling, served.sleeps};
  reply.workspace = ws.Counters();
  reply.transport = served.transport;
  reply.passthrough = {served.passthrough.on, served.passthrough.opens, served.passthrough.write_opens,
                       served.passthrough.declined, served.passthrough.held};
  reply.fuse_requests = {served.ring_requests, served.device_requests};
  return reply;
}

// The reply to a control request (control/protocol.h), carried out on the
// workspace with the kernel told what to write back or forget around it.
// From the control socket's threads, while the request loop serves the mount:
// stats and progress beside the others, which come one at a time.
class ControlHandler {
 public:
  // past: the mount's .strata/, or null when it shows none. progress: what
  // the commits count as they run, for the progress request.
  ControlHandler(FuseServer& server, Workspace& ws, metrics::CommitTally& commits, CommitProgress& progress,
                 PastVersions* past)
      : server_(server), ws_(ws), commits_(commits), progress_(progress), past_(past) {}

  Result<control::DaemonReply> operator()(const control::StatsRequest&) { return control::DaemonReply(StatsOf(server_, ws_)); }
  Result<control::DaemonReply> operator()(const control::ProgressRequest&) {
    return control::DaemonReply(progress_.Read());  // atomics only: never waits for the commit
  }
  Result<control::DaemonReply> operator()(const CommitRequest& request) {
    // The kernel's write-back comes before the cut: shown as the cut.
    progress_.Begin();
    server_.FlushKernelPages();
    Result<CommitOutcome> outcome = ws_.Commit(request, &progress_);
    if (!outcome.ok()) {
      commits_.RecordFailure();
      return outcome.status();
    }
    commits_.Record(*outcome);
    // .strata/branches/B shows the new head at once, not after the kernel's entry cache time.
    if (past_ != nullptr && outcome->commit) server_.Invalidate(past_->CachedBranch(outcome->branch));
    return control::DaemonReply(std::move(*outcome));
  }
  Result<control::DaemonReply> operator()(const ResetRequest& request) {
    if (!request.hard) server_.FlushKernelPages();  // a mixed reset keeps the content: all of it
    STRATA_ASSIGN_OR_RETURN(ResetOutcome outcome, ws_.Reset(request));
    server_.InvalidateAfterSwap(outcome.stale);
    return control::DaemonReply(control::ResetReplyOf(request.commit, outcome));
  }
  Result<control::DaemonReply> operator()(const control::RebaseRequest& request) {
    server_.FlushKernelPages();
    STRATA_ASSIGN_OR_RETURN(RebaseOutcome outcome, ws_.RebaseOnto(request.onto, request.choices));
    server_.InvalidateAfterSwap(outcome.stale);  // empty unless the content was replaced
    return control::DaemonReply(control::RebaseReplyOf(request.onto, outcome));
  }
  Result<control::DaemonReply> operator()(const control::SnapshotRequest&) {
    server_.FlushKernelPages();
    STRATA_ASSIGN_OR_RETURN(WorkspaceSnapshot snap, ws_.Snapshot());
    return control::DaemonReply(std::move(snap));
  }

 private:
  FuseServer& server_;
  Workspace& ws_;
  metrics::CommitTally& commits_;
  CommitProgress& progress_;
  PastVersions* past_;
};

// Unmounts the mount when its owner process is gone. The owner's death
// cannot be caught by the owner itself (SIGKILL), so the daemon, which
// outlives it, watches a pid file descriptor of it. The unmount is lazy: the
// owner's sandbox may still be dying with files open, and the kernel ends the
// mount, and with it Run, once they are closed.
class OwnerWatch {
 public:
  OwnerWatch() = default;
  ~OwnerWatch() { Stop(); }
  OwnerWatch(const OwnerWatch&) = delete;
  OwnerWatch& operator=(const OwnerWatch&) = delete;

  Status Start(int owner_pid, const std::string& mountpoint) {
    if (owner_pid <= 0) return Status::Ok();
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, owner_pid, 0)));
    if (!pidfd.valid())
      return Status::IOError("the process " + std::to_string(owner_pid) + " that asked for the mount is gone", errno);
    stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
    if (!stop_.valid()) return Status::IOError("eventfd", errno);
    thread_ = std::thread([this, fd = std::move(pidfd), mountpoint, owner_pid] {
      pollfd fds[2] = {{fd.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      while (::poll(fds, 2, -1) < 0 && errno == EINTR) {
      }
      if (fds[1].revents & POLLIN) return;
      std::fprintf(stderr, "strata: the process %d that owns this mount is gone; unmounting %s\n", owner_pid,
                   mountpoint.c_str());
      // Nothing to report to: the owner is gone, and this daemon ends next.
      UnmountFuse(mountpoint, /*lazy=*/true).IgnoreError();
    });
    return Status::Ok();
  }

  void Stop() {
    if (!thread_.joinable()) return;
    uint64_t one = 1;
    (void)!::write(stop_.get(), &one, sizeof(one));
    thread_.join();
  }

 private:
  UniqueFd stop_;
  std::thread thread_;
};

}  // namespace

void ReadyPipe::Send(const std::string& message) {
  if (fd_ >= 0) (void)!::write(fd_, message.data(), message.size());
}

void ReadyPipe::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ReadyPipe::Ready() {
  Send("ready");
  ready_ = true;
  Close();
}

void ReadyPipe::Failed(const Status& why) { Send("error: " + why.message()); }

void TuneAllocatorForDaemon() {
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
}

Status ServeMount(Store& store, const ServeSpec& spec, ReadyPipe& ready) {
  auto fail = [&ready](const Status& s) {
    ready.Failed(s);
    return s;
  };
  if (spec.chunk_cache_mib > 0) SetChunkCacheCapacity(spec.chunk_cache_mib << 20);
  auto ws = Workspace::Open(store, spec.name);
  if (!ws.ok()) return fail(ws.status());
  // The top directory must be readable before the mount is offered: one whose
  // tree is missing or damaged (a remote that lost it) would mount and then
  // answer EIO to everything. Listing its first entry loads it from the store:
  // one tree, whatever the size of the commit.
  if (auto top = (*ws)->ReadDirectory(kRootInode, 0, 1); !top.ok())
    return fail(top.status().WithContext("the top directory of workspace '" + spec.name + "' cannot be read"));
  // Bound before the mount: an address in use fails the mount with nothing mounted.
  std::unique_ptr<metrics::MetricsEndpoint> endpoint;
  if (spec.metrics) {
    auto bound = metrics::MetricsEndpoint::Bind(*spec.metrics);
    if (!bound.ok()) return fail(bound.status());
    endpoint = std::move(*bound);
  }
  MountOptions options = spec.options;
  options.state_dir = Workspace::StateDir(store, spec.name);
  // The mount serves the workspace with .strata/ beside it; the control
  // socket works on the workspace itself.
  std::unique_ptr<PastVersions> with_past;
  if (spec.past_versions) {
    PastVersionsOptions past;
    past.workspace_name = [](uint64_t n) { return ReadOnlyWorkspaceName() + "-past-" + std::to_string(n); };
    with_past = WithPastVersions(**ws, store, std::move(past));
  }
  auto server = FuseServer::Mount(with_past ? with_past.get() : ws->get(), spec.mountpoint, options);
  if (!server.ok()) return fail(server.status());
  metrics::CommitTally commits;
  CommitProgress progress;
  control::ControlSocket control(options.state_dir + "/control.sock", [&](const control::DaemonRequest& request) {
    return std::visit(ControlHandler(**server, **ws, commits, progress, with_past.get()), request);
  });
  if (endpoint) {
    Status m = endpoint->Serve([&] {
      return metrics::RenderExposition(
          {spec.name, options.read_only, (*server)->Counters(), (*ws)->Counters(), commits.Totals()});
    });
    if (!m.ok()) {
      UnmountFuse(spec.mountpoint, /*lazy=*/true).IgnoreError();  // m is the failure reported
      return fail(m);
    }
  }
  if (Status s = control.Start(); !s.ok())
    std::fprintf(stderr, "strata: no control socket, so stats, commit, reset and rebase of this mount fail: %s\n",
                 s.message().c_str());
  OwnerWatch owner;
  if (Status w = owner.Start(spec.owner_pid, spec.mountpoint); !w.ok()) {
    control.Stop();
    if (endpoint) endpoint->Stop();
    UnmountFuse(spec.mountpoint, /*lazy=*/true).IgnoreError();  // w is the failure reported
    return fail(w);
  }
  WriteMountRecord(options.state_dir, spec.mountpoint);
  std::unique_ptr<BranchFollower> follower;
  if (!spec.follow_branch.empty()) {
    follower = std::make_unique<BranchFollower>(store, **ws, **server, spec.follow_branch, spec.follow_interval);
    follower->Start();
  }
  // Ready once the mount serves: stats asked for right after the mount
  // returns then say what the kernel agreed. The control socket stops before
  // the kernel mount goes: a request it serves may ask the kernel to write
  // back or drop its caches.
  Status s = (*server)->Run([&ready] { ready.Ready(); },
                            [&control, &follower] {
                              control.Stop();
                              if (follower) follower->Stop();
                            });
  if (!s.ok()) ready.Failed(s);  // a no-op once ready was said
  control.Stop();  // also when Run ended before it got that far: the handler uses what goes next
  follower.reset();  // it swaps the workspace and notifies the server's session
  if (endpoint) endpoint->Stop();  // it renders the server's and the workspace's counters
  owner.Stop();
  server->reset();
  with_past.reset();  // removes the past versions' workspaces
  RemoveMountRecord(options.state_dir);
  if (options.read_only) {  // its workspace served this mount only
    ws->reset();
    if (Status r = Workspace::Remove(store, spec.name); !r.ok())
      std::fprintf(stderr, "strata: %s\n", r.WithContext("removing the read-only workspace").message().c_str());
  }
  return s;
}

Result<pid_t> StartDaemon(const std::function<std::string()>& log_path, const std::function<int(ReadyPipe&)>& serve) {
  if (const int open = OpenSqliteConnections(); open != 0)
    return Status::Internal("the mount's daemon was not started: " + std::to_string(open) +
                            " SQLite connection(s) open in the process that would fork it (a store or "
                            "workspace must be closed before the fork, or the daemon could lose its writes)");
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Status::IOError("pipe", errno);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Status::IOError("fork", errno);
  if (pid == 0) {
    ::close(pipefd[0]);
    ::setsid();
    std::string log = log_path();
    if (log.empty()) log = "/dev/null";
    int devnull = ::open("/dev/null", O_RDONLY);
    int logfd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (logfd >= 0) {
      ::dup2(logfd, STDOUT_FILENO);
      ::dup2(logfd, STDERR_FILENO);
    }
    ReadyPipe ready(pipefd[1]);
    ::_exit(serve(ready));
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
  if (msg == "ready") return pid;
  int status = 0;
  ::waitpid(pid, &status, 0);  // the daemon is gone, and with it its lock on the workspace
  if (msg.empty()) return Status::IOError("the daemon exited before the mount was ready", EIO);
  return Status::IOErrorWithMessage(msg.substr(7), EIO);
}

}  // namespace strata::daemon
