// RequestLoop: how the daemon takes requests from the kernel.
//
// One dispatcher thread reads every request from /dev/fuse. Requests on the
// namespace (lookup, getattr, create, rename, unlink, readdir, xattrs...) are
// answered on that thread at once: they take the workspace's lock anyway, so
// more threads would only queue on it. Requests that may wait on I/O (read,
// fsync, fallocate, lseek, copy_file_range) go to a pool of workers, so a
// chunk fetch or an fsync never holds up a lookup, and the reads the kernel's
// read-ahead sends together run in parallel.
//
// Writes are answered by the dispatcher too: a write holds the workspace's
// lock across its pwrite into the page cache, so a worker would not let
// anything else run meanwhile, and handing each write over costs a thread
// wake-up (4 KiB random writes: about 20 % more per second, 40 % less daemon
// CPU inline; docs/bench-journal/2026-11-30-to-12-01-mount.md). The exception is while the workspace holds
// a commit's cut: a writer to a file not captured yet waits for its capture,
// and that wait must not hold up every other request, so writes then go to
// the workers, and so do writes through a descriptor opened with O_DIRECT: their
// handler waits for the kernel to drop cached pages (ops_file.cc), which may
// wait on reads that the dispatcher must be free to take from the device.
//
// After each request the dispatcher keeps polling the device for a short
// while before it sleeps. A program making system calls one after another
// sends its next request within microseconds of the last answer, and then
// finds the dispatcher awake: waking a sleeping thread is most of the cost of
// a FUSE round trip, all the more on a virtual machine. The polling yields the
// CPU to anything else that wants it, and lasts at most `spin` per request.
//
// Why not libfuse's multi-threaded loop: it leaves a pool of threads asleep on
// the device, one of which is woken for every request, whatever it is.
// Measured on a 2-core VM (mdbench, 5 000 items, one process): removals and
// renames ran 1.4-1.7x faster with this loop, and with two processes 2-2.8x
// (docs/bench-journal/2026-11-30-to-12-01-mount.md, "The request loop").
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <span>

struct fuse_session;

namespace strata::fs {

class InFlight;

struct RequestLoopOptions {
  unsigned workers = 8;  // threads for requests that may wait on I/O
  std::chrono::microseconds spin{50};
  // Asked for each write: true sends it to a worker (Workspace::WritesMayWait).
  // Unset: writes never wait on anything but the disk.
  std::function<bool()> writes_may_wait;
  // When set, every request counts in it while it is served (in_flight.h).
  InFlight* in_flight = nullptr;
};

// Written by the dispatcher, read by `strata stats` from another thread.
struct RequestLoopCounters {
  std::atomic<uint64_t> inline_requests{0};  // answered by the dispatcher itself
  std::atomic<uint64_t> worker_requests{0};  // handed to a worker
  std::atomic<uint64_t> caught_polling{0};   // requests that arrived while the dispatcher polled (not queued already)
  std::atomic<uint64_t> sleeps{0};           // times the dispatcher slept until the next request
};

// Serves se until it is unmounted or fuse_session_exit() is called (by
// libfuse's signal handlers); then waits for the workers to finish what they
// hold. Returns 0, or the negative errno of a failed read of the device.
int RunRequestLoop(fuse_session* se, const RequestLoopOptions& options, RequestLoopCounters& counters);

// The bytes of the request this thread is serving inside
// fuse_session_process_buf, as the kernel sent them; empty outside one. For
// the fields libfuse does not pass on (device_io.h).
std::span<const std::byte> RequestBeingServed();

// Whether a request of this FUSE opcode goes to a worker; writes_may_wait as
// RequestLoopOptions says, for FUSE_WRITE.
bool RunsOnWorker(uint32_t opcode, bool writes_may_wait);

// Whether the request (size bytes read from /dev/fuse) is a WRITE through a
// descriptor opened with O_DIRECT, not the write-back of a cached page.
bool IsDirectWrite(const void* request, size_t size);

}  // namespace strata::fs
