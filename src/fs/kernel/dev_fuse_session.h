// A FUSE connection without libfuse: open /dev/fuse and mount it (mount(2)
// as root, fusermount3 otherwise), then serve it. The classic loop (Run)
// reads one request at a time, answers INIT, INTERRUPT and DESTROY itself,
// and hands every other request to a RequestHandler, writing the reply it
// returns. When the wants ask for FUSE over io_uring, Mount also makes one
// ring entry per (queue, slot) (uring_entry.h), INIT offers it when the
// kernel does, and RunUring serves one entry each; the classic loop then
// carries only INIT, INTERRUPT and FORGET, which the kernel never sends over
// the ring. Without the kernel's offer the entries stay unused and the
// classic loop serves everything.
//
// Thread-safety: Run may be called from several threads at once, each
// reading and answering requests in turn (so a slow request does not hold up
// the others, and an INTERRUPT can reach one that is running); RunUring once
// for each entry, each on its own thread; Unmount, Notify, OpenBacking,
// CloseBacking and the accessors from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <sys/uio.h>
#include <string>
#include <vector>

#include "fs/kernel/init_negotiation.h"
#include "fs/kernel/interrupt_tracker.h"
#include "fs/kernel/reply.h"
#include "fs/kernel/request.h"
#include "fs/kernel/uring_entry.h"
#include "util/mutex.h"
#include "util/status.h"
#include "util/thread_annotations.h"
#include "util/unique_fd.h"

namespace strata::fs::kernel {

// Answers the requests of one mount. Handle returns the whole reply message
// (an ErrorReply for a failure), or an empty message for requests that get
// none (FORGET, BATCH_FORGET). INIT, INTERRUPT and DESTROY never reach it.
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // REQUIRES: the reply, if any, is to request.header.unique.
  virtual Message Handle(const Request& request, const InterruptTracker& interrupts) = 0;
};

struct SessionOptions {
  std::string fs_name = "strata";  // the source column of /proc/mounts
  std::string subtype = "strata";  // mounted as fuse.<subtype>
  bool default_permissions = true;  // the kernel checks modes
  bool allow_other = false;
  // Mount flags: read-only; setuid bits and device nodes honoured (root only;
  // a FUSE mount defaults to nosuid, nodev); atime never moved by reads.
  bool read_only = false;
  bool suid = false;
  bool dev = false;
  bool noatime = false;
  // Mount through fusermount3 even when mount(2) would do (it is used
  // anyway when mount(2) is not allowed, as for a user without root).
  bool use_fusermount = false;
  // With wants.io_uring: entries per queue (one queue per possible CPU).
  // More than one, so that a request that waits for the kernel (a flush
  // waiting on written-back pages) leaves an entry to serve what it waits for.
  unsigned uring_entries_per_queue = 2;
  InitWants wants;
};

class DevFuseSession {
 public:
  // Opens /dev/fuse and mounts it at mountpoint: with mount(2) when allowed
  // (CAP_SYS_ADMIN), else (or when asked) through fusermount3.
  static Result<std::unique_ptr<DevFuseSession>> Mount(const std::string& mountpoint, const SessionOptions& options);
  ~DevFuseSession();  // unmounts (lazily) if still mounted
  DevFuseSession(const DevFuseSession&) = delete;
  DevFuseSession& operator=(const DevFuseSession&) = delete;

  // Serves requests until the file system is unmounted. A request that does
  // not decode fails with EIO (the reason on stderr) and the session goes
  // on; an error for a kernel that cannot be served (protocol too old) or a
  // failed read or write of /dev/fuse.
  Status Run(RequestHandler& handler);

