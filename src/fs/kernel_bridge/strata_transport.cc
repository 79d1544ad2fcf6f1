// The strata transport (fs/transport.h): strata's own codec of the kernel's
// FUSE protocol (fs/kernel/) serves the handlers, without libfuse.
//
// Several reader threads each run the classic /dev/fuse loop
// (DevFuseSession::Run): read one request, serve it, answer, read the next.
// So a read waiting on the store or an fsync holds up one thread, not the
// mount, and a handler that waits for the kernel to write back pages
// (ops_file.cc) finds other threads to serve those writes. The dispatcher
// and worker split of the libfuse transport's request loop is not built on
// this loop yet.
//
// With --transport strata-uring the session also has io_uring entries, a
// few per CPU, each served by a thread of its own (DevFuseSession::RunUring)
// that answers a request and fetches the next in one system call. When INIT
// agrees io_uring the readers are left with INIT, INTERRUPT and FORGET; when
// the kernel does not offer it (enable_uring off) those threads end at once
// and the readers serve everything.
//
// Signals: SIGINT, SIGTERM and SIGHUP end the mount, as on the libfuse
// transport: a handler notes the signal, whichever thread of the daemon it
// reaches (the readers block them), and Run's thread then unmounts and ends
// the connection.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "fs/fs_context.h"
#include "fs/in_flight.h"
#include "fs/kernel/dev_fuse_session.h"
#include "fs/kernel_bridge/kernel_call.h"
#include "fs/kernel_bridge/request_dispatch.h"
#include "fs/passthrough.h"
#include "fs/passthrough_hold.h"
#include "fs/transport.h"

namespace strata::fs {

namespace {

// Set by the handler of a stop signal; read by Run's thread.
std::atomic<int> stop_signal{0};
void NoteStopSignal(int sig) { stop_signal.store(sig); }

// What strata asks of the kernel at INIT: what a libfuse 3.14 mount agrees,
// which the handlers were written against, and strata's own choices (each
// explained in fs/libfuse/ops_table.cc, where the libfuse transport makes
// them). FUSE_HANDLE_KILLPRIV_V2: the handlers clear set-id bits where the
// kernel marks a write, truncation or chown (fs/set_id_bits.h), which saves
// the GETXATTR of security.capability the kernel otherwise sends before
// nearly every write. Not the first FUSE_HANDLE_KILLPRIV, which marks nothing
// and leaves the daemon to guess (the conformance suite's Files.ChownAsRoot
// and Perms.WriteByNonOwnerClearsSetuid tell).
kernel::InitWants WantsOf(const MountOptions& options) {
  kernel::InitWants w;
  w.flags = FUSE_ASYNC_READ | FUSE_PARALLEL_DIROPS | FUSE_ASYNC_DIO | FUSE_IOCTL_DIR |
            FUSE_BIG_WRITES | FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO | FUSE_POSIX_ACL | FUSE_DONT_MASK |
            FUSE_EXPORT_SUPPORT | FUSE_CACHE_SYMLINKS | FUSE_HANDLE_KILLPRIV_V2;
  // Not FUSE_AUTO_INVAL_DATA (only this daemon changes files) nor
  // FUSE_ATOMIC_O_TRUNC (opens are not asked for: a truncating open comes as
  // a SETATTR of its own).
  if (options.writeback_cache) w.flags |= FUSE_WRITEBACK_CACHE;
  w.io_uring = options.transport == FuseTransport::kStrataUring;
  w.max_write = 1u << 20;
  w.max_pages = 256;
  w.max_readahead = options.readahead_kib << 10;
  // The kernel drops passthrough when the writeback cache is asked for too.
  // Backing files are the workspace's data files, on a disk file system:
  // nothing stacked below them.
  w.passthrough = options.passthrough && !options.writeback_cache;
  w.max_stack_depth = 1;
  return w;
}

kernel::SessionOptions SessionOptionsOf(const MountOptions& options) {
  kernel::SessionOptions s;
  s.fs_name = options.fsname;
  s.allow_other = options.allow_other;
  s.read_only = options.read_only;
  s.suid = options.suid;
  s.dev = options.dev;
  s.noatime = options.atime == AtimeMode::kNoatime;
  s.wants = WantsOf(options);
  // About max_threads entries in all, as the classic loop has readers, but
  // at least two per queue (one per possible CPU), so that requests waiting
  // on each other there (a flush and the writes it waits for) do not run out.
  const auto cpus = kernel::PossibleCpus();
  const unsigned queues = cpus.ok() ? std::max(1u, *cpus) : 1u;
  s.uring_entries_per_queue = std::max(2u, options.max_threads / queues);
  return s;
}

class StrataTransport final : public Transport, private kernel::RequestHandler, private BackingFiles {
 public:
  StrataTransport(std::unique_ptr<kernel::DevFuseSession> session, std::string mountpoint, const TransportParts& parts)
      : session_(std::move(session)), mountpoint_(std::move(mountpoint)), parts_(parts) {}

