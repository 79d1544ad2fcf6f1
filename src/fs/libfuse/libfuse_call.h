// LibfuseCall: a Call (fs/call.h) over libfuse's fuse_req_t, so that the
// handlers serve requests that libfuse's low-level API decoded; each Reply*
// is the matching fuse_reply_*.
//
// Thread-safety: one per request, on the thread serving it.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <memory>
#include <vector>

#include "fs/call.h"

namespace strata::fs {

// The libfuse form of a FileInfo.
FileInfo FileInfoOf(const fuse_file_info* fi);

class LibfuseCall final : public Call {
 public:
  explicit LibfuseCall(fuse_req_t req);

  uint32_t uid() const override { return fuse_req_ctx(req_)->uid; }
  uint32_t gid() const override { return fuse_req_ctx(req_)->gid; }
  uint32_t umask() const override { return fuse_req_ctx(req_)->umask; }
  bool InSupplementaryGroup(uint32_t gid) override;

  int SendError(int err) override { return fuse_reply_err(req_, err); }
  int ReplyNone() override {
    fuse_reply_none(req_);
    return 0;
  }
  int ReplyEntry(const EntryOut& entry) override;
  int ReplyAttr(const struct stat& st, double timeout) override { return fuse_reply_attr(req_, &st, timeout); }
  int ReplyOpen(const OpenOut& open) override;
  int ReplyCreate(const EntryOut& entry, const OpenOut& open) override;
  int ReplyWrite(size_t written) override { return fuse_reply_write(req_, written); }
  int ReplyData(std::span<const iovec> pieces) override {
    return fuse_reply_iov(req_, pieces.data(), static_cast<int>(pieces.size()));
  }
  int ReplyStatfs(const struct statvfs& st) override { return fuse_reply_statfs(req_, &st); }
  int ReplyXattrSize(size_t size) override { return fuse_reply_xattr(req_, size); }
  int ReplyLseek(off_t offset) override { return fuse_reply_lseek(req_, offset); }

  DirentSink& Dirents(size_t max_bytes) override;
  int ReplyDirents() override;

 private:
  class Sink;
  fuse_req_t req_;
  std::vector<char> dirents_;
  size_t dirents_used_ = 0;
  std::unique_ptr<DirentSink> sink_;
};

}  // namespace strata::fs
