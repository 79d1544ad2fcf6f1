// What libfuse 3.14 reads from and writes to /dev/fuse, through its custom
// I/O hooks (fuse_session_custom_io), for the two things its API cannot say:
//
//  - INIT: it knows no FUSE_HANDLE_KILLPRIV_V2, so its reply never asks for
//    it. The reply is amended on its way to the kernel when the kernel
//    offered the flag (fs/set_id_bits.h says what the handlers then do), and
//    the mount's Context says it was agreed.
//  - the marks that flag puts on requests (FUSE_WRITE_KILL_SUIDGID,
//    FATTR_KILL_SUIDGID, FUSE_OPEN_KILL_SUIDGID), which libfuse does not pass
//    on: the handlers read them from the request as the kernel sent it
//    (RequestBeingServed, request_loop.h).
//
// Everything else goes through unchanged: one read(2) per request, one
// writev(2) per reply or notification, as libfuse does without the hooks.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cstdint>
#include <optional>

#include "fs/call.h"

namespace strata::fs {

struct Context;

// Installs the hooks on a mounted session whose userdata is ctx (which must
// outlive it). Returns 0 or a negative errno, as fuse_session_custom_io.
int UseDeviceIo(fuse_session* se);

// The set-id marks of the request this thread is serving, read from its
// bytes as the kernel sent them: whether the request of that opcode says so,
// or nullopt when this thread serves no such request.
std::optional<bool> KillSuidgidMark(uint32_t opcode);

}  // namespace strata::fs