  Status Run(const std::function<void()>& serving, const std::function<void()>& before_unmount) override;

  std::string Name() const override {
    if (parts_.context->options.transport != FuseTransport::kStrataUring) return "strata";
    return session_->serving_over_uring() ? "strata (io_uring)" : "strata (classic; io_uring not offered)";
  }

  RequestPaths Paths() const override { return {session_->requests_over_uring(), session_->requests_read()}; }

  int InvalInode(uint64_t ino, int64_t off, int64_t len) override {
    return ErrnoOf(session_->Notify(kernel::NotifyInvalInode(ino, off, len)));
  }
  int InvalEntry(uint64_t parent, std::string_view name) override {
    auto message = kernel::NotifyInvalEntry(parent, name, 0);
    if (!message.ok()) return -EINVAL;
    return ErrnoOf(session_->Notify(*message));
  }

 private:
  static int ErrnoOf(const Status& s) { return s.ok() ? 0 : -(s.errno_value() != 0 ? s.errno_value() : EIO); }

  Result<int32_t> OpenBacking(int fd) override { return session_->OpenBacking(fd); }
  void CloseBacking(int32_t backing_id) override {
    if (Status s = session_->CloseBacking(backing_id); !s.ok())
      std::fprintf(stderr, "strata: %s\n", s.ToString().c_str());
  }

  // Opens and their ends, for passthrough's view of the kernel's (fs/passthrough.h).
  void NoteOpens(const kernel::Request& request, KernelCall& call) {
    if (passthrough_ == nullptr) return;
    switch (request.header.opcode) {
      case FUSE_OPEN:
        return call.ChooseOpensWith(passthrough_.get(), static_cast<int>(std::get<kernel::OpenArgs>(request.args).in.flags));
      case FUSE_CREATE:
        return call.ChooseOpensWith(passthrough_.get(), static_cast<int>(std::get<kernel::CreateArgs>(request.args).in.flags));
      case FUSE_RELEASE:
        // Before the handler, whose Unref may delete the inode.
        return passthrough_->Release(request.header.nodeid,
                                     static_cast<OpenKind>(std::get<kernel::ReleaseArgs>(request.args).in.fh));
      default:
        return;
    }
  }

