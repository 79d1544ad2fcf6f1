// One FUSE-over-io_uring entry (uring_entry.h).
#include "fs/kernel/uring_entry.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace strata::fs::kernel {

namespace {

// Two slots: the entry has one command in flight at a time; the spare keeps
// the kernel's minimum happy.
constexpr unsigned kRingSlots = 2;

// What a completion's error says about the connection: these mean it ended
// (unmounted or aborted, or the daemon's ring is being torn down).
bool ConnectionEnded(int err) { return err == ENOTCONN || err == ECONNABORTED || err == ECANCELED || err == ENODEV; }

}  // namespace

UringEntry::UringEntry(int dev_fd, uint16_t qid, size_t payload_bytes)
    : dev_fd_(dev_fd), qid_(qid), buffer_(new uint8_t[kLeadBytes + payload_bytes]) {
  iov_[0] = {&header_, sizeof(header_)};
  iov_[1] = {buffer_.get() + kLeadBytes, payload_bytes};
}

UringEntry::~UringEntry() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

Result<std::unique_ptr<UringEntry>> UringEntry::Create(int dev_fd, uint16_t qid, size_t payload_bytes) {
  std::unique_ptr<UringEntry> entry(new UringEntry(dev_fd, qid, payload_bytes));
  int err = io_uring_queue_init(kRingSlots, &entry->ring_, IORING_SETUP_SQE128);
  if (err < 0) return Status::IOError("setting up an io_uring for FUSE queue " + std::to_string(qid), -err);
  entry->ring_ready_ = true;
  return entry;
}

Result<size_t> UringEntry::FixedStructBytes(const fuse_in_header& header, uint32_t payload_bytes) {
  const size_t around = sizeof(fuse_in_header) + size_t{payload_bytes};
  if (header.len < around || header.len - around > kUringOpInBytes)
    return Status::InvalidArgument("an io_uring request of " + std::to_string(header.len) + " bytes with " +
                                   std::to_string(payload_bytes) + " of payload leaves no room for its fixed struct");
  return header.len - around;
}

Result<std::span<const uint8_t>> UringEntry::Register() { return Submit(kUringCmdRegister); }

Result<std::span<const uint8_t>> UringEntry::CommitAndFetch() { return Submit(kUringCmdCommitAndFetch); }

Result<std::span<const uint8_t>> UringEntry::Submit(uint32_t command) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) return Status::Internal("no free slot in a FUSE entry's io_uring");
  // The whole 128 bytes: the command area past the ordinary SQE must be zero.
  std::memset(static_cast<void*>(sqe), 0, 2 * sizeof(io_uring_sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = dev_fd_;
  sqe->cmd_op = command;
  sqe->addr = reinterpret_cast<uint64_t>(iov_);
  sqe->len = 2;
  UringCmdReq req{};
  req.qid = qid_;
  req.commit_id = command == kUringCmdCommitAndFetch ? commit_id_ : 0;
  std::memcpy(sqe->cmd, &req, sizeof(req));
  staged_ = false;

  int submitted;
  do submitted = io_uring_submit(&ring_);
  while (submitted == -EINTR);
  if (submitted < 0) return Status::IOError("submitting a FUSE io_uring command", -submitted);
  io_uring_cqe* cqe = nullptr;
  int err;
  do err = io_uring_wait_cqe(&ring_, &cqe);
  while (err == -EINTR);
  if (err < 0) return Status::IOError("waiting on a FUSE io_uring command", -err);
  const int res = cqe->res;
  io_uring_cqe_seen(&ring_, cqe);
  if (res < 0) {
    if (ConnectionEnded(-res)) return std::span<const uint8_t>();
    return Status::IOError(command == kUringCmdRegister ? "registering a FUSE io_uring entry"
                                                        : "committing a FUSE answer over io_uring",
                           -res);
  }

  fuse_in_header in;
  std::memcpy(&in, header_.in_out, sizeof(in));
  UringEntInOut in_out;
  std::memcpy(&in_out, &header_.ring_ent_in_out, sizeof(in_out));
  // Whatever follows, the request must be answered under these.
  unique_ = in.unique;
  commit_id_ = in_out.commit_id;
  if (in_out.payload_sz > iov_[1].iov_len)
    return Status::InvalidArgument("an io_uring request claims " + std::to_string(in_out.payload_sz) +
                                   " payload bytes, more than its buffer");
  STRATA_ASSIGN_OR_RETURN(size_t fixed, FixedStructBytes(in, in_out.payload_sz));
  uint8_t* start = buffer_.get() + kLeadBytes - sizeof(in) - fixed;
  std::memcpy(start, &in, sizeof(in));
  std::memcpy(start + sizeof(in), header_.op_in, fixed);
  return std::span<const uint8_t>(start, in.len);
}

void UringEntry::StageHeader(int32_t error, uint32_t body_bytes) {
  fuse_out_header out{static_cast<uint32_t>(sizeof(fuse_out_header)) + body_bytes, error, unique_};
  std::memcpy(header_.in_out, &out, sizeof(out));
  UringEntInOut in_out{};
  in_out.commit_id = commit_id_;
  in_out.payload_sz = body_bytes;
  std::memcpy(&header_.ring_ent_in_out, &in_out, sizeof(in_out));
  staged_ = true;
}

bool UringEntry::Stage(const Message& reply) {
  fuse_out_header out{};
  if (reply.size() < sizeof(out)) {
    StageHeader(-EIO, 0);
    return false;
  }
  std::memcpy(&out, reply.data(), sizeof(out));
  const size_t body = reply.size() - sizeof(out);
  if (body > iov_[1].iov_len) {
    StageHeader(-EIO, 0);
    return false;
  }
  std::memcpy(iov_[1].iov_base, reply.data() + sizeof(out), body);
  StageHeader(out.error, static_cast<uint32_t>(body));
  return true;
}

bool UringEntry::StageGathered(std::span<const iovec> body) {
  size_t total = 0;
  for (const iovec& piece : body) total += piece.iov_len;
  if (total > iov_[1].iov_len) {
    StageHeader(-EIO, 0);
    return false;
  }
  auto* at = static_cast<uint8_t*>(iov_[1].iov_base);
  for (const iovec& piece : body) {
    std::memcpy(at, piece.iov_base, piece.iov_len);
    at += piece.iov_len;
  }
  StageHeader(0, static_cast<uint32_t>(total));
  return true;
}

Result<unsigned> PossibleCpus() {
  // A list of ranges such as "0-3" or "0,2-5"; the queues number 0..highest.
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string list;
  if (!std::getline(in, list) || list.empty())
    return Status::IOErrorWithMessage("cannot read /sys/devices/system/cpu/possible", EIO);
  unsigned highest = 0;
  size_t at = 0;
  while (at < list.size()) {
    size_t used = 0;
    unsigned long n;
    try {
      n = std::stoul(list.substr(at), &used);
    } catch (const std::exception&) {
      return Status::InvalidArgument("possible CPUs '" + list + "' do not parse");
    }
    highest = std::max<unsigned>(highest, static_cast<unsigned>(n));
    at += used;
    if (at < list.size() && (list[at] == '-' || list[at] == ',')) at++;
  }
  return highest + 1;
}

}  // namespace strata::fs::kernel