  // How many io_uring entries Mount made (0 unless the wants asked for
  // io_uring and the rings could be set up; the reason is on stderr).
  size_t uring_entries() const { return uring_entries_.size(); }
  // Serves requests through entry `index` (< uring_entries()) until the
  // connection ends: waits for INIT, and returns at once if INIT did not
  // agree io_uring. Pins its thread to the entry's CPU (best effort).
  Status RunUring(RequestHandler& handler, size_t index);
  // Whether requests travel over io_uring: agreed at INIT, and no entry's
  // registration was refused (the kernel then falls back to /dev/fuse).
  bool serving_over_uring() const;
  // How many requests the ring entries have served.
  uint64_t requests_over_uring() const { return uring_requests_.load(std::memory_order_relaxed); }
  // How many requests the classic loops read from /dev/fuse (INIT,
  // INTERRUPT and FORGET included, which never travel over the ring).
  uint64_t requests_read() const { return device_requests_.load(std::memory_order_relaxed); }

  // Detaches the mount; Run then returns.
  Status Unmount();

  // Writes a notification (NotifyInvalInode, ...). ENOENT from the kernel
  // (nothing cached to invalidate) is success.
  Status Notify(const Message& message);

  // Writes a handler's reply itself, for a handler that must know whether it
  // arrived (it then returns an empty message from Handle): false when the
  // kernel no longer waits for it (the request was interrupted and is gone).
  // On a RunUring thread, the answer to the request it serves goes into
  // that entry instead, to be sent with the entry's next COMMIT_AND_FETCH
  // (true: the kernel holds a ring request until it is committed). So a
  // handler answers the same way on either loop, from the thread serving it.
  Result<bool> Answer(const Message& reply);
  // Whether the calling thread is a RunUring thread: its request can be
  // answered only by that thread (with its entry's next COMMIT_AND_FETCH),
  // where one read from /dev/fuse may be answered by any thread, later.
  static bool ServingRingEntry();
  // The same for a successful reply whose body is gathered from pieces (a
  // READ from cached chunks), in one writev without copying them.
  // REQUIRES: fewer than IOV_MAX pieces.
  Result<bool> AnswerGathered(uint64_t unique, std::span<const iovec> body);

  // Registers fd (a file strata keeps open) as a backing file for
  // passthrough opens; its id goes in OpenParams::backing_id with
  // kOpenPassthrough. REQUIRES: INIT agreed passthrough. Needs CAP_SYS_ADMIN.
  Result<int32_t> OpenBacking(int fd);
  // The kernel keeps the backing file while opens use it; this drops the id.
  Status CloseBacking(int32_t backing_id);

  // What INIT agreed; empty before.
  std::optional<SessionSettings> settings() const;

 private:
  DevFuseSession(UniqueFd fd, std::string mountpoint, SessionOptions options, bool via_fusermount);
  // Makes the io_uring entries; on failure none (the classic loop serves).
  void MakeUringEntries();
  // What INIT agreed, once it has been answered; empty if the session ended first.
  std::optional<SessionSettings> WaitForInit() const;
  // A decoded request other than INIT and INTERRUPT, served: the reply to
  // send, or an empty message (none is due, or the handler answered itself).
  Message Serve(const Request& request, RequestHandler& handler);
  Status Write(const Message& message);
  Status HandleInit(const Request& request);
  void HandleInterrupt(const Request& request);
  // Answers a request that does not decode, and says why on stderr.
  Status Refuse(std::span<const uint8_t> bytes, const Status& why);

  UniqueFd fd_;
  std::string mountpoint_;
  SessionOptions options_;
  mutable Mutex mu_;
  // Set by Run's thread before the INIT reply is written, so whatever the
  // kernel let through after INIT sees it.
  std::optional<SessionSettings> settings_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;  // unmounted: nobody waits for INIT any more
  mutable CondVar init_answered_;
  InterruptTracker interrupts_;
  std::vector<std::unique_ptr<UringEntry>> uring_entries_;  // made by Mount, before any thread runs
  std::atomic<bool> uring_refused_{false};
  std::atomic<uint64_t> uring_requests_{0};
  std::atomic<uint64_t> device_requests_{0};
  bool via_fusermount_;
  std::atomic<bool> mounted_{true};
};

}  // namespace strata::fs::kernel