  // What INIT agreed, once it is known: before any other request is served
  // (Handle), and in Run before the mount is reported serving.
  void NoteInit() {
    std::call_once(init_seen_, [this] {
      auto agreed = session_->settings();
      parts_.context->no_open = agreed && agreed->may_skip_open;
      parts_.context->kill_privs = agreed && (agreed->flags & FUSE_HANDLE_KILLPRIV_V2);
      DirectAccess* direct = DirectAccessOf(*parts_.context->ws);
      if (agreed && agreed->passthrough && parts_.passthrough != nullptr && direct != nullptr) {
        passthrough_ = std::make_unique<PassthroughFiles>(*direct, static_cast<BackingFiles&>(*this), this,
                                                          *parts_.passthrough);
        // Reads through passthrough never reach the daemon: atime comes from the data file.
        const MountOptions& options = parts_.context->options;
        if (options.atime != AtimeMode::kNoatime && !options.read_only) direct->FollowDataFileAtime();
        parts_.passthrough->on.store(true);
        hold_ = std::make_unique<PassthroughHold>(mountpoint_, HoldsPerCpu(), [this](uint64_t unique) {
          if (auto sent = session_->Answer(kernel::EmptyReply(unique)); !sent.ok())
            std::fprintf(stderr, "strata: answering a cut's held FSYNC: %s\n", sent.status().message().c_str());
        });
        direct->SetWriteHold(hold_.get());
      }
    });
  }

  // Each file a cut holds keeps a ring entry of its CPU's queue waiting: one
  // per queue is left for everything else. On the classic loop a held FSYNC
  // is handed over and keeps no request thread; what each file costs then is
  // a thread of the hold and an open file, so the limit only keeps a cut of
  // a great many writers from starting as many threads.
  static constexpr unsigned kClassicHoldsPerCpu = 64;
  unsigned HoldsPerCpu() const {
    if (!session_->serving_over_uring()) return kClassicHoldsPerCpu;
    const auto possible = kernel::PossibleCpus();
    const unsigned cpus = possible.ok() ? std::max(1u, *possible) : 1u;
    const size_t per_queue = session_->uring_entries() / cpus;
    return per_queue > 1 ? static_cast<unsigned>(per_queue - 1) : 0;
  }
  unsigned ReaderCount() const {
    // With io_uring entries, the readers carry only what the kernel never
    // sends over the ring unless INIT turns it down; two are plenty then.
    return session_->uring_entries() > 0 ? 2u : std::max(2u, parts_.context->options.max_threads);
  }

  kernel::Message Handle(const kernel::Request& request, const kernel::InterruptTracker&) override {
    NoteInit();
    // A cut's own FSYNC, held until the cut's files are captured.
    if (hold_ != nullptr) {
      switch (hold_->Intercept(request.header.opcode, request.header.pid, request.header.nodeid,
                               request.header.unique, !kernel::DevFuseSession::ServingRingEntry())) {
        case PassthroughHold::Intercepted::kReleased:
          return kernel::EmptyReply(request.header.unique);
        case PassthroughHold::Intercepted::kHandedOver:
          return {};
        case PassthroughHold::Intercepted::kNotHeld:
          break;
      }
    }
    InFlightScope serving(parts_.in_flight);
    KernelCall call(*parts_.context, *session_, request.header, UmaskOf(request));
    NoteOpens(request, call);
    Dispatch(request, call);
    if (!call.write_error().ok())
      std::fprintf(stderr, "strata: answering %s: %s\n", kernel::OpcodeName(request.header.opcode).c_str(),
                   call.write_error().message().c_str());
    // A handler that did not answer a request that expects one is a bug;
    // answering EIO keeps the caller from waiting forever.
    if (!call.answered() && kernel::OpcodeExpectsReply(request.header.opcode))
      return kernel::ErrorReply(request.header.unique, EIO);
    return {};
  }

  // Ends the connection, so that readers still waiting on it return, as
  // closing libfuse's session does (needs root and the fusectl file system).
  void AbortConnection() {
    if (connection_ < 0) return;
    std::ofstream abort("/sys/fs/fuse/connections/" + std::to_string(connection_) + "/abort");
    abort << "1";
  }

