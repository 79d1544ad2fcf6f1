// PassthroughFiles: which opens of a mount the kernel serves itself (FUSE
// passthrough, protocol 7.40), reading and writing the file's data file in
// the workspace directly, with no request to the daemon per read or write.
//
// The kernel puts an inode either in passthrough mode (every open of it goes
// to one backing file) or in cached mode (its own page cache, requests to
// the daemon); an open that does not fit the inode's mode fails (ETXTBSY,
// EIO to the program). So this class, which sees every OPEN, CREATE and
// RELEASE, keeps the kernel's view and answers:
//  - passthrough when the inode has no cached open and the workspace hands
//    out its data file (DirectAccess::OpenDirect: every byte is local);
//  - cached when the inode has cached opens, or is not eligible;
//  - passthrough with direct I/O (FOPEN_DIRECT_IO: reads and writes go to
//    the daemon, the inode stays in passthrough mode) for a write open of an
//    inode in passthrough mode while a commit's cut holds writes in the
//    workspace: its writes wait for the capture there, while the
//    passthrough readers go on.
// The daemon's counts are never below the kernel's: an open counts from the
// moment its answer is chosen, and goes only at its RELEASE, which the kernel
// sends after it has dropped the open itself.
//
// After the last passthrough open of an inode that was written, the kernel's
// page cache of the inode (from cached opens before) is dropped: it holds
// bytes from before those writes.
//
// Thread-safety: all methods may be called from any request thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "fs/call.h"
#include "util/mutex.h"
#include "util/status.h"
#include "workspace/direct_access.h"

namespace strata::fs {

// The transport's registry of backing files (FUSE_DEV_IOC_BACKING_OPEN/CLOSE).
class BackingFiles {
 public:
  virtual ~BackingFiles() = default;
  virtual Result<int32_t> OpenBacking(int fd) = 0;
  virtual void CloseBacking(int32_t backing_id) = 0;
};

// How an open is served; its value travels as the open's file handle, so
// that RELEASE says which one ends.
enum class OpenKind : uint64_t {
  kCached = 0,
  kPassthroughRead = 1,
  kPassthroughWrite = 2,
  kDirectIo = 3,
};

struct OpenChoice {
  OpenKind kind = OpenKind::kCached;
  int32_t backing_id = 0;  // for the passthrough kinds
};

// What `strata stats` shows (ServedCounters::passthrough).
struct PassthroughCounters {
  std::atomic<bool> on{false};  // agreed at INIT and not turned off
  std::atomic<uint64_t> opens{0};        // answered with passthrough (reads and writes)
  std::atomic<uint64_t> write_opens{0};  // of those, open for writing
  std::atomic<uint64_t> declined{0};     // cached instead: base bytes, cached opens, no backing file
  std::atomic<uint64_t> held{0};         // direct I/O instead: a commit's cut held writes
};

class PassthroughFiles {
 public:
  // All must outlive this; notifier may be null.
  PassthroughFiles(DirectAccess& ws, BackingFiles& backing, KernelNotifier* notifier, PassthroughCounters& counters)
      : ws_(ws), backing_(backing), notifier_(notifier), counters_(counters) {}
  PassthroughFiles(const PassthroughFiles&) = delete;
  PassthroughFiles& operator=(const PassthroughFiles&) = delete;

  // The answer to an OPEN or CREATE of ino with open(2) flags `flags`.
  OpenChoice Open(uint64_t ino, int flags);
  // The open answered `kind` ended (its RELEASE, or its answer never reached
  // the kernel).
  void Release(uint64_t ino, OpenKind kind);

 private:
  struct Node {
    uint32_t cached = 0;       // cached-mode opens
    uint32_t passthrough = 0;  // passthrough opens, readers and writers
    int32_t backing_id = -1;   // while passthrough > 0
    bool written = false;      // a passthrough writer came since the mode began
  };
  // A first passthrough open of ino, or nullopt when it does not qualify
  // (*held: because a cut holds writes).
  std::optional<OpenChoice> StartPassthrough(uint64_t ino, bool write, bool synced, Node& node, bool* held)
      REQUIRES(mu_);

  DirectAccess& ws_;
  BackingFiles& backing_;
  KernelNotifier* const notifier_;
  PassthroughCounters& counters_;
  // Lock order: before the workspace's locks (OpenDirect, CloseDirect run under it).
  Mutex mu_;
  std::unordered_map<uint64_t, Node> nodes_ GUARDED_BY(mu_);
  bool backing_refused_ GUARDED_BY(mu_) = false;  // the kernel refused to register one (no CAP_SYS_ADMIN)
};

}  // namespace strata::fs
