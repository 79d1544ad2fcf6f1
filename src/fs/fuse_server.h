// FuseServer: serves a Workspace to the kernel over FUSE.
//
// The adapter is thin: each FUSE operation unpacks its arguments, calls the
// workspace, and replies exactly once (ops_*.cc), through whichever transport
// the mount uses (fs/transport.h): libfuse's low-level API, or strata's own
// codec of the kernel's protocol. The kernel checks
// permissions (default_permissions) and, because this daemon is the only writer
// of its namespace, may cache entries and attributes for a long time.
//
// Thread-safety: Run() serves requests on several threads; the Workspace is
// called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"
#include "workspace/workspace.h"

namespace strata {

// What reads do to atime (docs/guarantees.md). A noatime mount says so in
// /proc/mounts; the others show the kernel's default, relatime (libfuse 3.14
// cannot pass strictatime on).
enum class AtimeMode {
  kNoatime,      // never moved by reads: no write per read
  kRelatime,     // moved when not newer than mtime or ctime, or a day old
  kStrictatime,  // moved by every read that reaches the daemon
};

// How requests travel between the kernel and the handlers (fs/transport.h).
enum class FuseTransport {
  kLibfuse,  // libfuse 3.14's session, read by strata's request loop
  kStrata,   // strata's own codec of the kernel's protocol, on the classic /dev/fuse loop
  // The same codec over FUSE over io_uring where the kernel offers it
  // (enable_uring), else on the classic loop; stats tell which.
  kStrataUring,
};
// "libfuse", "strata" or "strata-uring": the names `strata mount --transport` takes.
const char* FuseTransportName(FuseTransport t);

struct MountOptions {
  FuseTransport transport = FuseTransport::kLibfuse;
  std::string fsname = "strata";  // shown in /proc/mounts
  bool allow_other = false;       // let other users in (root only), with normal permission checks
  double cache_timeout = 60;      // seconds the kernel may trust entries and attributes
  unsigned max_threads = 8;       // workers for reads and syncs, and writes during a commit (fs/libfuse/request_loop.h)
  // How long the dispatcher keeps polling the device after an answer before
  // it sleeps (fs/libfuse/request_loop.h); 0 never polls.
  uint32_t poll_us = 50;
  // The kernel buffers writes and sends them in large pieces later. A kill of
  // the daemon then loses written data not yet fsynced, as a crash of a local
  // filesystem does; without it, a write is in the workspace when it returns.
  bool writeback_cache = false;
  bool read_only = false;          // mounted with the kernel's 'ro': every write fails with EROFS
  // The kernel's read-ahead on this mount: how far ahead of a sequential
  // reader it asks for pages, in requests of up to 1 MiB served in parallel.
  uint32_t readahead_kib = 4096;
  std::string state_dir;           // where the workspace keeps its state (for statfs)
  AtimeMode atime = AtimeMode::kNoatime;
  // The kernel honours setuid/setgid bits and opens device nodes only with
  // these (its defaults for a FUSE mount are nosuid, nodev); root only.
  bool suid = false;
  bool dev = false;
  // The strata transport lets the kernel read and write files whose bytes
  // are all local straight from their data files (FUSE passthrough,
  // docs/passthrough.md). Not with the writeback cache, which the kernel
  // does not combine with it, nor on the libfuse transport.
  bool passthrough = true;
};

// What a mount has served (`strata stats`), a copy taken at one moment.
struct ServedCounters {
  // One FUSE operation served at least once: how many, how many failed, and
  // a latency histogram of (upper bound in µs, count), bounds increasing
  // powers of two (fs/op_stats.h).
  // Bucket b holds latencies below 2^b µs; the last one everything slower.
  static constexpr int kLatencyBuckets = 24;  // up to 2^23 µs (8 s)
  struct Operation {
    std::string name;
    uint64_t count = 0, errors = 0;
    std::vector<std::pair<uint64_t, uint64_t>> latency_us;
    uint64_t latency_ns_total = 0;  // the sum of every latency counted
  };
  std::vector<Operation> operations;
  // How requests reach the daemon: FuseTransportName of the mount's.
  std::string transport = "libfuse";
  // How the request loop ran (fs/libfuse/request_loop.h; libfuse transport only).
  uint64_t inline_requests = 0, worker_requests = 0, caught_polling = 0, sleeps = 0;
  // FUSE passthrough (fs/passthrough.h): whether the mount uses it, opens
  // answered with it (and of those for writing), opens left to the daemon
  // (not eligible) and write opens sent through the daemon while a commit's cut held.
  struct Passthrough {
    bool on = false;
    uint64_t opens = 0, write_opens = 0, declined = 0, held = 0;
  } passthrough;
  // Requests served over io_uring and read from /dev/fuse (strata transports only).
  uint64_t ring_requests = 0, device_requests = 0;
};

class FuseServer {
 public:
  // Mounts at mountpoint (which must be an existing directory).
  static Result<std::unique_ptr<FuseServer>> Mount(Workspace* ws, const std::string& mountpoint,
                                                   const MountOptions& options);
  ~FuseServer();  // unmounts if still mounted
  FuseServer(const FuseServer&) = delete;
  FuseServer& operator=(const FuseServer&) = delete;

  // Serves requests until the file system is unmounted or SIGINT/SIGTERM/SIGHUP
  // arrives; then calls before_unmount (if any) and unmounts. serving (if
  // any) is called once the mount serves and its counters say what the
  // kernel agreed (fs/transport.h). The daemon serves its control socket
  // meanwhile (daemon/daemon.h), which uses the calls below from the
  // socket's thread.
  Status Run(const std::function<void()>& serving = nullptr, const std::function<void()>& before_unmount = nullptr);

  // The counters per FUSE operation and of the request loop; the workspace
  // keeps its own (Workspace::Counters).
  ServedCounters Counters() const;
  // Tells the kernel to drop what a reset made stale (names, attributes, the
  // root's cached listing). Never from inside a request handler.
  void Invalidate(const StaleCaches& stale);
  // Invalidate, then again once the requests begun before have answered.
  void InvalidateAfterSwap(const StaleCaches& stale);
  static constexpr std::chrono::milliseconds kSwapDrainLimit{5000};
  // Makes the kernel write back, and wait for, the dirty pages of every file
  // it holds that may have any (fs/write_opens.h), so that a cut taken next
  // holds every write made before it was asked for (shared mappings
  // included). Never from inside a request handler.
  void FlushKernelPages();

 private:
  FuseServer() = default;
  struct State;
  std::unique_ptr<State> state_;
};


}  // namespace strata
