// The libfuse transport (fs/transport.h): libfuse 3.14 mounts and decodes,
// strata's request loop (request_loop.h) reads the device and calls the
// operation table (ops_table.cc).
#include <cctype>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/fs_context.h"
#include "fs/libfuse/device_io.h"
#include "fs/libfuse/libfuse_ops.h"
#include "fs/libfuse/request_loop.h"
#include "fs/transport.h"
#include "util/mutex.h"

namespace strata::fs {

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

class LibfuseTransport final : public Transport {
 public:
  LibfuseTransport(fuse_session* session, const TransportParts& parts) : session_(session), parts_(parts) {}
  ~LibfuseTransport() override {
    if (mounted_) fuse_session_unmount(session_);
    fuse_session_destroy(session_);
  }

  Status Mount(const std::string& mountpoint) {
    if (fuse_session_mount(session_, mountpoint.c_str()) != 0)
      return Status::IOErrorWithMessage("cannot mount on " + mountpoint + ": " + LastFuseMessage(), EIO);
    mounted_ = true;
    // Before INIT, which the request loop reads: it may amend the reply (device_io.h).
    if (int rc = UseDeviceIo(session_); rc != 0)
      return Status::IOErrorWithMessage("cannot set up the FUSE device's I/O", -rc);
    return Status::Ok();
  }

  std::string Name() const override { return "libfuse"; }

  Status Run(const std::function<void()>& serving, const std::function<void()>& before_unmount) override {
    if (fuse_set_signal_handlers(session_) != 0) return Status::IOError("cannot install signal handlers", EIO);
    // libfuse answers INIT inside its loop, and nothing in the counters
    // depends on it: the mount serves from here.
    if (serving) serving();
    const MountOptions& options = parts_.context->options;
    RequestLoopOptions loop_options;
    loop_options.workers = options.max_threads;
    loop_options.spin = std::chrono::microseconds(options.poll_us);
    Workspace* ws = parts_.context->ws;
    loop_options.writes_may_wait = [ws] { return ws->WritesMayWait(); };
    loop_options.in_flight = parts_.in_flight;
    int rc = RunRequestLoop(session_, loop_options, *parts_.loop);
    fuse_remove_signal_handlers(session_);
    if (before_unmount) before_unmount();
    fuse_session_unmount(session_);
    mounted_ = false;
    if (rc != 0 && rc != -EINTR && rc != SIGINT && rc != SIGTERM && rc != SIGHUP)
      return Status::IOError("the FUSE session ended with an error", rc < 0 ? -rc : EIO);
    return Status::Ok();
  }

  int InvalInode(uint64_t ino, int64_t off, int64_t len) override {
    return fuse_lowlevel_notify_inval_inode(session_, ino, off, len);
  }
  int InvalEntry(uint64_t parent, std::string_view name) override {
    return fuse_lowlevel_notify_inval_entry(session_, parent, name.data(), name.size());
  }

 private:
  fuse_session* const session_;
  const TransportParts parts_;
  bool mounted_ = false;
};

}  // namespace

Result<std::unique_ptr<Transport>> MountWithLibfuse(const std::string& mountpoint, const TransportParts& parts) {
  fuse_set_log_func(RecordFuseLog);
  const MountOptions& options = parts.context->options;
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

  fuse_session* session = fuse_session_new(&fargs, &Operations(), sizeof(fuse_lowlevel_ops), parts.context);
  if (session == nullptr)
    return Status::IOErrorWithMessage("cannot start a FUSE session: " + LastFuseMessage(), EINVAL);
  auto transport = std::make_unique<LibfuseTransport>(session, parts);
  parts.context->notifier = transport.get();
  STRATA_RETURN_IF_ERROR(transport->Mount(mountpoint));
  return std::unique_ptr<Transport>(std::move(transport));
}

}  // namespace strata::fs
