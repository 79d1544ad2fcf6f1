// INIT negotiation as a pure function: from what the kernel offers in its
// INIT request and what strata wants, the exact INIT reply and the settings
// the session then runs with. No I/O, so every branch is unit-tested with
// made-up kernels, old and new.
//
// The rules (the protocol's, plus strata's choices, each commented in the .cc):
//  - major: the kernel's must be 7. A newer major gets a reply naming 7 and
//    no settings: the kernel then sends a new INIT at 7. An older one is refused.
//  - minor: the smaller of the kernel's and kProtocolMinor; below kOldestMinor
//    is refused.
//  - flags: what strata wants that the kernel offers; bits 32..63 only from
//    7.36 (flags2, marked by FUSE_INIT_EXT).
//  - passthrough (7.40) and FUSE over io_uring (7.42): only when wanted and offered.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "fs/kernel/reply.h"
#include "fs/kernel/request.h"
#include "util/status.h"

namespace strata::fs::kernel {

struct InitWants {
  // FUSE_* INIT flags strata would use (bits 32..63 as 1ULL << n). Not the
  // three below, which have their own fields.
  uint64_t flags = 0;
  bool passthrough = false;
  uint32_t max_stack_depth = 1;  // 1 or 2: how many stacked file systems may lie under a backing file
  bool io_uring = false;
  uint32_t max_write = 1u << 20;     // at least 4096
  uint32_t max_pages = 256;          // the largest READ in pages; 1..65535 (the kernel caps it further)
  uint32_t max_readahead = 1u << 20; // the kernel's is an upper bound
  uint16_t max_background = 0;       // 0: the kernel's default
  uint16_t congestion_threshold = 0;
  uint32_t page_size = 4096;
};

// What the session has agreed, for the decoder and for the transport.
struct SessionSettings {
  uint32_t minor = 0;
  uint64_t flags = 0;  // the agreed FUSE_* flags, as in the reply
  uint64_t offered = 0;  // what the kernel offered, within what its minor can carry
  uint32_t max_write = 0;
  uint32_t max_pages = 0;
  uint32_t max_readahead = 0;
  bool passthrough = false;
  uint32_t max_stack_depth = 0;
  bool io_uring = false;
  // The kernel lets OPEN/OPENDIR be answered ENOSYS to skip them from then
  // on; never with passthrough, which needs each OPEN.
  bool may_skip_open = false;
  bool may_skip_opendir = false;
  // A buffer that holds any request the kernel may send (its header, the
  // largest fixed part, and max_write or max_pages of payload).
  size_t request_buffer_bytes = 0;

  DecodeOptions decode_options() const;
};

struct InitOutcome {
  Message reply;
  // Absent when the reply only names our major and another INIT will follow.
  std::optional<SessionSettings> settings;
};

// InvalidArgument for wants that cannot be met by any kernel (both
// passthrough and writeback cache, which the kernel would quietly turn into
// no passthrough; a max_write below 4096; max_stack_depth not 1 or 2).
// Unsupported for a kernel too old. The caller answers an error Status with
// ErrorReply(unique, EPROTO) and gives up the session.
Result<InitOutcome> NegotiateInit(uint64_t unique, const InitArgs& kernel, const InitWants& wants);

}  // namespace strata::fs::kernel
