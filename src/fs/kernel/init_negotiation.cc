// INIT negotiation (init_negotiation.h).
#include "fs/kernel/init_negotiation.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include "fs/kernel/message_writer.h"

namespace strata::fs::kernel {

namespace {

// The kernel treats a max_write below one page as one page.
constexpr uint32_t kMinMaxWrite = 4096;
// The kernel requires a read buffer of at least this much.
constexpr size_t kMinRequestBuffer = 8192;
// The largest fixed part before a request's payload (WRITE's header and struct).
constexpr size_t kLargestFixed = sizeof(fuse_in_header) + sizeof(fuse_write_in);

Status CheckWants(const InitWants& w) {
  if (w.passthrough && (w.flags & FUSE_WRITEBACK_CACHE))
    return Status::InvalidArgument("passthrough and the writeback cache exclude each other (the kernel drops passthrough)");
  if (w.passthrough && (w.max_stack_depth < 1 || w.max_stack_depth > 2))
    return Status::InvalidArgument("max_stack_depth must be 1 or 2, not " + std::to_string(w.max_stack_depth));
  if (w.max_write < kMinMaxWrite)
    return Status::InvalidArgument("max_write of " + std::to_string(w.max_write) + " bytes, less than a page");
  if (w.max_pages < 1 || w.max_pages > 0xffff)
    return Status::InvalidArgument("max_pages must be 1..65535, not " + std::to_string(w.max_pages));
  if (w.page_size == 0 || (w.page_size & (w.page_size - 1)) != 0)
    return Status::InvalidArgument("page size " + std::to_string(w.page_size) + " is not a power of two");
  constexpr uint64_t kOwnFields = kInitPassthrough | kInitOverIoUring | FUSE_MAX_PAGES | FUSE_INIT_EXT;
  if (w.flags & kOwnFields)
    return Status::InvalidArgument("passthrough, io_uring, max_pages and INIT_EXT are negotiated from their own fields");
  return Status::Ok();
}

// What the kernel offers, limited to what its minor can carry.
uint64_t Offered(const InitArgs& kernel, uint32_t minor) {
  uint64_t offered = kernel.flags;
  if (minor < 36) offered &= 0xffffffffULL;  // no flags2 before 7.36
  if (minor < 40) offered &= ~kInitPassthrough;
  if (minor < 42) offered &= ~kInitOverIoUring;
  return offered;
}

Message Reply(uint64_t unique, const InitOut& out) { return MessageWriter(unique, 0).Append(out).Take(); }

}  // namespace

DecodeOptions SessionSettings::decode_options() const {
  DecodeOptions o;
  o.minor = minor;
  o.setxattr_ext = (flags & FUSE_SETXATTR_EXT) != 0;
  o.max_write = max_write;
  return o;
}

Result<InitOutcome> NegotiateInit(uint64_t unique, const InitArgs& kernel, const InitWants& wants) {
  STRATA_RETURN_IF_ERROR(CheckWants(wants));
  if (kernel.major > kProtocolMajor) {
    // The protocol: answer with the major we speak; the kernel, if it can,
    // sends a new INIT at that major. Nothing else in the reply counts.
    InitOut out{};
    out.major = kProtocolMajor;
    out.minor = kProtocolMinor;
    return InitOutcome{Reply(unique, out), std::nullopt};
  }
  if (kernel.major < kProtocolMajor)
    return Status::Unsupported("the kernel speaks FUSE protocol " + std::to_string(kernel.major) + "; strata needs 7");
  uint32_t minor = std::min(kernel.minor, kProtocolMinor);
  if (minor < kOldestMinor)
    return Status::Unsupported("the kernel speaks FUSE protocol 7." + std::to_string(kernel.minor) +
                               "; strata needs 7." + std::to_string(kOldestMinor) + " or later");

  uint64_t offered = Offered(kernel, minor);
  uint64_t agreed = wants.flags & offered;
  SessionSettings s;
  s.minor = minor;
  if (wants.passthrough && (offered & kInitPassthrough)) {
    agreed |= kInitPassthrough;
    s.passthrough = true;
    s.max_stack_depth = wants.max_stack_depth;
  }
  if (wants.io_uring && (offered & kInitOverIoUring)) {
    agreed |= kInitOverIoUring;
    s.io_uring = true;
  }
  // Without FUSE_MAX_PAGES the kernel reads at most its old default of 32 pages.
  constexpr uint32_t kDefaultMaxPages = 32;
  s.max_pages = kDefaultMaxPages;
  if (offered & FUSE_MAX_PAGES) {
    agreed |= FUSE_MAX_PAGES;
    s.max_pages = wants.max_pages;
  }
  // flags2 is read only when the reply says it is there.
  if (agreed >> 32) agreed |= FUSE_INIT_EXT;

  s.flags = agreed;
  s.offered = offered;
  s.max_write = wants.max_write;
  s.max_readahead = std::min(wants.max_readahead, kernel.max_readahead);
  s.may_skip_open = (offered & FUSE_NO_OPEN_SUPPORT) && !s.passthrough;
  s.may_skip_opendir = (offered & FUSE_NO_OPENDIR_SUPPORT) != 0;
  size_t payload = std::max<size_t>(s.max_write, size_t{s.max_pages} * wants.page_size);
  s.request_buffer_bytes = std::max(kMinRequestBuffer, kLargestFixed + payload);

  InitOut out{};
  out.major = kProtocolMajor;
  out.minor = minor;
  out.max_readahead = s.max_readahead;
  out.flags = static_cast<uint32_t>(agreed);
  out.flags2 = static_cast<uint32_t>(agreed >> 32);
  out.max_background = wants.max_background;
  out.congestion_threshold = wants.congestion_threshold;
  out.max_write = s.max_write;
  out.time_gran = 1;  // nanosecond timestamps
  out.max_pages = static_cast<uint16_t>(s.max_pages);
  out.max_stack_depth = s.max_stack_depth;
  return InitOutcome{Reply(unique, out), s};
}

}  // namespace strata::fs::kernel
