// From a request strata's codec decoded (fs/kernel/request.h) to the handler
// that serves it (fs/ops_*.cc): the arguments unpacked into the handlers'
// neutral form (fs/call.h). The one place that knows both.
//
// Thread-safety: any thread; the handlers are called concurrently.
#pragma once

#include "fs/kernel/request.h"
#include "fs/kernel_bridge/kernel_call.h"

namespace strata::fs {

// The umask the caller's creating request carries (MKNOD, MKDIR, CREATE), else 0.
uint32_t UmaskOf(const kernel::Request& request);

// Serves request through call: exactly one reply unless the opcode takes none.
void Dispatch(const kernel::Request& request, KernelCall& call);

}  // namespace strata::fs
