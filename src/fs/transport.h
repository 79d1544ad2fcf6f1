// Transport: how a mount's requests travel between the kernel and the
// handlers (fs/ops_*.cc), and how notifications go back. FuseServer owns one,
// chosen by MountOptions::transport:
//  - libfuse (fs/libfuse/): libfuse 3.14's session, read by strata's request
//    loop (a dispatcher and workers);
//  - strata (fs/kernel_bridge/): strata's own codec of the kernel's protocol
//    (fs/kernel/) on the classic /dev/fuse loop, with reader threads, or
//    (strata-uring) over FUSE over io_uring when the kernel offers it.
// Both fill the same Context and call the same handlers.
//
// Thread-safety: Run on one thread; the KernelNotifier calls from any thread
// (not from a request handler holding a workspace lock).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fs/call.h"
#include "util/status.h"

namespace strata::fs {

struct Context;
class InFlight;
struct RequestLoopCounters;
struct PassthroughCounters;

class Transport : public KernelNotifier {
 public:
  // Serves requests until the file system is unmounted or SIGINT, SIGTERM or
  // SIGHUP arrives; then calls before_unmount (if any) and unmounts. Calls
  // serving (if any) once, when requests are served and what the kernel
  // agreed at INIT shows in the counters; never if the connection ends first.
  virtual Status Run(const std::function<void()>& serving, const std::function<void()>& before_unmount) = 0;
  // How requests travel now, for stats: "libfuse", "strata", or "strata
  // (io_uring)" and "strata (classic; io_uring not offered)" for a mount
  // that asked for io_uring.
  virtual std::string Name() const = 0;
  // How many requests came over FUSE over io_uring and how many were read
  // from /dev/fuse (strata's transports; zero on libfuse, which does not count them).
  struct RequestPaths {
    uint64_t over_ring = 0, read_from_device = 0;
  };
  virtual RequestPaths Paths() const { return {}; }
};

// What a transport serves with. REQUIRES: all outlive the transport.
struct TransportParts {
  Context* context = nullptr;      // the transport sets its notifier and no_open
  InFlight* in_flight = nullptr;   // every request counts in it while served
  RequestLoopCounters* loop = nullptr;  // how the request loop ran (libfuse only)
  PassthroughCounters* passthrough = nullptr;  // FUSE passthrough opens (strata only, fs/passthrough.h)
};

// Mount at mountpoint, through libfuse or strata's own codec.
Result<std::unique_ptr<Transport>> MountWithLibfuse(const std::string& mountpoint, const TransportParts& parts);
Result<std::unique_ptr<Transport>> MountWithStrataCodec(const std::string& mountpoint, const TransportParts& parts);

}  // namespace strata::fs
