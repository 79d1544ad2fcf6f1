// libfuse's device I/O with the KILLPRIV_V2 amendments (device_io.h).
#include "fs/libfuse/device_io.h"

#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <span>

#include "fs/fs_context.h"
#include "fs/libfuse/request_loop.h"

namespace strata::fs {

namespace {
// The INIT request's id and whether it offered the flag. INIT is the first
// request and is answered before the kernel sends any other, so a plain
// pair of atomics is enough.
std::atomic<uint64_t> init_unique{0};
std::atomic<bool> init_offers_v2{false};

// Where INIT's flags end: after major, minor and max_readahead.
constexpr size_t kInitFlagsEnd = sizeof(fuse_in_header) + 4 * sizeof(uint32_t);

ssize_t ReadRequest(int fd, void* buf, size_t len, void*) {
  const ssize_t n = ::read(fd, buf, len);
  if (n >= static_cast<ssize_t>(kInitFlagsEnd)) {
    fuse_in_header h;
    std::memcpy(&h, buf, sizeof(h));
    if (h.opcode == FUSE_INIT) {
      uint32_t flags;
      std::memcpy(&flags, static_cast<const char*>(buf) + kInitFlagsEnd - sizeof(flags), sizeof(flags));
      init_offers_v2.store((flags & FUSE_HANDLE_KILLPRIV_V2) != 0);
      init_unique.store(h.unique);
    }
  }
  return n;
}

ssize_t WriteReply(int fd, struct iovec* iov, int count, void* userdata) {
  // libfuse sends a reply as its header in iov[0] and the INIT reply's body in iov[1].
  if (count >= 2 && iov[0].iov_len == sizeof(fuse_out_header) && init_offers_v2.load()) {
    const auto* h = static_cast<const fuse_out_header*>(iov[0].iov_base);
    if (h->unique == init_unique.load() && h->error == 0 && iov[1].iov_len >= offsetof(fuse_init_out, max_background)) {
      auto* out = static_cast<fuse_init_out*>(iov[1].iov_base);
      out->flags |= FUSE_HANDLE_KILLPRIV_V2;
      static_cast<Context*>(userdata)->kill_privs = true;
      init_offers_v2.store(false);  // once
    }
  }
  return ::writev(fd, iov, count);
}
}  // namespace

int UseDeviceIo(fuse_session* se) {
  fuse_custom_io io{};
  io.read = ReadRequest;
  io.writev = WriteReply;
  return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

std::optional<bool> KillSuidgidMark(uint32_t opcode) {
  std::span<const std::byte> raw = RequestBeingServed();
  if (raw.size() < sizeof(fuse_in_header)) return std::nullopt;
  fuse_in_header h;
  std::memcpy(&h, raw.data(), sizeof(h));
  if (h.opcode != opcode) return std::nullopt;
  const std::byte* body = raw.data() + sizeof(fuse_in_header);
  const size_t left = raw.size() - sizeof(fuse_in_header);
  switch (opcode) {
    case FUSE_WRITE: {
      fuse_write_in in;
      if (left < sizeof(in)) return std::nullopt;
      std::memcpy(&in, body, sizeof(in));
      return (in.write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
    }
    case FUSE_SETATTR: {
      fuse_setattr_in in;
      if (left < sizeof(in)) return std::nullopt;
      std::memcpy(&in, body, sizeof(in));
      return (in.valid & FATTR_KILL_SUIDGID) != 0;
    }
    case FUSE_OPEN: {
      fuse_open_in in;
      if (left < sizeof(in)) return std::nullopt;
      std::memcpy(&in, body, sizeof(in));
      return (in.open_flags & FUSE_OPEN_KILL_SUIDGID) != 0;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace strata::fs
