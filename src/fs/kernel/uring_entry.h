// One entry of a FUSE-over-io_uring queue (protocol 7.42): the buffers the
// kernel writes a request into and reads its answer from, and the io_uring
// the entry's commands travel on.
//
// The kernel keeps one queue per possible CPU and hands a request to an entry
// of the queue of the CPU its caller runs on. An entry is registered once
// (REGISTER), then each answer goes back in the same command that waits for
// the next request (COMMIT_AND_FETCH): one system call per request instead of
// the classic loop's read and write.
//
// Each entry has its own small io_uring (set up with IORING_SETUP_SQE128, as
// the kernel requires for the command's 80-byte area) and is served by one
// thread, so no ring is shared and a slow request holds up only its entry.
// The ring is made before INIT is answered: a connection that agreed io_uring
// waits for every queue to have an entry before it sends anything, so a
// failure to make one must be known while the classic loop can still be chosen.
//
// A request arrives split in three (its fuse_in_header, the opcode's fixed
// struct, the payload); the entry lays them out again as one read from
// /dev/fuse would have them, so the same decoder serves both transports. The
// payload is received just after a gap of kLeadBytes, into which the header
// and fixed struct are copied: write data is never copied.
//
// Thread-safety: one thread at a time.
#pragma once

#include <liburing.h>

#include <cstdint>
#include <memory>
#include <span>
#include <sys/uio.h>

#include "fs/kernel/fuse_abi.h"
#include "fs/kernel/reply.h"
#include "util/status.h"

namespace strata::fs::kernel {

class UringEntry {
 public:
  // An entry of queue qid on the /dev/fuse connection dev_fd (which must
  // outlive it), with room for payload_bytes of request or answer body (at
  // least what INIT will agree: max(8 KiB, max_write, max_pages pages)).
  static Result<std::unique_ptr<UringEntry>> Create(int dev_fd, uint16_t qid, size_t payload_bytes);
  ~UringEntry();
  UringEntry(const UringEntry&) = delete;
  UringEntry& operator=(const UringEntry&) = delete;

  uint16_t qid() const { return qid_; }

  // Hands the entry to the kernel and waits for its first request. REQUIRES:
  // INIT was answered with FUSE_OVER_IO_URING. Returns the request's bytes as
  // /dev/fuse would give them (valid until the next call), or an empty span
  // once the connection has ended.
  Result<std::span<const uint8_t>> Register();
  // Sends the answer staged for the current request and waits for the next.
  // REQUIRES: an answer was staged since the last request came.
  Result<std::span<const uint8_t>> CommitAndFetch();

  // The id of the request the entry holds (0 before the first).
  uint64_t unique() const { return unique_; }
  bool staged() const { return staged_; }
  // Stages the answer to the current request: a whole reply message (header
  // and body), or a successful reply's body gathered from pieces. A body
  // larger than the payload buffer is answered EIO instead (and false).
  bool Stage(const Message& reply);
  bool StageGathered(std::span<const iovec> body);

  // Lays out a request received in pieces as one /dev/fuse read: the in
  // header's length must cover the header, at most kUringOpInBytes of fixed
  // struct, and the payload. Exposed for the unit tests.
  static Result<size_t> FixedStructBytes(const fuse_in_header& header, uint32_t payload_bytes);

 private:
  UringEntry(int dev_fd, uint16_t qid, size_t payload_bytes);
  Result<std::span<const uint8_t>> Submit(uint32_t command);
  void StageHeader(int32_t error, uint32_t body_bytes);

  // Room before the payload for the in header and the largest fixed struct.
  static constexpr size_t kLeadBytes = 256;
  static_assert(kLeadBytes >= sizeof(fuse_in_header) + kUringOpInBytes);

  const int dev_fd_;
  const uint16_t qid_;
  io_uring ring_{};
  bool ring_ready_ = false;
  UringReqHeader header_{};
  // kLeadBytes, then the payload the kernel sees. Left uninitialised, so
  // that only the pages requests and answers have used take memory: most
  // are a few hundred bytes, and a mount has an entry per slot per CPU.
  std::unique_ptr<uint8_t[]> buffer_;
  iovec iov_[2]{};
  uint64_t unique_ = 0;
  uint64_t commit_id_ = 0;
  bool staged_ = false;
};

// How many queues the kernel keeps: one per possible CPU (not only online ones).
Result<unsigned> PossibleCpus();

}  // namespace strata::fs::kernel
