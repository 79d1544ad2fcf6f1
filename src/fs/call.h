// Call: one request from the kernel as strata's handlers (ops_*.cc) see it,
// whichever transport brought it: who asks, and how to answer.
//
// Two transports implement it: libfuse's low-level API (fs/libfuse/, over a
// fuse_req_t) and strata's own codec of the kernel's protocol
// (fs/kernel_bridge/, over a decoded fs/kernel request). The handlers compute
// the answer and call exactly one Reply* once; the transport turns it into
// the bytes the kernel reads. Nothing here names libfuse or the wire format.
//
// Each Reply* returns 0 when the kernel took the answer and non-zero when it
// no longer waits for one (the request was interrupted): a handler that took
// a reference for the kernel gives it back then.
//
// Thread-safety: a Call belongs to the thread serving its request.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace strata::fs {

struct Context;

// What the kernel says about the open file a request is on.
struct FileInfo {
  int flags = 0;           // the open(2) flags of the descriptor (OPEN, WRITE)
  bool writepage = false;  // a WRITE that writes back cached pages, not a writer's call
  uint64_t fh = 0;         // what OPEN or OPENDIR answered (a directory's listing state)
  // WRITE, or OPEN with O_TRUNC: the caller lacks CAP_FSETID, so the change
  // clears set-id bits (said only with FUSE_HANDLE_KILLPRIV_V2: set_id_bits.h).
  bool kill_suidgid = false;
};

// An inode the kernel may cache (LOOKUP, MKNOD, ..., and READDIRPLUS per
// entry); ino 0 in LOOKUP is a negative entry.
struct EntryOut {
  uint64_t ino = 0;
  double timeout = 0;  // seconds the kernel may trust the name and the attributes
  struct stat attr {};
};

struct OpenOut {
  uint64_t fh = 0;
  bool keep_cache = false;  // the kernel's cached pages stay valid from the last open
  // A directory's listing may be kept by the kernel and served from its cache
  // on the next opens (with keep_cache), until it changes or is invalidated.
  bool cache_dir = false;
};

// The fields a SETATTR changes; unset ones stay as they are.
struct AttrChange {
  std::optional<uint32_t> mode, uid, gid;
  std::optional<uint64_t> size;
  std::optional<timespec> atime, mtime;
  bool atime_now = false, mtime_now = false;
  // A truncation by a caller without CAP_FSETID or a chown of a non-directory:
  // set-id bits go with it (said only with FUSE_HANDLE_KILLPRIV_V2: set_id_bits.h).
  bool kill_suidgid = false;
};

struct Forget {
  uint64_t ino = 0;
  uint64_t nlookup = 0;
};

// The body of a READDIR or READDIRPLUS reply, in the transport's format.
// Add* return false, leaving the body as it was, when the record does not fit.
class DirentSink {
 public:
  virtual ~DirentSink() = default;
  virtual bool Add(std::string_view name, const struct stat& st, off_t next) = 0;
  virtual bool AddPlus(std::string_view name, const EntryOut& entry, off_t next) = 0;
  virtual size_t used() const = 0;
  // Drops what was added after used() returned `mark`.
  virtual void Rewind(size_t mark) = 0;
};

// Tells the kernel what it holds is stale. Each returns 0 or a negative
// errno (-ENOENT: nothing was cached). Never from a thread holding a lock a
// request being served may wait for: the kernel may wait for such requests.
class KernelNotifier {
 public:
  virtual ~KernelNotifier() = default;
  // Cached pages of [off, off + len) (len 0: to the end); off -1: attributes only.
  virtual int InvalInode(uint64_t ino, int64_t off, int64_t len) = 0;
  virtual int InvalEntry(uint64_t parent, std::string_view name) = 0;
};

class Call {
 public:
  explicit Call(Context& ctx) : ctx_(ctx) {}
  virtual ~Call() = default;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  Context& ctx() const { return ctx_; }

  // The calling process.
  virtual uint32_t uid() const = 0;
  virtual uint32_t gid() const = 0;
  // The umask of a creating call (MKNOD, MKDIR, CREATE), ours to apply.
  virtual uint32_t umask() const = 0;
  // Whether gid is among the caller's supplementary groups.
  virtual bool InSupplementaryGroup(uint32_t gid) = 0;

  // An errno, or 0: success without a body. Handlers call ReplyErr (op_stats.h),
  // which also counts a failure; this directly only for an ENOSYS that is no failure.
  virtual int SendError(int err) = 0;
  virtual int ReplyNone() = 0;        // FORGET: no answer at all
  virtual int ReplyEntry(const EntryOut& entry) = 0;
  virtual int ReplyAttr(const struct stat& st, double timeout) = 0;
  virtual int ReplyOpen(const OpenOut& open) = 0;
  virtual int ReplyCreate(const EntryOut& entry, const OpenOut& open) = 0;
  virtual int ReplyWrite(size_t written) = 0;
  virtual int ReplyData(std::span<const iovec> pieces) = 0;
  int ReplyBytes(std::string_view bytes) {
    iovec one{const_cast<char*>(bytes.data()), bytes.size()};
    return ReplyData(std::span<const iovec>(&one, 1));
  }
  virtual int ReplyStatfs(const struct statvfs& st) = 0;
  virtual int ReplyXattrSize(size_t size) = 0;
  virtual int ReplyLseek(off_t offset) = 0;

  // A listing body of at most max_bytes, then ReplyDirents with it.
  virtual DirentSink& Dirents(size_t max_bytes) = 0;
  virtual int ReplyDirents() = 0;

 private:
  Context& ctx_;
};

}  // namespace strata::fs
