#include "fs/libfuse/request_loop.h"

#include "fs/in_flight.h"

#define FUSE_USE_VERSION 312
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sched.h>

#include <cstdlib>
#include <deque>
#include <thread>
#include <vector>

#include "util/mutex.h"

namespace strata::fs {

namespace {
thread_local std::span<const std::byte> request_being_served;

// Serves one request on this thread, its bytes visible to RequestBeingServed.
void Process(fuse_session* se, const fuse_buf& buf) {
  request_being_served = std::span<const std::byte>(static_cast<const std::byte*>(buf.mem), buf.size);
  fuse_session_process_buf(se, &buf);
  request_being_served = {};
}
}  // namespace

std::span<const std::byte> RequestBeingServed() { return request_being_served; }

bool RunsOnWorker(uint32_t opcode, bool writes_may_wait) {
  switch (opcode) {
    case FUSE_WRITE:
      return writes_may_wait;
    case FUSE_READ:
    case FUSE_FSYNC:
    case FUSE_FSYNCDIR:
    case FUSE_FALLOCATE:
    case FUSE_LSEEK:
    case FUSE_COPY_FILE_RANGE:
      return true;
    default:
      return false;
  }
}

bool IsDirectWrite(const void* request, size_t size) {
  if (size < sizeof(fuse_in_header) + sizeof(fuse_write_in)) return false;
  const auto* header = static_cast<const fuse_in_header*>(request);
  if (header->opcode != FUSE_WRITE) return false;
  const auto* in = reinterpret_cast<const fuse_write_in*>(header + 1);
  return (in->flags & O_DIRECT) != 0 && (in->write_flags & FUSE_WRITE_CACHE) == 0;
}

namespace {

// Workers take request buffers from a queue and give the memory back for the
// dispatcher's next reads (a request buffer holds up to 1 MiB of write data).
class WorkerPool {
 public:
  WorkerPool(fuse_session* se, unsigned workers, InFlight* in_flight) : se_(se), in_flight_(in_flight) {
    for (unsigned i = 0; i < std::max(workers, 1u); i++) threads_.emplace_back([this] { Work(); });
  }
  ~WorkerPool() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    queued_.NotifyAll();
    for (std::thread& t : threads_) t.join();  // each drains the queue before it stops
    for (void* mem : spare_) std::free(mem);
  }

  void Submit(const fuse_buf& buf) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      queue_.push_back(buf);
    }
    queued_.NotifyOne();
  }

  // A buffer a worker is done with, or nullptr (libfuse then allocates one).
  void* TakeSpare() {
    MutexLock lock(&mu_);
    if (spare_.empty()) return nullptr;
    void* mem = spare_.back();
    spare_.pop_back();
    return mem;
  }

 private:
  void Work() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (;;) {
      while (!stopping_ && queue_.empty()) queued_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping, and nothing left
      fuse_buf buf = queue_.front();
      queue_.pop_front();
      lock.Unlock();
      {
        InFlightScope serving(in_flight_);
        Process(se_, buf);
      }
      lock.Lock();
      if (spare_.size() < kMaxSpare) {
        spare_.push_back(buf.mem);
      } else {
        std::free(buf.mem);
      }
    }
  }

  static constexpr size_t kMaxSpare = 8;
  fuse_session* const se_;
  InFlight* const in_flight_;
  Mutex mu_;  // a leaf lock: requests are served without it
  CondVar queued_;
  std::deque<fuse_buf> queue_ GUARDED_BY(mu_);
  std::vector<void*> spare_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// The next request into *buf: polls for `spin`, then sleeps until one comes.
// Returns as fuse_session_receive_buf does (0 once the session has ended).
int Receive(fuse_session* se, int fd, fuse_buf* buf, std::chrono::microseconds spin, RequestLoopCounters& counters) {
  const auto deadline = std::chrono::steady_clock::now() + spin;
  bool polled = false, slept = false;
  for (;;) {
    const int res = fuse_session_receive_buf(se, buf);
    if (res != -EAGAIN) {
      if (res > 0 && polled && !slept) counters.caught_polling.fetch_add(1, std::memory_order_relaxed);
      return res;
    }
    if (fuse_session_exited(se)) return 0;
    if (!slept && std::chrono::steady_clock::now() < deadline) {
      polled = true;
      sched_yield();  // lets a worker or the program being served run on this CPU
      continue;
    }
    if (!slept) counters.sleeps.fetch_add(1, std::memory_order_relaxed);
    slept = true;
    // A timeout, so that an exit asked by a signal another thread took is seen.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 500) < 0 && errno != EINTR) return -errno;
  }
}

// Asks options.writes_may_wait, for writes only.
bool WritesMayWait(const RequestLoopOptions& options, uint32_t opcode) {
  return opcode == FUSE_WRITE && options.writes_may_wait && options.writes_may_wait();
}

}  // namespace

int RunRequestLoop(fuse_session* se, const RequestLoopOptions& options, RequestLoopCounters& counters) {
  const int fd = fuse_session_fd(se);
  // Reads that return at once when nothing is queued, for the polling above.
  // Replies are written to the same file; writes to the device never block.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return -errno;
  int rc = 0;
  {
    WorkerPool pool(se, options.workers, options.in_flight);
    fuse_buf buf{};
    while (!fuse_session_exited(se)) {
      if (buf.mem == nullptr) buf.mem = pool.TakeSpare();
      const int res = Receive(se, fd, &buf, options.spin, counters);
      if (res == -EINTR) continue;
      if (res <= 0) {
        rc = res;
        break;
      }
      const auto* header = static_cast<const fuse_in_header*>(buf.mem);
      if (buf.size >= sizeof(fuse_in_header) &&
          RunsOnWorker(header->opcode,
                       WritesMayWait(options, header->opcode) || IsDirectWrite(buf.mem, buf.size))) {
        counters.worker_requests.fetch_add(1, std::memory_order_relaxed);
        pool.Submit(buf);  // the worker frees or recycles buf.mem
        buf = fuse_buf{};
      } else {
        counters.inline_requests.fetch_add(1, std::memory_order_relaxed);
        InFlightScope serving(options.in_flight);
        Process(se, buf);
      }
    }
    std::free(buf.mem);
  }  // the pool finishes the requests it holds
  fuse_session_reset(se);
  return rc;
}

}  // namespace strata::fs