  std::unique_ptr<kernel::DevFuseSession> session_;
  const std::string mountpoint_;
  const TransportParts parts_;
  int connection_ = -1;  // the kernel's number for this connection (the mount's device minor)
  std::once_flag init_seen_;
  std::unique_ptr<PassthroughFiles> passthrough_;  // set at INIT when agreed
  std::unique_ptr<PassthroughHold> hold_;          // with passthrough_
};

Status StrataTransport::Run(const std::function<void()>& serving, const std::function<void()>& before_unmount) {
  constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  struct sigaction note {}, before[3];
  note.sa_handler = NoteStopSignal;
  sigemptyset(&note.sa_mask);
  stop_signal.store(0);
  for (int i = 0; i < 3; i++) {
    sigaddset(&stop_signals, kStopSignals[i]);
    ::sigaction(kStopSignals[i], &note, &before[i]);
  }
  // Blocked before the readers start, so that they inherit the mask.
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  const size_t entries = session_->uring_entries();
  const unsigned readers = ReaderCount();
  std::atomic<unsigned> running{readers};
  std::atomic<size_t> serving_entries{entries};
  std::vector<Status> ended(readers + entries);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < readers; i++) {
    threads.emplace_back([this, i, &ended, &running] {
      ended[i] = session_->Run(*this);
      running.fetch_sub(1);
    });
  }
  for (size_t e = 0; e < entries; e++) {
    threads.emplace_back([this, e, readers, &ended, &serving_entries] {
      ended[readers + e] = session_->RunUring(*this, e);
      serving_entries.fetch_sub(1);
    });
  }
  // The kernel names the connection by the mount's device minor. Only now:
  // a stat of the mount waits for the readers to answer INIT.
  struct stat st {};
  if (::stat(mountpoint_.c_str(), &st) == 0) connection_ = static_cast<int>(::minor(st.st_dev));
  // Until the mount goes (every reader returns) or a stop signal comes.
  bool said_serving = false;
  while (running.load() == readers && stop_signal.load() == 0) {
    // Serving only once INIT is agreed and noted, so that the first stats
    // already say what it agreed (passthrough, io_uring). The stat above
    // waited for INIT, so this is nearly always at once; a connection that
    // ends before INIT never serves.
    if (!said_serving && session_->settings()) {
      NoteInit();
      if (serving) serving();
      said_serving = true;
    }
    // One sent to this thread is pending (blocked) rather than handled.
    const timespec tick{0, said_serving ? 200'000'000 : 1'000'000};
    if (::sigtimedwait(&stop_signals, nullptr, &tick) > 0) break;
  }
  if (before_unmount) before_unmount();
  Status unmounted = session_->Unmount();
  // A detached mount lives on while files on it are open, and so do the
  // readers; a connection that outlives its mount this long is ended. Only
  // while a reader still waits in it is the number surely this connection's:
  // once it has ended, the kernel may give the number to another mount.
  auto still_serving = [&] { return running.load() + serving_entries.load(); };
  for (int i = 0; i < 200 && still_serving() > 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (still_serving() > 0) {
    std::fprintf(stderr, "strata: %zu FUSE readers and ring entries still served %s after the unmount; ending the connection\n",
                 still_serving(), mountpoint_.c_str());
    AbortConnection();
  }
  for (std::thread& t : threads) t.join();
  // No cut may reach the hold from here (the workspace outlives this).
  if (hold_ != nullptr) DirectAccessOf(*parts_.context->ws)->SetWriteHold(nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  for (int i = 0; i < 3; i++) ::sigaction(kStopSignals[i], &before[i], nullptr);
  for (const Status& s : ended) STRATA_RETURN_IF_ERROR(s);
  return unmounted;
}

}  // namespace

Result<std::unique_ptr<Transport>> MountWithStrataCodec(const std::string& mountpoint, const TransportParts& parts) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<kernel::DevFuseSession> session,
                          kernel::DevFuseSession::Mount(mountpoint, SessionOptionsOf(parts.context->options)));
  auto transport = std::make_unique<StrataTransport>(std::move(session), mountpoint, parts);
  parts.context->notifier = transport.get();
  return std::unique_ptr<Transport>(std::move(transport));
}

}  // namespace strata::fs
