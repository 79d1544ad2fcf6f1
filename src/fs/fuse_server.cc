#include "fs/fuse_server.h"

#include <cctype>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <vector>


#include "fs/fs_context.h"
#include "fs/in_flight.h"
#include "fs/request_loop.h"
#include "util/mutex.h"

namespace strata {

struct FuseServer::State {
  fs::Context context;
  fs::OpStats stats;
  fs::RequestLoopCounters loop;
  fs::InFlight in_flight;
};

namespace {
// libfuse reports why a mount failed only through its log: keep the last
// message so the error returned to the user can say it.
Mutex fuse_log_mu;
std::string last_fuse_message GUARDED_BY(fuse_log_mu);

void RecordFuseLog(enum fuse_log_level, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  std::fputs(buf, stderr);
  std::string msg(buf);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  MutexLock lock(&fuse_log_mu);
  last_fuse_message = msg;
}

std::string LastFuseMessage() {
  MutexLock lock(&fuse_log_mu);
  return last_fuse_message.empty() ? "libfuse gave no reason" : last_fuse_message;
}

// libfuse splits -o values at commas and decodes backslash escapes (\ooo in
// octal): every byte of a value that is not plainly safe goes in octal, so a
// name holding commas, backslashes or spaces reaches the kernel unchanged.
std::string EscapeOptionValue(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ':') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
              static_cast<char>('0' + (c & 7))};
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(Workspace* ws, const std::string& mountpoint,
                                                      const MountOptions& options) {
  fuse_set_log_func(RecordFuseLog);
  std::unique_ptr<FuseServer> server(new FuseServer);
  server->state_ = std::make_unique<State>();
  server->state_->context = fs::Context{ws, options, &server->state_->stats};

  // Options for the kernel: permissions are checked by the kernel against the
  // attributes we report; the mount is named after the workspace.
  std::vector<std::string> args = {"strata", "-o", "default_permissions", "-o", "fsname=" + EscapeOptionValue(options.fsname),
                                   "-o", "subtype=strata"};
  if (options.allow_other) args.insert(args.end(), {"-o", "allow_other"});
  if (options.read_only) args.insert(args.end(), {"-o", "ro"});
  if (options.suid) args.insert(args.end(), {"-o", "suid"});
  if (options.dev) args.insert(args.end(), {"-o", "dev"});
  // libfuse 3.14 passes noatime on and knows no other atime option, so the
  // other two get the kernel's default, relatime, in /proc/mounts.
  if (options.atime == AtimeMode::kNoatime) args.insert(args.end(), {"-o", "noatime"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());

  server->session_ = fuse_session_new(&fargs, &fs::Operations(), sizeof(fuse_lowlevel_ops), &server->state_->context);
  if (server->session_ == nullptr)
    return Status::IOErrorWithMessage("cannot start a FUSE session: " + LastFuseMessage(), EINVAL);
  server->state_->context.session = server->session_;
  if (fuse_session_mount(server->session_, mountpoint.c_str()) != 0)
    return Status::IOErrorWithMessage("cannot mount on " + mountpoint + ": " + LastFuseMessage(), EIO);
  server->mounted_ = true;
  // Best effort: without it sequential reads still work, in 128 KiB steps.
  if (Status s = fs::SetKernelReadAhead(mountpoint, options.readahead_kib); !s.ok())
    std::fprintf(stderr, "strata: kernel read-ahead left at its default: %s\n", s.message().c_str());
  return server;
}

FuseServer::~FuseServer() {
  if (session_ == nullptr) return;
  if (mounted_) fuse_session_unmount(session_);
  fuse_session_destroy(session_);
}

ServedCounters FuseServer::Counters() const {
  ServedCounters c;
  c.operations = state_->stats.Counts();
  const fs::RequestLoopCounters& loop = state_->loop;
  c.inline_requests = loop.inline_requests.load(std::memory_order_relaxed);
  c.worker_requests = loop.worker_requests.load(std::memory_order_relaxed);
  c.caught_polling = loop.caught_polling.load(std::memory_order_relaxed);
  c.sleeps = loop.sleeps.load(std::memory_order_relaxed);
  return c;
}

void FuseServer::FlushKernelPages() {
  // Data written through a shared mapping (or with the writeback cache) sits
  // in the kernel's dirty pages until it writes them back. The CLI's syncfs
  // starts that writeback, but the kernel does not wait for a FUSE daemon's
  // answers in syncfs or sync (it skips FUSE mappings when waiting, so that a
  // stuck daemon cannot hang sync), so the WRITE requests may still be on the
  // way when the cut is taken. Invalidating a file's pages writes back every
  // dirty one, waits for the answer to each write (served by the request
  // loop's threads meanwhile) and drops the file's cached pages, which the
  // next access reads again. From the control socket's thread, no workspace
  // lock held; ENOENT only means the kernel had nothing of that inode.
  for (InodeId ino : state_->context.ws->HeldFiles())
    (void)fuse_lowlevel_notify_inval_inode(session_, ino, 0, 0);
}

void FuseServer::Invalidate(const StaleCaches& stale) {
  // From the control socket's thread, with no workspace lock held: the kernel
  // takes the directory's lock for each notification, which a request being
  // served may hold while it waits for the workspace. ENOENT only means the
  // kernel had nothing cached.
  for (const auto& [parent, name] : stale.entries)
    (void)fuse_lowlevel_notify_inval_entry(session_, parent, name.data(), name.size());
  for (InodeId ino : stale.inodes)
    (void)fuse_lowlevel_notify_inval_inode(session_, ino, ino == kRootInode ? 0 : -1, 0);
}

void FuseServer::InvalidateAfterSwap(const StaleCaches& stale) {
  if (stale.entries.empty() && stale.inodes.empty()) return;
  Invalidate(stale);
  // A reply computed from the old namespace just before the swap may reach
  // the kernel after the invalidations above, and be cached as current (an
  // entry naming an inode of the old tree, for the entry timeout). Once every
  // request that started before this point has answered, none can: the same
  // invalidations again clear what such a reply left. A request stuck longer
  // (a read waiting on a slow remote) only delays this round, never blocks it.
  if (!state_->in_flight.WaitForEarlier(kSwapDrainLimit))
    std::fprintf(stderr, "strata: requests begun before a content swap still running after %lld ms; "
                         "invalidating again without them\n",
                 static_cast<long long>(kSwapDrainLimit.count()));
  Invalidate(stale);
}

Status FuseServer::Run(const std::function<void()>& before_unmount) {
  if (fuse_set_signal_handlers(session_) != 0) return Status::IOError("cannot install signal handlers", EIO);
  fs::RequestLoopOptions loop_options;
  loop_options.workers = state_->context.options.max_threads;
  loop_options.spin = std::chrono::microseconds(state_->context.options.poll_us);
  Workspace* ws = state_->context.ws;
  loop_options.writes_may_wait = [ws] { return ws->WritesMayWait(); };
  loop_options.in_flight = &state_->in_flight;
  int rc = fs::RunRequestLoop(session_, loop_options, state_->loop);
  fuse_remove_signal_handlers(session_);
  if (before_unmount) before_unmount();
  fuse_session_unmount(session_);
  mounted_ = false;
  if (rc != 0 && rc != -EINTR && rc != SIGINT && rc != SIGTERM && rc != SIGHUP)
    return Status::IOError("the FUSE session ended with an error", rc < 0 ? -rc : EIO);
  return Status::Ok();
}

}  // namespace strata
