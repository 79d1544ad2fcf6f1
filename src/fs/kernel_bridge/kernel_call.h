// KernelCall: a Call (fs/call.h) over a request that strata's own codec
// decoded (fs/kernel/request.h); each Reply* encodes the answer
// (fs/kernel/reply.h) and writes it to /dev/fuse at once, so that a handler
// learns whether the kernel still waited for it.
//
// Thread-safety: one per request, on the thread serving it.
#pragma once

#include <memory>
#include <optional>

#include "fs/call.h"
#include "fs/kernel/dev_fuse_session.h"
#include "fs/kernel/dirent_buffer.h"
#include "fs/passthrough.h"

namespace strata::fs {

class KernelCall final : public Call {
 public:
  // umask: of MKNOD, MKDIR and CREATE requests (their own field), else 0.
  KernelCall(Context& ctx, kernel::DevFuseSession& session, const kernel::RequestHeader& header, uint32_t umask);
  ~KernelCall() override;

  uint32_t uid() const override { return header_.uid; }
  uint32_t gid() const override { return header_.gid; }
  uint32_t umask() const override { return umask_; }
  bool InSupplementaryGroup(uint32_t gid) override;

  int SendError(int err) override;
  int ReplyNone() override { return 0; }
  int ReplyEntry(const EntryOut& entry) override;
  int ReplyAttr(const struct stat& st, double timeout) override;
  int ReplyOpen(const OpenOut& open) override;
  int ReplyCreate(const EntryOut& entry, const OpenOut& open) override;
  int ReplyWrite(size_t written) override;
  int ReplyData(std::span<const iovec> pieces) override;
  int ReplyStatfs(const struct statvfs& st) override;
  int ReplyXattrSize(size_t size) override;
  int ReplyLseek(off_t offset) override;

  DirentSink& Dirents(size_t max_bytes) override;
  int ReplyDirents() override;

  // An OPEN or CREATE (open(2) flags `flags`) whose answer may hand the file
  // to the kernel (fs/passthrough.h).
  void ChooseOpensWith(PassthroughFiles* files, int flags) {
    passthrough_ = files;
    open_flags_ = flags;
  }

  // Whether the request was answered through this call; the first write
  // error to /dev/fuse, which ends the session.
  bool answered() const { return answered_; }
  const Status& write_error() const { return write_error_; }

 private:
  class Sink;
  int Send(const kernel::Message& reply);
  int Delivered(const Result<bool>& delivered);
  // The answer to an open of ino: as the handler chose, or with passthrough's choice.
  kernel::OpenParams ChooseOpen(uint64_t ino, const OpenOut& open, OpenChoice* choice);
  // After the answer: an open the kernel did not take ends at once.
  int Opened(int sent, uint64_t ino, const OpenChoice& choice);

  kernel::DevFuseSession& session_;
  const kernel::RequestHeader& header_;
  const uint32_t umask_;
  bool answered_ = false;
  Status write_error_;
  std::unique_ptr<Sink> sink_;
  PassthroughFiles* passthrough_ = nullptr;
  int open_flags_ = 0;
};

// The kernel's form of an entry and of an open's answer.
kernel::EntryParams EntryParamsOf(const EntryOut& e);
kernel::OpenParams OpenParamsOf(const OpenOut& o);

// Whether process pid (the caller of a request) has gid among its
// supplementary groups, read from /proc/<pid>/status as libfuse does.
bool ProcessInGroup(uint32_t pid, uint32_t gid);

}  // namespace strata::fs
